"""What the training analysis reads of a loop's values: what it accumulates device values
into across iterations (an evaluation loop's meters), and whether it looks at its batches'
values before moving them (filters that make new shapes on the device)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import arg_value, dotted, method_name, names_in, names_the_cpu, receiver, walk

# Reads that give host values (no device state): sizes, and host reads.
_HOST_VALUES = frozenset({"item", "tolist", "size", "dim", "numel", "nelement", "cpu", "numpy"})
_HOST_BUILTINS = frozenset({"float", "int", "len", "bool"})
if TYPE_CHECKING:
    from collections.abc import Callable

_VALUE_PARTS = (cst.Arg, cst.SubscriptElement, cst.Index, cst.ComparisonTarget, cst.Element)
# Library functions that read every tensor of what they are handed to the host (PyTorch Geometric's
# converters to networkx and scipy build host objects from the graph's tensors): a host read.
HOST_READ_CALLS = frozenset(
    f"torch_geometric.utils{module}.{name}"
    for module in ("", ".convert")
    for name in ("to_networkx", "to_scipy_sparse_matrix", "to_trimesh", "to_networkit")
)
# Methods that keep what they are given: meters, lists.
_KEEPING = frozenset({"update", "append", "extend", "add", "add_", "accumulate"})


def _host_valued(node: cst.CSTNode) -> bool:
    """The expression is a host value made from device ones (``loss.item()``, ``x.size(0)``, ``x.to("cpu")``)."""
    if type(node) is cst.Call:
        if method_name(node) in _HOST_VALUES:
            return True
        if method_name(node) == "to" and names_the_cpu(arg_value(node, 0, "device")):
            return True  # ``x.to("cpu")``, as ``x.cpu()``
        if type(node.func) is cst.Name and node.func.value in _HOST_BUILTINS:
            return True
    if type(node) is cst.Attribute and node.attr.value == "shape":
        return True
    return False


def _device_valued(
    node: cst.CSTNode, device_names: set[str], host_call: Callable[[cst.Call], bool] | None = None
) -> bool:
    """The expression mentions a device value, outside host reads (and calls of the project's
    functions that return host numbers: ``host_call``)."""
    if _host_valued(node) or (host_call is not None and type(node) is cst.Call and host_call(node)):
        return False
    if isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) in device_names:
        return True
    return any(
        _device_valued(child, device_names, host_call)
        for child in node.children
        if isinstance(child, cst.BaseExpression) or type(child) in _VALUE_PARTS
    )


def accumulated_into(
    node: cst.CSTNode, moved: set[str], host_call: Callable[[cst.Call], bool] | None = None
) -> tuple[str, ...]:
    """What a loop accumulates device values into, across its iterations: names bound
    outside it that ``+=`` a device value, and meters or lists outside it handed one
    (``top1.update(acc1, n)``, ``outputs.append(logits)``).  Device values: what the loop
    moves to the device, and what is computed from them in the loop, but what a function
    that returns host numbers gives (``acc1, acc5 = accuracy(output, target, (1, 5))`` with
    ``return [c.item() for ...]``: ``host_call``)."""
    body = getattr(node, "body", None)
    if body is None:
        return ()
    statements = [n for n in walk(body) if type(n) in (cst.Assign, cst.AugAssign, cst.Expr)]
    bound = {d for n in statements if type(n) is cst.Assign for t in n.targets if (d := dotted(t.target))}
    bound |= set(names_in(node.target)) if type(node) is cst.For else set()
    device = set(moved)
    for _ in range(2):  # assignments in order; twice for values that come back round
        for statement in statements:
            if type(statement) is cst.Assign and _device_valued(statement.value, device, host_call):
                device.update(n for t in statement.targets for n in names_in(t.target))
    found: list[str] = []
    # In order: a name the iteration binds again to a host value, on every path (``output =
    # [o.to("cpu") for o in output]``), holds no device value from there on.
    rebinds = _unconditional_assignments(body)
    for statement in _in_source_order(body, statements):
        if statement in rebinds and not _device_valued(statement.value, device, host_call):  # type: ignore[attr-defined]  # an Assign
            device.difference_update(n for t in statement.targets for n in names_in(t.target))  # type: ignore[attr-defined]  # an Assign
        elif type(statement) is cst.AugAssign and (target := dotted(statement.target)) is not None:
            if target not in bound and _device_valued(statement.value, device, host_call):
                found.append(target)
        elif (
            type(statement) is cst.Expr and type(call := statement.value) is cst.Call and method_name(call) in _KEEPING
        ):
            owner = dotted(receiver(call))
            if (
                owner is not None
                and owner not in bound
                and any(_device_valued(a.value, device, host_call) for a in call.args)
            ):
                found.append(owner)
    return tuple(dict.fromkeys(found))


def _in_source_order(body: cst.CSTNode, nodes: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """``nodes`` (of ``body``) in the order the source has them (``walk`` gives no such order)."""
    wanted = {id(node) for node in nodes}
    ordered: list[cst.CSTNode] = []
    pending = [body]
    while pending:
        node = pending.pop()
        if id(node) in wanted:
            ordered.append(node)
        pending.extend(reversed(node.children))
    return ordered


def _unconditional_assignments(body: cst.BaseSuite) -> set[cst.CSTNode]:
    """The assignments of a loop's body that run in every iteration that goes on: its own
    statements' and those of the ``with`` blocks in it (not under an ``if``, a ``try`` or a loop)."""
    found: set[cst.CSTNode] = set()
    statements = body.body if isinstance(body, cst.IndentedBlock) else (body,)
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            found.update(small for small in statement.body if type(small) is cst.Assign)
        elif isinstance(statement, cst.With):
            found |= _unconditional_assignments(statement.body)
    return found


