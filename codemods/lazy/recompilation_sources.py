"""Recompilation sources: what makes each step a *different* graph.  A device tensor
sliced with the loop's Python offset (the offset is baked into the graph), a per-step
Python number used as a shape or static argument (``x.view(n, -1)``,
``torch.arange(n)``), operations whose output shape depends on the data (``nonzero``,
``masked_select``, boolean masks, ``unique``), a short last batch.  Plain arithmetic
with Python numbers (``loss * scale``, a learning rate) is not one: torch_xla 2.x passes
such scalars as device data (only 0 and 1 are specialised), measured in the executed
tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import arg_value, call_args, dotted, is_false, method_name, receiver
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis, Walk
from codemods.lazy.expression_kinds import is_identity_test, names_a_device
from codemods.lazy.facts import SlicedData
from codemods.lazy.flow import FlowAnalysis
from codemods.lazy.host_reads import HostReadAnalysis
from codemods.lazy.sites import Scope, Site

if TYPE_CHECKING:
    from codemods.facts import Facts

# Operations whose output shape depends on the values of their input.
DYNAMIC_SHAPE_METHODS = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere"})
DYNAMIC_SHAPE_FUNCTIONS = frozenset(f"torch.{m}" for m in DYNAMIC_SHAPE_METHODS)
# Operations whose integer arguments are compiled into the graph (shapes, offsets,
# counts, exponents): a Python number that changes every step makes every step a new graph.
STATIC_ARGUMENT_METHODS = frozenset(
    {
        "view",
        "reshape",
        "expand",
        "repeat",
        "narrow",
        "roll",
        "topk",
        "kthvalue",
        "unfold",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "split",
        "chunk",
        "tile",
        "pow",
        "select",
    }
)
STATIC_ARGUMENT_FUNCTIONS = frozenset(
    f"torch.{f}"
    for f in (
        "arange",
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "linspace",
        "eye",
        "roll",
        "narrow",
        "topk",
    )
)


@dataclass(repr=False)
class _Origin:
    """Where a tensor became device-resident: ``name`` holds it, ``moves`` put it there."""

    name: str
    moves: list[cst.Call]
    device: cst.BaseExpression
    scope: Scope  # where ``device`` is evaluated


class _Groups:
    """Names that hold the same data (an origin and the parameters it is passed to),
    joined with union-find; keys are (id of the scope, name)."""

    def __init__(self, origins: dict[tuple[int, str], _Origin]) -> None:
        self.origins = origins
        self.parent: dict[tuple[int, str], tuple[int, str]] = {key: key for key in origins}

    def find(self, key: tuple[int, str]) -> tuple[int, str] | None:
        return self._root(key) if key in self.parent else None

    def _root(self, key: tuple[int, str]) -> tuple[int, str]:
        """The group of ``key``, a member."""
        while self.parent[key] != key:
            key = self.parent[key]
        return key

    def join(self, source: tuple[int, str], member: tuple[int, str]) -> bool:
        """``member`` receives ``source``'s data; True if that is news."""
        root = self.find(source)
        if root is None:
            return False
        if member not in self.parent:
            self.parent[member] = root
            return True
        other = self._root(member)
        if other != root:
            self.parent[other] = root
            return True
        return False

    def origins_of(self, root: tuple[int, str]) -> list[_Origin]:
        return [origin for key, origin in self.origins.items() if self.find(key) == root]


