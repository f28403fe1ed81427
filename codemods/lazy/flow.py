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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

from codemods.engine.nodes import (
    arg_value,
    call_args,
    children,
    dotted,
    is_true,
    method_name,
    receiver,
    walk,
)
from codemods.engine.walk import Analysis, Walk
from codemods.lazy.assignment_shapes import (
    flat_names,
    formatted_values,
    is_host_number,
    loop_counters,
    paired_values,
    unpacked,
)
from codemods.lazy.expression_kinds import (
    METADATA_ATTRIBUTES,
    METADATA_METHODS,
    NOT_TENSORS,
    READ_BUILTINS,
    READ_METHODS,
    TENSOR_ATTRIBUTES,
    is_identity_test,
    is_logging,
    names_a_device,
    reads_to_host,
)
from codemods.lazy.sites import NameUses, Scope, Site, Sites
from codemods.project.analysis import ProjectAnalysis
from codemods.targets import XM, spellings
from codemods.training.loop_plans import is_device_loader

if TYPE_CHECKING:
    from collections.abc import Callable

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


@dataclass(repr=False)
class _Memo:
    """Answers kept after the walk: the fixed-point loops ask the same questions again and again."""

    value_names: dict[int, tuple[str, ...]] = field(default_factory=dict)  # _value_names, by expression id
    bound: dict[int, list[tuple[Scope, str, cst.BaseExpression]]] = field(
        default_factory=dict
    )  # params_for, by call id
    mentioned: dict[int, set[str] | None] = field(default_factory=dict)  # _mentioned, by expression id
    device_values: dict[tuple[int, int], bool] | None = None  # is_device, once device names are final
    loaders: set[str] | None = None  # names bound to device loaders (from_device_loader)