_FILTERS = frozenset({"numel", "nelement", "isnan", "isfinite", "isinf", "nonzero", "masked_select", "any", "all"})


def filters_batches(body: cst.BaseSuite, batch: set[str]) -> bool:
    """The loop looks at its batches' values or drops samples (``inputs[keep]``,
    ``if labels.numel() == 0: continue``, NaN checks) before moving them: on the host
    that is cheap, on the device every new shape is a new graph."""
    for node in walk(body):
        if type(node) is cst.Subscript and dotted(node.value) in batch:
            if not all(_static_index(element.slice) for element in node.slice):
                return True
        elif type(node) is cst.Call and method_name(node) in _FILTERS and batch & set(names_in(node)):
            return True
    return False


def _static_index(index: cst.BaseSlice) -> bool:
    """``x[:, 0]``, ``x["input_ids"]``: the same part of every batch."""
    return isinstance(index, cst.Slice) or (
        isinstance(index, cst.Index) and isinstance(index.value, (cst.Integer, cst.SimpleString))
    )


# Calls a loop that only moves a batch to the device may make: the moves and casts (also a
# container's own move method, ``to_device``, as loop_plans._MOVE_METHODS takes it), the
# container reads and writes around them, and the builtins that walk a container.
_MOVES = frozenset({"to", "cuda", "to_device"})
_MOVE_HELPERS = frozenset(
    {
        "items",
        "keys",
        "values",
        "get",
        "append",
        "extend",
        "insert",
        "update",
        "setdefault",
        "float",
        "half",
        "bfloat16",
        "long",
        "int",
        "bool",
        "double",
        "contiguous",
        "pin_memory",
    }
)
_CONTAINER_BUILTINS = frozenset({"len", "range", "enumerate", "zip", "list", "tuple", "dict", "isinstance"})
# Calls that make a tensor of host data (an array, a list, an image) before it moves: they
# build no graph (``torch.from_numpy(v).float().cuda()``, ``TF.to_tensor(image)``).
_HOST_TENSORS = frozenset({"from_numpy", "as_tensor", "tensor", "Tensor", "to_tensor", "image_to_tensor"})


def only_moves(node: cst.CSTNode, reshaped: bool = False) -> bool:
    """The loop's body only moves tensors or containers to the device and stores them
    (``for k, v in batch.items(): batch[k] = v.to(device)``, ``xs.append(x.cuda())``, with
    ``if ...: continue`` and nested loops of the same): no forward of a model, nothing that
    grows a graph from one iteration to the next (it is part of the step it feeds).
    ``reshaped``: also the tensor methods that reshape or reduce each item where it is
    (``x.to(device).max(dim=0)[0]``, ``.view``, ``.sum``): a target built per item."""
    if not isinstance(node, (cst.For, cst.While)) or node.orelse is not None:
        return False
    return _moves_only(node.body, reshaped)


def _moves_only(suite: cst.BaseSuite, reshaped: bool) -> bool:
    statements = suite.body if isinstance(suite, cst.IndentedBlock) else (suite,)
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if not all(_small_moves_only(small, reshaped) for small in statement.body):
                return False
        elif isinstance(statement, cst.If):
            if not _moves_only(statement.body, reshaped):
                return False
            orelse = statement.orelse
            if isinstance(orelse, cst.If):
                if not _moves_only(cst.IndentedBlock(body=(orelse,)), reshaped):
                    return False
            elif orelse is not None and not _moves_only(orelse.body, reshaped):
                return False
        elif isinstance(statement, cst.For):
            if statement.orelse is not None or not _moves_only(statement.body, reshaped):
                return False
        else:
            return False
    return True


