"""A ``torch.save`` in a function whose saved tensors cannot be on a device (XLA401 leaves it as it
is: ``xm.save`` only moves device tensors to the CPU, and there are none).  Read in the function
that saves, following each name to the assignment that reaches the save (the one before it in its
block, each branch of an ``if`` before it, or a ``for`` that binds it):

- a preprocessing script's features: ``feat = feat.detach().cpu()`` (``.cpu()``, ``.numpy()``,
  ``.tolist()`` and ``.item()`` give host values whatever they are called on), and the batches of a
  ``DataLoader`` (``for wav, mel in loader``: collated on the host; a Dataset that returns device
  tensors cannot run in the loader's worker processes);
- the state of a module built on the CPU and never moved (``model = torch.nn.Embedding(n, d)``,
  ``torch.save(model.state_dict(), path)``), also through a function of the file that builds and
  returns it (``model = load_glove(vocab)``);
- and host data (host_data.py), the methods that keep a tensor where it is, containers of these;
- a script's arguments (``args``, ``training_args``, ``self.args``: a Namespace or an argument
  dataclass), not a ``*args`` parameter, also saved at the module level; and a Lightning module
  loaded by ``load_from_checkpoint`` with no map location (on the CPU) and not moved after.

A parameter, a name bound in a loop that is not such a loader, a ``try`` or a tuple target, and any
other call, may hold device tensors: the save stays a checkpoint."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

import libcst as cst

from codemods import apis, equivalent_apis
from codemods.checkpoint.host_data import host_data
from codemods.engine.nodes import (
    arg_value,
    dotted,
    in_source_order,
    method_name,
    parents_of,
    receiver,
    target_names,
    walk,
)

# Calls that give a host value whatever they are called on.
_TO_THE_HOST = frozenset({"cpu", "numpy", "tolist", "item"})
# Tensor methods whose result stays where the tensor is.
_KEPT = frozenset(
    (
        "float double half long int bool byte sum mean max min std abs exp log sqrt clamp view reshape unsqueeze "
        "squeeze flatten permute transpose t contiguous clone detach softmax log_softmax norm round floor ceil"
    ).split()
)
_JOINS = frozenset({"torch.cat", "torch.stack"})
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})
_ITERATION_WRAPPERS = frozenset({"enumerate", "tqdm", "tqdm.tqdm"})
_DEPTH = 6
# torch.nn's classes that hold modules handed to them (``nn.DataParallel(model)``): where those are is
# not known.
_WRAPPERS = ("torch.nn.parallel.", "torch.nn.utils.", "torch.nn.DataParallel", "torch.nn.DistributedDataParallel")
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"})

Resolve = Callable[[cst.CSTNode], str | None]


class _Function:
    """One function's statements, with each node's parent (for the assignments that reach a node)."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.node = function
        self.parents = parents_of(function)
        self.params = {p.name.value for p in walk(function.params) if isinstance(p, cst.Param)}


