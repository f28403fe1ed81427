"""Which uses of a CUDA device count, in the process that launches the workers, still
decide something there once the script is ported (XLA602 reports only those).

``ngpus_per_node = torch.cuda.device_count()`` is 0 on an XLA host.  The workers read the
XLA count again (distributed.facts' ``rereads``), so a use in the launching process matters
only where the 0 still flows into something that runs: a condition, a call, a value returned
or read later.  It decides nothing where the port leaves it nowhere to go:

- it is handed to a function of the file that reads the count again at its start
  (``main_worker(args.gpu, ngpus_per_node, args)``, whose first line becomes
  ``ngpus_per_node = xr.local_process_count()``), or only printed;
- it is stored (``args.world_size = ngpus_per_node * args.world_size``) where nothing reads
  it afterwards but arguments the port drops (``init_process_group(world_size=...)``), reads
  that run before the store, and stores that decide nothing in turn.

What is not understood decides (the error stays): a call of anything else, a store into a
subscript, an object whose attribute holds the value handed whole to code outside the file.
"""

from __future__ import annotations

from typing import Literal

import libcst as cst

from codemods.apis import prints
from codemods.cuda_only.module_reads import ModuleReads, bound_parameter
from codemods.distributed.facts import PROCESS_GROUP_DROPPED, ProcessGroup
from codemods.distributed.launch import TORCH_SPAWN, XLA_LAUNCHERS
from codemods.engine.nodes import dotted, walk

# Builtins whose result is only a value computed from their arguments.
PURE_BUILTINS = frozenset({"int", "float", "round", "max", "min", "abs", "str", "bool", "divmod"})
# Expressions through which a value flows into the enclosing expression.
_FLOWS = (
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.BooleanOperation,
    cst.Comparison,
    cst.ComparisonTarget,
    cst.IfExp,
    cst.Tuple,
    cst.List,
    cst.Element,
    cst.StarredElement,
    cst.FormattedString,
    cst.FormattedStringExpression,
)


