"""What the CUDA runtime rules' hooks ask of a reference (runtime_apis.py's tables): whether
it goes with a device call the device rewrite replaces, and whether its statement only sets
or calls it (XLA502 removes such a statement: deleting it changes nothing on XLA).  Loaded
by the hooks when they first run (it imports LibCST)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import walk

if TYPE_CHECKING:
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# Expressions that may run code of their own: a statement holding one is not simply deleted.
_ACTIVE = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Subscript, cst.BaseComp)


def goes_with_device_call(ctx: Context[Facts], original: cst.CSTNode) -> bool:
    """Inside a device call that becomes the XLA device, or a removed call: it goes with it."""
    replacing = ctx.facts.device.replaced_parts.get(original)
    return replacing is not None and ctx.enabled(replacing[1], replacing[0])


def only_sets_or_calls(ctx: Context[Facts], original: cst.CSTNode) -> cst.BaseSmallStatement | None:
    """The statement around ``original`` if all it does is set it (``cudnn.benchmark
    = True``, one target) or call it (``torch.cuda.empty_cache()``), with nothing
    else that could run code; deleting such a statement changes nothing on XLA."""
    chain = ctx.ancestors
    if len(chain) < 4 or chain[-1] is not original:
        return None
    inner, middle, statement = chain[-2], chain[-3], chain[-4]
    if isinstance(inner, cst.Call) and inner.func is original and isinstance(middle, cst.Expr):
        quiet = all(_passive(arg.value) for arg in inner.args)
    elif isinstance(inner, cst.AssignTarget) and isinstance(middle, cst.Assign) and len(middle.targets) == 1:
        quiet = _passive(middle.value)
    else:
        return None
    return middle if quiet and isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None


def _passive(expression: cst.CSTNode) -> bool:
    return not any(isinstance(node, _ACTIVE) for node in walk(expression))