class HostSaves:
    """Whether what a save saves is on the host (see the module docstring)."""

    def __init__(self, functions: dict[str, cst.FunctionDef], resolve: Resolve) -> None:
        self.functions = functions  # the module-level functions of the file, by name
        self.resolve = resolve
        self._read: dict[int, _Function] = {}

    def _function(self, function: cst.FunctionDef) -> _Function:
        if id(function) not in self._read:
            self._read[id(function)] = _Function(function)
        return self._read[id(function)]

    def saved_on_the_host(self, value: cst.BaseExpression, function: cst.FunctionDef) -> bool:
        return self._host(value, self._function(function), 0)

    # -- values -----------------------------------------------------------------------------

    def _host(self, value: cst.BaseExpression, fn: _Function, depth: int) -> bool:
        if depth > _DEPTH:
            return False
        if host_data(value, {}, frozenset()):
            return True
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            return all(isinstance(e, cst.Element) and self._host(e.value, fn, depth + 1) for e in value.elements)
        if isinstance(value, cst.Dict):
            return all(
                isinstance(e, cst.DictElement)
                and host_data(e.key, {}, frozenset())
                and self._host(e.value, fn, depth + 1)
                for e in value.elements
            )
        if isinstance(value, cst.Subscript):
            return self._host(value.value, fn, depth + 1)
        if isinstance(value, cst.Call):
            method = method_name(value)
            held = receiver(value)
            if method in _TO_THE_HOST and held is not None:
                return True
            if _loaded_on_the_cpu(value):
                return True
            if method == "state_dict" and not value.args and (module := dotted(held)) is not None:
                return self._module_on_the_host(module, value, fn, depth + 1)
            if method in _KEPT and held is not None:
                return self._host(held, fn, depth + 1)
            if self.resolve(value.func) in _JOINS:  # ``torch.stack(parts)``: the tensors it joins
                return all(
                    a.keyword is not None or (not a.star and self._host(a.value, fn, depth + 1)) for a in value.args
                )
            return False
        name = dotted(value)
        if name is not None and argument_object(name) and fn.node is not None and parsed_arguments(name, fn.node.body):
            return True
        if name is None or "." in name or not self._mutated_with_host(name, fn, depth):
            return False
        # (``mel = mel.squeeze(0)``: the ``mel`` it reads is the one that reaches that assignment)
        values = self._reaching(name, value, fn)
        if values and any(isinstance(v, cst.Call) and _loaded_on_the_cpu(v) for v in values) and self._moved(name, fn):
            return False  # ``best = Task.load_from_checkpoint(p)``, then ``best.cuda()``
        return (
            bool(values)
            and values is not None
            and all(
                (v is _LOADER_BATCH) or (isinstance(v, cst.BaseExpression) and self._host(v, fn, depth + 1))
                for v in values
            )
        )

    def _mutated_with_host(self, name: str, fn: _Function, depth: int) -> bool:
        """What the function puts into ``name`` (``parts.append(x)``, ``parts[i] = x``) is on the host."""
        for node in walk(fn.node.body):
            if isinstance(node, cst.Call) and method_name(node) in _MUTATORS and dotted(receiver(node)) == name:
                if not all(self._host(a.value, fn, depth + 1) for a in node.args[-1:]):
                    return False
            elif (
                isinstance(node, cst.AssignTarget)
                and isinstance(node.target, cst.Subscript)
                and dotted(node.target.value) == name
            ):
                statement = fn.parents.get(id(node))
                if not isinstance(statement, cst.Assign) or not self._host(statement.value, fn, depth + 1):
                    return False
        return True

    def _module_on_the_host(self, name: str, at: cst.CSTNode, fn: _Function, depth: int) -> bool:
        """``name`` holds a module built on the CPU (a torch.nn class, no device given; or what a
        function of the file returns that is one) that nothing in the function moves."""
        if depth > _DEPTH or "." in name or self._moved(name, fn):
            return False
        values = self._reaching(name, at, fn)
        return bool(values) and values is not None and all(self._built_on_the_host(v, depth) for v in values)

    def _built_on_the_host(self, value: cst.BaseExpression | object, depth: int) -> bool:
        if not isinstance(value, cst.Call) or any(
            a.keyword is not None and a.keyword.value == "device" for a in value.args
        ):
            return False
        if _loaded_on_the_cpu(value):
            return True
        callee = self.resolve(value.func)
        if (
            callee is not None
            and callee.startswith("torch.nn.")
            and not callee.startswith(_WRAPPERS)
            and callee.rsplit(".", 1)[-1] not in _CONTAINERS
            and callee.rsplit(".", 1)[-1][:1].isupper()
            and callee not in equivalent_apis.TENSOR_CLASSES_OF_NN
        ):
            return True
        builder = (
            self.functions.get(dotted(value.func) or "") if type(value.func) is cst.Name and callee is None else None
        )
        if builder is None:
            return False
        fn = self._function(builder)
        returns = [r for r in walk(builder.body) if isinstance(r, cst.Return)]
        return bool(returns) and all(
            r.value is not None
            and (module := dotted(r.value)) is not None
            and self._module_on_the_host(module, r, fn, depth + 1)
            for r in returns
        )

    def _moved(self, name: str, fn: _Function) -> bool:
        """A ``.to(...)``/``.cuda()`` of ``name`` anywhere in the function, or an attribute of it
        bound to something (``model.weight.data = x``)."""
        for node in walk(fn.node.body):
            if (
                isinstance(node, cst.Call)
                and method_name(node) in ("to", "cuda", "to_empty")
                and dotted(receiver(node)) == name
            ):
                return True
            if isinstance(node, cst.AssignTarget) and (dotted(node.target) or "").startswith(name + "."):
                statement = fn.parents.get(id(node))
                if not isinstance(statement, cst.Assign) or not self._host(statement.value, fn, 0):
                    return True
        return False

    # -- the assignments that reach a node --------------------------------------------------

    def _reaching(self, name: str, at: cst.CSTNode, fn: _Function) -> list[cst.BaseExpression | object] | None:
        """The values ``name`` may hold at ``at``: those of the assignments that reach it; None when
        something else may bind it there (a parameter, a loop, a ``try``, a tuple target)."""
        found: list[cst.BaseExpression | object] = []
        node: cst.CSTNode = at
        while node is not fn.node:
            parent = fn.parents.get(id(node))
            if parent is None:
                return None
            if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                statements = list(parent.body)
                index = next(i for i, s in enumerate(statements) if s is node)
                values, complete = self._in_statements(name, statements[:index])
                if values is None:
                    return None
                found += values
                if complete:
                    return found
                owner = fn.parents.get(id(parent))
                if isinstance(owner, cst.For) and owner.body is parent and _binds_target(owner.target, name):
                    return found + [_LOADER_BATCH] if self._over_a_loader(owner, fn) else None
                if isinstance(owner, (cst.For, cst.While)) and owner.body is parent and self._binds(owner, name):
                    return None  # (a binding later in the body reaches the next iteration)
            node = parent
        return None  # a parameter, or a name the function does not bind

    def _in_statements(
        self, name: str, statements: Sequence[cst.CSTNode]
    ) -> tuple[list[cst.BaseExpression | object] | None, bool]:
        """The values of the last bindings of ``name`` in ``statements`` (None: not known), and whether
        every path through them binds it."""
        found: list[cst.BaseExpression | object] = []
        for statement in reversed(statements):
            if not self._binds(statement, name):
                continue
            if isinstance(statement, cst.SimpleStatementLine):
                assign = statement.body[-1] if len(statement.body) == 1 else None
                if isinstance(assign, cst.Assign) and all(dotted(t.target) is not None for t in assign.targets):
                    return found + [assign.value], True
                return None, False
            if isinstance(statement, cst.With):
                values, complete = self._in_statements(name, list(_body(statement.body)))
            elif isinstance(statement, cst.If):
                body, body_complete = self._in_statements(name, list(_body(statement.body)))
                other = statement.orelse
                rest: Sequence[cst.CSTNode] = (
                    [other] if isinstance(other, cst.If) else list(_body(other.body)) if other is not None else []
                )
                orelse, else_complete = self._in_statements(name, rest)
                if body is None or orelse is None:
                    return None, False
                values, complete = body + orelse, body_complete and else_complete
            else:
                return None, False
            if values is None:
                return None, False
            found += values
            if complete:
                return found, True
        return found, False

    def _binds(self, statement: cst.CSTNode, name: str) -> bool:
        for node in walk(statement):
            if isinstance(node, cst.AssignTarget) and _binds_target(node.target, name):
                return True
            if isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)) and _binds_target(
                node.target, name
            ):
                return True
            if isinstance(node, cst.AsName) and _binds_target(node.name, name):
                return True
        return False

    def _over_a_loader(self, loop: cst.For, fn: _Function) -> bool:
        source = loop.iter
        while isinstance(source, cst.Call) and dotted(source.func) in _ITERATION_WRAPPERS and source.args:
            source = source.args[0].value
        if isinstance(source, cst.Call):
            return self.resolve(source.func) in apis.DATA_LOADERS
        name = dotted(source)
        if name is None or "." in name:
            return False
        values = self._reaching(name, loop, fn)
        return (
            bool(values)
            and values is not None
            and all(isinstance(v, cst.Call) and self.resolve(v.func) in apis.DATA_LOADERS for v in values)
        )


