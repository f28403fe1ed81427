"""Whether the host reads of a loop run in every iteration when each of them sits in a branch:
an ``if`` whose every branch reads (``if regression: loss += mse(...).item() else: loss +=
nll(...).item()``) reads in every iteration as surely as one read outside any ``if``.

A branch that ends the loop (``raise``, ``return``, ``break``) leaves no later iteration to read
in; a statement that may leave the iteration before the read otherwise (a ``continue``, or any of
them under an ``if``) ends the search: what comes after it may not run."""

from __future__ import annotations

from collections.abc import Collection

import libcst as cst

from codemods.engine.nodes import walk

_LEAVES = (cst.Continue, cst.Break, cst.Return, cst.Raise)


def reads_every_iteration(loop: cst.For | cst.While, reads: Collection[cst.CSTNode]) -> bool:
    """Every path through one iteration of ``loop`` runs one of ``reads`` (calls in its branches)."""
    return bool(reads) and _block_reads(loop.body, {id(read) for read in reads})


def _block_reads(block: cst.BaseSuite, reads: set[int]) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for statement in statements:
        if _statement_reads(statement, reads) or _ends_the_loop(statement):
            return True
        if any(isinstance(node, _LEAVES) for node in walk(statement)):
            return False
    return False


def _ends_the_loop(statement: cst.CSTNode) -> bool:
    """``raise ...``, ``return ...``, ``break``: no later iteration adds to the graph."""
    return isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and any(
        isinstance(small, (cst.Raise, cst.Return, cst.Break)) for small in statement.body
    )


def _statement_reads(statement: cst.CSTNode, reads: set[int]) -> bool:
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(id(node) in reads for node in walk(statement))
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        if orelse is None or not _block_reads(statement.body, reads):
            return False
        return _statement_reads(orelse, reads) if isinstance(orelse, cst.If) else _block_reads(orelse.body, reads)
    if isinstance(statement, (cst.With, cst.Try)):
        return _block_reads(statement.body, reads)
    return False
