"""Step barriers and device loaders (XLA301-XLA305).

In lazy mode the graph grows until something cuts it: a training loop ends every
iteration with the target's barrier (``torch_xla.sync()`` / ``xm.mark_step()``), also
before each ``continue`` that skips the end; or, where the loop's batches go to the XLA
device on every path, its loader is wrapped in ``MpDeviceLoader``, which moves the
batches and runs the barrier itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.barriers import with_barriers
from codemods.engine.nodes import parse_dotted, with_comma
from codemods.engine.rewriter import Concern, Context, NodeT
from codemods.engine.rule import Rule
from codemods.training.rules.xla301_training_loop_barrier import TRAINING_LOOP_BARRIER
from codemods.training.rules.xla302_device_loader import DEVICE_LOADER
from codemods.training.rules.xla303_eval_loop_barrier import EVAL_LOOP_BARRIER
from codemods.training.rules.xla304_closure_barrier import CLOSURE_BARRIER
from codemods.training.rules.xla305_step_barrier import STEP_BARRIER

if TYPE_CHECKING:
    from codemods.facts import Facts


class LoopRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        self.wraps = {
            plan.wrap_loader: plan for plan in self.facts.training.loops.values() if plan.wrap_loader is not None
        }
        self.wrapped: set[cst.CSTNode] = set()

    # -- MpDeviceLoader ------------------------------------------------------------

    def _wrap(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        plan = self.wraps.get(original)
        if plan is None or plan.wrap_device is None:
            return updated
        device = plan.wrap_device
        new = self.ctx.fix(
            DEVICE_LOADER,
            original,
            f"{self.ctx.code(original)} -> {{new}}: moves each batch to the device and ends the step",
            lambda: self.ctx.call("mp_device_loader", [with_comma(cst.Arg(updated)), cst.Arg(parse_dotted(device))]),
        )
        if new is None:
            return updated
        self.wrapped.add(original)
        return new

    leave_Name = _wrap
    leave_Attribute = _wrap

    # -- barriers ----------------------------------------------------------------------

    def _barrier(self, original: cst.For | cst.While, updated: cst.For | cst.While) -> cst.BaseStatement:
        plan = self.facts.training.loops.get(original)
        if plan is None or plan.wrap_loader in self.wrapped:
            return updated
        if plan.kind == "training":
            return self._with_barriers(
                TRAINING_LOOP_BARRIER, original, updated, "training loop: {new} ends every iteration"
            )
        if plan.accumulates:
            kept = ", ".join(f"`{name}`" for name in plan.accumulates)
            return self._with_barriers(
                EVAL_LOOP_BARRIER,
                original,
                updated,
                f"evaluation loop over the device that accumulates device values into {kept}: its host reads "
                "materialize only what they read, so {new} ends every iteration",
            )
        return self._with_barriers(
            EVAL_LOOP_BARRIER,
            original,
            updated,
            "evaluation loop over the device (no host read per iteration): {new} ends every iteration",
        )

    leave_For = _barrier
    leave_While = _barrier

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        """A step that no loop runs (a demo that trains once) gets its barrier right after."""
        if original not in self.facts.training.lone_steps:
            return updated
        inserted: list[cst.SimpleStatementLine] = []

        def build() -> cst.FlattenSentinel[cst.BaseStatement] | None:
            sync = self.ctx.call("sync")
            if sync is None:
                return None
            inserted.append(cst.SimpleStatementLine(body=[cst.Expr(sync)]))
            return cst.FlattenSentinel([updated, inserted[0]])

        return self.ctx.fix_or_keep(
            updated,
            STEP_BARRIER,
            original,
            "optimizer step outside any loop: {new} after it runs the step's graph",
            build,
            result=lambda _: inserted[0],
        )

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """An optimizer closure runs once per inner iteration of LBFGS: a barrier before
        it returns keeps each of those graphs small (without it the whole step is one
        graph that grows with every inner iteration)."""
        if original not in self.facts.training.closures:
            return updated
        return self._with_barriers(
            CLOSURE_BARRIER,
            original,
            updated,
            f"optimizer closure `{original.name.value}`: {{new}} before it returns (LBFGS compiles a new "
            "graph per inner iteration until its history is full: keep history_size small)",
            exits=(cst.Return,),
        )

    def _with_barriers(
        self, rule: Rule, original: NodeT, updated: NodeT, message: str, exits: tuple[type, ...] = (cst.Continue,)
    ) -> NodeT:
        return with_barriers(self.ctx, rule, original, updated, message, exits)
