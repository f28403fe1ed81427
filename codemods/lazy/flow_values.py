"""What lazy mode's data flow answers once the walk (flow.py) has recorded the file's scopes
and sites: which values are device tensors (the device names, found to a fixed point over
assignments, returns and the arguments of the file's own functions), which Python integers
change every step, and which of the file's functions a call binds.  Kept apart from the walk
that records them: FlowAnalysis is built on FlowValues, and the lazy analyses ask it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import (
    arg_value,
    call_args,
    children,
    dotted,
    method_name,
    names_the_cpu,
    receiver,
    walk,
)
from codemods.engine.walk import Analysis
from codemods.lazy.assignment_shapes import loop_counters, unpacked
from codemods.lazy.expression_kinds import (
    METADATA_METHODS,
    NOT_TENSORS,
    READ_BUILTINS,
    READ_METHODS,
    TENSOR_ATTRIBUTES,
    is_identity_test,
    names_a_device,
    reads_to_host,
)
from codemods.lazy.sites import Scope, Site, Sites
from codemods.project.analysis import ProjectAnalysis
from codemods.training.loop_plans import is_device_loader

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.facts import Facts


@dataclass(repr=False)
class FlowMemo:
    """Answers kept after the walk: the fixed-point loops ask the same questions again and again."""

    value_names: dict[int, tuple[str, ...]] = field(default_factory=dict)  # _value_names, by expression id
    bound: dict[int, list[tuple[Scope, str, cst.BaseExpression]]] = field(
        default_factory=dict
    )  # params_for, by call id
    mentioned: dict[int, set[str] | None] = field(default_factory=dict)  # _mentioned, by expression id
    device_values: dict[tuple[int, int], bool] | None = None  # is_device, once device names are final
    loaders: set[str] | None = None  # names bound to device loaders (from_device_loader)
    cpu_models: dict[tuple[int, str], bool] = field(default_factory=dict)  # _on_the_cpu, by (scope id, name)


class FlowValues(Analysis):
    """The answers FlowAnalysis gives over what its walk recorded (the device values and
    per-step integers of the file's scopes)."""

    facts: Facts
    module_scope: Scope
    scopes: dict[int, Scope]
    functions: dict[str, list[Scope]]
    sites: Sites
    unpacked_calls: set[int]
    host_functions: dict[str, list[Scope]]
    _memo: FlowMemo

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
            return not self._on_the_cpu(scope, func)
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

    def _hands_over_the_model(self, call: cst.Call) -> bool:
        """A ``backward`` given a model or an optimizer (``strategy.backward(loss, self.model,
        self.optimizer)``, DeepSpeed-style training helpers): a helper's method, not a tensor's
        (Tensor.backward takes a gradient, flags and inputs), so its receiver holds no tensor."""
        for arg in call.args:
            name = dotted(arg.value)
            last = (name or "").rsplit(".", 1)[-1].lower()
            if name is not None and (
                name in self.facts.training.models or last in ("model", "net", "module") or "optim" in last
            ):
                return True
        return False

    def _is_model(self, func: str) -> bool:
        models = self.facts.training.models
        last = func.rsplit(".", 1)[-1].lower()
        return func in models or last in ("model", "net", "module") or "criterion" in last or "loss" in last

    def _on_the_cpu(self, scope: Scope, model: str) -> bool:
        """Every move of ``model`` in its scope puts it on the CPU (``model.to(device)`` with
        ``device = torch.device("cpu")``, an inference script's fixed device), and there is one:
        what it computes is on the CPU, before and after the port."""
        owner = self.owner(scope, model)
        key = (id(owner), model)
        known = self._memo.cpu_models.get(key)
        if known is not None:
            return known
        moves = [
            site.node
            for site in self.sites.calls
            if method_name(site.node) in ("to", "cuda")
            and dotted(receiver(site.node)) == model
            and self.owner(site.scope, model) is owner
        ]
        moves += [
            value
            for targets, value, _, _ in owner.assignments
            if model in targets and type(value) is cst.Call and method_name(value) in ("to", "cuda")
        ]
        answer = bool(moves) and all(
            type(move) is cst.Call
            and method_name(move) == "to"
            and self._names_the_cpu(owner, arg_value(move, 0, "device"))
            for move in moves
        )
        self._memo.cpu_models[key] = answer
        return answer

    def _names_the_cpu(self, scope: Scope, device: cst.BaseExpression | None) -> bool:
        """``"cpu"``, ``torch.device("cpu")``, or a name of the scope bound only to one of them."""
        if device is None:
            return False
        if names_the_cpu(device):
            return True
        name = dotted(device)
        if name is None or "." in name:
            return False
        owner = self.owner(scope, name)
        values = [value for targets, value, _, _ in owner.assignments if name in targets]
        return bool(values) and name not in owner.params and all(names_the_cpu(value) for value in values)

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
                if not name.endswith("accelerator") and not self._hands_over_the_model(call):
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
            if loop.node in stepping and type(loop.node) is cst.For and not self._repeats_in_each_step(loop):
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

    def _repeats_in_each_step(self, loop: Site[cst.For | cst.While]) -> bool:
        """A loop over a ``range`` inside one step (a training loop's iteration, a model's forward,
        a Trainer's ``compute_loss``): ``for i in range(n_heads)`` runs the same counters every
        step, so what they index or size is the same few graphs each step, compiled once."""
        training = self.facts.training
        node = loop.node
        steps = training.all_loops | training.loops.keys()
        if type(node) is not cst.For or node in steps or type(node.iter) is not cst.Call:
            return False
        if dotted(node.iter.func) != "range":
            return False
        outer = [o for o in loop.loops if o is not node]
        if node not in training.loops_within_a_step and not any(o in steps for o in outer):
            return False
        counters = {c for o in outer if type(o) is cst.For for c in loop_counters(o)}
        return not counters.intersection(self._value_names(node.iter))

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
