"""Files a module writes with ``torch.save`` of host data and reads back with ``torch.load``: a
cache of ids (``torch.save(self.ids, ids_file)`` of ``list(range(n))``, then
``self.ids = torch.load(ids_file)``) holds no storage, so it loads the same on any host.

Host data: numbers, strings, ``True``/``False``/``None``; lists, tuples, sets and dicts of it;
what ``int``, ``float``, ``str``, ``len``, ``range`` return; ``list``, ``tuple``, ``set``,
``dict``, ``sorted`` of host data; a comprehension whose elements are host data; and a name
(``self.ids``) every assignment in the module binds to host data (its own reload left out).
So are tensors the module builds on the CPU (a processed-data cache: ``x = torch.randn(64, 4)``,
``y = (x.sum(1) > 0).float()``, then ``torch.save((x, y), path)``): a torch factory without a
device (or on "cpu"), ``torch.cat``/``torch.stack`` of host data, the arithmetic and comparisons
of host data and the methods that keep a tensor where it is (``.float()``, ``.view(...)``): their
storages are CPU ones, which load on any host.
Anything else (a model's state, a moved tensor, a value the module does not build) may hold CUDA
storages.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

import libcst as cst

from codemods.engine.nodes import dotted, walk

_SCALAR_CALLS = frozenset({"int", "float", "str", "len", "range", "bool"})
_CONTAINER_CALLS = frozenset({"list", "tuple", "set", "dict", "sorted"})
_CONSTANTS = frozenset({"True", "False", "None"})
_DEPTH = 4  # names followed through names
# torch's factories: a tensor on the CPU unless given a device.
_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "tensor as_tensor from_numpy zeros ones empty full rand randn randint randperm arange linspace eye "
        "LongTensor FloatTensor"
    ).split()
)
_JOINS = frozenset({"torch.cat", "torch.stack"})
# Tensor methods whose result stays on the tensor's device (and scalars' and strings' own).
_KEPT_METHODS = frozenset(
    (
        "float double half long int bool byte sum mean max min argmax argmin std abs exp log sqrt clamp "
        "view reshape unsqueeze squeeze flatten permute transpose t contiguous clone detach cpu numpy tolist item "
        "softmax log_softmax norm round floor ceil"
    ).split()
)


def _with_loop_names(
    loop: cst.CompFor,
    assigned: Mapping[str, Sequence[cst.BaseExpression]],
    reloads: frozenset[cst.CSTNode],
    depth: int,
) -> Mapping[str, Sequence[cst.BaseExpression]] | None:
    """``assigned`` with the names a comprehension's ``for`` clauses bind (``i`` of ``for i in
    range(32)``) bound to what they iterate when that is host data (its elements are), and to nothing
    (not host data) when it is something else (a loader's batches, a file's lines: ``int(line)`` is
    host data all the same); None for a target that is no name."""
    bound: dict[str, Sequence[cst.BaseExpression]] = dict(assigned)  # a shallow copy: the names stay the module's
    clause: cst.CompFor | None = loop
    while clause is not None:
        iterates_host_data = host_data(clause.iter, bound, reloads, depth)
        targets = clause.target.elements if isinstance(clause.target, (cst.Tuple, cst.List)) else [clause.target]
        for target in targets:
            name = dotted(target.value if isinstance(target, cst.Element) else target)
            if name is None:
                return None
            bound[name] = (clause.iter,) if iterates_host_data else ()  # (): no host data
        clause = clause.inner_for_in
    return bound


def path_key(node: cst.BaseExpression | None) -> str | None:
    """The path argument as the module writes it: a name chain or a string literal."""
    if node is None:
        return None
    if isinstance(node, cst.SimpleString):
        return node.value
    return dotted(node)


def host_data(
    value: cst.BaseExpression,
    assigned: Mapping[str, Sequence[cst.BaseExpression]],
    reloads: frozenset[cst.CSTNode],
    depth: int = 0,
) -> bool:
    """``value`` holds no tensor (see the module docstring); ``assigned``: each name chain's values
    in the module; ``reloads``: the loads of the file itself, which bind what it holds."""
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return host_data(value.expression, assigned, reloads, depth)
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(e, cst.Element) and host_data(e.value, assigned, reloads, depth) for e in value.elements)
    if isinstance(value, cst.Dict):
        return all(
            isinstance(e, cst.DictElement)
            and host_data(e.key, assigned, reloads, depth)
            and host_data(e.value, assigned, reloads, depth)
            for e in value.elements
        )
    if isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        inner = _with_loop_names(value.for_in, assigned, reloads, depth)
        if inner is None:
            return False
        if isinstance(value, cst.DictComp):
            return host_data(value.key, inner, reloads, depth) and host_data(value.value, inner, reloads, depth)
        return host_data(value.elt, inner, reloads, depth)
    if isinstance(value, cst.Comparison):
        return host_data(value.left, assigned, reloads, depth) and all(
            host_data(c.comparator, assigned, reloads, depth) for c in value.comparisons
        )
    if isinstance(value, cst.BinaryOperation):
        return host_data(value.left, assigned, reloads, depth) and host_data(value.right, assigned, reloads, depth)
    if isinstance(value, cst.Call):
        callee = dotted(value.func)
        if callee in _SCALAR_CALLS:
            return True
        if callee in _FACTORIES:
            device = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "device"), None)
            return not any(a.star for a in value.args) and (
                device is None or (isinstance(device, cst.SimpleString) and device.evaluated_value == "cpu")
            )
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in _KEPT_METHODS:
            return host_data(value.func.value, assigned, reloads, depth)
        if callee in _JOINS:  # ``torch.cat(parts, dim=0)``: the tensors it joins
            return all(
                not a.star and (a.keyword is not None or host_data(a.value, assigned, reloads, depth))
                for a in value.args
            )
        return callee in _CONTAINER_CALLS and all(
            not a.star and host_data(a.value, assigned, reloads, depth) for a in value.args
        )
    name = dotted(value)
    if name is None:
        return False
    if name in _CONSTANTS:
        return True
    values = [v for v in assigned.get(name, ()) if v not in reloads]
    return bool(values) and depth < _DEPTH and all(host_data(v, assigned, reloads, depth + 1) for v in values)


# Names that hold no tensor: constants, ``self``, builtins (``dtype=int``).
_READ_NOTHING = _CONSTANTS | _SCALAR_CALLS | _CONTAINER_CALLS | {"self", "complex"}

# What puts a value on a device or reads a model's tensors (which may be on one).
_DEVICE_METHODS = frozenset({"cuda", "to", "state_dict", "parameters", "named_parameters", "buffers", "named_buffers"})


def input_name(scope: str, name: str) -> str:
    """A Dataset's input that is a plain name of one scope (a parameter of its ``__init__``)."""
    return f"{scope}:{name}"


