"""One module's reads of names and attributes, with every node's parent: what the CUDA
concern follows a value through (count_uses.py, cuda_answers.py).  It walks the module
again, so it is made only for a file that holds such a value."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator

import libcst as cst

from codemods.engine.nodes import children, walk

_LOOPS = (cst.For, cst.While)
FUNCTIONS = (cst.FunctionDef, cst.Lambda)


class ModuleReads:
    def __init__(self, module: cst.Module, resolve: Callable[[cst.CSTNode], str | None]) -> None:
        self.resolve = resolve
        self.parent: dict[int, cst.CSTNode] = {}
        self.order: dict[int, int] = {}
        self.names: dict[str, list[cst.Name]] = defaultdict(list)
        self.attributes: dict[str, list[cst.Attribute]] = defaultdict(list)
        self.functions: dict[str, cst.FunctionDef] = {}
        self.stores: set[int] = set()  # Names and Attributes assigned to (not reads)
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
                self.functions.setdefault(node.name.value, node)
            elif isinstance(node, (cst.AssignTarget, cst.AnnAssign)):
                self.stores.add(id(node.target))
            elif isinstance(node, cst.For):
                self.stores.update(id(n) for n in walk(node.target))
            below = children(node)
            for child in below:
                self.parent[id(child)] = node
            stack.extend(reversed(below))

    def later_reads(self, target: cst.BaseExpression, statement: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """The reads of what ``statement`` stores in ``target`` (a name: in its function, or
        anywhere for a module-level one; an attribute: of that name on any object) that may
        run after it.  ``target`` is a Name or an Attribute."""
        reads: list[cst.Name] | list[cst.Attribute]
        if isinstance(target, cst.Name):
            function = self.enclosing(statement, FUNCTIONS)
            reads = [r for r in self.names[target.value] if function is None or self.inside(r, function)]
        else:
            assert isinstance(target, cst.Attribute)
            reads = self.attributes[target.attr.value]
        for read in reads:
            if read is not target and id(read) not in self.stores and not self._runs_before(read, statement):
                yield read

    def parameter_reads(self, function: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> list[cst.Name] | None:
        """The reads, in ``function``, of the parameter that ``arg`` of ``call`` binds (None:
        no parameter known, or one that the function assigns again)."""
        name = bound_parameter(function, call, arg)
        if name is None:
            return None
        reads = [r for r in self.names[name] if self.inside(r, function)]
        if any(id(r) in self.stores for r in reads):
            return None
        return reads

    def _runs_before(self, read: cst.CSTNode, statement: cst.CSTNode) -> bool:
        """The read is in the store's own function, earlier in the code (or in the stored
        value), and no loop of that function holds both."""
        function = self.enclosing(statement, FUNCTIONS)
        if self.enclosing(read, FUNCTIONS) is not function:
            return False
        if self.inside(read, statement):
            return True
        if self.order[id(read)] > self.order[id(statement)]:
            return False
        loop = self.enclosing(statement, _LOOPS)
        return loop is None or not self.inside(read, loop)

    def enclosing(self, node: cst.CSTNode, kinds: tuple[type, ...]) -> cst.CSTNode | None:
        parent = self.parent.get(id(node))
        while parent is not None and not isinstance(parent, kinds):
            parent = self.parent.get(id(parent))
        return parent

    def inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
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


def bound_parameter(function: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    """The parameter of ``function`` that ``arg`` of ``call`` binds."""
    if arg.keyword is not None:
        return arg.keyword.value
    if arg.star:
        return None
    position = [a for a in call.args if a.keyword is None].index(arg)
    params = [*function.params.posonly_params, *function.params.params]
    return params[position].name.value if position < len(params) else None
