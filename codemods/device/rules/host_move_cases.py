"""XLA104's cases of an accelerator check that guards only a move to the host (``x.cpu() if
torch.cuda.is_available() else x``; ``if torch.cuda.is_available(): return x.cpu()`` then ``return
x``): the check goes, as it does around the matching move to the device."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_DROPPED = "the accelerator check holds for the XLA device, so the code under it always runs: check dropped"


def host_move_cases() -> tuple[Invalid, ...]:
    return (
        *(
            invalid(
                """
                import torch


                def to_host(x):
                    if torch.cuda.is_available():
                        return x.cpu()
                    return x


                def to_numpy(t):
                    if torch.cuda.is_available():
                        t = t.cpu()
                    return t.numpy()


                top = to_host(scores).detach().numpy()
                """,
                """
                import torch


                def to_host(x):
                    return x.cpu()
                    return x


                def to_numpy(t):
                    t = t.cpu()
                    return t.numpy()


                top = to_host(scores).detach().numpy()
                """,
                target=target,
                note=f"host-move-under-a-check-{target}",
                findings=(
                    Expected(5, 8, f"`torch.cuda.is_available()`: {_DROPPED}"),
                    Expected(10, 8, f"`torch.cuda.is_available()`: {_DROPPED}"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                """
                import torch as th
                from torch.cuda import is_available


                def to_host(x):
                    return x.detach().to("cpu") if th.cuda.is_available() else x.detach()


                def gather(outputs):
                    if is_available():
                        return outputs.cpu()
                    else:
                        return outputs
                """,
                """
                import torch as th


                def to_host(x):
                    return x.detach().to("cpu")


                def gather(outputs):
                    return outputs.cpu()
                """,
                target=target,
                alias=True,
                note=f"host-move-alias-{target}",
                findings=(
                    Expected(
                        5,
                        12,
                        "a move to the host under an accelerator check, which is False on XLA: an XLA tensor needs it "
                        'too (`.numpy()` raises on one), a CPU tensor is unchanged -> x.detach().to("cpu")',
                    ),
                    Expected(9, 8, f"`is_available()`: {_DROPPED}"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
    )


def host_move_valid_cases() -> tuple[Valid, ...]:
    """A check whose path without the move does something else stays (XLA105 says it is False)."""
    return (
        valid(
            """
            import torch


            def to_host(x):
                if torch.cuda.is_available():
                    return x.cpu()
                return x.numpy()


            def maybe_half(x):
                return x.cpu() if torch.cuda.is_available() else x.half()
            """,
            note="host-move-with-another-path",
        ),
    )
