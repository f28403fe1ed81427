"""Entry point: the module-level ``main`` function, the ``if __name__ == "__main__":``
guard and an existing ``_mp_fn`` (the function SageMaker's pytorchxla launcher and
``torch_xla.launch`` call with the process index)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import string_value
from codemods.engine.walk import Analysis, Walk
from codemods.targets import ENTRY_FUNCTION

if TYPE_CHECKING:
    from codemods.facts import Facts


class EntryAnalysis(Analysis):
    facts: Facts

    name = "entry"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        part = self.facts.entry
        name = node.name.value
        if name == ENTRY_FUNCTION:
            part.mp_fn = node
        elif name == "main" and len(self.walk.functions) == 1 and not self.walk.class_depth and _callable_bare(node):
            part.main = node

    def visit_Expr(self, node: cst.Expr) -> None:
        if self.walk.module_level and type(node.value) is cst.Call:
            self.facts.entry.top_level_calls.append(node.value)

    def visit_If(self, node: cst.If) -> None:
        if self.walk.module_level and not self.walk.conds[:-1] and is_main_guard(node.test) and _runs_code(node):
            self.facts.entry.main_guard = node


def _runs_code(guard: cst.If) -> bool:
    """A guard whose block holds more than ``pass``, ``...`` and strings: one that does nothing
    starts nothing (it is no entry point, and there is no code to launch in each process)."""
    body = guard.body
    statements: list[cst.CSTNode] = list(body.body) if isinstance(body, cst.SimpleStatementSuite) else []
    if isinstance(body, cst.IndentedBlock):
        for line in body.body:
            statements.extend(line.body if isinstance(line, cst.SimpleStatementLine) else [line])
    return guard.orelse is not None or any(not _does_nothing(statement) for statement in statements)


def _does_nothing(statement: cst.CSTNode) -> bool:
    return type(statement) is cst.Pass or (
        type(statement) is cst.Expr and isinstance(statement.value, (cst.Ellipsis, cst.SimpleString))
    )


def _callable_bare(function: cst.FunctionDef) -> bool:
    """``main()`` works: no parameter without a default (``*args``/``**kwargs`` are fine)."""
    params = function.params
    return all(p.default is not None for p in (*params.posonly_params, *params.params)) and all(
        p.default is not None for p in params.kwonly_params
    )


def code_owner(walk: Walk, guard: cst.If | None) -> str:
    """Whose code the walk is in: the top-level function or class, "<guard>" for the
    main guard ``guard``, "" for the rest of the module level."""
    if walk.scopes:
        return walk.scopes[0]
    return "<guard>" if guard is not None and bool(walk.conds) and walk.conds[0] is guard else ""


def is_main_guard(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    sides = (test.left, target.comparator)
    return (
        isinstance(target.operator, cst.Equal)
        and any(isinstance(s, cst.Name) and s.value == "__name__" for s in sides)
        and any(string_value(s) == "__main__" for s in sides)
    )