class RecompilationSourceAnalysis(Analysis):
    """Recompilation sources among the flow's device values and per-step integers."""

    facts: Facts

    name = "recompilation"
    reads = ("lazy_flow", "host_reads", "training")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.recompilation
        self.flow = walk.analysis(FlowAnalysis)

    def finish(self) -> None:
        self.flow.find_varying(self.walk.analysis(HostReadAnalysis).reading_loops)
        self._sliced_data()
        self._static_arguments()
        self._dynamic_shapes()
        self._short_last_batches()

    def _sliced_data(self) -> None:
        """Device-resident data sliced with a per-step integer.  Fixed where the file
        builds the data: it stays on the host and each slice moves to the device."""
        origins = self._data_origins()
        groups = _Groups(origins)
        site: Site[cst.CSTNode]  # of a call, then of a subscript
        for _ in range(6):  # parameters that receive the data join its group
            grew = False
            for site in self.flow.sites.calls:
                for callee, param, arg in self.flow.params_for(site.node):
                    name = dotted(arg)
                    if type(arg) is cst.Name and name is not None:
                        grew = groups.join((id(self.flow.owner(site.scope, name)), name), (id(callee), param)) or grew
            if not grew:
                break
        problems: dict[tuple[int, str], str] = {}
        for node, scope in self.flow.sites.names if origins else ():  # every use: a slice, metadata, or a hand-over
            name = node.value
            key = groups.find((id(self.flow.owner(scope, name)), name))
            if key is None or id(node) in self.flow.uses.safe:
                continue
            passed = self.flow.uses.passed.get(id(node))
            if passed is not None and any(
                groups.find((id(c), p)) == key for c, p, a in self.flow.params_for(passed[0]) if a is node
            ):
                continue
            problems.setdefault(key, f"`{name}` is also used whole, on the device")
        sliced: dict[tuple[int, str], list[tuple[Site[cst.Subscript], str | None, str]]] = {}
        for site in self.flow.sites.subscripts:
            subscript = site.node
            assert type(subscript) is cst.Subscript
            name = dotted(subscript.value)
            if type(subscript.value) is not cst.Name or name is None:
                continue
            varying = self.flow.varying_in(site.scope, subscript.slice[0]) if subscript.slice else None
            key = groups.find((id(self.flow.owner(site.scope, name)), name))
            if key is None:
                if varying and not site.scope.is_forward and self.flow.is_device(site.scope, subscript.value):
                    reason = _not_an_origin(self.flow.owner(site.scope, name), name)
                    self.part.sliced_data[subscript] = SlicedData(name, True, None, reason)
                continue
            sliced.setdefault(key, []).append((site, varying, name))
            if id(subscript) in self.flow.uses.store_subscripts:
                problems.setdefault(key, f"`{name}` is written to")
        for key, sites in sliced.items():
            if not any(varying for _, varying, _ in sites):
                continue
            members = groups.origins_of(key)
            device = members[0].device
            problem = problems.get(key) or self._device_problem(members, [site for site, _, _ in sites])
            for site, varying, name in sites:
                self.part.sliced_data[site.node] = SlicedData(
                    name,  # the subscript's value: a Name
                    bool(varying),
                    None if problem else device,
                    problem or "",
                )
            if problem is None:
                names = ", ".join(sorted({origin.name for origin in members}))
                for origin in members:
                    for move in origin.moves:
                        self.part.host_data_moves[move] = names

    @staticmethod
    def _device_problem(origins: list[_Origin], sites: list[Site[cst.CSTNode]]) -> str | None:
        """Why the device the data went to cannot name each slice's device (None: it can)."""
        codes = {dotted(o.device) for o in origins}
        code = codes.pop() if len(codes) == 1 else None
        if code is None:
            return "its device is not one plain name"
        root = code.split(".")[0]
        for origin in origins:
            for site in sites:
                if site.scope is origin.scope:
                    continue
                if root in site.scope.locals or (origin.scope.node is not None and root in origin.scope.locals):
                    return f"`{root}` is not visible where the data is sliced"
        return None

    def _data_origins(self) -> dict[tuple[int, str], _Origin]:
        """Tensors moved to the device once, outside loops: ``x = data.to(device)``, or
        ``x = batchify(...)`` where every return of ``batchify`` is ``data.to(device)``."""
        returns_moved: dict[str, tuple[list[cst.Call], Scope]] = {}
        for name, scopes in self.flow.functions.items():
            scope = scopes[0]
            if len(scopes) == 1 and scope.returns and all(self._is_data_move(scope, r) for r in scope.returns):
                returns_moved[name] = ([r for r in scope.returns if type(r) is cst.Call], scope)  # all of them
        assigned: dict[tuple[int, str], int] = {}
        for scope in [self.flow.module_scope, *self.flow.scopes.values()]:
            for targets, _, _, _ in scope.assignments:
                for target in targets:
                    assigned[(id(scope), target)] = assigned.get((id(scope), target), 0) + 1
        origins: dict[tuple[int, str], _Origin] = {}
        for scope in [self.flow.module_scope, *self.flow.scopes.values()]:
            for targets, value, loops, augmented in scope.assignments:
                key = (id(scope), targets[0]) if len(targets) == 1 else None
                if key is None or loops or augmented or "." in targets[0] or assigned[key] != 1:
                    continue  # a name assigned more than once is not one tensor
                if (
                    type(value) is cst.Call  # (a data move is a call that names its device)
                    and self._is_data_move(scope, value)
                    and (device := arg_value(value, 0, "device")) is not None
                ):
                    origins[key] = _Origin(targets[0], [value], device, scope)
                elif type(value) is cst.Call and (callee := dotted(value.func) or "") in returns_moved:
                    moves, function_scope = returns_moved[callee]
                    if (device := arg_value(moves[0], 0, "device")) is not None:  # (as above)
                        origins[key] = _Origin(targets[0], moves, device, function_scope)
        return origins

    def _is_data_move(self, scope: Scope, value: cst.BaseExpression) -> bool:
        """``tensor.to(device)``: not a module, a dtype cast, or a chain of other calls."""
        if type(value) is not cst.Call or method_name(value) != "to" or len(value.args) != 1:
            return False
        source = receiver(value)
        if source is None or (dotted(source) or "") in self.facts.training.models:
            return False
        if type(source) is cst.Call and (self.walk.resolve(source.func) or "").startswith("torch.nn."):
            return False
        return names_a_device(arg_value(value, 0, "device"), self.walk)

    def _static_arguments(self) -> None:
        site: Site[cst.CSTNode]  # of a call, then of a power
        for site in self.flow.sites.calls:
            call = site.node
            assert type(call) is cst.Call
            method = method_name(call)
            callee = self.walk.resolve(call.func)
            if method in STATIC_ARGUMENT_METHODS and self.flow.is_device(site.scope, receiver(call)):
                arguments = [a.value for a in call.args]
            elif callee in STATIC_ARGUMENT_FUNCTIONS and self.flow.call_is_device(site.scope, call):
                arguments = [
                    a.value for a in call.args if a.keyword is None or a.keyword.value not in ("device", "dtype")
                ]
            else:
                continue
            for argument in arguments:
                if self.flow.is_device(site.scope, argument):
                    continue
                if (name := self.flow.varying_in(site.scope, argument)) is not None:
                    self.part.static_arguments[call] = name
                    break
        for site in self.flow.sites.powers:
            power = site.node
            assert type(power) is cst.BinaryOperation
            if self.flow.is_device(site.scope, power.left) and not self.flow.is_device(site.scope, power.right):
                if (name := self.flow.varying_in(site.scope, power.right)) is not None:
                    self.part.static_arguments[power] = name

    def _dynamic_shapes(self) -> None:
        site: Site[cst.CSTNode]  # of a call, then of a subscript
        for scope in [self.flow.module_scope, *self.flow.scopes.values()]:
            for targets, value, _, _ in scope.assignments:
                if _is_mask(value, scope.masks) and self.flow.is_device(scope, value):
                    scope.masks.update(targets)
        for site in self.flow.sites.calls:
            call = site.node
            assert type(call) is cst.Call
            if not (site.loops or site.scope.is_forward):
                continue
            method = method_name(call)
            callee = self.walk.resolve(call.func)
            if method in DYNAMIC_SHAPE_METHODS and self.flow.is_device(site.scope, receiver(call)):
                self.part.dynamic_shapes[call] = f".{method}()"
            elif (
                callee in DYNAMIC_SHAPE_FUNCTIONS and call.args and self.flow.is_device(site.scope, call.args[0].value)
            ):
                self.part.dynamic_shapes[call] = f"{callee}()"
            elif (
                callee == "torch.where" and len(call.args) == 1 and self.flow.is_device(site.scope, call.args[0].value)
            ):
                self.part.dynamic_shapes[call] = "torch.where(condition)"
        for site in self.flow.sites.subscripts:
            subscript = site.node
            assert type(subscript) is cst.Subscript
            if not (site.loops or site.scope.is_forward) or id(subscript) in self.flow.uses.store_subscripts:
                continue
            if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Index:
                continue
            index = subscript.slice[0].slice.value
            masks = self.flow.owner(site.scope, dotted(index) or "x").masks
            is_mask = (dotted(index) in masks) or (_is_mask(index, masks) and self.flow.is_device(site.scope, index))
            if is_mask and self.flow.is_device(site.scope, subscript.value):
                self.part.dynamic_shapes[subscript] = "boolean-mask indexing"

    def _short_last_batches(self) -> None:
        # A loader name is looked up in the scope that owns it from the loop (``dl`` in ``fit`` is not
        # ``dl`` in ``predict``); an attribute (``self.loader``) set in another method is found by name.
        loaders: dict[tuple[int, str], list[cst.Call]] = {}
        for scope in [self.flow.module_scope, *self.flow.scopes.values()]:
            for targets, value, _, _ in scope.assignments:
                if type(value) is cst.Call and self.walk.resolve(value.func) in apis.DATA_LOADERS:
                    for target in targets:
                        loaders.setdefault((id(scope), target), []).append(value)
                        loaders.setdefault((0, target), []).append(value)
        for loop in self.facts.training.all_loops:
            if type(loop) is not cst.For:
                continue
            source: cst.BaseExpression = loop.iter
            while type(source) is cst.Call and source.args and self.walk.resolve(source.func) not in apis.DATA_LOADERS:
                source = source.args[0].value  # enumerate(...), tqdm(...), MpDeviceLoader(...)
            name = dotted(source) or ""
            site = self.flow.sites.loops.get(loop)
            owner = self.flow.owner(site.scope, name) if site is not None else self.flow.module_scope
            local = "." not in name and name in owner.locals and name not in owner.params
            key = (id(owner), name) if local or (id(owner), name) in loaders else (0, name)
            # A call that is no torch DataLoader (a project's own loader, ``loader.get_iterator()``,
            # which may pad its last batch) says nothing of its batches' shapes.
            if type(source) is cst.Call:
                calls = [source] if self.walk.resolve(source.func) in apis.DATA_LOADERS else []
            else:
                calls = loaders.get(key, [])
            for call in calls:
                keywords = call_args(call)[1]
                drop = keywords.get("drop_last")
                if "batch_sampler" in keywords or (drop is not None and not is_false(drop.value)):
                    continue
                batch = keywords.get("batch_size")
                if batch is not None and (batch.value.value if type(batch.value) is cst.Integer else "") == "1":
                    continue
                self.part.short_last_batch.add(call)


