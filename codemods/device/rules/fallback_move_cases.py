"""XLA102's cases of a `.cuda()` that a ``try`` hands straight to another call, whose handler falls
back to the CPU (``except:`` / ``except Exception:``, not raising again): on an XLA host the move
raises (AssertionError on a CPU build of torch, RuntimeError without a driver) and the handler's
CPU path runs, as on any host without CUDA, so it is left as it is (device/shapes.py
``cpu_fallback_moves``); a handler that raises again, or catches only RuntimeError, is no fallback;
only a tensor op of torch's namespace counts (``torch.compile(model.cuda())`` would leave a module on the CPU)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_SORT = """
    import torch


    def top_k(scores, k):
        try:
            _, order = torch.sort(scores.cuda(), descending=True)
        except:
            _, order = torch.sort(scores, descending=True)
        return order[:k]
    """


def fallback_move_valid() -> tuple[Valid, ...]:
    return (
        valid(_SORT, note="a move handed to a call in a try whose bare except sorts on the CPU"),
        valid(
            substituted(_SORT, ("except:", "except Exception:")),
            target="sagemaker",
            note="the same under except Exception (sagemaker)",
        ),
    )


def fallback_move_invalid() -> tuple[Invalid, ...]:
    reraised = substituted(_SORT, ("_, order = torch.sort(scores, descending=True)", "raise"))
    runtime_only = substituted(_SORT, ("except:", "except RuntimeError:"))
    moved = ("scores.cuda()", "scores.to(torch_xla.device())")
    return (
        invalid(
            reraised,
            substituted(reraised, ("import torch\n", "import torch\n    import torch_xla\n"), moved),
            note="a handler that raises again: no fallback",
            findings=(Expected(7, 31, "scores.cuda() -> scores.to(torch_xla.device())"),),
        ),
        invalid(
            runtime_only,
            substituted(
                runtime_only,
                ("import torch\n", "import torch\n    import torch_xla.core.xla_model as xm\n"),
                ("scores.cuda()", "scores.to(xm.xla_device())"),
            ),
            target="sagemaker",
            note="a handler of RuntimeError alone (a CPU build of torch raises AssertionError) (sagemaker)",
            findings=(Expected(7, 31, "scores.cuda() -> scores.to(xm.xla_device())"),),
        ),
    )
