"""CPU tensors indexed with tensors on the device: a lookup table a module holds as a plain
attribute (``self.table = table`` in ``__init__``: no Parameter, no buffer, so moving the module
leaves it on the CPU), indexed in a method with an index the module's own layers take
(``self.emb(idx)``, so the index is on the device the module moved to) and the result moved
(``self.table[idx].to(device)``: the code knows the table is on the host); and a CPU tensor a
function makes (``mask = torch.zeros(n, m)``) indexed there with a name it moved to the device
(``users = users.to(device)``, ``mask[users]``).

What torch_xla 2.9 does (checked on PJRT_DEVICE=CPU): a CPU tensor indexed with an XLA tensor
raises "indices should be either on cpu or on the same device as the indexed tensor (XLA)", an
assignment through one fails too, where CUDA accepts a CPU tensor indexed with CUDA indices;
indexing with ``idx.cpu()``, or the table moved to the device, runs."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods.engine.nodes import children, dotted, method_name, names_the_cpu, receiver, string_value, walk
from codemods.engine.positions import code_of

# torch's constructors of a tensor on the CPU unless given a device.
_HOST_CONSTRUCTORS = frozenset(
    {
        "torch.tensor",
        "torch.as_tensor",
        "torch.from_numpy",
        "torch.zeros",
        "torch.ones",
        "torch.full",
        "torch.empty",
        "torch.rand",
        "torch.randn",
        "torch.randint",
        "torch.randperm",
        "torch.arange",
        "torch.Tensor",
        "torch.FloatTensor",
        "torch.LongTensor",
        "torch.IntTensor",
        "torch.BoolTensor",
        "torch.DoubleTensor",
    }
)
_TO_HOST = frozenset({"cpu", "numpy", "tolist", "item"})
_OWN_MOVES = frozenset({"to", "cuda", "_apply", "register_buffer"})

Resolve = Callable[[cst.BaseExpression], "str | None"]
# Whether a move's device (None: ``.cuda()``) in the function of that qualified name is the XLA
# device after the port (None: unknown).
OnDevice = Callable[["cst.BaseExpression | None", str], "bool | None"]
# What is indexed -> (the tensor as written, the index, where the tensor comes from).
Indexings = dict[cst.Subscript, tuple[str, str, str]]


def host_indexings(module: cst.Module, resolve: Resolve, on_device: OnDevice) -> Indexings:
    """The subscripts of the module that index a CPU tensor with a tensor on the XLA device (not
    in a class whose construction is handed a moved tensor, ``Scorer(table.to(device))``)."""
    found: Indexings = {}
    moved: list[set[str]] = []  # made once, for the first class that holds a table

    def moved_here(name: str) -> bool:
        if not moved:
            classes = _moved_classes(module, on_device)
            handed_moved = {
                built
                for node in walk(module)
                if type(node) is cst.Call
                and (built := dotted(node.func)) in classes
                and any(_moves(walk(arg.value)) for arg in node.args)
            }
            moved.append(classes - handed_moved)
        return name in moved[0]

    for statement in module.body:
        if type(statement) is cst.ClassDef:
            _class_indexings(statement, resolve, moved_here, found)
    for scope, body in _scopes(module):
        _scope_indexings(scope, body, resolve, on_device, found)
    return found


def _scope_nodes(body: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of ``body``, without those of its nested functions and classes (``walk`` for all)."""
    out: list[cst.CSTNode] = []
    todo = [body]
    while todo:
        node = todo.pop()
        out.append(node)
        if node is not body and type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        todo.extend(children(node))
    return out


def _moves(nodes: list[cst.CSTNode]) -> list[cst.Call]:
    return [n for n in nodes if type(n) is cst.Call and method_name(n) in ("to", "cuda") and receiver(n) is not None]


def _device_of(call: cst.Call) -> cst.BaseExpression | None:
    if method_name(call) == "cuda" or not call.args:
        return None
    return call.args[0].value


