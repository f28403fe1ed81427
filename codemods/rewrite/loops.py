"""Step barriers and device loaders (XLA301-XLA303).

In lazy mode the graph grows until something cuts it: a training loop ends every
iteration with the target's barrier (``torch_xla.sync()`` / ``xm.mark_step()``), also
before each ``continue`` that skips the end; or, where the loop's batches go to the XLA
device on every path, its loader is wrapped in ``MpDeviceLoader``, which moves the
batches and runs the barrier itself.
"""

from __future__ import annotations

import libcst as cst

from codemods.rewrite.base import Concern, Context, NodeT
from codemods.syntax import parse_dotted, with_comma

_EXITS = (cst.Break, cst.Continue, cst.Return, cst.Raise)


class LoopRewrite(Concern):
    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.wraps = {plan.wrap_loader: plan for plan in self.facts.loops.values() if plan.wrap_loader is not None}
        self.wrapped: set[cst.CSTNode] = set()

    # -- MpDeviceLoader ------------------------------------------------------------

    def _wrap(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        plan = self.wraps.get(original)
        if plan is None or plan.wrap_device is None:
            return updated
        device = plan.wrap_device
        new = self.ctx.fix(
            "XLA302",
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
        plan = self.facts.loops.get(original)
        if plan is None or plan.wrap_loader in self.wrapped:
            return updated
        if plan.kind == "training":
            return self._with_barriers("XLA301", original, updated, "training loop: {new} ends every iteration")
        return self._with_barriers(
            "XLA303",
            original,
            updated,
            "evaluation loop over the device (no host read per iteration): {new} ends every iteration",
        )

    leave_For = _barrier
    leave_While = _barrier

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """An optimizer closure runs once per inner iteration of LBFGS: a barrier before
        it returns keeps each of those graphs small (without it the whole step is one
        graph that grows with every inner iteration)."""
        if original not in self.facts.closures:
            return updated
        return self._with_barriers(
            "XLA304",
            original,
            updated,
            f"optimizer closure `{original.name.value}`: {{new}} before it returns (LBFGS compiles a new "
            "graph per inner iteration until its history is full: keep history_size small)",
            exits=(cst.Return,),
        )

    def _with_barriers(self, rule: str, original: NodeT, updated: NodeT, message: str, exits: tuple[type, ...] = (cst.Continue,)) -> NodeT:
        """``updated`` with the target's barrier ending its body (see _end_iterations)."""
        inserted: list[cst.SimpleStatementLine] = []

        def build() -> cst.BaseSuite | None:
            sync = self.ctx.call("sync")
            if sync is None:
                return None

            def barrier() -> cst.SimpleStatementLine:
                inserted.append(cst.SimpleStatementLine(body=[cst.Expr(sync.deep_clone())]))
                return inserted[-1]

            return _end_iterations(updated.body, barrier, exits)  # type: ignore[attr-defined]

        body = self.ctx.fix(rule, original, message, build, result=lambda _: inserted[-1])
        return updated if body is None else updated.with_changes(body=body)


def _end_iterations(body: cst.BaseSuite, barrier, exits: tuple[type, ...] = (cst.Continue,)) -> cst.BaseSuite:  # type: ignore[no-untyped-def]
    """``body`` with a barrier before each statement of the ``exits`` kinds that belongs
    to it (``continue`` of this loop, ``return`` of this function) and at its end
    (before a final break/continue/return/raise)."""
    body = body.visit(_BeforeExits(barrier, exits))  # type: ignore[assignment]
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


class _BeforeExits(cst.CSTTransformer):
    """Puts the barrier before every exit statement of the given kinds that belongs to
    this body: nested functions and classes are skipped, and so are nested loops when
    the exit is ``continue``."""

    def __init__(self, barrier, exits: tuple[type, ...]) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.barrier = barrier
        self.exits = exits

    def visit_For(self, node: cst.For) -> bool:
        return cst.Continue not in self.exits

    def visit_While(self, node: cst.While) -> bool:
        return cst.Continue not in self.exits

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        statements: list[cst.BaseStatement] = []
        for statement in updated_node.body:
            if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, self.exits) for s in statement.body):
                statements.append(self.barrier())
            statements.append(statement)
        return updated_node.with_changes(body=statements)

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.BaseSuite:
        if not any(isinstance(s, self.exits) for s in updated_node.body):
            return updated_node
        line = cst.SimpleStatementLine(body=updated_node.body)
        return cst.IndentedBlock(body=[self.barrier(), line])