class FlowAnalysis(Analysis):
    """The sites of the file, by function, and the device values and per-step integers
    among them (what the lazy analyses ask: ``is_device``, ``varying_in``)."""

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
        self._memo = _Memo()
        # Calls of one value unpacked into a tuple of names (``model, batcher = prepare()``), by id.
        self.unpacked_calls: set[int] = set()
        # The file's functions and methods, by name, whose every return reads a number to the
        # host (``def get_step(self): return self.step.item()``): settled when the walk ends.
        self.host_functions: dict[str, list[Scope]] = {}

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

    def visit_For(self, node: cst.For) -> None:
        self._at.small = None
        self.sites.loops[node] = self._site(node)
        self._assign([node.target], None, False)

    def visit_With(self, node: cst.With) -> None:
        self._at.small = None
        for item in node.items:
            if item.asname is not None:
                self._assign([item.asname.name], None, False)

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
            if all(s.returns and all(is_host_number(r) for r in s.returns) for s in scopes):
                self.host_functions[name] = scopes
        self._device_names()
        self._memo.device_values = {}

    def _callees(self, call: cst.Call) -> list[Scope]:
        func = dotted(call.func) or ""
        if func in self.functions:
            return self.functions[func]
        if func.startswith("self.") and func.count(".") == 1:
            return self.functions.get(func[5:], [])
        return []

    def params_for(self, call: cst.Call) -> list[tuple[Scope, str, cst.BaseExpression]]:
        """(callee scope, parameter, argument) for a call of one of the file's functions
        (asked after the walk, when every function is known: kept, as the fixed-point
        loops ask again and again)."""
        bound = self._memo.bound.get(id(call))
        if bound is None:
            bound = self._memo.bound[id(call)] = self._bind(call)
        return bound

    def _bind(self, call: cst.Call) -> list[tuple[Scope, str, cst.BaseExpression]]:
        bound: list[tuple[Scope, str, cst.BaseExpression]] = []
        method = (dotted(call.func) or "").startswith("self.")
        for callee in self._callees(call):
            params = callee.params[1:] if method and callee.params[:1] == ["self"] else callee.params
            positional = [a for a in call.args if a.keyword is None and not a.star]
            for index, arg in enumerate(positional):
                if index < len(params):
                    bound.append((callee, params[index], arg.value))
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in params:
                    bound.append((callee, arg.keyword.value, arg.value))
        return bound

    def owner(self, scope: Scope, name: str) -> Scope:
        """The scope a name (its root) belongs to, seen from ``scope``."""
        root = name.split(".")[0]
        if scope.node is None or (root in scope.locals and root not in scope.globals) or root == "self":
            return scope
        return self.module_scope

    # -- device values -----------------------------------------------------------------

    def is_device(self, scope: Scope, node: cst.CSTNode | None) -> bool:
        """Does ``node`` evaluate to a device tensor?  (Once the device names are all
        known, the answers are kept.)"""
        if node is None:
            return False
        known = self._memo.device_values
        if known is not None:
            key = (id(scope), id(node))
            answer = known.get(key)
            if answer is None:
                answer = known[key] = self._is_device(scope, node)
            return answer
        return self._is_device(scope, node)

    def _is_device(self, scope: Scope, node: cst.CSTNode) -> bool:
        name = dotted(node)
        if name is not None:
            if name in self.owner(scope, name).device:
                return True
            if type(node) is cst.Attribute and node.attr.value in TENSOR_ATTRIBUTES:
                return self.is_device(scope, node.value)
            return False
        if type(node) is cst.Attribute:  # (x.max(-1)).values
            return node.attr.value in TENSOR_ATTRIBUTES and self.is_device(scope, node.value)
        if type(node) is cst.Call:
            return self.call_is_device(scope, node)
        if type(node) is cst.Subscript:
            return self.is_device(scope, node.value)
        if type(node) is cst.BinaryOperation:
            return self.is_device(scope, node.left) or self.is_device(scope, node.right)
        if type(node) is cst.UnaryOperation:
            return self.is_device(scope, node.expression)
        if type(node) is cst.Comparison:
            return not is_identity_test(node) and any(
                self.is_device(scope, e) for e in (node.left, *(c.comparator for c in node.comparisons))
            )
        if type(node) is cst.Tuple or type(node) is cst.List:
            return any(self.is_device(scope, e.value) for e in node.elements)
        return False

    def call_is_device(self, scope: Scope, call: cst.Call) -> bool:
        method = method_name(call)
        func = dotted(call.func)
        if method in READ_METHODS or method in METADATA_METHODS or method in NOT_TENSORS:
            return False
        if type(call.func) is cst.Name and call.func.value in (*READ_BUILTINS, "len", "isinstance", "range", "print"):
            return False
        if method in ("to", "cuda"):
            return (
                method == "cuda"
                or names_a_device(arg_value(call, 0, "device"), self.walk)
                or self.is_device(scope, receiver(call))
            )
        if self.gives_host_number(call):
            return False
        callees = self._callees(call)
        if callees:  # the file's own function: what it returns, as settled so far (a flag,
            # not a question about its returns: those may call it again)
            return any(c.returns_device for c in callees)
        if func is not None and self._is_model(func):
            return True
        keywords = call_args(call)[1]
        if "device" in keywords and names_a_device(keywords["device"].value, self.walk):
            return True
        if type(call.func) is cst.Attribute and self.is_device(scope, call.func.value):
            return True
        # torch operations on device tensors give device tensors; what a function of
        # another module returns is not known (it may take a model and return a number).
        callee = self.walk.resolve(call.func) or ""
        return callee.startswith("torch.") and any(self.is_device(scope, a.value) for a in call.args)

    def gives_host_number(self, call: cst.Call) -> bool:
        """A call of a function or method whose every return reads a number to the host
        (``step = model.get_step()`` with ``def get_step(self): return self.step.data.item()``):
        one of this file's, by its name (every definition of that name is such a function), or
        of another module of the project (its summary's ``host_returns``)."""
        func = dotted(call.func)
        if func is None:
            return False
        if func.rsplit(".", 1)[-1] in self.host_functions:
            return True
        project = self.walk.analysis(ProjectAnalysis)
        found = [project.origin(func)]
        head, _, method = func.rpartition(".")
        if head and (cls := self._moved_instance_class(head)) is not None:  # ``Net().to(device)``
            module, name = self.facts.imports.project_names[cls]
            found.append(project.part.context.lookup(module, f"{name}.{method}"))
        return any(f is not None and f.summary is not None and f.name in f.summary.host_returns for f in found)

    def _moved_instance_class(self, name: str) -> str | None:
        """The project class (as imported) of ``name`` bound to an instance moved where it is
        built (``model = Net(...).to(device)``, ``.cuda()``: the module's ``to`` hands it back)."""
        for scope in (self.module_scope, *self.scopes.values()):
            for targets, value, _, _ in scope.assignments:
                if targets != (name,) or type(value) is not cst.Call or method_name(value) not in ("to", "cuda"):
                    continue
                built = receiver(value)
                if type(built) is cst.Call and (cls := dotted(built.func)) in self.facts.imports.project_names:
                    return cls
        return None

    def _is_model(self, func: str) -> bool:
        models = self.facts.training.models
        last = func.rsplit(".", 1)[-1].lower()
        return func in models or last in ("model", "net", "module") or "criterion" in last or "loss" in last

    def _device_names(self) -> None:
        scopes = [self.module_scope, *self.scopes.values()]
        for loop in self.sites.loops.values():
            node = loop.node
            if type(node) is cst.For and self.from_device_loader(node):
                counters = set(loop_counters(node))
                for element in unpacked(node.target):
                    if (name := dotted(element)) is not None and name not in counters:
                        loop.scope.device.add(name)
        for site in self.sites.calls:
            call = site.node
            assert type(call) is cst.Call
            if method_name(call) == "backward" and (name := dotted(receiver(call))) is not None:
                if not name.endswith("accelerator"):
                    self.owner(site.scope, name).device.add(name)
        # Device sets only grow here, and is_device reads nothing else that changes: what
        # was found a device value stays one, and is not asked again; what was not is asked
        # again only once a device name it mentions has been added since (or, if it calls
        # one of the file's functions, whose returns may have become device values, always).
        found: set[tuple[int, int]] = set()  # (scope, value) by ids
        clock = 0
        added_at: dict[str, int] = {}  # a part of a device name -> when such a name was last added
        asked_at: dict[tuple[int, int], int] = {}  # (scope, value) by ids -> when last asked

        def add(scope: Scope, name: str) -> None:
            nonlocal clock
            if name not in scope.device:
                scope.device.add(name)
                clock += 1
                for part in name.split("."):
                    added_at[part] = clock

        def ask(scope: Scope, value: cst.CSTNode) -> bool:
            key = (id(scope), id(value))
            if key in found:
                return True
            last = asked_at.get(key)
            if last is not None:
                mentioned = self._mentioned(value)
                if mentioned is not None and all(added_at.get(n, 0) <= last for n in mentioned):
                    return False  # nothing it reads became a device value since
            asked_at[key] = clock
            if self.is_device(scope, value):
                found.add(key)
                return True
            return False

        passed = [(site, self.params_for(site.node)) for site in self.sites.calls]
        functions = [scope for scope in scopes if scope.returns]
        while True:  # to a fixed point: each round that goes on adds a name or a flag (finite sets)
            before = clock
            for scope in functions:
                if not scope.returns_device and any(ask(scope, r) for r in scope.returns):
                    scope.returns_device = True
                    clock += 1
            for scope in scopes:
                for targets, value, _, _ in scope.assignments:
                    if ask(scope, value):
                        for target in self._unpacked_device_names(targets, value, ask):
                            add(self.owner(scope, target), target)
                    elif reads_to_host(value) or (type(value) is cst.Call and self.gives_host_number(value)):
                        scope.host.update(targets)
            for site, bound in passed:
                for callee, param, arg in bound:
                    if ask(site.scope, arg):
                        add(callee, param)
            if clock == before:
                break
        models = self.facts.training.models
        for scope in scopes:
            scope.device -= scope.host | models  # a module moved to the device is not a tensor

    def _unpacked_device_names(
        self, targets: tuple[str, ...], value: cst.BaseExpression, ask: Callable[[Scope, cst.CSTNode], bool]
    ) -> tuple[str, ...]:
        """Of the names a device value is assigned to, those that hold a device value: all of
        them, but where a call of the file's functions that each return a tuple of as many
        elements is unpacked (``model, batcher = prepare()``, where ``prepare`` returns ``model,
        batcher``): the names whose element is one (a batcher beside a model is no tensor)."""
        if type(value) is not cst.Call or id(value) not in self.unpacked_calls:
            return targets
        callees = self._callees(value)
        returns = [(callee, r) for callee in callees for r in callee.returns]
        if not returns or any(
            (type(r) is not cst.Tuple and type(r) is not cst.List)
            or len(r.elements) != len(targets)
            or any(type(e) is cst.StarredElement for e in r.elements)
            for _, r in returns
        ):
            return targets
        return tuple(
            target
            for index, target in enumerate(targets)
            if any(ask(callee, r.elements[index].value) for callee, r in returns)  # type: ignore[attr-defined]  # a Tuple or List: checked above
        )

    def _mentioned(self, value: cst.CSTNode) -> set[str] | None:
        """The names whose device values can make ``value`` one (``_value_names``: each
        device name starts with one of them); None if it calls one of the file's functions,
        whose returns may change (kept per expression: the fixed point asks again and again)."""
        key = id(value)
        if key not in self._memo.mentioned:
            calls_own = any(type(node) is cst.Call and self._callees(node) for node in walk(value))
            self._memo.mentioned[key] = None if calls_own else set(self._value_names(value))
        return self._memo.mentioned[key]

    def from_device_loader(self, loop: cst.For) -> bool:
        if self._memo.loaders is None:  # found once: the assignments are all known when the walk is over
            self._memo.loaders = {
                name
                for scope in [self.module_scope, *self.scopes.values()]
                for targets, value, _, _ in scope.assignments
                if type(value) is cst.Call and is_device_loader(value, self.walk.resolve(value.func))
                for name in targets
            }
        loaders = self._memo.loaders
        return any(
            (type(sub) is cst.Call and is_device_loader(sub, self.walk.resolve(sub.func))) or dotted(sub) in loaders
            for sub in walk(loop.iter)
        )

    # -- per-step Python integers ---------------------------------------------------------

    def find_varying(self, reading_loops: set[cst.CSTNode]) -> None:
        """Python integers that change every step: counters of loops that run a graph per
        iteration (training loops, and ``reading_loops``: loops that read a value each
        iteration), what is computed from them, and parameters that receive them."""
        stepping = set(self.facts.training.all_loops) | set(self.facts.training.loops)
        stepping.update(reading_loops)
        for loop in self.sites.loops.values():
            if loop.node in stepping and type(loop.node) is cst.For:
                loop.scope.varying.update(loop_counters(loop.node))
        scopes = [self.module_scope, *self.scopes.values()]
        for scope in scopes:
            for targets, value, loops, augmented in scope.assignments:
                if augmented and any(loop in stepping for loop in loops) and not self.is_device(scope, value):
                    scope.varying.update(targets)
        for _ in range(6):
            before = sum(len(s.varying) for s in scopes)
            for scope in scopes:
                for targets, value, _, augmented in scope.assignments:
                    if not augmented and self.varying_in(scope, value) and not self.is_device(scope, value):
                        scope.varying.update(t for t in targets if "." not in t)
            for site in self.sites.calls:
                if not site.loops and site.scope.node is None:
                    continue
                for callee, param, arg in self.params_for(site.node):
                    if self.varying_in(site.scope, arg) and not self.is_device(site.scope, arg):
                        callee.varying.add(param)
            if sum(len(s.varying) for s in scopes) == before:
                break

    def varying_in(self, scope: Scope, node: cst.CSTNode) -> str | None:
        """The per-step name an index or argument uses (``len(x)`` is not one)."""
        return next((n for n in self._value_names(node) if n in self.owner(scope, n).varying), None)

    def _value_names(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The names an expression reads, outside ``len()`` and attribute names; cached,
        as the fixed-point loops ask again and again (walking LibCST children is slow)."""
        names = self._memo.value_names.get(id(node))
        if names is None:
            found: list[str] = []
            stack = [node]
            while stack:
                current = stack.pop()
                if type(current) is cst.Call and dotted(current.func) == "len":
                    continue
                if type(current) is cst.Attribute:
                    stack.append(current.value)
                elif type(current) is cst.Name:
                    found.append(current.value)
                else:
                    stack.extend(children(current))
            names = self._memo.value_names[id(node)] = tuple(found)
        return names
