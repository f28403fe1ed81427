"""Step barriers and device loaders (XLA301-XLA305).

In lazy mode the graph grows until something cuts it: a training loop ends every
iteration with the target's barrier (``torch_xla.sync()`` / ``xm.mark_step()``), also
before each ``continue`` that skips the end; or, where the loop's batches go to the XLA
device on every path, its loader is wrapped in ``MpDeviceLoader``, which moves the
batches and runs the barrier itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

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

_EXITS = (cst.Break, cst.Continue, cst.Return, cst.Raise)


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


def with_barriers(
    ctx: Context[Facts],
    rule: Rule,
    original: NodeT,
    updated: NodeT,
    message: str,
    exits: tuple[type, ...] = (cst.Continue,),
) -> NodeT:
    """``updated`` with the target's barrier ending its body (see _end_iterations)."""
    inserted: list[cst.SimpleStatementLine] = []

    def build() -> cst.BaseSuite | None:
        sync = ctx.call("sync")
        if sync is None:
            return None

        def barrier() -> cst.SimpleStatementLine:
            inserted.append(cst.SimpleStatementLine(body=[cst.Expr(sync.deep_clone())]))
            return inserted[-1]

        return _end_iterations(updated.body, barrier, exits)  # type: ignore[attr-defined]  # with_barriers is called for For, While and FunctionDef nodes, all with a body: NodeT does not say so

    body = ctx.fix(rule, original, message, build, result=lambda _: inserted[-1])
    return updated if body is None else updated.with_changes(body=body)


def _end_iterations(body: cst.BaseSuite, barrier, exits: tuple[type, ...] = (cst.Continue,)) -> cst.BaseSuite:  # type: ignore[no-untyped-def]  # barrier is a zero-argument node factory: libcst's statement types make it awkward to spell
    """``body`` with a barrier before each statement of the ``exits`` kinds that belongs
    to it (``continue`` of this loop, ``return`` of this function) and at its end
    (before a final break/continue/return/raise)."""
    body = body.visit(_BeforeExits(barrier, exits))  # type: ignore[assignment]  # _BeforeExits never removes the suite it is given, so visit() returns a BaseSuite
    if isinstance(body, cst.SimpleStatementSuite):
        body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=body.body)])
    statements = list(body.body)
    last = statements[-1] if statements else None
    if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], _EXITS):
        if not isinstance(last.body[-1], exits):  # otherwise it already has one
            statements.insert(len(statements) - 1, barrier())
    else:
        statements.append(barrier())
    return body.with_changes(body=statements)


_SEMICOLON = cst.Semicolon(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(" "))


class _BeforeExits(cst.CSTTransformer):
    """Puts the barrier right before every exit statement of the given kinds that
    belongs to this body: nested functions and classes are skipped, and so are nested
    loops when the exit is ``continue``.  It walks statements only, and hands back
    every node it did not change as the same object, so findings keep their place."""

    _THROUGH = (
        cst.IndentedBlock,
        cst.SimpleStatementSuite,
        cst.If,
        cst.Else,
        cst.Try,
        cst.ExceptHandler,
        cst.Finally,
        cst.With,
        cst.Match,
        cst.MatchCase,
    )

    def __init__(self, barrier, exits: tuple[type, ...]) -> None:  # type: ignore[no-untyped-def]  # barrier is a zero-argument node factory: libcst's statement types make it awkward to spell
        super().__init__()
        self.barrier = barrier
        self.exits = exits
        self.through = self._THROUGH + (() if cst.Continue in exits else (cst.For, cst.While))
        self.inserted = 0
        self.marks: list[int] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.marks.append(self.inserted)
        return isinstance(node, self.through)

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]  # overrides libcst's on_leave, whose node types are generic
        result = super().on_leave(original_node, updated_node)
        return original_node if self.marks.pop() == self.inserted else result

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks."""

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks."""

    def _exit_at(self, small: Sequence[cst.BaseSmallStatement]) -> int | None:
        return next((i for i, s in enumerate(small) if isinstance(s, self.exits)), None)

    def _inline(self, small: Sequence[cst.BaseSmallStatement], at: int) -> list[cst.BaseSmallStatement]:
        """``a(); continue`` -> ``a(); torch_xla.sync(); continue``."""
        self.inserted += 1
        sync = self.barrier().body[0].with_changes(semicolon=_SEMICOLON)
        return [*small[:at], sync, *small[at:]]

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        statements: list[cst.BaseStatement] = []
        for statement in updated_node.body:
            at = self._exit_at(statement.body) if type(statement) is cst.SimpleStatementLine else None
            if at == 0:
                self.inserted += 1
                statements.append(self.barrier())
            elif at is not None:
                statement = statement.with_changes(body=self._inline(statement.body, at))  # type: ignore[attr-defined]  # ``at`` is not None only for a SimpleStatementLine (type() check above): mypy does not narrow on type()
            statements.append(statement)
        return updated_node.with_changes(body=statements)

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.BaseSuite:
        at = self._exit_at(updated_node.body)
        if at is None:
            return updated_node
        if at == 0:  # `if x: continue` -> an indented block, barrier first
            self.inserted += 1
            line = cst.SimpleStatementLine(body=updated_node.body, trailing_whitespace=updated_node.trailing_whitespace)
            return cst.IndentedBlock(body=[self.barrier(), line])
        return updated_node.with_changes(body=self._inline(updated_node.body, at))