def argument_object(name: str) -> bool:
    """A name that holds a script's arguments (``args``, ``training_args``, ``self.args``,
    ``model_args``: an argparse Namespace or an argument dataclass such as transformers'
    TrainingArguments): strings, numbers and flags, no tensor."""
    last = name.rsplit(".", 1)[-1].lower()
    return last in ("args", "arguments") or last.endswith(("_args", "_arguments"))


def parsed_arguments(name: str, scope: cst.CSTNode) -> bool:
    """``name`` holds what an argument parser made: an attribute (``self.args``, set from the
    parsed arguments), or a name every binding of ``scope`` gives a parser's result
    (``args = parser.parse_args()``, ``model_args, training_args = parser.parse_args_into_dataclasses()``,
    ``TrainingArguments(...)``); a name also bound to anything else (``example_args = tuple(t.to(d)
    for ...)``) or not bound there (a parameter) may hold tensors."""
    if "." in name:
        return True
    values = [
        node.value
        for node in in_source_order(scope, enter_scopes=False)
        if isinstance(node, (cst.Assign, cst.AnnAssign))
        and node.value is not None
        and any(name in target_names(t) for t in _assign_targets(node))
    ]
    return bool(values) and all(_parser_result(v) for v in values)


def _assign_targets(node: cst.Assign | cst.AnnAssign) -> list[cst.BaseExpression]:
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def _parser_result(value: cst.BaseExpression) -> bool:
    """A call of a parser (``parse_args``, ``parse_known_args``, ``parse_args_into_dataclasses``,
    ``parse_json_file``) or of an arguments class (``TrainingArguments(...)``), or ``vars()`` of one."""
    if type(value) is not cst.Call:
        return False
    last = (dotted(value.func) or "").rsplit(".", 1)[-1]
    if last == "vars" and value.args:
        return _parser_result(value.args[0].value)
    return "parse" in last.lower() or last.endswith(("Arguments", "Args", "Namespace"))


