"""Lazy mode's data flow: which names hold device tensors, and which Python integers
change every step, per function (and for the module).

Which names hold device tensors is a flow-insensitive approximation per function (and
for the module): names assigned from moves to a device, model and loss calls, device
loaders' batches, ``backward()`` receivers, results of same-file functions that return
device values, and anything computed from those.  The walk collects the sites the lazy
analyses look at (calls, subscripts, tests, f-string parts, logging arguments, loops,
step barriers); host_reads.py and recompilation_sources.py draw their facts from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

from codemods.engine.nodes import (
    arg_value,
    dotted,
    is_true,
    method_name,
    receiver,
    walk,
)
from codemods.engine.walk import Walk
from codemods.lazy.assignment_shapes import (
    flat_names,
    formatted_values,
    is_host_number,
    paired_values,
    returns_host_numbers,
    unpacked,
)
from codemods.lazy.expression_kinds import (
    METADATA_ATTRIBUTES,
    METADATA_METHODS,
    is_logging,
)
from codemods.lazy.flow_values import FlowMemo, FlowValues
from codemods.lazy.sites import NameUses, Scope, Site, Sites
from codemods.targets import XM, spellings

if TYPE_CHECKING:
    from codemods.facts import Facts


NodeT = TypeVar("NodeT", bound=cst.CSTNode)


@dataclass(repr=False)
class _Position:
    """Where the walk is, for the sites it records."""

    place: tuple[Scope, tuple[cst.CSTNode, ...], bool]  # _where's answer, kept while the walk stays put
    small: cst.BaseSmallStatement | None = None  # the statement being walked
    nested: int = 0  # comprehensions entered
    lambdas: int = 0  # lambdas entered
    order: int = 0  # sites recorded
    place_at: int = -1  # the walk's moves when ``place`` was found


_NO_GRAD = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
)


class FlowAnalysis(FlowValues):
    """The sites of the file, by function, and the device values and per-step integers
    among them (what the lazy analyses ask: ``is_device``, ``varying_in``, answered by
    FlowValues, flow_values.py)."""

    facts: Facts

    name = "lazy_flow"
    reads = ("training", "project", "imports")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.module_scope = Scope(None)
        self.scopes: dict[int, Scope] = {}
        self.functions: dict[str, list[Scope]] = {}  # by name (methods too)
        self.sites = Sites()
        self.uses = NameUses()
        self._at = _Position((self.module_scope, (), False))
        self._memo = FlowMemo()
        # Calls of one value unpacked into a tuple of names (``model, batcher = prepare()``), by id.
        self.unpacked_calls: set[int] = set()
        # The file's functions and methods, by name, whose every return reads a number to the
        # host (``def get_step(self): return self.step.item()``): settled when the walk ends.
        self.host_functions: dict[str, list[Scope]] = {}
        # Loops that run without autograd (in ``with torch.no_grad():`` or a function decorated with it,
        # or with ``inference_mode``): sampling and inference, never a training step's own computation.
        self.no_grad_loops: set[cst.CSTNode] = set()
        self._no_grad_withs: list[cst.With] = []

    # -- where the walk is ------------------------------------------------------------

    @property
    def scope(self) -> Scope:
        function = self.walk.enclosing_function
        return self.scopes[id(function)] if function is not None else self.module_scope

    def _loops(self) -> tuple[cst.CSTNode, ...]:
        loops: list[cst.CSTNode] = []
        for loop in reversed(self.walk.loops):
            if loop is None:
                if self.walk.function is not None:  # a def, not a lambda: its loops stop here
                    break
                continue
            loops.append(loop)
        return tuple(reversed(loops))

    def _where(self) -> tuple[Scope, tuple[cst.CSTNode, ...], bool]:
        """The scope, the loops and whether in a condition within the innermost loop."""
        if self._at.place_at != self.walk.moves:  # most sites share their place with the one before
            self._at.place_at = self.walk.moves
            self._at.place = (self.scope, self._loops(), self.walk.conditional_in_loop)
        return self._at.place

    def _site(self, node: NodeT) -> Site[NodeT]:
        self._at.order += 1
        scope, loops, conditional = self._where()
        return Site(
            node,
            scope,
            loops,
            self._at.small,
            id(node) in self.uses.in_tests,
            self._at.nested > 0,
            self._at.lambdas > 0,
            self._at.order,
            conditional,
        )

    # -- walk: scopes and names ----------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = Scope(node, self.walk.qualname, is_forward=node.name.value == "forward" and self.walk.class_depth > 0)
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.params.append(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                scope.locals.add(star.name.value)
        scope.locals.update(scope.params)
        if scope.is_forward:
            scope.device.update(p for p in scope.params if p != "self")
        self.scopes[id(node)] = scope
        self.functions.setdefault(node.name.value, []).append(scope)
        self.uses.ignored.add(id(node.name))
        self._at.small = None

    def visit_Param(self, node: cst.Param) -> None:
        self.uses.ignored.add(id(node.name))

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.globals.update(n.name.value for n in node.names)

    visit_Nonlocal = visit_Global

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.uses.ignored.add(id(node.attr))
        if node.attr.value in METADATA_ATTRIBUTES and type(node.value) is cst.Name:
            self.uses.safe.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.uses.ignored.add(id(node.keyword))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.uses.ignored.add(id(node.name))
        self._at.small = None

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.uses.ignored:
            self.sites.names.append((node, self._where()[0]))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.uses.ignored.update(id(n) for n in walk(node.target) if type(n) is cst.Name)

    def _nest(self, node: cst.CSTNode) -> None:
        self._at.nested += 1

    def _unnest(self, node: cst.CSTNode) -> None:
        self._at.nested -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _nest
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _unnest

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._at.lambdas += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._at.lambdas -= 1

    # -- walk: statements ----------------------------------------------------------------

    def _small(self, node: cst.BaseSmallStatement) -> None:
        self._at.small = node

    def _end_small(self, node: cst.BaseSmallStatement) -> None:
        self._at.small = None

    visit_Expr = visit_Del = _small
    leave_Expr = leave_Return = leave_Del = leave_Assign = leave_AugAssign = leave_AnnAssign = leave_Assert = _end_small

    def _assign(self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None, augmented: bool) -> None:
        names: list[str] = []
        for target in targets:
            for element in unpacked(target):
                if type(element) is cst.Subscript:
                    self.uses.store_subscripts.add(id(element))
                name = dotted(element)
                if name is not None:
                    names.append(name)
                    if "." not in name:
                        self.scope.locals.add(name)
                    if type(element) is cst.Name and not augmented:
                        self.uses.ignored.add(id(element))
        if value is None:
            return
        pairs = paired_values(targets, value)
        if pairs is not None:  # ``H, W = int(H), int(W)``: each name gets its own element's value
            self.scope.assignments.extend(((name,), element, self._loops(), augmented) for name, element in pairs)
        else:
            if type(value) is cst.Call and flat_names(targets) is not None:
                self.unpacked_calls.add(id(value))
            self.scope.assignments.append((tuple(names), value, self._loops(), augmented))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._at.small = node
        self._assign([t.target for t in node.targets], node.value, False)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._at.small = node
        self._assign([node.target], node.value, False)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._at.small = node
        self._assign([node.target], node.value, True)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._at.small = node
        self._test(node.test)

    def visit_Return(self, node: cst.Return) -> None:
        self._at.small = node
        if node.value is not None and self.walk.enclosing_function is not None:
            self.scope.returns.append(node.value)

    def _test(self, test: cst.BaseExpression) -> None:
        self.uses.in_tests.update(id(n) for n in walk(test))
        self.sites.tests.append(self._site(test))

    def visit_If(self, node: cst.If) -> None:
        self._at.small = None
        self._test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._at.small = None
        self.sites.loops[node] = self._site(node)
        self._test(node.test)
        self._note_no_grad(node)

    def visit_For(self, node: cst.For) -> None:
        self._at.small = None
        self.sites.loops[node] = self._site(node)
        self._assign([node.target], None, False)
        self._note_no_grad(node)

    def _note_no_grad(self, loop: cst.For | cst.While) -> None:
        function = self.scope.node
        if self._no_grad_withs or (
            function is not None and any(self._no_grad(d.decorator) for d in function.decorators)
        ):
            self.no_grad_loops.add(loop)

    def _no_grad(self, node: cst.BaseExpression) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()`` (or the bare decorator)."""
        return self.walk.resolve(node.func if type(node) is cst.Call else node) in _NO_GRAD

    def visit_With(self, node: cst.With) -> None:
        self._at.small = None
        for item in node.items:
            if item.asname is not None:
                self._assign([item.asname.name], None, False)
        if any(self._no_grad(item.item) for item in node.items):
            self._no_grad_withs.append(node)

    def leave_With(self, node: cst.With) -> None:
        if self._no_grad_withs and self._no_grad_withs[-1] is node:
            self._no_grad_withs.pop()

    def visit_Try(self, node: cst.Try) -> None:
        self._at.small = None

    # -- walk: operations -----------------------------------------------------------------

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if type(node.value) is cst.Name:
            self.uses.safe.add(id(node.value))
        self.sites.subscripts.append(self._site(node))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Power:
            self.sites.powers.append(self._site(node))

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.sites.implicit.append(self._site(node.expression))

    def visit_Call(self, node: cst.Call) -> None:
        site = self._site(node)
        self.sites.calls.append(site)
        method = method_name(node)
        func = dotted(node.func)
        if method in METADATA_METHODS and isinstance(receiver(node), cst.Name):
            self.uses.safe.add(id(receiver(node)))
        if func == "len" and node.args and type(node.args[0].value) is cst.Name:
            self.uses.safe.add(id(node.args[0].value))
        for position, arg in enumerate(node.args):
            if type(arg.value) is cst.Name and not arg.star:
                self.uses.passed[id(arg.value)] = (node, arg.keyword.value if arg.keyword else position)
        # A string formatted from a tensor reads it, as an f-string does ("{:.3f}".format(loss)).
        self.sites.implicit.extend(self._site(value) for value in self._format_operands(node))
        if is_logging(node, self.walk):
            for arg in node.args:
                if type(arg.value) not in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
                    self.sites.implicit.extend(self._site(value) for value in formatted_values(arg.value))
        callee = self.walk.callee
        if self.walk.loop is not None and (
            callee in spellings("sync") or (callee == f"{XM}.optimizer_step" and is_true(arg_value(node, 1, "barrier")))
        ):
            self.sites.barriers.append(site)

    def _format_operands(self, call: cst.Call) -> list[cst.BaseExpression]:
        """What a format call reads, as an f-string reads its expressions (a tensor's
        ``__format__`` reads it): ``"{} {:.3f}".format(step, loss)``'s arguments, the value of
        the builtin ``format(loss, ".3f")``."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "format":
            if type(func.value) in (cst.SimpleString, cst.ConcatenatedString):
                return [arg.value for arg in call.args if not arg.star]
            return []
        if type(func) is cst.Name and func.value == "format" and self.walk.resolve(func) is None and call.args:
            return [call.args[0].value] if not call.args[0].star and not call.args[0].keyword else []
        return []

    # -- results ------------------------------------------------------------------------------

    def finish(self) -> None:
        for name, scopes in self.functions.items():
            if all(
                (s.returns and all(is_host_number(r) for r in s.returns))
                or (s.node is not None and returns_host_numbers(s.node))
                for s in scopes
            ):
                self.host_functions[name] = scopes
        self._device_names()
        self._memo.device_values = {}
