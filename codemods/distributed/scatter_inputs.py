"""Obligation 3 of SPEC section 5 for a model the port unwraps: ``nn.DataParallel`` (with CUDA
devices) scatters every tensor of its inputs to the GPUs, and ``DistributedDataParallel(...,
device_ids=[...])`` moves them to its GPU, however deep in lists, tuples and dicts; so scripts
hand such a model tensors they never move themselves (``model([img.cuda(), annot])``).  The
port removes DataParallel (XLA605) and DDP's ``device_ids`` (XLA604), and then nothing moves
those tensors: on XLA the forward fails on a CPU tensor (torch_xla 2.9: 'Expected XLA tensor.
Got: torch.FloatTensor').

For each call of a name bound to such a wrapper, the analysis reads each input (each element
of a list, tuple or dict display): a move (``x.cuda()``, ``x.to(device)``, also inside a chain:
``x.cuda().float()``) or a tensor made on a device is on the device; a CPU tensor made by a
torch factory (``torch.randn(8, 5)``, also bound to a name first), and a batch of a loop over a
DataLoader the file builds that the port does not wrap in a device loader, of a loader handed
in to an evaluation loop, or of a loop that moves other parts of the same batch by hand
(``data["annot"]`` beside ``data["img"].cuda()``: the batches come on the host), are not: XLA116
names them at the call.  Other values (numbers, strings, a batch of another iterable: a project
iterator may move its batches itself; a loader handed in to a training loop is wrapped where it is
handed, or reported there) are left as they are: the wrapper's scatter moved only tensors.  A batch
handed, before the call, to a function of the file or of the project (its summary's
``batch_movers``) that moves the tensors of that argument in place (``batch[key] = val.cuda()``)
is on the device.

The same reading tells which inputs reach the device another way: moved by hand, or batches of
a device loader or of an iterable handed the device (``OrderedIterator(tokens, 8,
device=device)``, which puts the stream there).  A DataParallel subclass with its own
``scatter`` (XLA118: the scatter never runs on XLA) whose calls in the file all get such
inputs needs nothing on XLA, and is not an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import libcst as cst

from codemods import apis
from codemods.device.batch_shapes import moves
from codemods.device.project_callables import project_moves_argument
from codemods.distributed.ddp import DATA_PARALLEL, FACTORIES
from codemods.engine.nodes import call_args, dotted, method_name, names_in
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis, Walk, assignments
from codemods.project.analysis import ProjectAnalysis
from codemods.training.loop_plans import is_device_loader

if TYPE_CHECKING:
    from codemods.facts import Facts

_NOT_BATCHES = frozenset({"range", "zip", "enumerate"})
# Where a value off the device comes from: a CPU tensor (None), a batch of a loop (the loop),
# or a parameter of a function (its qualified name, the index without self), which is a batch
# where a loop of the file hands that function one (``for batch in loader: self.step(batch)``).
_Source = cst.For | None | tuple[str, int]


class ScatterInputAnalysis(Analysis):
    facts: Facts

    name = "scatter_inputs"
    fills = "distributed"
    reads = ("imports", "project")
    conclude_reads = ("ddp", "training", "loaders")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        # (scope, name) -> where the value off the device it holds comes from.
        self.off_device: dict[tuple[str, str], _Source] = {}
        self.wrapped: dict[str, cst.Call] = {}  # a name bound to a wrapper -> its construction
        # Calls of a wrapped model: (call, the wrapper, its inputs off the device: (code, loop or None, input)).
        self.calls: list[tuple[cst.Call, cst.Call, list[tuple[str, _Source, cst.BaseExpression]]]] = []
        # Batches handed to a function by a loop: (callee as written, index, the loop, the caller's scope).
        self.handed: list[tuple[str, int, cst.For, str]] = []
        # What each loop iterates (``enumerate(...)`` unwrapped), and the loops over a parameter of their
        # function (a loader handed in: for a training loop the port wraps it where it is handed, or
        # reports it there, XLA116's obligation across calls).
        self.iterables: dict[cst.For, cst.BaseExpression] = {}
        self.handed_in: set[cst.For] = set()
        # The loops (and the parameters that receive batches) whose batches the code moves by hand
        # somewhere: their batches come on the host.
        self.moved_by_hand: set[_Source] = set()
        # Loops over a device loader or an iterable handed the device, the names that hold an
        # iterable handed the device, and (scope, name) of the values on the device: moved, or
        # batches of such a loop.
        self.device_fed: set[cst.For] = set()
        self.fed_iterables: set[tuple[str, str]] = set()
        self.on_device: set[tuple[str, str]] = set()
        # A name bound to a construction -> that construction; the calls of such names, and
        # whether each input of the call is on the device (for the DataParallel subclasses that
        # scatter the inputs themselves: XLA118).
        self.built: dict[str, cst.Call] = {}
        self.built_calls: list[tuple[cst.Call, cst.Call, bool]] = []
        # The parameters of each function (without self), by its qualified name; the order of
        # the calls walked; batches handed to a callable by their name, which may move them in
        # place (``load_data_to_gpu(batch)``): (callee as written, index, scope, name, where the
        # batch comes from, the call's order).
        self.parameters: dict[str, list[str]] = {}
        self.order: dict[cst.Call, int] = {}
        self.handed_names: list[tuple[str, int, str, str, _Source, int]] = []
        # The functions of the file that return a parameter moved (``return x.to(device)``): (name, index).
        self.returns_moved: set[tuple[str, int]] = set()
        # The names an assignment binds, kept until the walk leaves it (its value is read first):
        # (scope, name, whether it is on the device (None: left as it is), where it comes from off it).
        self.pending: list[tuple[str, str, bool | None, _Source | Literal[False]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = self.walk.qualname
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if params[:1] in (["self"], ["cls"]) and self.walk.class_depth:
            params = params[1:]
        self.parameters[scope] = params
        for index, param in enumerate(params):
            self.off_device[(scope, param)] = (scope, index)

    def visit_Return(self, node: cst.Return) -> None:
        function = self.walk.enclosing_function
        if function is None or node.value is None or not moves(node.value):
            return
        params = self.parameters.get(self.walk.qualname, [])
        for name in set(names_in(node.value)) & set(params):
            self.returns_moved.add((self.walk.qualname, params.index(name)))

    def _mover(self, call: cst.Call) -> bool:
        """A helper that moves what it is handed to the device: a function of the file that returns
        a parameter moved, or one of the project that moves it (its summary)."""
        func = dotted(call.func)
        if func is None:
            return False
        if "." not in func and any((func, i) in self.returns_moved for i in range(len(call.args))):
            return True
        return project_moves_argument(self.walk.analysis(ProjectAnalysis), call)

    def visit_For(self, node: cst.For) -> None:
        source = node.iter
        target: cst.BaseExpression = node.target
        if type(source) is cst.Call and dotted(source.func) == "enumerate" and source.args:
            source = source.args[0].value
            if type(target) is cst.Tuple and len(target.elements) == 2:
                target = target.elements[1].value
        scope = self.walk.qualname
        if type(source) is cst.Call and is_device_loader(source, self.walk.resolve(source.func)):
            self.on_device.update((scope, name) for name in _names(target))
            return
        if type(source) is cst.Call and dotted(source.func) in _NOT_BATCHES:
            return
        if (type(source) is cst.Call and _hands_device(source)) or (scope, dotted(source)) in self.fed_iterables:
            self.device_fed.add(node)
            self.on_device.update((scope, name) for name in _names(target))
        self.iterables[node] = source
        if isinstance(self._source_of_root(source, scope), tuple):
            self.handed_in.add(node)
        for name in _names(target):
            self.off_device[(scope, name)] = node

    @assignments()
    def _bound(self, name: str, value: cst.BaseExpression) -> None:
        scope = self.walk.qualname
        core = value
        while (
            type(core) is cst.Call
            and type(attribute := core.func) is cst.Attribute  # (method_name and receiver, at once)
            and attribute.attr.value in ("to", "cuda")
        ):
            core = attribute.value
        if type(core) is cst.Call and self.walk.resolve(core.func) in (*DATA_PARALLEL, *apis.DDP_CLASSES):
            self.wrapped[name] = core
        if type(core) is cst.Call and dotted(core.func) is not None:
            self.built[name] = core
        if type(value) is cst.Call and _hands_device(value):
            self.fed_iterables.add((scope, name))
        # Read now (the value is evaluated before the names are bound), bound when the walk leaves
        # the assignment: the calls in the value (``h = self.net(x, h)``) see the inputs as they were.
        self.pending.append((scope, name, self._on_device(value, scope), self._off_device(value, scope)))

    def leave_Assign(self, node: cst.Assign) -> None:
        self._bind_pending()

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_pending()

    def _bind_pending(self) -> None:
        for scope, name, on_device, source in self.pending:
            if on_device is not None:
                (self.on_device.add if on_device else self.on_device.discard)((scope, name))
            self._note(scope, name, source)
        self.pending.clear()

    def _on_device(self, value: cst.BaseExpression, scope: str) -> bool:
        """A move (``x.to(device)``, ``x.cuda().float()``) or a value whose root holds one, or a
        batch of a loop over a device loader or an iterable handed the device."""
        root = value
        while type(root) is cst.Subscript or type(root) is cst.Attribute:
            root = root.value
        return moves(value) or (scope, dotted(root)) in self.on_device

    def _note(self, scope: str, name: str, source: _Source | Literal[False]) -> None:
        if source is False:
            self.off_device.pop((scope, name), None)
        else:
            self.off_device[(scope, name)] = source

    def visit_Assign(self, node: cst.Assign) -> None:
        """``images, targets = batch``: each name holds a part of what the value holds (the
        ``@assignments`` hook pairs only a tuple unpacked from a tuple).  The names are bound when
        the walk leaves the assignment: ``out, h = self.net(x, h)`` hands the wrapper the ``h`` of
        before."""
        self._moved_in_place(node)
        self._moved_by_key(node)
        unpacked = [t.target for t in node.targets if type(t.target) in (cst.Tuple, cst.List)]
        if not unpacked or type(node.value) in (cst.Tuple, cst.List):
            return
        scope = self.walk.qualname
        source = self._off_device(node.value, scope)
        self.pending.extend((scope, name, None, source) for target in unpacked for name in _names(target))

    def _moved_in_place(self, node: cst.Assign) -> None:
        """``batch[key] = val.cuda()`` in a function, ``batch`` a parameter: the function moves
        the tensors of that argument to the device in place."""
        if self.walk.enclosing_function is None or not moves(node.value):
            return
        scope = self.walk.qualname
        params = self.parameters.get(scope, [])
        for target in node.targets:
            if type(target.target) is cst.Subscript and (root := dotted(target.target.value)) in params:
                self.part.batch_movers.add((scope, params.index(root), root))

    def _moved_by_key(self, node: cst.Assign) -> None:
        """``for key in batch.keys(): batch[key] = to_device(batch[key], device)``: every value of
        ``batch`` is on the device after the loop (a loop over ``batch``, its keys or its items)."""
        loop = self.walk.loop
        if type(loop) is not cst.For or not moves(node.value, self._mover):
            return
        key = loop.target.elements[0].value if type(loop.target) is cst.Tuple and loop.target.elements else loop.target
        iterated = loop.iter
        while type(iterated) is cst.Call and dotted(iterated.func) in ("list", "tuple", "sorted") and iterated.args:
            iterated = iterated.args[0].value
        if type(iterated) is cst.Call and method_name(iterated) in ("keys", "items") and not iterated.args:
            iterated = iterated.func.value  # type: ignore[attr-defined]  # method_name() matched: an Attribute
        scope = self.walk.qualname
        for target in node.targets:
            subscript = target.target
            if (
                type(subscript) is cst.Subscript
                and type(key) is cst.Name
                and len(subscript.slice) == 1
                and type(index := subscript.slice[0].slice) is cst.Index
                and type(index.value) is cst.Name
                and index.value.value == key.value
                and (name := dotted(subscript.value)) is not None
                and name == dotted(iterated)
            ):
                self.on_device.add((scope, name))
                self._note(scope, name, False)

    def _off_device(self, value: cst.BaseExpression, scope: str) -> _Source | Literal[False]:
        """Where the value off the device comes from (``_Source``), or False: on the device,
        or not known to be a tensor."""
        if moves(value):
            return False
        if type(value) is cst.Call:
            made_by = self.walk.resolve(value.func)
            return None if made_by in FACTORIES and "device" not in call_args(value)[1] else False
        return self._source_of_root(value, scope)

    def _source_of_root(self, value: cst.BaseExpression, scope: str) -> _Source | Literal[False]:
        """Where the name at the root of ``value`` (``data["img"].cuda()`` -> ``data``) holds a
        value off the device from, or False."""
        root = value
        while True:
            if type(root) is cst.Call:
                root = root.func
            elif type(root) is cst.Subscript or type(root) is cst.Attribute:
                root = root.value
            else:
                break
        name = dotted(root)
        return self.off_device.get((scope, name), False) if name is not None else False

    def visit_Call(self, node: cst.Call) -> None:
        scope = self.walk.qualname
        if method_name(node) in ("to", "cuda"):
            source = self._source_of_root(node, scope)
            if source is not False and source is not None:
                self.moved_by_hand.add(source)  # a part of a batch moved by hand: the batches come on the host
        func = dotted(node.func)
        self.order[node] = len(self.order)
        if (built := self.built.get(func or "")) is not None and node.args:
            fed = all(self._on_device(leaf, scope) for arg in node.args for leaf in _leaves(arg.value))
            self.built_calls.append((node, built, fed))
        wrapper = self.wrapped.get(func or "")
        if wrapper is None or not node.args:
            for index, arg in enumerate(a for a in node.args if a.keyword is None and not a.star):
                if (
                    func is not None
                    and type(arg.value) in (cst.Name, cst.Attribute, cst.Subscript)  # a batch, or a part of one
                    and type(loop := self._off_device(arg.value, scope)) is cst.For
                ):
                    self.handed.append((func, index, loop, scope))
                if func is not None and type(arg.value) is cst.Name:
                    source = self._off_device(arg.value, scope)
                    if source is not False:
                        self.handed_names.append((func, index, scope, arg.value.value, source, self.order[node]))
            return
        off = [
            (code, kind, leaf)
            for arg in node.args
            for leaf in _leaves(arg.value)
            if (kind := self._off_device(leaf, scope)) is not False and (code := code_of(leaf))
        ]
        off = [(code, kind, leaf) for code, kind, leaf in off if not self._moved_by_helper(node, scope, code, kind)]
        if off:
            self.calls.append((node, wrapper, off))

    def _moved_by_helper(self, call: cst.Call, scope: str, name: str, source: _Source) -> bool:
        """``name`` (a batch from ``source``) was handed, before ``call``, to a function of the
        file or of the project that moves the tensors of that argument to the device in place."""
        for callee, index, at_scope, handed, handed_source, order in self.handed_names:
            if at_scope != scope or handed != name or handed_source is not source or order >= self.order[call]:
                continue
            qualified = f"{scope}.{callee}" if scope and (f"{scope}.{callee}", index) in self._movers else callee
            if (qualified, index) in self._movers:
                return True
            found = self.walk.analysis(ProjectAnalysis).origin(callee)
            if found is not None and found.summary is not None and found.summary.moves_batch(found.name, index):
                return True
        return False

    @property
    def _movers(self) -> set[tuple[str, int]]:
        return {(function, index) for function, index, _ in self.part.batch_movers}

    def conclude(self) -> None:
        part = self.part
        wrapped_loops = {node for node, plan in self.facts.training.loops.items() if plan.wrap_loader is not None}
        loaders = self.facts.loaders.names
        host_loops = {
            loop
            for loop, iterable in self.iterables.items()
            if loop not in wrapped_loops
            and loop not in self.device_fed
            and (
                loop in self.moved_by_hand
                or (loop in self.handed_in and loop not in self.facts.training.all_loops)
                or (loop not in self.handed_in and dotted(iterable) in loaders)
                or (type(iterable) is cst.Call and self.walk.resolve(iterable.func) in apis.DATA_LOADERS)
            )
        }
        self._fed_scattering_wraps()
        for call, wrapper, off in self.calls:
            if part.data_parallel.get(wrapper):
                why = f"`{code_of(wrapper.func)}` scattered every tensor of its inputs to the GPUs, and the port removes it"
            elif wrapper in part.kept_data_parallel:
                why = (
                    f"`{code_of(wrapper.func)}` scattered every tensor of its inputs to the GPUs, which it never does "
                    "without CUDA devices"
                )
            elif part.ddp_calls.get(wrapper, ((), False))[0]:
                why = (
                    f"`{code_of(wrapper.func)}` moved every tensor of its inputs to the GPU of its device_ids, which "
                    "the port drops (without them it moves no inputs)"
                )
            else:
                continue
            names = tuple(
                code
                for code, source, leaf in off
                if leaf not in part.ddp_inputs  # (made on the device: XLA604)
                and any(
                    loop is None
                    or loop in host_loops
                    or (source in self.moved_by_hand and loop not in wrapped_loops and loop not in self.device_fed)
                    for loop in self._loops(source)
                )
            )
            if names:
                part.scattered_inputs[call] = (why, names)

    def _fed_scattering_wraps(self) -> None:
        """The DataParallel subclasses with their own ``scatter`` whose calls in the file all
        get inputs on the device: the scatter that never runs on XLA had nothing to move."""
        calls: dict[cst.Call, list[bool]] = {}
        for _, built, fed in self.built_calls:
            if built in self.part.scattering_wraps:
                calls.setdefault(built, []).append(fed)
        self.part.fed_scattering_wraps = {built for built, fed in calls.items() if all(fed)}

    def _loops(self, source: _Source) -> list[cst.For | None]:
        """The loops a value off the device comes from (None: a CPU tensor made here); for a
        parameter, those of the loops that hand the function a batch there."""
        if not isinstance(source, tuple):
            return [source]
        function, index = source
        return [loop for callee, at, loop, caller in self.handed if at == index and _runs(callee, caller, function)]


def _runs(callee: str, caller: str, function: str) -> bool:
    """A call of ``callee`` from the scope ``caller`` runs ``function`` (qualified): ``step``,
    ``self.step`` in a method of its class, ``trainer.step`` for a method of that name."""
    if callee == function:
        return True
    owner, _, name = function.rpartition(".")
    if callee.startswith("self."):
        return callee == f"self.{name}" and caller.rpartition(".")[0] == owner
    return bool(owner) and "." in callee and callee.rpartition(".")[2] == name


def _names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [n for element in target.elements for n in _names(element.value)]
    name = dotted(target)
    return [name] if name is not None else []


def _leaves(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The inputs a wrapper's scatter reached: the elements of list, tuple and dict displays."""
    if type(value) is cst.Tuple or type(value) is cst.List:
        return [leaf for element in value.elements for leaf in _leaves(element.value)]
    if type(value) is cst.Dict:
        return [leaf for e in value.elements if isinstance(e, cst.DictElement) for leaf in _leaves(e.value)]
    return [value]


def _hands_device(call: cst.Call) -> bool:
    """A construction handed the device (``OrderedIterator(tokens, 8, device=device)``,
    ``Stream(data, args.device)``): an iterable that takes it puts its batches there."""
    return any(
        (arg.keyword is not None and arg.keyword.value == "device")
        or (arg.keyword is None and (dotted(arg.value) or "").rpartition(".")[2] in ("device", "dev"))
        for arg in call.args
    )