def _moved_classes(module: cst.Module, on_device: OnDevice) -> set[str]:
    """The classes an instance of which the module moves to a device not known to stay off XLA
    (``model = M(...)``, ``model = model.to(device)``; ``M(...).cuda()``): a model of the script
    goes to the XLA device, or its move is reported (XLA111)."""
    instances: dict[str, set[str]] = {}
    for node in walk(module):
        if type(node) is cst.Assign and type(node.value) is cst.Call and (built := dotted(node.value.func)):
            for target in node.targets:
                if (name := dotted(target.target)) is not None:
                    instances.setdefault(name, set()).add(built)
    moved: set[str] = set()
    for scope, body in _scopes(module):
        for call in _moves(_scope_nodes(body)):
            device = _device_of(call)
            if device is not None and names_the_cpu(device):
                continue
            subject = receiver(call)
            if type(subject) is cst.Call and (built := dotted(subject.func)) is not None:
                classes = {built}
            else:
                classes = instances.get(dotted(subject) or "", set())
            if classes and on_device(device, scope) is not False:  # (the stepped model goes to XLA: O1, XLA111)
                moved.update(classes)
    return moved


def _scopes(module: cst.Module) -> list[tuple[str, cst.CSTNode]]:
    """The module's top level, its functions and its classes' methods, by qualified name."""
    scopes: list[tuple[str, cst.CSTNode]] = [("", module)]
    for statement in module.body:
        if type(statement) is cst.FunctionDef:
            scopes.append((statement.name.value, statement.body))
        elif type(statement) is cst.ClassDef:
            for method in statement.body.body:
                if type(method) is cst.FunctionDef:
                    scopes.append((f"{statement.name.value}.{method.name.value}", method.body))
    return scopes


def _root(node: cst.BaseExpression) -> cst.BaseExpression:
    """``self.mats`` of ``self.mats["beta"]``: what a string key picks from."""
    while type(node) is cst.Subscript and len(node.slice) == 1:
        index = node.slice[0].slice
        if type(index) is not cst.Index or string_value(index.value) is None:
            break
        node = node.value
    return node


def _index_name(node: cst.Subscript) -> str | None:
    """``idx`` of ``t[idx]``, ``t[idx.flatten()]``: the name the index is, or a method of (not
    ``t[idx.cpu()]``)."""
    if len(node.slice) != 1 or type(index := node.slice[0].slice) is not cst.Index:
        return None
    value = index.value
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        if value.func.attr.value in _TO_HOST or (value.func.attr.value == "to" and names_the_cpu(_device_of(value))):
            return None  # ``t[idx.cpu()]``: a CPU index
        value = value.func.value
    return value.value if type(value) is cst.Name else None


def _parameters(function: cst.FunctionDef) -> set[str]:
    params = function.params
    return {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}


