"""The shapes of expressions a training loop's batches take, as obligation 3 reads them:
the names a ``for`` target or a tuple binds, a batch's root name (``batch[0]``), and what
counts as moving it to a device (``x.to(device)``, a comprehension of moves), and the loaders
whose batches arrive on the device already (timm's prefetcher)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import libcst as cst

from codemods import library_apis
from codemods.engine.nodes import call_args, children_reader, dotted, is_false, method_name
from codemods.engine.positions import code_of


def elements(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The expressions a tuple or list target holds, nested ones flattened (else the node)."""
    if type(node) in (cst.Tuple, cst.List):
        return [e for element in node.elements for e in elements(element.value)]  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
    return [node]


_COLLECTIONS = frozenset({"list", "tuple", "set", "dict"})


def moves(value: cst.BaseExpression, mover: Callable[[cst.Call], bool] | None = None) -> bool:
    """``x.to(device)`` (also inside a method chain: ``x.cuda().float()``), each element of a tuple, or a
    collection of moved items:
    ``[x.to(device) for x in xs]`` (list, set, dict, generator), ``tuple(...)``/``list(...)`` of one,
    ``list(map(lambda t: t.to(device), xs))``.  ``mover``: whether a call of a helper moves what it is
    handed to the device it is handed (``to_device(v, device)``, ``[{k: to_device(v, device) for k, v in
    t.items()} for t in targets]``)."""
    return any(_moves_each(e, mover) for e in elements(value))


def _moves_each(value: cst.BaseExpression, mover: Callable[[cst.Call], bool] | None) -> bool:
    if type(value) is cst.Call and method_name(value) in ("to", "cuda"):
        return True
    if type(value) in (cst.ListComp, cst.SetComp, cst.GeneratorExp):
        return _moves_each(value.elt, mover)  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
    if type(value) is cst.DictComp:
        return _moves_each(value.value, mover)
    if type(value) is cst.Call and value.args:
        func = dotted(value.func)
        first = value.args[0].value
        if func in _COLLECTIONS and len(value.args) == 1:
            return _moves_each(first, mover)
        if func == "map" and type(first) is cst.Lambda:
            return _moves_each(first.body, mover)
        if mover is not None and mover(value):
            return True
    if type(value) is cst.Call and type(value.func) is cst.Attribute:
        return _moves_each(value.func.value, mover)  # a method chain over a move: ``x.cuda().float()``
    return False