def _small_moves_only(small: cst.BaseSmallStatement, reshaped: bool) -> bool:
    if isinstance(small, (cst.Pass, cst.Continue, cst.Break)):
        return True
    if isinstance(small, (cst.Assign, cst.AnnAssign)):
        return small.value is not None and _calls_only_moves(small.value, reshaped)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return method_name(small.value) in _MOVE_HELPERS | _MOVES and _calls_only_moves(small.value, reshaped)
    return False


def _calls_only_moves(value: cst.CSTNode, reshaped: bool) -> bool:
    """Every call in the expression is a move, a cast, a container's or a container builtin, or
    makes a tensor of host data (``reshaped``: or reshapes or reduces a tensor where it is)."""
    for sub in walk(value):
        if type(sub) is not cst.Call:
            continue
        method = method_name(sub)
        if method in _MOVES or method in _MOVE_HELPERS or method in _HOST_TENSORS:
            continue
        if reshaped and type(sub.func) is cst.Attribute and method in _RESHAPES:
            continue
        if type(sub.func) is cst.Name and (sub.func.value in _CONTAINER_BUILTINS or sub.func.value in _HOST_TENSORS):
            continue
        return False
    return True


# Tensor methods that reshape or reduce a tensor where it is (no model, no helper: a few operations per item).
_RESHAPES = frozenset(
    (
        "max min sum mean amax amin argmax argmin view reshape squeeze unsqueeze flatten permute transpose t "
        "clone detach clamp clamp_ abs gt lt ge le eq ne any all"
    ).split()
)


# (and its submodules: ``for name, module in model.named_modules()`` patches or inspects the model)
_WEIGHT_ITERATORS = frozenset(
    {"parameters", "named_parameters", "buffers", "named_buffers", "state_dict"}
    | {"modules", "named_modules", "children", "named_children"}
)


def over_weights(node: cst.CSTNode) -> bool:
    """The loop iterates a model's weights: ``for p in model.parameters()``, ``for k, v in
    ema.state_dict().items()``, ``zip(ema.parameters(), model.parameters())``. It updates each
    weight (an EMA, a weight copy) once per call, inside whatever step calls it; it evaluates no data.
    So does a loop over its submodules (``for key, module in model.named_modules()``), which sets
    them up (replaces a forward, adds parameters) once."""
    if type(node) is not cst.For:
        return False
    return _weights(node.iter)


def _weights(iterable: cst.BaseExpression) -> bool:
    if type(iterable) is not cst.Call:
        return False
    if dotted(iterable.func) == "zip":
        return bool(iterable.args) and all(_weights(arg.value) for arg in iterable.args)
    name = method_name(iterable)
    if name in {"items", "values", "keys"}:
        inner = receiver(iterable)
        return inner is not None and type(inner) is cst.Call and method_name(inner) == "state_dict"
    return name in _WEIGHT_ITERATORS


# Words of the names of what an evaluation loop iterates (``val_loader``, ``test_dataset``, ``batches``).
_DATA_WORDS = ("loader", "data", "batch", "sampler", "iterator", "split")


def iterates_data(node: cst.CSTNode, loaders: set[str], resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """A ``for`` loop over a loader or a data set (a name of the file's loaders, a DataLoader built
    in the loop's header, or a name that says it is one: ``val_loader``, ``self.test_dataset``,
    ``enumerate(tqdm(batches))``), not some other loop over the device (``range(max_length)``)."""
    if type(node) is not cst.For:
        return False
    for sub in walk(node.iter):
        if type(sub) is cst.Call and resolve(sub.func) in apis.DATA_LOADERS:
            return True
        if type(sub) is cst.Name or type(sub) is cst.Attribute:
            name = dotted(sub)
            if name is not None and (
                name in loaders or any(word in name.rsplit(".", 1)[-1].lower() for word in _DATA_WORDS)
            ):
                return True
    return False


def hands_a_reading_lambda(call: cst.Call) -> bool:
    """``call`` hands on a lambda that reads what it is given to the host (``nest.map(lambda t:
    t.cpu(), outputs)``, ``tree_map(lambda t: t.numpy(), out)``): the call applies it, so the call
    reads to the host as ``.cpu()`` written in the loop would."""
    return any(
        type(arg.value) is cst.Lambda
        and any(
            type(sub) is cst.Call
            and (
                method_name(sub) in apis.HOST_READ_METHODS
                or (method_name(sub) == "to" and names_the_cpu(arg_value(sub, 0, "device")))
            )
            for sub in walk(arg.value.body)
        )
        for arg in call.args
    )
