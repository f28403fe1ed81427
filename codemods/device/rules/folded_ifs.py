"""Folding an ``if`` (or ``elif``) whose test became a constant: the branch that runs
stays, dedented into the parent block, with the comments around the branches."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

# Context.keep_lines_after: comment lines to keep right after a statement that goes.
KeepLinesAfter = Callable[[cst.BaseStatement, Sequence[cst.EmptyLine]], None]


def fold_if(
    statement: cst.If, test: cst.BaseExpression | bool, is_elif: bool, keep_lines_after: KeepLinesAfter
) -> cst.If | cst.Else | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
    """An ``if`` (or ``elif``) whose test folded: keep the branch that runs, or keep
    the ``if`` with the simpler test.  Comment lines after a removed branch that LibCST
    gives to its block though they are outside it (less indented) stay, after what is
    kept."""
    if not isinstance(test, bool):
        return statement.with_changes(test=test)
    if test:
        tail = _footer(statement.orelse)
        if is_elif:
            body = statement.body
            if isinstance(body, cst.IndentedBlock):
                body = body.with_changes(footer=[*body.footer, *tail])
            return cst.Else(body=body)
        return _flatten(statement.body, statement.leading_lines, keep_lines_after, tail)
    orelse = statement.orelse
    tail = _footer(statement.body)
    if orelse is None:
        keep_lines_after(statement, tail)
        return cst.RemoveFromParent()
    if is_elif:
        return orelse.with_changes(leading_lines=[*tail, *orelse.leading_lines])
    leading = [*statement.leading_lines, *tail, *orelse.leading_lines]
    if isinstance(orelse, cst.If):
        return orelse.with_changes(leading_lines=leading)
    return _flatten(orelse.body, leading, keep_lines_after)


def _footer(branch: cst.CSTNode | None) -> Sequence[cst.EmptyLine]:
    """The comment lines that end a removed branch (of an elif chain: its last one) but
    are not its own: from the first one outside its indentation on."""
    while isinstance(branch, cst.If):
        branch = branch.orelse if branch.orelse is not None else branch.body
    if isinstance(branch, cst.Else):
        branch = branch.body
    lines = branch.footer if isinstance(branch, cst.IndentedBlock) else ()
    outside = next((index for index, line in enumerate(lines) if not line.indent), len(lines))
    return lines[outside:]


def _flatten(
    body: cst.BaseSuite,
    leading: Sequence[cst.EmptyLine],
    keep_lines_after: KeepLinesAfter,
    tail: Sequence[cst.EmptyLine] = (),
) -> cst.FlattenSentinel[cst.BaseStatement]:
    """The statements of a block, dedented into its parent; the header's comment
    (``if ...:  # note``) becomes a comment line above them, and the comment lines that
    end the block (its footer), then ``tail``, follow them."""
    if isinstance(body, cst.SimpleStatementSuite):
        statements: list[cst.BaseStatement] = [cst.SimpleStatementLine(body=body.body)]
        comment = body.trailing_whitespace.comment
    else:
        statements = list(body.body)  # type: ignore[arg-type]  # body is an IndentedBlock here (SimpleStatementSuite handled above): mypy does not narrow
        comment = body.header.comment  # type: ignore[attr-defined]  # body is an IndentedBlock here (SimpleStatementSuite handled above): mypy does not narrow
    header = [cst.EmptyLine(comment=comment)] if comment is not None else []
    first = statements[0]
    statements[0] = first.with_changes(leading_lines=[*leading, *header, *first.leading_lines])  # type: ignore[attr-defined]  # every statement has leading_lines; the BaseStatement type does not declare it
    footer = body.footer if isinstance(body, cst.IndentedBlock) else ()
    keep_lines_after(statements[-1], [*footer, *tail])
    return cst.FlattenSentinel(statements)