def saved_arguments(
    save_functions: Mapping[cst.Call, cst.FunctionDef | None], saves: Collection[cst.Call], module: cst.Module | None
) -> set[cst.Call]:
    """The saves at the module level of a script's arguments (``torch.save(training_args, path)``)."""
    found: set[cst.Call] = set()
    if module is None:
        return found
    for call, function in save_functions.items():
        saved = arg_value(call, 0, "obj")
        name = dotted(saved) if saved is not None else None
        if function is None and call in saves and name and argument_object(name) and parsed_arguments(name, module):
            found.add(call)
    return found


def _loaded_on_the_cpu(value: cst.Call) -> bool:
    """``Task.load_from_checkpoint(path)`` of Lightning with no map location (or the CPU's): Lightning
    moves the module to the device of the checkpoint's tensors, the CPU for the checkpoints its
    trainer writes on XLA (its XLA checkpoint IO saves them moved to the CPU) and for CUDA ones on a
    host without CUDA."""
    if method_name(value) != "load_from_checkpoint":
        return False
    location = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "map_location"), None)
    return location is None or (isinstance(location, cst.SimpleString) and location.value.strip("'\"") == "cpu")


# A loop target over a DataLoader: a batch collated on the host.
_LOADER_BATCH = object()


def _body(suite: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return suite.body if isinstance(suite, cst.IndentedBlock) else [suite]


def _binds_target(target: cst.BaseExpression | cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(target)) and not (
        isinstance(target, cst.Attribute) or isinstance(target, cst.Subscript)
    )
