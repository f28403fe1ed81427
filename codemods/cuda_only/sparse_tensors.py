"""Sparse tensors (the part of CudaOnlyAnalysis that follows them): which functions return
one, which moves take one to the device (they raise on XLA), and what the calls of a
function handing ``sparse`` to an embedding pass for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.cuda_only.code_shapes import calls, passes_not_false, sparse_core
from codemods.cuda_only.facts import SparseParameter
from codemods.engine.nodes import arg_value, dotted, is_false, is_none, method_name, names_the_cpu, string_value
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.cuda_only.facts import CudaOnlyFacts, SparseEvent
    from codemods.facts import Facts

# What a return may hand back a sparse tensor in: a call that makes one (or returns one), a name
# bound to one in the function (``adj = torch.sparse.FloatTensor(...)``, ``return adj``), a tuple
# of such (``return adj, features``).
RETURNED = frozenset({cst.Call, cst.Name, cst.Tuple})
# Products that multiply a sparse operand as one (checked on torch_xla 2.9: ``torch.matmul`` of a
# sparse CPU tensor and an XLA tensor raises NotImplementedError, 'aten::mm' on SparseXLA).
_DENSE_PRODUCTS = frozenset({"torch.matmul", "torch.mm"})
_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


class SparseTensors(Analysis):
    """The part of CudaOnlyAnalysis that follows sparse tensors (its walk records the events)."""

    facts: Facts
    part: CudaOnlyFacts
    # What may bind or move a sparse tensor, in order, decided once the functions that
    # return one are known (conclude).
    sparse_events: list[SparseEvent]
    sparse_returning: set[str]  # functions of this file that return a sparse tensor
    # Embeddings given ``sparse=<a parameter defaulting to False>``: (function, index, parameter).
    sparse_parameter_uses: dict[cst.Call, tuple[str, int, str]]
    # Sparse products and conversions (``x.to_sparse()``) in functions, by the function's
    # qualified name, and the functions each function calls (``self._gconv(x)`` in
    # ``Cell.forward``: ``Cell._gconv``): which a forward reaches is known in conclude.
    sparse_in_functions: list[tuple[cst.Call, str, bool]]
    function_calls: dict[str, set[str]]
    # Sparse tensors made with a ``device=`` not the CPU: where it ends is asked in conclude.
    sparse_made_on: list[tuple[cst.Call, cst.BaseExpression, str]]
    held: HeldSparse  # what the classes hold (their Parameters are read from the bind events)

    def bind_event(self, node: cst.Assign) -> SparseEvent:
        """``adj = ...`` (a "bind" of each target), ``adj, features = load_data()`` (an "unpack" of
        the tuple's elements), in the enclosing function's scope."""
        scope = self.walk.qualname if self.walk.enclosing_function is not None else ""
        target = node.targets[0].target
        if len(node.targets) == 1 and type(target) in (cst.Tuple, cst.List):
            assert isinstance(target, (cst.Tuple, cst.List))
            elements = [None if type(e) is cst.StarredElement else dotted(e.value) for e in target.elements]
            return ("unpack", elements, node.value, scope)
        return ("bind", [dotted(t.target) for t in node.targets], node.value, scope)

    def _sparse_call(self, node: cst.Call, callee: str | None) -> None:
        """A sparse product or ``.to_sparse()`` in a function, and a sparse tensor made with a
        ``device=`` that is not the CPU (the device, or the XLA device after the port)."""
        function = self.walk.enclosing_function
        if callee in apis.SPARSE_PRODUCTS and function is not None:
            self.sparse_in_functions.append((node, self.walk.qualname, True))
        elif callee is None and function is not None and method_name(node) in apis.SPARSE_METHODS:
            assert type(node.func) is cst.Attribute  # (a method)
            if not _on_the_cpu(node.func.value):
                self.sparse_in_functions.append((node, self.walk.qualname, False))
        if function is not None and "." in self.walk.qualname:
            self._held_call(node, callee)
        device = next(
            (arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "device"), None
        )
        if callee in apis.SPARSE_CONSTRUCTORS and device is not None:
            if not names_the_cpu(device) and not is_none(device):
                scope = self.walk.qualname if function is not None else ""
                self.sparse_made_on.append((node, device, scope))

    def _held_call(self, node: cst.Call, callee: str | None) -> None:
        """In a method: ``torch.matmul(self.A, x)`` (sparse if ``self.A`` is, known in conclude)
        and ``self.register_buffer("A", value)`` (a buffer moves with the module)."""
        held = self.held
        if callee in _DENSE_PRODUCTS:
            operands = [dotted(arg.value) for arg in node.args[:2] if arg.keyword is None]
            held.products.append((node, self.walk.qualname, [o for o in operands if o is not None]))
        elif method_name(node) == "register_buffer" and dotted(node.func) == "self.register_buffer":
            name = string_value(arg_value(node, 0, "name"))
            value = arg_value(node, 1, "tensor")
            if name is not None and value is not None:
                held.buffers.append((node, self.walk.qualname.rsplit(".", 1)[0], name, value))

    def _sparse_holders(self) -> dict[str, tuple[str, cst.Call]]:
        """The classes of this file whose instances hold a sparse tensor that moves with the
        module: a Parameter (``self.A = nn.Parameter(torch.sparse.FloatTensor(n, n))``), a buffer,
        or a submodule of such a class (``self.graph = GraphModel(...)``): the class -> (the
        attribute, the node that makes it).  The sparse attributes of each class, Parameters
        or not, make its products in methods sparse (``torch.matmul(self.A, x)``)."""
        holders: dict[str, tuple[str, cst.Call]] = {}
        attributes: set[tuple[str, str]] = set()
        submodules: list[tuple[str, str, str]] = []
        for event in self.sparse_events:
            if event[0] != "bind" or "." not in event[3]:
                continue
            owner = event[3].rsplit(".", 1)[0]
            value = sparse_core(event[2])
            for name in event[1]:
                if name is None or not name.startswith("self.") or name.count(".") != 1:
                    continue
                if type(value) is cst.Call and self.walk.resolve(value.func) in _PARAMETERS:
                    inner = arg_value(value, 0, "data")
                    if inner is not None and self._makes_sparse(inner):
                        holders.setdefault(owner, (name, value))
                        attributes.add((owner, name))
                elif self._makes_sparse(value):
                    attributes.add((owner, name))
                elif type(value) is cst.Call and (built := dotted(value.func)) is not None:
                    submodules.append((owner, name, built))
        for node, owner, name, value in self.held.buffers:
            if self._makes_sparse(value):
                holders.setdefault(owner, (f"self.{name}", node))
                attributes.add((owner, f"self.{name}"))
        changed = True
        while changed:  # a module holding a module that holds one
            changed = False
            for owner, name, built in submodules:
                if owner not in holders and built in holders:
                    inner_name, node = holders[built]
                    holders[owner] = (f"{name}.{inner_name.removeprefix('self.')}", node)
                    changed = True
        self.held.declared = {node: (owner, name) for owner, (name, node) in holders.items() if name.count(".") == 1}
        for node, scope, operands in self.held.products:
            owner = scope.rsplit(".", 1)[0]
            if any((owner, operand) in attributes for operand in operands):
                self.sparse_in_functions.append((node, scope, True))
        self.part.sparse_holders.update((owner, name) for owner, (name, _) in holders.items())
        return holders

    def _held_class(
        self, value: cst.BaseExpression, holders: dict[str, tuple[str, cst.Call]]
    ) -> tuple[str, str] | None:
        """``GraphModel(...)``, a class of this file or of the project holding a sparse tensor
        that moves with the module: (the class as called, the attribute)."""
        if type(value) is not cst.Call or (built := dotted(value.func)) is None:
            return None
        if built in holders:
            return built, holders[built][0]
        found = self.walk.analysis(ProjectAnalysis).origin(built)
        if found is None or found.summary is None:
            return None
        return next(((built, a) for c, a in found.summary.sparse_holders if c == found.name), None)

    def _reaches(self, node: cst.Call, callee: str | None, method: str | None) -> None:
        """``self.name(...)`` in a method (the class's method ``name``), ``name(...)`` of a
        module-level function: what a function calls, for what a forward reaches."""
        if self.walk.enclosing_function is None:
            return
        scope = self.walk.qualname
        func = node.func
        if (
            type(func) is cst.Attribute
            and type(func.value) is cst.Name
            and func.value.value == "self"
            and method is not None
            and "." in scope
        ):
            self.function_calls.setdefault(scope, set()).add(f"{scope.rsplit('.', 1)[0]}.{method}")
        elif type(func) is cst.Name and callee is None:
            self.function_calls.setdefault(scope, set()).add(func.value)

    def _sparse_made_on_the_device(self) -> None:
        """``torch.sparse_coo_tensor(i, v, shape, device=device)`` where ``device`` is known to
        ends on the XLA device after the port (the shared device-value analysis)."""
        from codemods.device.values import DeviceValueAnalysis

        if not self.sparse_made_on:
            return
        values = self.walk.analysis(DeviceValueAnalysis)
        for node, device, scope in self.sparse_made_on:
            if values.where(device, scope).on_xla:
                self.part.sparse_creations[node] = code_of(device)

    def _sparse_reached(self) -> None:
        """The sparse products and conversions in a forward (a model's or an autograd
        Function's) or in a function it reaches: the model's tensors are on the device there."""
        if not self.sparse_in_functions:
            return
        scopes = [*self.function_calls, *(scope for _, scope, _ in self.sparse_in_functions)]
        reached = {scope for scope in scopes if scope == "forward" or scope.endswith(".forward")}
        todo = list(reached)
        while todo:
            for called in self.function_calls.get(todo.pop(), ()):
                if called not in reached:
                    reached.add(called)
                    todo.append(called)
        for node, scope, product in self.sparse_in_functions:
            if scope in reached or any(scope.startswith(f"{outer}.") for outer in reached):
                (self.part.sparse_products if product else self.part.sparse_conversions).add(node)

    def _unpacks_sparse(self, value: cst.BaseExpression, index: int) -> bool:
        """``value`` is a call of a function of this file or of the project whose returned tuple
        holds a sparse tensor at ``index`` (``A, features = load_data(...)``: ``load_data`` returns
        ``A, features`` with ``A = to_sparse(...)``)."""
        if type(value) is not cst.Call or (callee := dotted(value.func)) is None:
            return False
        short = callee.removeprefix("self.")
        if any(q.rsplit(".", 1)[-1] == short and i == index for q, i in self.part.sparse_element_returns):
            return True
        found = self.walk.analysis(ProjectAnalysis).origin(callee)
        return (
            found is not None
            and found.summary is not None
            and (found.name, index) in found.summary.sparse_element_returns
        )

    def _sparse_returns(self) -> None:
        """The functions of this file that return a sparse tensor, whole or as an element of a
        tuple: made in the return (``return torch.sparse.FloatTensor(...)``), or bound to a name
        in the function first (``adj = to_sparse(...)``, ``return adj``; ``return adj, features``).
        Replayed until nothing changes (a function may return what one defined below makes)."""
        returned: set[tuple[str, str | None]] = set()
        for event in self.sparse_events:
            if event[0] == "return":
                values = event[2].elements if type(event[2]) is cst.Tuple else [event[2]]
                returned.update((event[1], dotted(v.value if type(v) is cst.Element else v)) for v in values)
        changed = True
        while changed:
            changed = False
            held: dict[str, set[str]] = {}  # by scope: its names bound to a sparse tensor
            for event in self.sparse_events:
                if event[0] in ("bind", "unpack"):
                    here = held.setdefault(event[3], set())
                    kept = dotted(sparse_core(event[2])) in here  # ``adj = adj.coalesce()``
                    for index, name in enumerate(event[1]):
                        if name is None:
                            continue
                        here.discard(name)
                        if (event[3], name) in returned and (
                            self._unpacks_sparse(event[2], index)
                            if event[0] == "unpack"
                            else kept or self._makes_sparse(event[2])
                        ):
                            here.add(name)
                elif event[0] == "return":
                    changed |= self._returns_sparse(event[1], event[2], held.get(event[1], set()))

    def _returns_sparse(self, function: str, value: cst.BaseExpression, held: set[str]) -> bool:
        """Notes that ``function`` returns a sparse tensor (or one in a tuple) in ``value``, given
        the names of its scope bound to one: whether that is new."""
        if type(value) is cst.Tuple:
            new = set()
            for index, element in enumerate(value.elements):
                if type(element) is cst.Element and (
                    dotted(element.value) in held or self._makes_sparse(element.value)
                ):
                    new.add((function, index))
            new -= self.part.sparse_element_returns
            self.part.sparse_element_returns.update(new)
            return bool(new)
        if function in self.part.sparse_returns or not (dotted(value) in held or self._makes_sparse(value)):
            return False
        self.part.sparse_returns.add(function)
        self.sparse_returning.add(function.rsplit(".", 1)[-1])
        return True

    def _makes_sparse(self, value: cst.BaseExpression) -> bool:
        """``torch.sparse_coo_tensor(...)``, ``torch.sparse.FloatTensor(...)``, ``x.to_sparse()``,
        also followed by ``.coalesce()``; a call of a function of this file or of the
        project that returns one (``self._to_sparse_tensor(adj)``)."""
        value = sparse_core(value)
        if type(value) is not cst.Call:
            return False
        if self.walk.resolve(value.func) in apis.SPARSE_CONSTRUCTORS or method_name(value) in apis.SPARSE_METHODS:
            return True
        callee = dotted(value.func)
        if callee is None:
            return False
        if callee.removeprefix("self.") in self.sparse_returning:
            return True
        found = self.walk.analysis(ProjectAnalysis).origin(callee)
        return found is not None and found.summary is not None and found.name in found.summary.sparse_returns

    def _sparse_parameter(self, node: cst.Call, sparse: cst.Arg) -> None:
        """``sparse=sparse``, a parameter of the enclosing function that defaults to False
        (or None): noted with its place, for the calls that decide it (conclude)."""
        function = self.walk.enclosing_function
        if function is None or type(sparse.value) is not cst.Name:
            return
        name = sparse.value.value
        positional = [*function.params.posonly_params, *function.params.params]
        if positional and positional[0].name.value in ("self", "cls") and self.walk.class_depth:
            positional = positional[1:]
        for index, param in [*enumerate(positional), *((-1, p) for p in function.params.kwonly_params)]:
            if param.name.value == name and (is_false(param.default) or is_none(param.default)):
                self.sparse_parameter_uses[node] = (self.walk.qualname, index, name)

    def _sparse_calls(self) -> None:
        """What the calls of a function handing ``sparse`` to an embedding pass for it: of
        this file's functions (they decide its findings), and of another module's (told to
        that module's findings through this file's summary: cuda_only/held_conditions.py)."""
        project = self.walk.analysis(ProjectAnalysis)
        functions = set(self.sparse_parameter_uses.values())
        self.part.sparse_functions.update(functions)
        local: dict[str, list[str]] = {qualname: [] for qualname, _, _ in functions}
        called: set[str] = set()
        for call, callee in project.calls:
            for qualname, index, param in functions:
                if calls(callee, qualname):
                    called.add(qualname)
                    if (passed := passes_not_false(call, index, param)) is not None:
                        local[qualname].append(passed)
            found = project.origin(callee)
            if found is None or found.summary is None:
                continue
            for function, index, param in found.summary.sparse_functions:
                if (
                    function in (found.name, f"{found.name}.__init__")
                    and (passed := passes_not_false(call, index, param)) is not None
                ):
                    self.part.sparse_calls.add((found.summary.path, function, passed))
        for node, (qualname, _, param) in self.sparse_parameter_uses.items():
            self.part.sparse_parameters[node] = SparseParameter(
                qualname, param, tuple(local[qualname]), qualname in called
            )

    def _sparse_moves(self) -> None:
        """Replays what binds, returns and moves tensors: a move of a name bound to a sparse
        tensor (``adj.cuda()``, ``self.Graph.coalesce().to(device)``) or of a sparse value
        (``self._to_sparse(a).coalesce().to(device)``) raises on XLA."""
        names: set[str] = set()
        self._sparse_returns()
        holders = self._sparse_holders()
        instances: dict[str, tuple[str, str]] = {}  # names bound to such a module: (class, attribute)
        # Only what is moved somewhere needs its value looked at (a project callee is looked up).
        moved_names = {dotted(sparse_core(event[2])) for event in self.sparse_events if event[0] == "move"}
        for event in self.sparse_events:
            if event[0] == "bind":
                bound = {n for n in event[1] if n is not None}
                kept = dotted(sparse_core(event[2])) in names  # ``adj = adj.coalesce()``
                names.difference_update(bound)
                held_class = self._held_class(event[2], holders) if bound & moved_names else None
                for bound_name in bound:
                    instances.pop(bound_name, None)
                    if held_class is not None:
                        instances[bound_name] = held_class
                if bound & moved_names and (kept or self._makes_sparse(event[2])):
                    names.update(bound)
            elif event[0] == "unpack":
                for index, name in enumerate(event[1]):
                    if name is not None:
                        names.discard(name)
                        if name in moved_names and self._unpacks_sparse(event[2], index):
                            names.add(name)
            elif event[0] == "move":
                subject = event[1]
                moved = sparse_core(event[2])
                if (held := dotted(moved)) is not None and held in names:
                    self.part.sparse_moves[subject] = (held, False)
                elif self._makes_sparse(moved):
                    self.part.sparse_moves[subject] = (code_of(moved), True)
                elif (module := instances.get(held or "") or self._held_class(moved, holders)) is not None:
                    self.part.sparse_module_moves[subject] = (code_of(moved), *module)
                    if module[0] in holders and (declared := self.held.declared.get(holders[module[0]][1])):
                        self.part.sparse_held.setdefault(holders[module[0]][1], (*declared, code_of(subject)))


@dataclass
class HeldSparse:
    """What the walk records of the sparse tensors a class holds: the products in its methods
    (the call, the method's qualified name, its operands' name chains) and its buffers (the
    call, the class, the buffer's name, its value)."""

    products: list[tuple[cst.Call, str, list[str]]] = field(default_factory=list)
    buffers: list[tuple[cst.Call, str, str, cst.BaseExpression]] = field(default_factory=list)
    # Once known: the node that makes each sparse Parameter or buffer -> (its class, its attribute).
    declared: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)


def _on_the_cpu(value: cst.BaseExpression) -> bool:
    """``x.cpu()``, ``x.to("cpu")``: a tensor on the CPU, whatever ``x`` was."""
    return type(value) is cst.Call and (
        method_name(value) == "cpu" or (method_name(value) == "to" and names_the_cpu(arg_value(value, 0, "device")))
    )