def _class_indexings(node: cst.ClassDef, resolve: Resolve, moved: Callable[[str], bool], found: Indexings) -> None:
    """``self.table[idx].to(device)`` in a method, ``self.table`` bound once, in ``__init__``, to
    one of its parameters or a tensor made on the CPU, ``idx`` a parameter that a method hands to
    one of the module's torch layers (``self.emb(idx)``)."""
    methods = [s for s in node.body.body if type(s) is cst.FunctionDef]
    if any(m.name.value in _OWN_MOVES for m in methods):
        return
    init = next((m for m in methods if m.name.value == "__init__"), None)
    if init is None:
        return
    bindings: dict[str, list[cst.BaseExpression]] = {}
    registered: set[str] = set()
    for method in methods:
        for sub in _scope_nodes(method):
            if type(sub) is cst.Assign:
                for target in sub.targets:
                    if (name := dotted(target.target)) is not None and name.startswith("self."):
                        bindings.setdefault(name, []).append(sub.value if method is init else cst.Name("_"))
            elif type(sub) is cst.Call and method_name(sub) in ("register_buffer", "register_parameter") and sub.args:
                if (key := string_value(sub.args[0].value)) is not None:
                    registered.add(f"self.{key}")
    init_params = _parameters(init)
    host: dict[str, str] = {}
    layers: set[str] = set()
    for name, values in bindings.items():
        if len(values) != 1 or name in registered or name.count(".") != 1:
            continue
        value = values[0]
        if type(value) is cst.Name and value.value in init_params:
            host[name] = f"`{value.value}`, handed to `{node.name.value}(...)`"
        elif type(value) is cst.Call and not any(a.keyword and a.keyword.value == "device" for a in value.args):
            callee = resolve(value.func) or ""
            if callee in _HOST_CONSTRUCTORS:
                host[name] = f"`{callee}(...)`"
            elif callee.startswith("torch.nn.") and callee[len("torch.nn.") :][:1].isupper():
                layers.add(name)
    if not host or not layers or not moved(node.name.value):
        return
    indices: set[str] = set()
    for method in methods:
        for sub in _scope_nodes(method):
            if type(sub) is cst.Call and dotted(sub.func) in layers:
                indices.update(a.value.value for a in sub.args if type(a.value) is cst.Name)
    for method in methods:
        params = _parameters(method) & indices
        if not params:
            continue
        for call in _moves(_scope_nodes(method)):
            subject = receiver(call)
            assert subject is not None  # (a move)
            for sub in walk(subject):
                if type(sub) is not cst.Subscript or (index := _index_name(sub)) not in params:
                    continue
                table = dotted(_root(sub.value))
                if table in host and sub not in found:
                    why = f"`{table}` is bound in `__init__` to {host[table]}, neither a Parameter nor a buffer"
                    found[sub] = (code_of(sub.value), index, why)


def _scope_indexings(scope: str, body: cst.CSTNode, resolve: Resolve, on_device: OnDevice, found: Indexings) -> None:
    """``mask = torch.zeros(n, m)`` and ``users = users.to(device)`` in one function (or at the
    module's top level), each bound there only so, then ``mask[users]``."""
    nodes = _scope_nodes(body)
    bound: dict[str, list[cst.BaseExpression]] = {}
    for node in nodes:
        if type(node) is cst.Assign:
            for target in node.targets:
                if type(target.target) is cst.Name:
                    bound.setdefault(target.target.value, []).append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.For, cst.NamedExpr, cst.WithItem)):
            if type(node) is cst.AugAssign and type(node.target) is not cst.Name:
                continue  # ``counts[idx] += 1`` writes into ``counts``, binds nothing
            bound_target = (
                node.asname.name if isinstance(node, cst.WithItem) and node.asname else getattr(node, "target", None)
            )
            for sub in walk(bound_target) if isinstance(bound_target, cst.CSTNode) else ():
                if type(sub) is cst.Name:
                    bound.setdefault(sub.value, []).append(cst.Name("_"))
    host: dict[str, str] = {}
    on_xla: set[str] = set()
    moved_names = {dotted(receiver(call)) for call in _moves(nodes)}
    for name, values in bound.items():
        value = values[0]
        if len(values) == 1 and type(value) is cst.Call and name not in moved_names:
            callee = resolve(value.func)
            if callee in _HOST_CONSTRUCTORS and not any(a.keyword and a.keyword.value == "device" for a in value.args):
                host[name] = f"`{callee}(...)`"
        for value in values:
            if type(value) is cst.Call and method_name(value) in ("to", "cuda") and receiver(value) is not None:
                device = _device_of(value)
                if (device is None or not names_the_cpu(device)) and on_device(device, scope) is True:
                    on_xla.add(name)
    if not host or not on_xla:
        return
    for node in nodes:
        if type(node) is cst.Subscript and type(node.value) is cst.Name and node.value.value in host:
            if (index := _index_name(node)) in on_xla and node not in found:
                found[node] = (node.value.value, index, f"made by {host[node.value.value]} and never moved")
