"""XLA301's barrier for a training loop whose step runs under a thread lock
(training/locked_steps.py): right after the statement that takes the step, inside the lock; or,
where it cannot go there, an error on the loop saying why (and no barrier outside the lock)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.hooks import FactHook
    from codemods.engine.rewriter import Context
    from codemods.engine.rule import Rule
    from codemods.facts import Facts
    from codemods.training.facts import LockedStep

LOCKED_WHY = (
    " A loop whose step runs under a thread lock (`with lock:` over a `threading.Lock()` or `RLock()`, "
    "however named: torchbeast's learner threads each call `learn()`, which steps under its lock) gets "
    "the barrier inside the lock, right after the statement that takes the step (or makes the call that "
    "reaches it): on torch_xla 2.9 a barrier is not safe against another thread's step, and one at the end "
    "of the iteration, outside the lock, runs while another thread is inside its step, whose backward pass "
    "then fails (`RuntimeError: Check failed: data()->tensor_data`). Where the barrier cannot go inside "
    "the lock (the block is on the `with` line, or the statement returns), the loop gets an error saying "
    "why, and no barrier."
)


def barrier_after_locked_step(rule: Rule) -> FactHook:
    """``rule``'s hook on a statement that takes a step under a lock: the barrier right after it."""

    def run(
        ctx: Context[Facts], original: cst.BaseStatement, updated: cst.BaseStatement
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        import libcst as cst

        locked = ctx.facts.training.locked_steps[original]
        inserted: list[cst.SimpleStatementLine] = []

        def build() -> cst.FlattenSentinel[cst.BaseStatement] | None:
            sync = ctx.call("sync")
            if sync is None:
                return None
            inserted.append(cst.SimpleStatementLine(body=[cst.Expr(sync)]))
            return cst.FlattenSentinel([updated, inserted[0]])

        message = (
            f"training step under the lock `{locked.lock}`: {{new}} right after it, inside the lock (the loop "
            "that runs it may run in several threads: a barrier outside the lock would run while another "
            "thread is inside its step)"
        )
        return ctx.fix_or_keep(updated, rule, original, message, build, result=lambda _: inserted[0])

    return run


def report_unplaceable(ctx: Context[Facts], rule: Rule, loop: cst.CSTNode, locked: tuple[LockedStep, ...]) -> None:
    """The loop's steps run under a lock where the barrier cannot go: an error on the loop."""
    for each in locked:
        if each.unplaceable is not None:
            message = (
                f"training loop whose step runs under the lock `{each.lock}`, but {each.unplaceable}: "
                "no barrier added (one outside the lock would run while another thread is inside its step); "
                "put torch_xla.sync() right after the step, inside the lock"
            )
            ctx.report(rule, loop, ctx.target.advice(message))
