"""Reduce ops the xla process group refuses (``ValueError: Invalid reduce op``):
``dist.all_reduce(t, op=dist.ReduceOp.AVG)`` statements, which become the same in-place
average with ``xm.all_reduce``, and every other use of AVG or PREMUL_SUM (reported)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.walk import Analysis, Walk, attributes_named, calls_of

if TYPE_CHECKING:
    from codemods.facts import Facts

UNSUPPORTED_REDUCE_OPS = frozenset({"torch.distributed.ReduceOp.AVG", "torch.distributed.ReduceOp.PREMUL_SUM"})
ALL_REDUCE = "torch.distributed.all_reduce"


class ReduceOpAnalysis(Analysis):
    facts: Facts

    name = "reduce_ops"
    fills = "distributed"

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.statement: cst.SimpleStatementLine | None = None
        self.reduce_ops: list[cst.Attribute] = []  # ReduceOp.AVG / PREMUL_SUM anywhere
        self.fixed_reduce_ops: set[int] = set()  # those in an all_reduce that is rewritten

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    @attributes_named("AVG", "PREMUL_SUM")
    def _reduce_op(self, node: cst.Attribute) -> None:
        if self.walk.resolve(node) in UNSUPPORTED_REDUCE_OPS:
            self.reduce_ops.append(node)

    @calls_of(ALL_REDUCE)
    def _all_reduce(self, node: cst.Call) -> None:
        """``dist.all_reduce(t, op=dist.ReduceOp.AVG)`` as a statement of its own, with no
        group or async_op: the same in-place average with xm.all_reduce."""
        statement = self.statement
        if statement is None or len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr):
            return
        if statement.body[0].value is not node or any(a.star for a in node.args):
            return
        named = {
            ("tensor", "op")[i] if a.keyword is None and i < 2 else (a.keyword.value if a.keyword else ""): a
            for i, a in enumerate(node.args)
        }
        op = named.get("op")
        if set(named) != {"tensor", "op"} or op is None or not isinstance(op.value, cst.Attribute):
            return
        if self.walk.resolve(op.value) == "torch.distributed.ReduceOp.AVG":
            self.part.average_reduces.add(node)
            self.fixed_reduce_ops.add(id(op.value))

    def finish(self) -> None:
        self.part.unsupported_reduce_ops = {op for op in self.reduce_ops if id(op) not in self.fixed_reduce_ops}