def built_off_device(
    value: cst.BaseExpression,
    scope: str,
    values_of: Callable[[str, str], Sequence[tuple[cst.BaseExpression, str]] | None],
    inputs: Collection[str] = (),
    depth: int = 0,
    following: frozenset[str] = frozenset(),
) -> bool:
    """A Dataset's processed cache (``torch.save(self.collate(items), path)`` with ``items =
    [Data(x=torch.randn(3, 4)) ...]``): ``value`` and the values bound to the names it reads
    (followed through names) make no move (``.cuda()``, ``.to(...)``, ``device=``) and read no
    model's tensors (``model.state_dict()``, ``.parameters()``), and every name it reads is bound
    in the module (``values_of(name, scope)``: the values bound to a name read in ``scope``, a
    function's qualified name or "", each with its own scope) or by a comprehension in it, or is one
    of the Dataset's ``inputs`` (``self.data``
    that ``__init__`` binds to its parameter ``data``, and the parameters themselves as ``__init__``
    reads them, ``input_name``: the raw data a Dataset is built from, host data as the Dataset's
    saves are): built on the CPU, it cannot hold device tensors.  A name met
    again while its own values are followed (``self.data.edge_index = coalesce(self.data.edge_index,
    ...)``) adds nothing new: ``following``."""
    bound = {
        name
        for node in walk(value)
        if isinstance(node, cst.CompFor)
        for name in (dotted(n) for n in walk(node.target))
        if name is not None
    }
    nodes = walk(value)
    called = {id(part) for node in nodes if isinstance(node, cst.Call) for part in walk(node.func)}
    # An attribute's last part and a keyword's name read nothing.
    called |= {id(node.attr) for node in nodes if isinstance(node, cst.Attribute)}
    called |= {id(node.keyword) for node in nodes if isinstance(node, cst.Arg) and node.keyword is not None}
    for node in nodes:
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _DEVICE_METHODS:
                return False
            if any(a.keyword is not None and a.keyword.value == "device" for a in node.args):
                return False
        if not isinstance(node, (cst.Name, cst.Attribute)) or id(node) in called:
            continue
        name = dotted(node)
        if name is None or name in bound or name in _READ_NOTHING or name in following:
            continue
        if name in inputs or input_name(scope, name) in inputs:
            continue
        values = values_of(name, scope)
        if values is None:
            if isinstance(node, cst.Name) and not any(name.startswith(f"{b}.") for b in bound):
                return False  # a value the module does not build
            continue
        if depth >= _DEPTH or not all(
            built_off_device(v, at, values_of, inputs, depth + 1, following | {name}) for v, at in values
        ):
            return False
    return True


def moves(value: cst.BaseExpression, values: Callable[[str], Sequence[cst.BaseExpression]], depth: int = 0) -> bool:
    """``value`` puts something on a device (``x.to(device)``, ``x.cuda()``, a factory's ``device=``),
    also through the values bound to the names it reads (``values``)."""
    for node in walk(value):
        if isinstance(node, cst.Call) and (
            (isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda"))
            or any(a.keyword is not None and a.keyword.value == "device" for a in node.args)
        ):
            return True
        if depth < _DEPTH and isinstance(node, (cst.Name, cst.Attribute)) and (name := dotted(node)) is not None:
            if any(moves(bound, values, depth + 1) for bound in values(name) if bound is not value):
                return True
    return False
