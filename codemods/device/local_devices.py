"""A function's own device value: ``device = edge_list.device if ... else "cpu"``, then
``torch.zeros(0, 2, device=device)`` (TorchDrug's ``Graph._standarize_edge_list``).

The device analysis reads a name handed to ``.cuda(device)`` as a CUDA index wherever the file
uses that name as a device (``.to(device)``, ``device=device``), across its functions: a function
that binds the name itself, only to a string (``"cpu"``) or to another value's ``.device`` that
nothing marks as an index, holds another value under it, a device and no index. Its moves and
``device=`` keywords stay as written: the XLA device there would put the tensors it makes on XLA
where the code keeps them on the CPU (an edgeless graph built on the CPU, concatenated with the
others: "Expected all tensors to be on the same device")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import libcst as cst

from codemods.engine.nodes import dotted, is_cuda_device_string
from codemods.engine.walk import Analysis, Walk, assignments


class LocalDevices(Analysis):
    """The part of DeviceAnalysis that finds a function's own device values (see the module)."""

    function_params: dict[str, list[str]]

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        # (function, name) -> the values the function binds the name to (undotted names only).
        self.local_values: dict[tuple[str, str], list[cst.BaseExpression]] = defaultdict(list)
        self.move_scopes: dict[cst.Call, str] = {}  # a move or a ``device=`` keyword: its function

    @assignments()
    def _local_device_value(self, name: str, value: cst.BaseExpression) -> None:
        if "." not in name and self.walk.functions:
            self.local_values[(self.walk.qualname, name)].append(value)

    def saw_device_use(self, node: cst.Call) -> None:
        if self.walk.functions:
            self.move_scopes[node] = self.walk.qualname

    def own_local_device(self, call: cst.Call, name: str, indices: set[str]) -> bool:
        """``name`` at ``call`` is a local of its function that the function binds only to devices
        that are no index (``indices``: the names known to be CUDA indices)."""
        scope = self.move_scopes.get(call)
        if scope is None or "." in name or name in self.function_params.get(scope, ()):
            return False
        values = self.local_values.get((scope, name), [])
        resolve = self.walk.resolve
        return bool(values) and all(_no_index(value, indices, resolve) for value in values)


def _no_index(
    value: cst.BaseExpression, indices: set[str], resolve: Callable[[cst.BaseExpression], str | None]
) -> bool:
    """``value`` is a device that is no CUDA index: ``"cpu"``, ``x.device``, ``torch.device("cpu")``
    (also ``torch.device("meta", ...)``, under any alias of torch)."""
    if type(value) is cst.IfExp:
        return _no_index(value.body, indices, resolve) and _no_index(value.orelse, indices, resolve)
    if type(value) is cst.Call and resolve(value.func) == "torch.device" and value.args:
        first = value.args[0]
        return (
            type(first.value) is cst.SimpleString
            and first.keyword is None
            and not first.star
            and (not is_cuda_device_string(first.value))
        )
    if type(value) is cst.SimpleString:
        return not is_cuda_device_string(value)  # "cpu"
    if type(value) is cst.Attribute and value.attr.value == "device":
        owner = dotted(value.value)
        return owner is not None and owner.split(".")[0] != "self" and dotted(value) not in indices
    return False
