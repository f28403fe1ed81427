"""XLA712 step-varying-shape: a per-step Python number used as a shape or static argument
(``view``, ``arange``, ``topk``, ``**``) is compiled into the graph: every step compiles a new
one.  Reported at the operation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, substituted, valid
from codemods.lazy.rules.programs import STEP_WITH_INNER_LOSS_LOOP, _loop
from codemods.training.rules.step_loop_cases import TRAINER_HEADS

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

STEP_VARYING_SHAPE = Rule(
    code="XLA712",
    name="step-varying-shape",
    severity="warning",
    summary="A per-step Python integer used as a shape or static argument (view, arange, topk, ** ...) recompiles every step",
    fixable=False,
    why="Shapes, offsets, counts and exponents are compiled into the graph.  Plain arithmetic with Python "
    "numbers is not (torch_xla passes those as device data), so keep shapes fixed and vary values instead. "
    "A loop over a constant `range` inside one step (a training loop's iteration, a model's forward, a Trainer's "
    "`compute_loss`: `for i in range(n_heads): logits[i, :, : -(2 + i)]`, `for k in range(1, 3): x.topk(k)`) runs the "
    "same counters every step: the same few graphs, compiled once; its counter is no per-step number.",
    examples=lambda: (
        Invalid(_loop("y = x.repeat(step + 1, 1)"), findings=(Expected(13, 9, "`x.repeat(step + 1, 1)`"),)),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            for step in range(100):
                x = torch.randn(8, 4).to(device)
                loss = model(x).mean() * (0.1 * step) + x.view(8, -1).sum()
                loss.backward()
                torch_xla.sync()
            """,
        ),
        valid(STEP_WITH_INNER_LOSS_LOOP, note="a-constant-range-loop-inside-a-step-runs-the-same-k-every-step"),
        valid(TRAINER_HEADS, note="a-trainers-compute-loss-runs-the-same-k-every-step"),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla as tx

            n = 4
            for batch in train_loader:
                n += 1
                out = model(batch.to(tx.device()))
                loss = th.arange(n, device=tx.device()).float().sum() * out.mean()
                loss.backward()
                tx.sync()
            """,
            alias=True,
            findings=(Expected(8, 12, "`th.arange(n, device=tx.device())`"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            for step in range(100):
                x = torch.randn(8, 4).to(device)
                mask = torch.ones(step + 1, device=device)
                loss = (model(x) ** (step % 3)).mean() + x.repeat(step, 1).sum()
                loss.backward()
                torch_xla.sync()
            """,
            findings=(
                Expected(6, 12, "`torch.ones(step + 1, device=device)`"),
                Expected(7, 13, "`(model(x) ** (step % 3))`"),
                Expected(7, 46, "`x.repeat(step, 1)`"),
            ),
        ),
        invalid(
            substituted(STEP_WITH_INNER_LOSS_LOOP, ("range(1, 3)", "range(1, step % 3 + 2)")),
            note="an-inner-range-that-grows-with-the-step-counter",
            findings=(Expected(13, 18, "`out.topk(k, dim=1)`: `k` changes every step"),),
        ),
    ),
)


@reports_facts(STEP_VARYING_SHAPE, nodes=lambda facts: facts.recompilation.static_arguments)
def _static_argument(ctx: Context[Facts], original: cst.CSTNode) -> str:
    return (
        f"`{ctx.code(original)}`: `{ctx.facts.recompilation.static_arguments[original]}` changes every step and is "
        "compiled into the graph (a shape or static argument), so every step compiles a new graph; keep it fixed "
        "(pad to a maximum)"
    )
