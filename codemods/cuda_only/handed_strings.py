"""A "cuda" string handed to a class or function of the project (``MemoryMonitor("cuda")``,
``make_buffer(8, "cuda")``): the device rewrites convert "cuda" where a device goes, and here
it goes into the project's own code.  Followed into a callable of this file: where its
parameter (or the ``self`` attribute it is stored in) is only used as a device (``device=``,
``.to()``, ``torch.device()``), the string becomes the XLA device's; where it is used as a
device and otherwise too, it is reported; where it is never used as a device (CUDA memory
statistics, a log line), nothing is said of it (those uses have findings of their own).  A
callable of another module of the project is not followed: reported; one of the standard
library (``os.path.join(root, "cuda", "*.cu")``, a directory's name) is no device's.  A call whose result is
only compared with strings (``os.getenv("DEVICE", "cuda") == "cuda"``) hands "cuda" back to the
test, which compares it with a string: it is not a device handed on, and nothing is said of it
(the comparison is the device analysis's)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import libcst as cst

from codemods.cuda_only.facts import HandedString
from codemods.engine.imports import ImportTable
from codemods.engine.nodes import args_by_position, children, dotted, is_cuda_device_string, method_name, parents_of
from codemods.engine.walk import Analysis, Walk

if TYPE_CHECKING:
    from codemods.facts import Facts

_SELF = "self"
# What a CUDA device string can be written as (is_cuda_device_string looks only at these).
_STRING_KINDS = (cst.SimpleString, cst.FormattedString, cst.Call, cst.BinaryOperation)


class HandedStringAnalysis(Analysis):
    facts: Facts

    name = "handed_strings"
    fills = "cuda_only"
    conclude_reads = ("device", "imports")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.cuda_only
        self.functions: dict[str, cst.FunctionDef] = {}  # top-level functions of the file
        self.classes: dict[str, cst.ClassDef] = {}
        self.candidates: list[tuple[cst.Call, str]] = []
        # Calls whose result is only compared with strings (``os.getenv("DEVICE", "cuda") == "cuda"``).
        self.compared: set[cst.Call] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.walk.scopes[:-1]:  # the walk has entered it: its own name is the only scope
            self.functions[node.name.value] = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if len(self.walk.scopes) == 1:
            self.classes[node.name.value] = node

    def visit_Call(self, node: cst.Call) -> None:
        if (
            any(type(a.value) in _STRING_KINDS and is_cuda_device_string(a.value) for a in node.args)
            and (name := dotted(node.func)) is not None
        ):
            self.candidates.append((node, name))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        calls = [o for o in operands if type(o) is cst.Call]
        if len(calls) == 1 and all(_strings(o) for o in operands if o is not calls[0]):
            self.compared.add(calls[0])

    def conclude(self) -> None:
        converted = self.facts.device.strings | self.facts.device.foreign_device_strings.keys()  # (XLA101's)
        for call, name in self.candidates:
            if call in self.compared:
                continue  # a string the call hands back for the test, not a device it is handed
            for arg in call.args:
                if not is_cuda_device_string(arg.value) or arg.value in converted or arg.star:
                    continue
                found = self._follow(call, arg, name)
                if found is not None:
                    self.part.handed_strings[arg.value] = found

    def _follow(self, call: cst.Call, arg: cst.Arg, name: str) -> HandedString | None:
        head = name.split(".")[0]
        if name in self.classes or name in self.functions:
            function = self._init(name) if name in self.classes else self.functions[name]
            if function is None:
                return None
            params = tuple(p.name.value for p in function.params.params if p.name.value != _SELF)
            parameter = next((p for p, a in args_by_position(call, params) if a is arg), None)
            if parameter is None:
                return None
            scope: cst.CSTNode = self.classes.get(name, function)
            uses = _uses(function, scope, parameter, self.facts.imports.table)
            if not uses:
                return None
            devices = [use for use, as_device in uses if as_device]
            if not devices:
                return None
            if len(devices) == len(uses):
                return HandedString(name, True, f"`{name}` uses its `{parameter}` only as a device")
            return HandedString(name, False, f"`{name}` uses its `{parameter}` as a device and otherwise too")
        if head in self.facts.imports.project_names:
            module = self.facts.imports.project_names[head][0]
            if not module.startswith(".") and module.split(".")[0] in sys.stdlib_module_names:
                return None  # ``os.path.join(root, "cuda", "*.cu")``: the standard library's, a path segment
            return HandedString(name, False, f"`{name}` comes from `{module}`, which this file does not follow")
        return None

    def _init(self, name: str) -> cst.FunctionDef | None:
        body = self.classes[name].body.body
        return next((s for s in body if type(s) is cst.FunctionDef and s.name.value == "__init__"), None)


def _uses(
    function: cst.FunctionDef, scope: cst.CSTNode, parameter: str, table: ImportTable
) -> list[tuple[cst.CSTNode, bool]]:
    """Each read of the parameter in the function, and of the ``self`` attribute it is stored
    in across the class (``self.device = device``): whether it is a device there."""
    parents = parents_of(scope)
    in_function = {id(node) for node in parents_of(function.body).values()} | {id(function.body)}
    stored = {
        dotted(target.target)
        for node in parents_of(function.body).values()
        if type(node) is cst.Assign and dotted(node.value) == parameter
        for target in node.targets
        if (dotted(target.target) or "").startswith(_SELF + ".")
    }
    found: list[tuple[cst.CSTNode, bool]] = []
    for key, node in _nodes_by_id(scope).items():
        parent = parents.get(key)
        if type(parent) is cst.AssignTarget or (type(parent) is cst.Attribute and parent.value is node):
            continue  # a write, or the head of a longer chain
        if (
            type(parent) is cst.Param
            or (type(parent) is cst.Arg and parent.keyword is node)
            or (type(parent) is cst.Attribute and parent.attr is node)
        ):
            continue  # a parameter's or a keyword's name, an attribute's last part: no read
        if type(parent) is cst.Assign and parent.value is node:
            continue  # stored (``self.device = device``): its reads count
        if (type(node) is cst.Name and node.value == parameter and id(parent) in in_function) or (
            type(node) is cst.Attribute and dotted(node) in stored
        ):
            found.append((node, _device_position(parent, parents, table)))
    return found


def _device_position(parent: cst.CSTNode | None, parents: dict[int, cst.CSTNode], table: ImportTable) -> bool:
    """``device=x``, ``t.to(x)``, ``torch.device(x)`` (under any import alias)."""
    if type(parent) is not cst.Arg:
        return False
    if parent.keyword is not None:
        return parent.keyword.value == "device"
    call = parents.get(id(parent))
    if type(call) is not cst.Call or call.args[0] is not parent:
        return False
    return method_name(call) == "to" or table.resolve(call.func) == "torch.device" or dotted(call.func) == "device"


def _nodes_by_id(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    nodes = {id(root): root}
    stack = [root]
    while stack:
        for child in children(stack.pop()):
            nodes[id(child)] = child
            stack.append(child)
    return nodes


def _strings(node: cst.BaseExpression) -> bool:
    """A string literal, or a literal collection of them (``("cuda", "xla")``)."""
    if type(node) in (cst.SimpleString, cst.ConcatenatedString):
        return True
    if type(node) in (cst.Tuple, cst.List, cst.Set):
        return all(_strings(e.value) for e in node.elements)  # type: ignore[attr-defined]  # narrowed by type(node) in (...) above: mypy does not narrow on type()
    return False
