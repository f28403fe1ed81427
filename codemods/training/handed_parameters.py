"""What a call hands a callee's parameters: the parameter a name of the callee is (or is bound
to: ``self.model = model``), the device it takes from one (``device``, ``args.device``) and
what a call passes for it (the CPU: the module stays where it was built).  Kept apart from
early_optimizers.py, which follows moves and optimizers into callees through them; the round
trips and the training analysis read them too."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import arg_value, call_args, dotted, names_the_cpu

if TYPE_CHECKING:
    from codemods.training.records import _Function


def parameter_named(fn: _Function, name: str) -> str | None:
    """The parameter of ``fn`` that ``name`` is, or is bound to (``self.model = model``)."""
    return name if name in fn.params or name in fn.keyword_params else fn.bound.get(name)


def through_bound(bound: dict[str, str], name: str | None) -> str | None:
    """``name`` with a prefix bound to a parameter replaced by it: ``self.args.device``
    after ``self.args = kwargs["args"]`` is ``args.device``."""
    if name is None:
        return None
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        if (param := bound.get(".".join(parts[:cut]))) is not None:
            return ".".join([param, *parts[cut:]])
    return name


def handed_device(fn: _Function, device: str | None) -> tuple[int, str] | None:
    """Where ``device`` comes from a parameter of ``fn`` (``device``, ``args.device``): the
    parameter's index (-1: passed by keyword only) and the device as written from it."""
    root = (device or "").split(".")[0]
    if root in fn.params:
        return fn.params.index(root), str(device)
    if root in fn.keyword_params:
        return -1, str(device)
    return None


def argument_name(call: cst.Call, index: int, device: str) -> str | None:
    """What a call passes for the device a callee takes from its parameters (``device``,
    or ``args.device`` of an ``args`` passed by position or, index -1, by keyword only)."""
    root, _, rest = device.partition(".")
    name = dotted(_handed(call, index, root))
    return name if name is None or not rest else f"{name}.{rest}"


def hands_the_cpu(call: cst.Call, index: int, device: str) -> bool:
    """The call passes the CPU (``"cpu"``, ``torch.device("cpu")``) for the device a callee
    takes from its parameter: the module stays where it was built."""
    return "." not in device and names_the_cpu(_handed(call, index, device))


def _handed(call: cst.Call, index: int, parameter: str) -> cst.BaseExpression | None:
    """What a call passes for a callee's parameter (at ``index``, -1: by keyword only)."""
    value = arg_value(call, index, parameter) if index >= 0 else call_args(call)[1].get(parameter)
    return value.value if isinstance(value, cst.Arg) else value
