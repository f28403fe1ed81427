"""What the CUDA runtime rules' hooks ask of a reference (runtime_apis.py's tables): whether
it goes with a device call the device rewrite replaces, and whether its statement only sets
or calls it (XLA502 removes such a statement: deleting it changes nothing on XLA; the CUDA-only
analysis finds the lines that hold one).  Loaded by the hooks when they first run (it imports
LibCST)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import walk

if TYPE_CHECKING:
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# Expressions that may run code of their own: a statement holding one is not simply deleted.
_ACTIVE = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Subscript, cst.BaseComp)
_STATEMENT_LINES = (cst.SimpleStatementLine, cst.SimpleStatementSuite)


def goes_with_device_call(ctx: Context[Facts], original: cst.CSTNode) -> bool:
    """Inside a device call that becomes the XLA device, or a removed call: it goes with it."""
    replacing = ctx.facts.device.replaced_parts.get(original)
    return replacing is not None and ctx.enabled(replacing[1], replacing[0])


def only_sets_or_calls(ctx: Context[Facts], original: cst.CSTNode) -> cst.BaseSmallStatement | None:
    """The statement around ``original`` if all it does is set it (``cudnn.benchmark
    = True``, one target) or call it (``torch.cuda.empty_cache()``), with nothing
    else that could run code; deleting such a statement changes nothing on XLA."""
    chain = ctx.ancestors
    if len(chain) < 4 or chain[-1] is not original or type(chain[-4]) not in _STATEMENT_LINES:
        return None
    statement = chain[-3]
    if not isinstance(statement, cst.BaseSmallStatement) or set_or_called(statement) is not original:
        return None
    return statement if passive(statement) else None


def set_or_called(statement: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    """What a statement sets (``x.y = ...``, one target) or calls (``f(...)``, a statement of its own)."""
    if type(statement) is cst.Expr and type(statement.value) is cst.Call:
        return statement.value.func
    if type(statement) is cst.Assign and len(statement.targets) == 1:
        return statement.targets[0].target
    return None


def passive(statement: cst.BaseSmallStatement) -> bool:
    """Whether the arguments of what a statement calls, or the value it sets, run no code."""
    if type(statement) is cst.Expr and type(statement.value) is cst.Call:
        return all(_passive(arg.value) for arg in statement.value.args)
    return type(statement) is cst.Assign and _passive(statement.value)


def _passive(expression: cst.CSTNode) -> bool:
    return not any(isinstance(node, _ACTIVE) for node in walk(expression))
