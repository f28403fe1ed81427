"""The step barrier at the end of every iteration of a loop (or every run of a function):
before each exit of the kinds given that belongs to its body (``continue`` and ``break`` of this
loop: the iteration that breaks out ran its step too; ``return`` of this function) and at its end.  Training loops get it (XLA301, XLA303,
XLA305), and so do evaluation loops that carry device state (XLA704)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from codemods.engine.rewriter import Context, NodeT
    from codemods.engine.rule import Rule

    # Makes the barrier statement (a new one each time).
    Barrier = Callable[[], cst.SimpleStatementLine]
    CSTNodeT = TypeVar("CSTNodeT", bound=cst.CSTNode)

_EXITS = (cst.Break, cst.Continue, cst.Return, cst.Raise)


def with_barriers(
    ctx: Context[Any],
    rule: Rule,
    original: NodeT,
    updated: NodeT,
    message: str,
    exits: tuple[type, ...] = (cst.Continue, cst.Break),
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

        # A loop (every iteration) or a function (every run) gets the barrier.
        assert isinstance(updated, (cst.For, cst.While, cst.FunctionDef))
        return _end_iterations(updated.body, barrier, exits)

    body = ctx.fix(rule, original, message, build, result=lambda _: inserted[-1])
    return updated if body is None else updated.with_changes(body=body)


def _end_iterations(
    body: cst.BaseSuite, barrier: Barrier, exits: tuple[type, ...] = (cst.Continue, cst.Break)
) -> cst.BaseSuite:
    """``body`` with a barrier before each statement of the ``exits`` kinds that belongs
    to it (``continue`` or ``break`` of this loop, ``return`` of this function) and at its end
    (before a final break/continue/return/raise)."""
    visited = body.visit(_BeforeExits(barrier, exits))
    assert isinstance(visited, cst.BaseSuite)  # _BeforeExits never removes the suite it is given
    body = visited
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

    def __init__(self, barrier: Barrier, exits: tuple[type, ...]) -> None:
        super().__init__()
        self.barrier = barrier
        self.exits = exits
        self.through = self._THROUGH + (() if cst.Continue in exits else (cst.For, cst.While))
        self.inserted = 0
        self.marks: list[int] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.marks.append(self.inserted)
        return isinstance(node, self.through)

    def on_leave(
        self, original_node: CSTNodeT, updated_node: CSTNodeT
    ) -> CSTNodeT | cst.RemovalSentinel | cst.FlattenSentinel[CSTNodeT]:
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
            elif at is not None and type(statement) is cst.SimpleStatementLine:  # (``at``: only of such a line)
                statement = statement.with_changes(body=self._inline(statement.body, at))
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
