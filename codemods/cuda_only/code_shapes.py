"""The shapes of code the CUDA-only analysis (analysis.py) recognises: a module run as a
script, tests that require CUDA, bodies that raise, the calls that keep a tensor sparse, the
arguments that pass a setting on; and what CUDA queries answer on an XLA host."""

from __future__ import annotations

import libcst as cst

from codemods.cuda_only.cuda_answers import UNKNOWN
from codemods.engine.nodes import (
    arg_value,
    call_args,
    is_false,
    is_none,
)
from codemods.engine.positions import code_of

# torch.utils.cpp_extension's builders of an extension module from C++/CUDA sources.
CPP_EXTENSION_LOADS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})


def runs_as_script(module: cst.Module) -> bool:
    """The module does something when run: an ``if __name__ == "__main__":``, or a call at
    its top level (``Trainer(model).fit(10)``, ``main()``)."""
    for statement in module.body:
        if isinstance(statement, cst.If) and "__main__" in code_of(statement.test):
            return True
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) for small in statement.body
        ):
            return True
    return False


def requires_cuda(test: cst.BaseExpression) -> bool:
    """``not x.is_cuda``: true for every tensor that is not on CUDA (an XLA one)."""
    return (
        type(test) is cst.UnaryOperation
        and type(test.operator) is cst.Not
        and type(test.expression) is cst.Attribute
        and test.expression.attr.value == "is_cuda"
    )


def raises(body: cst.BaseSuite) -> bool:
    """The block raises (its only statement, or its last)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = statements[-1] if statements else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and type(last.body[-1]) is cst.Raise


# What the CUDA queries that return without CUDA answer on an XLA host, and with one GPU.
ANSWERS: dict[str, tuple[object, object]] = {
    "torch.cuda.device_count": (0, 1),
    "torch.cuda.is_bf16_supported": (False, UNKNOWN),
}

# Methods that keep a tensor sparse: ``adj.coalesce().to(device)`` moves a sparse tensor.
KEEP_SPARSE = frozenset({"coalesce", "float", "double", "half", "detach"})


def unavailable_checks(test: cst.BaseExpression) -> list[cst.Call]:
    """The calls of ``not torch.cuda.is_available()`` (or another call under ``not``), the
    test itself or an operand of an ``or`` (``not torch.cuda.is_available() or not
    enabled()``: True wherever that operand is)."""
    operands: list[cst.BaseExpression] = []
    while type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
        operands.append(test.right)
        test = test.left
    operands.append(test)
    return [
        operand.expression
        for operand in reversed(operands)
        if type(operand) is cst.UnaryOperation
        and type(operand.operator) is cst.Not
        and type(operand.expression) is cst.Call
    ]


def sparse_core(node: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` of ``x.coalesce()``, ``x.coalesce().float()``: what a sparse tensor was before
    methods that keep it sparse."""
    while type(node) is cst.Call and not node.args and type(func := node.func) is cst.Attribute:
        if func.attr.value not in KEEP_SPARSE:  # (method_name(node))
            break
        node = func.value  # (receiver(node))
    return node


def calls(callee: str, qualname: str) -> bool:
    """A call of ``callee`` in the function's own file runs it: ``build``, ``self.build``
    for ``Model.build``, ``Model`` for ``Model.__init__``."""
    owner, _, name = qualname.rpartition(".")
    if name == "__init__":
        return callee == owner
    return callee == qualname or (bool(owner) and callee == f"self.{name}")


def passes_not_false(call: cst.Call, index: int, param: str) -> str | None:
    """What ``call`` passes for the parameter, as a finding names it, unless it is False,
    None or nothing (the default); ``**kwargs`` may pass anything."""
    value = arg_value(call, index, param) if index >= 0 else call_args(call)[1].get(param)
    if isinstance(value, cst.Arg):
        value = value.value
    if value is None:
        return f"`{code_of(call)}`" if any(a.star for a in call.args) else None
    if is_false(value) or is_none(value):
        return None
    return f"`{code_of(call.func)}(..., {param}={code_of(value)})`"


def keyword_set(call: cst.Call, keyword: str) -> cst.Arg | None:
    """The call's ``keyword=`` argument, unless it is False or None."""
    arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    return None if arg is None or (type(arg.value) is cst.Name and arg.value.value in ("False", "None")) else arg