class CountUses:
    """The uses of counts that the launching process hands on, judged over the module's reads."""

    def __init__(
        self,
        reads: ModuleReads,
        process_groups: dict[cst.Call, ProcessGroup],
        rereads: dict[cst.FunctionDef, tuple[tuple[str, str], ...]],
    ) -> None:
        self.reads = reads
        self.dropped = {
            id(node)
            for group in process_groups.values()
            for name, arg in group.arguments
            if name in PROCESS_GROUP_DROPPED
            for node in walk(arg.value)
        }
        # Functions of the file that read counts again at their start: name -> parameters.
        self.rereading = {
            function.name.value: (function, {p for p, _ in params}) for function, params in rereads.items()
        }

    def decides(self, use: cst.CSTNode) -> bool:
        return self._decides(use, set())

    def _decides(self, node: cst.CSTNode, seen: set[int]) -> bool:
        """Whether the value read at ``node`` still reaches something that runs."""
        parent_of = self.reads.parent
        child = node
        parent = parent_of.get(id(child))
        while parent is not None:
            if isinstance(parent, _FLOWS):
                child, parent = parent, parent_of.get(id(parent))
                continue
            if isinstance(parent, cst.Arg):
                call = parent_of.get(id(parent))
                if not isinstance(call, cst.Call):
                    return True
                use = self._use_by(call, parent, node)
                if use != "value":
                    return use == "anything"
                child, parent = call, parent_of.get(id(call))  # a pure builtin: its value flows on
                continue
            if isinstance(parent, cst.Assign) and parent.value is child:
                return any(self._stored_decides(t.target, parent, seen) for t in parent.targets)
            if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.value is child:
                return self._stored_decides(parent.target, parent, seen)
            return True
        return True

    def _use_by(self, call: cst.Call, arg: cst.Arg, read: cst.CSTNode) -> Literal["nothing", "value", "anything"]:
        """What ``call`` does with the value handed to it: nothing (it prints it, or the
        callee reads the count again at its start), computes its own value from it (a pure
        builtin), or anything (the callee may use it)."""
        func = call.func
        name = func.value if isinstance(func, cst.Name) else None
        if prints(self.reads.resolve(func), name):
            return "nothing"
        if self.reads.resolve(func) in TORCH_SPAWN | XLA_LAUNCHERS:
            return "nothing" if self._worker_overwrites(call, arg, read) else "anything"
        if name in PURE_BUILTINS and self.reads.resolve(func) in (None, name, f"builtins.{name}"):
            return "value"
        if name is not None and name in self.rereading:
            function, params = self.rereading[name]
            return "nothing" if bound_parameter(function, call, arg) in params else "anything"
        return "anything"

    def _worker_overwrites(self, call: cst.Call, arg: cst.Arg, read: cst.CSTNode) -> bool:
        """``read`` is an element of the ``args`` tuple that a launcher (``torch_xla.launch(train,
        args=(world_size,))``, as the port writes ``mp.spawn``) hands a worker of the file, and the
        worker sets that parameter again before it reads it (``world_size = xr.world_size()``, the
        port's first line there): the launching process's count goes nowhere."""
        handed = arg.value
        first = call.args[0] if call.args else None
        if (
            not (arg.keyword is not None and arg.keyword.value == "args" or (arg.keyword is None and arg is not first))
            or type(handed) is not cst.Tuple
            or first is None
            or first.keyword is not None
            or type(first.value) is not cst.Name
        ):
            return False
        worker = self.reads.functions.get(first.value.value)
        position = next((i for i, e in enumerate(handed.elements) if e.value is read), None)
        if worker is None or position is None:
            return False
        params = worker.params.params
        if position + 1 >= len(params) or worker.params.star_arg is not None and position + 1 >= len(params):
            return False
        return _set_before_read(worker, params[position + 1].name.value)

    def _stored_decides(self, target: cst.BaseExpression, statement: cst.CSTNode, seen: set[int]) -> bool:
        """Whether anything reads the value stored in ``target`` after ``statement`` in a
        way that decides something."""
        if id(target) in seen:
            return False
        seen.add(id(target))
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return True
        if isinstance(target, cst.Attribute) and self._handed_outside(target.value):
            return True
        return any(
            self._decides(read, seen)
            for read in self.reads.later_reads(target, statement)
            if id(read) not in self.dropped
        )

    def _handed_outside(self, base: cst.BaseExpression) -> bool:
        """The object (``args`` of ``args.world_size``) is handed whole to code outside the
        file, which may read any attribute of it."""
        name = dotted(base)
        if name is None:
            return True
        parent_of = self.reads.parent
        for read in self.reads.names.get(name, ()) if "." not in name else ():
            parent = parent_of.get(id(read))
            while isinstance(parent, (cst.Tuple, cst.List, cst.Element)):
                parent = parent_of.get(id(parent))
            if type(parent) is not cst.Arg:
                continue
            call = parent_of.get(id(parent))
            if type(call) is not cst.Call:
                continue
            func = call.func
            if type(func) is cst.Name and func.value in self.reads.functions:
                continue
            if prints(self.reads.resolve(func), func.value if type(func) is cst.Name else None):
                continue
            if self.reads.resolve(func) in TORCH_SPAWN | XLA_LAUNCHERS:
                continue
            return True
        return False


def _set_before_read(function: cst.FunctionDef, name: str) -> bool:
    """The function's first statements set ``name`` (a plain ``name = value`` that does not read it)
    before any statement reads it or any compound statement runs."""
    body = function.body
    if type(body) is not cst.IndentedBlock:
        return False
    for statement in body.body:
        if type(statement) is not cst.SimpleStatementLine:
            return False
        for small in statement.body:
            if (
                type(small) is cst.Assign
                and len(small.targets) == 1
                and type(small.targets[0].target) is cst.Name
                and small.targets[0].target.value == name
            ):
                return not _names(small.value, name)
            if _names(small, name):
                return False
    return False


def _names(node: cst.CSTNode, name: str) -> bool:
    """``node`` holds the name ``name`` (not as an attribute: ``xr.world_size`` reads no ``world_size``)."""
    nodes = walk(node)
    attributes = {id(n.attr) for n in nodes if type(n) is cst.Attribute}
    return any(type(n) is cst.Name and n.value == name and id(n) not in attributes for n in nodes)
