"""Buffers filled in place (the part of CudaOnlyAnalysis that follows them): a preallocated
tensor the port puts on the XLA device, resized and filled with each batch (``v.data.resize_(
data.size()).copy_(data)``, directly or through a helper of the file or of another project
module: ``utils.loadData(image, cpu_images)``).  On XLA a resize to a larger size raises
(functionalization) and a smaller one keeps the old shape."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.cuda_only.code_shapes import calls
from codemods.engine.nodes import dotted, method_name
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.cuda_only.facts import CudaOnlyFacts
    from codemods.facts import Facts


class ResizedBuffers(Analysis):
    """The part of CudaOnlyAnalysis that follows buffers resized in place."""

    facts: Facts
    part: CudaOnlyFacts
    # Names bound to a tensor on the device, by (function or "" for the module, name); the names
    # each function binds at all (a module's name is read in a function that binds no such name).
    device_bound: set[tuple[str, str]]
    bound_in: set[tuple[str, str]]
    # ``x.resize_(...)``, ``x.data.resize_(...)``: the call, the name, its function ("" outside one).
    resizes: list[tuple[cst.Call, str, str]]

    def _resize(self, node: cst.Call) -> None:
        """``x.resize_(size)`` or ``x.data.resize_(size)`` of a name; a module-level function
        that does it to its parameter resizes what its callers hand it there."""
        if method_name(node) != "resize_" or type(node.func) is not cst.Attribute:
            return
        held = node.func.value
        if type(held) is cst.Attribute and held.attr.value == "data":
            held = held.value
        if type(held) is not cst.Name:
            return
        function = self.walk.enclosing_function
        scope = self.walk.qualname if function is not None else ""
        self.resizes.append((node, held.value, scope))
        if function is not None and not self.walk.class_depth and scope == function.name.value:
            names = [param.name.value for param in function.params.params]
            if held.value in names:
                self.part.resizing_functions.add((scope, names.index(held.value)))

    def _on_device(self, name: str, scope: str) -> bool:
        if (scope, name) in self.device_bound:
            return True
        return scope != "" and (scope, name) not in self.bound_in and ("", name) in self.device_bound

    def _resized_buffers(self) -> None:
        """Resizes of a name on the device, and calls handing one to a function that resizes
        its parameter (of this file, or of another project module by its summary)."""
        for node, name, scope in self.resizes:
            if self._on_device(name, scope):
                self.part.resized_buffers[node] = (name, "")
        project = self.walk.analysis(ProjectAnalysis)
        local = set(self.part.resizing_functions)
        for call, callee in project.calls:
            index: int | None = None
            helper = ""
            for qualname, at in local:
                if calls(callee, qualname):
                    index, helper = at, qualname
            if index is None:
                found = project.origin(callee)
                if found is None or found.summary is None:
                    continue
                index = next((at for name, at in found.summary.resizing_functions if name == found.name), None)
                helper = found.name
            if index is None or len(call.args) <= index or call.args[index].keyword is not None:
                continue
            handed = dotted(call.args[index].value)
            scope = self.call_scopes.get(call, "")
            if handed is not None and "." not in handed and self._on_device(handed, scope):
                self.part.resized_buffers[call] = (handed, helper)

    call_scopes: dict[cst.Call, str]
