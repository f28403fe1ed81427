"""For module classes whose ``__init__`` builds optimizers over the modules the instance
holds (XLA203): which modules those are, as ``__init__`` registers them, and which attribute
keeps each optimizer.

An instance holds what ``__init__`` binds to one of its attributes (``self.gen = gen``,
``setattr(self, name, module)``, ``self.add_module(name, module)``), and the members of a
container it registers (``self.nets = nn.ModuleDict(nets)``, or each member set in a loop
over it: ``for name, module in nets.items(): setattr(self, name, module)``); a plain dict
bound to an attribute (``self.nets = nets``) registers nothing.  A module read by an
optimizer through a name bound by a loop or a comprehension over such a container (``{name:
Adam(m.parameters()) for name, m in nets.items()}``) is one the instance holds, so
``self.to(device)`` replaces its parameters.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods.engine.nodes import dotted, walk

_CONTAINERS = frozenset({"torch.nn.ModuleDict", "torch.nn.ModuleList", "torch.nn.Sequential"})
_REGISTERS = frozenset({"add_module", "register_module"})


class HeldChildren:
    """The modules an ``__init__`` registers on the instance, read from its code."""

    def __init__(self, init: cst.FunctionDef, resolve: Callable[[cst.BaseExpression], str | None]) -> None:
        self.init = init
        self.names: set[str] = set()  # local names bound to modules the instance holds
        self.containers: set[str] = set()  # local names whose members it holds
        # A name bound by a loop or a comprehension -> the containers it iterates over.
        self.iterated: dict[str, set[str | None]] = {}
        registered: set[str] = set()  # names handed to setattr(self, ...) / self.add_module(...)
        for node in walk(init):
            if type(node) is cst.Assign:
                self._assigned(node, resolve)
            elif type(node) is cst.Call:
                if (value := _registered(node)) is not None:
                    registered.add(value)
            elif type(node) is cst.For or type(node) is cst.CompFor:
                container = _iterated(node.iter)
                for target in _targets(node.target):
                    self.iterated.setdefault(target, set()).add(container)
        for name in registered:
            if name in self.iterated:
                self.containers.update(c for c in self.iterated[name] if c is not None)
            else:
                self.names.add(name)

    def _assigned(self, node: cst.Assign, resolve: Callable[[cst.BaseExpression], str | None]) -> None:
        """``self.gen = gen``; ``self.nets = nn.ModuleDict(nets)`` (both ``nets`` and ``self.nets``)."""
        attributes = [dotted(target.target) for target in node.targets if _is_attribute_of_self(target.target)]
        if not attributes:
            return
        value = node.value
        if type(value) is cst.Name:
            self.names.add(value.value)
        elif type(value) is cst.Call and resolve(value.func) in _CONTAINERS:
            self.containers.update(a for a in attributes if a is not None)
            if value.args and (container := dotted(value.args[0].value)) is not None:
                self.containers.add(container)

    def holds(self, module: cst.BaseExpression) -> bool:
        """Moving the instance moves ``module`` (the receiver of a ``.parameters()`` call):
        an attribute of ``self``, a name it registers, a member of a container it registers,
        or a name bound by iterating only such containers."""
        while type(module) is cst.Attribute:
            module = module.value
        if type(module) is cst.Subscript:
            return dotted(module.value) in self.containers
        if type(module) is not cst.Name:
            return False
        name = module.value
        if name == "self" or name in self.names:
            return True
        over = self.iterated.get(name)
        if not over:
            return False
        return all(container in self.containers for container in over)

    def attribute_of(self, built: cst.CSTNode) -> str | None:
        """The attribute of ``self`` whose value holds ``built`` (``self.optims = {...}``,
        ``self.optims[name] = Adam(...)``)."""
        for node in walk(self.init):
            if type(node) is cst.Assign and any(sub is built for sub in walk(node.value)):
                for target in node.targets:
                    written: cst.BaseExpression = target.target
                    if type(written) is cst.Subscript:
                        written = written.value
                    if type(written) is cst.Attribute and dotted(written.value) == "self":
                        return written.attr.value
        return None


def _is_attribute_of_self(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Attribute and dotted(node.value) == "self"


def _registered(call: cst.Call) -> str | None:
    """The name ``setattr(self, key, name)`` or ``self.add_module(key, name)`` registers."""
    if type(call.func) is cst.Name and call.func.value == "setattr" and len(call.args) == 3:
        if dotted(call.args[0].value) == "self":
            return dotted(call.args[2].value)
    elif (
        type(call.func) is cst.Attribute
        and call.func.attr.value in _REGISTERS
        and dotted(call.func.value) == "self"
        and len(call.args) == 2
    ):
        return dotted(call.args[1].value)
    return None


def _iterated(node: cst.BaseExpression) -> str | None:
    """The container a loop walks: ``nets`` of ``nets.items()``, ``nets.values()``, ``nets``."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("items", "values"):
        return dotted(node.func.value)
    return dotted(node)


def _targets(node: cst.BaseExpression) -> list[str]:
    """The names a loop binds: the value of ``name, m`` (``.items()``) is its last one."""
    if type(node) is cst.Name:
        return [node.value]
    if (type(node) is cst.Tuple or type(node) is cst.List) and node.elements:
        last = node.elements[-1].value
        return [last.value] if type(last) is cst.Name else []
    return []
