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

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Literal

import libcst as cst

from codemods.distributed.facts import ProcessGroup
from codemods.distributed.launch import PROCESS_GROUP_DROPPED, TORCH_SPAWN, XLA_LAUNCHERS
from codemods.engine.nodes import children, dotted, walk

# Builtins whose result is only a value computed from their arguments.
_PURE = frozenset({"int", "float", "round", "max", "min", "abs", "str", "bool", "divmod"})
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
_LOOPS = (cst.For, cst.While)
_FUNCTIONS = (cst.FunctionDef, cst.Lambda)


class CountUses:
    """One module's reads, by name, with their parents: made only for a file whose
    launching process uses a count it hands on (rare), so it walks the module again."""

    def __init__(
        self,
        module: cst.Module,
        resolve: Callable[[cst.CSTNode], str | None],
        process_groups: dict[cst.Call, ProcessGroup],
        rereads: dict[cst.FunctionDef, tuple[tuple[str, str], ...]],
    ) -> None:
        self.resolve = resolve
        self.parent: dict[int, cst.CSTNode] = {}
        self.order: dict[int, int] = {}
        self.names: dict[str, list[cst.Name]] = defaultdict(list)
        self.attributes: dict[str, list[cst.Attribute]] = defaultdict(list)
        self.functions: set[str] = set()
        self.stores: set[int] = set()  # Names and Attributes assigned to (not reads)
        self._index(module)
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

    def _index(self, module: cst.Module) -> None:
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            self.order[id(node)] = len(self.order)
            if isinstance(node, cst.Name):
                if not _names_no_value(node, self.parent.get(id(node))):
                    self.names[node.value].append(node)
            elif isinstance(node, cst.Attribute):
                self.attributes[node.attr.value].append(node)
            elif isinstance(node, cst.FunctionDef):
                self.functions.add(node.name.value)
            elif isinstance(node, (cst.AssignTarget, cst.AnnAssign)):
                self.stores.add(id(node.target))
            elif isinstance(node, cst.For):
                self.stores.update(id(n) for n in walk(node.target))
            below = children(node)
            for child in below:
                self.parent[id(child)] = node
            stack.extend(reversed(below))

    def decides(self, use: cst.CSTNode) -> bool:
        return self._decides(use, set())

    def _decides(self, node: cst.CSTNode, seen: set[int]) -> bool:
        """Whether the value read at ``node`` still reaches something that runs."""
        child = node
        parent = self.parent.get(id(child))
        while parent is not None:
            if isinstance(parent, _FLOWS):
                child, parent = parent, self.parent.get(id(parent))
                continue
            if isinstance(parent, cst.Arg):
                call = self.parent.get(id(parent))
                if not isinstance(call, cst.Call):
                    return True
                use = self._use_by(call, parent)
                if use != "value":
                    return use == "anything"
                child, parent = call, self.parent.get(id(call))  # a pure builtin: its value flows on
                continue
            if isinstance(parent, cst.Assign) and parent.value is child:
                return any(self._stored_decides(t.target, parent, seen) for t in parent.targets)
            if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.value is child:
                return self._stored_decides(parent.target, parent, seen)
            return True
        return True

    def _use_by(self, call: cst.Call, arg: cst.Arg) -> Literal["nothing", "value", "anything"]:
        """What ``call`` does with the value handed to it: nothing (it prints it, or the
        callee reads the count again at its start), computes its own value from it (a pure
        builtin), or anything (the callee may use it)."""
        func = call.func
        name = func.value if isinstance(func, cst.Name) else None
        if name == "print":
            return "nothing"
        if name in _PURE and self.resolve(func) in (None, name, f"builtins.{name}"):
            return "value"
        if name is not None and name in self.rereading:
            function, params = self.rereading[name]
            return "nothing" if _parameter(function, call, arg) in params else "anything"
        return "anything"

    def _stored_decides(self, target: cst.BaseExpression, statement: cst.CSTNode, seen: set[int]) -> bool:
        """Whether anything reads the value stored in ``target`` after ``statement`` in a
        way that decides something."""
        if id(target) in seen:
            return False
        seen.add(id(target))
        if type(target) is cst.Name:
            function = self._enclosing(statement, _FUNCTIONS)
            reads: Iterable[cst.CSTNode] = (
                read for read in self.names[target.value] if function is None or self._inside(read, function)
            )
        elif type(target) is cst.Attribute:
            if self._handed_outside(target.value):
                return True
            reads = self.attributes[target.attr.value]
        else:
            return True
        return any(
            self._decides(read, seen)
            for read in reads
            if read is not target
            and id(read) not in self.stores
            and id(read) not in self.dropped
            and not self._runs_before(read, statement)
        )

    def _runs_before(self, read: cst.CSTNode, statement: cst.CSTNode) -> bool:
        """The read is in the store's own function, earlier in the code (or in the stored
        value), and no loop of that function holds both."""
        function = self._enclosing(statement, _FUNCTIONS)
        if self._enclosing(read, _FUNCTIONS) is not function:
            return False
        if self._inside(read, statement):
            return True
        if self.order[id(read)] > self.order[id(statement)]:
            return False
        loop = self._enclosing(statement, _LOOPS)
        return loop is None or not self._inside(read, loop)

    def _handed_outside(self, base: cst.BaseExpression) -> bool:
        """The object (``args`` of ``args.world_size``) is handed whole to code outside the
        file, which may read any attribute of it."""
        name = dotted(base)
        if name is None:
            return True
        for read in self.names.get(name, ()) if "." not in name else ():
            parent = self.parent.get(id(read))
            while isinstance(parent, (cst.Tuple, cst.List, cst.Element)):
                parent = self.parent.get(id(parent))
            if type(parent) is not cst.Arg:
                continue
            call = self.parent.get(id(parent))
            if type(call) is not cst.Call:
                continue
            func = call.func
            if type(func) is cst.Name and (func.value in self.functions or func.value == "print"):
                continue
            if self.resolve(func) in TORCH_SPAWN | XLA_LAUNCHERS:
                continue
            return True
        return False

    def _enclosing(self, node: cst.CSTNode, kinds: tuple[type, ...]) -> cst.CSTNode | None:
        parent = self.parent.get(id(node))
        while parent is not None and not isinstance(parent, kinds):
            parent = self.parent.get(id(parent))
        return parent

    def _inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        parent = self.parent.get(id(node))
        while parent is not None:
            if parent is outer:
                return True
            parent = self.parent.get(id(parent))
        return False


def _names_no_value(name: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
    """The Name is an attribute's name, a keyword, or what a definition or import names."""
    if type(parent) is cst.Attribute:
        return parent.attr is name
    if type(parent) is cst.Arg:
        return parent.keyword is name
    if type(parent) is cst.Param:
        return parent.name is name
    return isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName))


def _parameter(function: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    """The parameter of ``function`` that ``arg`` of ``call`` binds."""
    if arg.keyword is not None:
        return arg.keyword.value
    if arg.star:
        return None
    position = [a for a in call.args if a.keyword is None].index(arg)
    params = [*function.params.posonly_params, *function.params.params]
    return params[position].name.value if position < len(params) else None