def _is_mask(node: cst.BaseExpression, masks: set[str]) -> bool:
    if type(node) is cst.Comparison:
        return not is_identity_test(node)
    if type(node) is cst.Call and method_name(node) == "bool":
        return True
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.BitInvert:
        return _is_mask(node.expression, masks) or dotted(node.expression) in masks
    if type(node) is cst.BinaryOperation and type(node.operator) in (cst.BitAnd, cst.BitOr):
        return any(_is_mask(side, masks) or dotted(side) in masks for side in (node.left, node.right))
    return False


def _not_an_origin(owner: Scope, name: str) -> str:
    """Why a device tensor sliced at a per-step offset, which is no data moved to the device once
    (``x = data.to(device)``), is not fixed: a value computed on the device, or one the file does not
    build."""
    if any(name in targets for targets, _, _, _ in owner.assignments):
        where = f"in `{owner.qualname}`" if owner.node is not None and owner.qualname else "in this file"
        moves = [
            value
            for targets, value, _, _ in owner.assignments
            if name in targets and type(value) is cst.Call and method_name(value) in ("to", "cuda")
        ]
        if moves:  # (``targets = targets[:, 1:].to(self.device)``: host data, moved where it is bound)
            return (
                f"`{name}` is moved to the device from host data {where} (`{code_of(moves[0])}`), a move the tool "
                "does not undo: slice the host data before that move and move each slice, or copy it to the host "
                "once (`.cpu()`) before the loop that slices it"
            )
        return (
            f"`{name}` is computed on the device {where}, not moved there once from host data, so there is no "
            "host copy to keep: copy it to the host once (`.cpu()`) before the loop that slices it"
        )
    return "the data is not built in this file"
