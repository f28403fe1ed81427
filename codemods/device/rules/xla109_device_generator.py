"""XLA109 device-generator: ``torch.Generator(device=device)`` -> ``torch.Generator()`` (the device
facts' ``generators``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DEVICE_GENERATOR = Rule(
    code="XLA109",
    name="device-generator",
    severity="error",
    summary="`torch.Generator(device=<XLA device>)` becomes a CPU generator",
    fixable=True,
    why="torch_xla 2.9 has no device generators: `torch.Generator(device=torch_xla.device())` raises 'XLA device "
    "type not an accelerator', so sampling code that makes one for its device crashes. Sampling ops on XLA "
    "tensors accept a CPU generator (randn, rand, randint, randperm, multinomial, bernoulli, normal_ were "
    "checked), with the CPU generator's sequence of values, so the device argument goes.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = "cuda"
            g = torch.Generator(device=device)
            g.manual_seed(42)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            g = torch.Generator()
            g.manual_seed(42)
            """,
            findings=(Expected(5, 5, "torch.Generator(device=device) -> torch.Generator()"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            g = torch.Generator(device="cpu")
            h = torch.Generator()
            """,
            note="cpu-generators",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
            sample_rng = torch.Generator(device=device)
            sample_rng.manual_seed(42)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            sample_rng = torch.Generator()
            sample_rng.manual_seed(42)
            """,
            note="device-variable",
            findings=(Expected(5, 14, "torch.Generator(device=device) -> torch.Generator()"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            g = torch.Generator(torch_xla.device()).manual_seed(0)
            """,
            """
            import torch

            g = torch.Generator().manual_seed(0)
            """,
            note="already-ported-xla-device",
            findings=(Expected(3, 5, "torch.Generator(torch_xla.device()) -> torch.Generator()"),),
        ),
        invalid(
            """
            import torch as th

            gen = th.Generator(device="cuda:0")
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            gen = th.Generator()
            """,
            alias=True,
            findings=(Expected(4, 7, 'th.Generator(device="cuda:0") -> th.Generator()'),),
        ),
    ),
)


@on_facts(DEVICE_GENERATOR, nodes=lambda facts: facts.device.generators)
def _cpu_generator(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """torch_xla 2.9 has no device generators ("XLA device type not an accelerator"); sampling
    ops on XLA tensors take a CPU generator (checked: randn, randint, randperm, multinomial,
    bernoulli, normal_), with the CPU generator's sequence."""
    import libcst as cst

    at = next(
        (
            i
            for i, a in enumerate(original.args)
            if (a.keyword is None and i == 0) or (a.keyword and a.keyword.value == "device")
        ),
        None,
    )
    if at is None:
        return updated
    dropped = original.args[at]

    def build() -> cst.Call:
        args = [a for i, a in enumerate(updated.args) if i != at]
        if args:
            args[-1] = args[-1].with_changes(
                comma=updated.args[-1].comma if at != len(updated.args) - 1 else cst.MaybeSentinel.DEFAULT
            )
        return updated.with_changes(args=args)

    new = ctx.fix(
        DEVICE_GENERATOR,
        original,
        f"{ctx.code(original)} -> {{new}}: XLA has no device generators; sampling on XLA tensors takes a CPU generator",
        build,
    )
    if new is None:
        return updated
    ctx.forget_removed(dropped, updated.args[at])
    return new