def roots(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """``batch`` of ``batch``, ``batch[0]``, ``batch["x"]``, for each element of a tuple."""
    roots = []
    for element in elements(value):
        while type(element) is cst.Subscript:
            element = element.value
        roots.append(element)
    return roots


def batch_name(value: cst.BaseExpression, targets: set[str]) -> str | None:
    """The loop target ``value`` reads (``x`` of ``x`` or ``x[0]``), if it reads one."""
    found = roots(value)
    name = dotted(found[0]) if len(found) == 1 else None
    return name if name in targets else None


# Methods that leave a tensor where it is: a read through them is a read of the tensor itself.
_IN_PLACE_METHODS = frozenset(
    {
        "detach",
        "clone",
        "float",
        "double",
        "half",
        "long",
        "int",
        "bool",
        "squeeze",
        "unsqueeze",
        "view",
        "reshape",
        "contiguous",
        "flatten",
        "permute",
        "transpose",
        "t",
    }
)


def host_read(call: cst.Call, callee: str | None, targets: set[str]) -> str | None:
    """The loop target a call reads on the host in a way a tensor on the XLA device refuses ("can't
    convert xla:0 device type tensor to numpy"): ``meta["center"].numpy()`` (also through methods that
    keep the tensor where it is: ``x.detach().numpy()``), ``np.array(meta["score"])`` (numpy's functions
    convert a tensor with ``.numpy()``); a field of a batch object is the batch's
    (``data_aug.edge_index.numpy()``; not for numpy's functions, which also take a batch's sizes:
    ``np.zeros(data.num_graphs)``); None for a read after ``.cpu()``, or of anything else."""
    fields = method_name(call) == "numpy"
    if fields:
        read: list[cst.BaseExpression] = [call.func.value]  # type: ignore[attr-defined]  # method_name() matched: the func is an Attribute
    elif callee is not None and (callee == "numpy" or callee.startswith("numpy.")):
        read = [arg.value for arg in call.args]
    else:
        return None
    for value in read:
        while (name := dotted(value)) not in targets:
            if type(value) is cst.Call and method_name(value) in _IN_PLACE_METHODS:
                value = value.func.value  # type: ignore[attr-defined]  # method_name() matched: the func is an Attribute
            elif type(value) is cst.Subscript or (fields and type(value) is cst.Attribute):
                value = value.value  # a field of the batch (``data_aug.edge_index``) is the batch's
            else:
                break
        if name is not None and name in targets:
            return name
    return None


def host_reads_before_moves(
    body: cst.CSTNode, batch: set[str], resolve: Callable[[cst.BaseExpression], str | None]
) -> list[str]:
    """The host reads (``host_read``) a loop's body makes of its batch before moving it: of the loop's
    targets and the names unpacked from them (``data, data_aug = data``), before their own move
    (``data_aug = data_aug.to(device)``), as written.  A device loader would have moved them already."""
    reads = _BatchReads(set(batch), resolve)
    reads.visit(body)
    return reads.found


class _BatchReads:
    """Walks a loop body in source order: the names that carry the batch unmoved, and their host reads.
    (It reads each node's children directly, ``engine.nodes.children_reader``: a LibCST visitor's
    dispatch over every node of the body cost more than the rest of the loop's plan.)"""

    def __init__(self, carried: set[str], resolve: Callable[[cst.BaseExpression], str | None]) -> None:
        self.carried = carried
        self.callee_of = resolve
        self.found: list[str] = []

    def visit(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.Lambda:
            return  # another scope
        if kind is cst.Call:
            self.visit_Call(node)  # type: ignore[arg-type]  # narrowed by kind
        for child in children_reader(kind)(node):
            self.visit(child)
        if kind is cst.Call:
            self.leave_Call(node)  # type: ignore[arg-type]  # narrowed by kind
        elif kind is cst.Assign:
            self.leave_Assign(node)  # type: ignore[arg-type]  # narrowed by kind

    def visit_Call(self, node: cst.Call) -> None:
        if host_read(node, self.callee_of(node.func), self.carried) is not None:
            self.found.append(code_of(node))

    def leave_Call(self, original_node: cst.Call) -> None:
        if method_name(original_node) in ("to", "cuda"):  # ``data.to(device)`` (PyG's ``Data.to`` moves in place)
            self.carried.discard(dotted(original_node.func.value) or "")  # type: ignore[attr-defined]  # method_name() matched: the func is an Attribute

    def leave_Assign(self, original_node: cst.Assign) -> None:
        value = original_node.value
        for target in original_node.targets:
            names = {n for e in elements(target.target) if (n := dotted(e)) is not None}
            if moves(value):
                self.carried -= names
            elif any(dotted(root) in self.carried for root in roots(value)):
                self.carried |= names  # ``data, data_aug = data``: the names carry the batch on
            else:
                self.carried -= names


def prefetching(built: Mapping[str, list[cst.Call]], resolve: Callable[[cst.BaseExpression], str | None]) -> set[str]:
    """The names that hold a library loader which copies each batch to its ``device=`` (timm's
    ``create_loader(...)`` with its prefetcher on, its ``PrefetchLoader(...)``): the port gives
    it the XLA device (XLA113), so its batches reach the model there with no move of their own."""
    return {name for name, calls in built.items() if any(prefetches(call, resolve) for call in calls)}


def prefetches(call: cst.Call, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """``call`` makes a library loader that copies each batch to its ``device=`` (its switch not off)."""
    library = library_apis.CUDA_DEFAULT_DEVICES.get(resolve(call.func) or "")
    switch = call_args(call)[1].get(library.switch or "") if library is not None else None
    return library is not None and not (switch is not None and is_false(switch.value))
