"""PyTorch FSDP: the FullyShardedDataParallel wrappers of the script and their
arguments, the mixed-precision policies they are given (followed through a name bound
once), wrap policies written for torch's calling convention, FSDP2's ``fully_shard``, and
the state-dict and checkpoint APIs that only work on torch's FSDP modules.

What each becomes is its rule's business (fsdp/rules/); the optimizer step of an
FSDP model stays plain (distributed/ddp.py counts FSDP among the wrappers that
reduce gradients themselves).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import arg_value, dotted, method_name, names_in, receiver, string_value, walk
from codemods.engine.walk import Analysis, Walk
from codemods.fsdp.facts import FsdpFacts, FsdpWrap
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts

# Calls on an FSDP model that read or load its whole state.
STATE_DICT_CALLS = frozenset({"state_dict", "load_state_dict"})
PARTIAL = frozenset({"functools.partial"})
# torch's and torch_xla's FSDP wrappers (an annotation names one or the other once ported).
_WRAPPERS = apis.FSDP_CLASSES | apis.XLA_FSDP_CLASSES


def _on_the_cpu(call: cst.Call) -> bool:
    """``init_device_mesh("cpu", ...)``: a mesh of gloo groups, which runs anywhere."""
    device = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "device_type"), None)
    if device is None and call.args and call.args[0].keyword is None and not call.args[0].star:
        device = call.args[0].value
    return device is not None and string_value(device) == "cpu"


class FsdpAnalysis(Analysis):
    facts: Facts

    name = "fsdp"
    reads = ("imports",)
    conclude_reads = ("project",)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part: FsdpFacts = self.facts.fsdp
        self.assigned: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.wrapped_names: set[str] = set()
        self.numel_functions: dict[str, cst.FunctionDef] = {}
        self.state_dict_calls: list[tuple[cst.Call, str]] = []
        self.inside: set[int] = set()  # nodes within a reported one: not reported again
        self.state_dict_withs = 0  # ``with FSDP.state_dict_type(...)`` blocks around
        self.handed: list[tuple[cst.Call, str, set[str]]] = []  # calls of dotted callees, with their argument names
        # The classes of the file: name -> (bases as written, methods); the class and method around
        # here; ``self.<attr>`` bound to an FSDP wrapper, by class; the class and method of each
        # state-dict call on ``self.<attr>``.
        self.classes: dict[str, tuple[list[str], set[str]]] = {}
        self.class_stack: list[tuple[str, int]] = []  # (class, depth of the functions around it)
        self.function_names: list[str] = []
        self.wrapped_attributes: set[tuple[str, str]] = set()
        self.call_places: dict[cst.Call, tuple[str, str]] = {}

    # -- walk -------------------------------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if (name := dotted(target.target)) is not None:
                self.assigned[name].append(node.value)
                core = node.value
                while (
                    type(core) is cst.Call
                    and type(attribute := core.func) is cst.Attribute  # (method_name and receiver, at once)
                    and attribute.attr.value in ("to", "cuda")
                ):
                    core = attribute.value
                if type(core) is cst.Call and self.walk.resolve(core.func) in apis.FSDP_CLASSES:
                    self.wrapped_names.add(name)
                    if name.startswith("self.") and (place := self._place()) is not None:
                        self.wrapped_attributes.add((place[0], name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [base for arg in node.bases if arg.keyword is None and (base := dotted(arg.value)) is not None]
        methods = {
            statement.name.value
            for statement in (node.body.body if type(node.body) is cst.IndentedBlock else ())
            if type(statement) is cst.FunctionDef
        }
        self.classes.setdefault(node.name.value, (bases, methods))
        self.class_stack.append((node.name.value, len(self.function_names)))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_stack.pop()

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.function_names.pop()

    def _place(self) -> tuple[str, str] | None:
        """The class and the method of it around here (None: not in a method)."""
        if not self.class_stack:
            return None
        name, depth = self.class_stack[-1]
        return (name, self.function_names[depth]) if len(self.function_names) > depth else None

    def visit_Annotation(self, node: cst.Annotation) -> None:
        if self.part.annotation is None and any(
            type(sub) in (cst.Name, cst.Attribute) and self.walk.resolve(sub) in _WRAPPERS
            for sub in walk(node.annotation)
        ):
            self.part.annotation = node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.function_names.append(node.name.value)
        if any(param.name.value == "nonwrapped_numel" for param in node.params.params):
            self.numel_functions[node.name.value] = node

    def visit_With(self, node: cst.With) -> None:
        if any(self._state_dict_api(item.item) for item in node.items):
            self.state_dict_withs += 1

    def leave_With(self, node: cst.With) -> None:
        if any(self._state_dict_api(item.item) for item in node.items):
            self.state_dict_withs -= 1

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.callee
        if callee in apis.FSDP_CLASSES:
            self._wrap(node)
        elif callee in apis.FSDP2:
            self.part.fully_shards.add(node)
        elif callee in apis.DEVICE_MESHES and not _on_the_cpu(node):
            self.part.device_meshes.add(node)
        elif callee == apis.FSDP_MODULE_WRAP_POLICY and len(node.args) == 1 and not node.args[0].star:
            self.part.module_wrap_policies.add(node)
        elif (what := self._state_dict_api(node)) is not None:
            self._state_dict(node, what)
        elif (method := method_name(node)) in STATE_DICT_CALLS and not self.state_dict_withs:
            self.state_dict_calls.append((node, method))
            if (place := self._place()) is not None:
                self.call_places[node] = place
        elif (func := dotted(node.func)) is not None and node.args:
            self.handed.append((node, func, {n for a in node.args if (n := dotted(a.value)) is not None}))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) not in self.inside and (what := self._state_dict_api(node)) is not None:
            self._state_dict(node, what)

    def visit_Name(self, node: cst.Name) -> None:
        bound = self.facts.imports.table.bindings.get(node.value)
        if bound is not None and bound.startswith(apis.FSDP_MODULE) and id(node) not in self.inside:
            if (what := self._state_dict_api(node)) is not None:
                self._state_dict(node, what)

    def _state_dict_api(self, node: cst.BaseExpression) -> str | None:
        """What a call or reference of a torch FSDP state-dict API is (None: not one)."""
        target = node.func if type(node) is cst.Call else node
        qualified = self.walk.resolve(target)
        if qualified is None:
            return None
        owner, _, attr = qualified.rpartition(".")
        if owner in apis.FSDP_CLASSES and attr in apis.FSDP_STATE_DICT_METHODS:
            return f"FSDP.{attr}"
        if qualified in apis.FSDP_STATE_DICT_TYPES or owner in apis.FSDP_STATE_DICT_TYPES:
            return (
                qualified.removeprefix(apis.FSDP_MODULE + ".")
                .removeprefix("api.")
                .removeprefix("fully_sharded_data_parallel.")
            )
        if qualified.startswith(apis.DISTRIBUTED_CHECKPOINT + ".") and type(node) is cst.Call:
            return qualified
        return None

    def _state_dict(self, node: cst.CSTNode, what: str) -> None:
        if id(node) in self.inside:
            return  # part of a call or reference already recorded
        self.part.state_dicts[node] = what
        self.inside.update(id(sub) for sub in walk(node))

    def _wrap(self, node: cst.Call) -> None:
        named: list[tuple[str, cst.Arg]] = []
        unpacked: list[cst.Arg] = []
        position = 0
        for arg in node.args:
            if arg.star:
                unpacked.append(arg)
            elif arg.keyword is not None:
                named.append((arg.keyword.value, arg))
            elif position < len(apis.FSDP_PARAMETERS):
                named.append((apis.FSDP_PARAMETERS[position], arg))
                position += 1
        self.part.wraps[node] = FsdpWrap(tuple(named), tuple(unpacked))

    # -- results ----------------------------------------------------------------------------

    def finish(self) -> None:
        part = self.part
        for name, values in self.assigned.items():
            if len(values) == 1 and type(values[0]) is cst.Call:
                if self.walk.resolve(values[0].func) in apis.FSDP_MIXED_PRECISION:
                    part.precision_policies[name] = values[0]
        for wrap in part.wraps.values():
            policy = next((arg for key, arg in wrap.arguments if key == "auto_wrap_policy"), None)
            function = self._policy_function(policy.value) if policy is not None else None
            if function is None or policy is None:  # (no policy: no function)
                continue
            definition = self.numel_functions[function]
            if "unwrapped_params" in set(names_in(definition)):
                part.numel_policies[policy] = function
            else:
                part.policy_renames.add(definition)
        if part.active:
            for call, method in self.state_dict_calls:
                held = dotted(receiver(call))
                if held in self.wrapped_names and self._wrapped_there(call, held):
                    part.state_dicts[call] = f"{held}.{method}()"

    def _wrapped_there(self, call: cst.Call, name: str) -> bool:
        """``self.<attr>`` in a method holds an FSDP model when a class whose instances run that
        method binds it to one: the method's class, a class of this file that inherits the method
        (without overriding it), or a base of either (``BasicTrainer.save`` does not run on an
        ``FSDPTrainer`` that overrides ``save``). Other names: bound to one somewhere in the file."""
        place = self.call_places.get(call)
        if not name.startswith("self.") or place is None:
            return True
        owner, method = place
        running = {owner} | {cls for cls in self.classes if self._inherits(cls, owner, method, 0)}
        return any((cls, name) in self.wrapped_attributes for c in running for cls in self._lineage(c, 0))

    def _inherits(self, cls: str, owner: str, method: str, depth: int) -> bool:
        """``cls`` (a subclass of ``owner`` in this file) runs ``owner``'s ``method``: no class on
        the way from it to ``owner`` defines its own."""
        if cls == owner:
            return True
        bases, methods = self.classes.get(cls, ([], set()))
        if method in methods or depth > 20:
            return False
        return any(self._inherits(base.rpartition(".")[2], owner, method, depth + 1) for base in bases)

    def _lineage(self, cls: str, depth: int) -> set[str]:
        """``cls`` and its bases defined in this file."""
        bases = self.classes.get(cls, ([], set()))[0] if depth < 20 else []
        return {cls}.union(*(self._lineage(base.rpartition(".")[2], depth + 1) for base in bases))

    def conclude(self) -> None:
        """FSDP models handed to a project callable that trains them (its summary says so), in
        a module this run does not convert (one it converts keeps the plain step there: the
        optimizer comes from its caller, and this file imports it)."""
        if not self.part.wraps:
            return
        project = self.walk.analysis(ProjectAnalysis)
        for call, callee, names in self.handed:
            if not names & self.wrapped_names:
                continue
            found = project.origin(callee)
            if found is None or found.summary is None or not found.summary.trains(found.name):
                continue
            self.part.trained_elsewhere.add((found.summary.path, found.name))
            if found.summary.pending:
                self.part.foreign_training[call] = f"`{callee}` ({found.summary.path})"

    def _policy_function(self, value: cst.BaseExpression, depth: int = 0) -> str | None:
        """The function of this file that a policy value calls: ``fn``,
        ``functools.partial(fn, ...)``, or a name bound once to either."""
        if isinstance(value, cst.Call) and self.walk.resolve(value.func) in PARTIAL:
            inner = arg_value(value, 0, "func")
            return self._policy_function(inner, depth + 1) if inner is not None and depth < 3 else None
        name = dotted(value)
        if name is None:
            return None
        if name in self.numel_functions:
            return name
        values = self.assigned.get(name, [])
        if len(values) == 1 and depth < 3:
            return self._policy_function(values[0], depth + 1)
        return None
