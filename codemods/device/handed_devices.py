"""Devices a file hands to callables of its own or of the project's other modules (for
device/obligations.py): a trainer that moves its model and batches to the device its caller
hands in (``Trainer(model, device=args.device)``) is proven with that value (XLA111 where it ends
off the XLA device, a flag's "cpu" default); the launcher's process index handed on as such a
device (``device=config.gpu``, an int: cuda:N on XLA) is reported (XLA116); and the callables
of this file that move tensors to a device they are handed, for the project's other files."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.obligation_records import code
from codemods.device.rules import xla111_device_off_xla as xla111
from codemods.device.rules import xla116_batch_off_xla as xla116
from codemods.device.rules.xla111_device_off_xla import DEVICE_OFF_XLA
from codemods.device.rules.xla116_batch_off_xla import BATCH_OFF_XLA
from codemods.device.shapes import is_device_name, named_like_an_index
from codemods.engine.nodes import arg_value, call_args, dotted, method_name, walk
from codemods.engine.walk import Analysis, Walk
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.device.facts import ObligationFacts
    from codemods.device.values import DeviceValueAnalysis
    from codemods.engine.rule import Rule
    from codemods.facts import Facts


class HandedDevices(Analysis):
    """The part of ObligationAnalysis that follows devices handed to callables."""

    facts: Facts
    part: ObligationFacts
    params: dict[str, list[str]]  # function -> its positional parameters
    keyword_params: dict[str, list[str]]
    functions: dict[str, cst.FunctionDef]
    handed: list[tuple[cst.Call, str, list[str]]]
    handed_in: dict[cst.Call, str]
    built: dict[str, list[cst.Call]]
    named_device_moves: list[tuple[str, str, cst.Call]]
    init_devices: dict[tuple[str, str], str]
    device_keywords: list[tuple[cst.Call, str]]
    scope_of: dict[cst.Call, str]
    chained: dict[cst.Call, str]

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.keyword_params = {}  # function -> its keyword-only parameters
        # Moves to a named device: (the function, the device as written, the move); and the
        # attributes ``__init__`` binds to a parameter (``self.device = torch.device(device)``):
        # (the class, the attribute) -> the parameter.
        self.named_device_moves = []
        self.init_devices = {}
        # Calls of what the imports do not resolve with a ``device=`` keyword: (the call, its scope).
        self.device_keywords = []
        self.scope_of = {}  # a method call -> the function it is made in
        # A call whose result a method is called on at once (``Trainer(device=d).fit(data)``): the method.
        self.chained = {}

    def _note_init_device(self, name: str, value: cst.BaseExpression) -> None:
        """``self.device = device`` (or ``torch.device(device)``) in ``__init__``, ``device`` a parameter."""
        scope = self.walk.qualname
        if not scope.endswith(".__init__") or not name.startswith("self.") or name.count(".") != 1:
            return
        held = value.args[0].value if type(value) is cst.Call and _device_call(value, self.walk.resolve) else value
        param = dotted(held)
        if param is not None and param in (*self.params.get(scope, ())[1:], *self.keyword_params.get(scope, ())):
            self.init_devices[(scope.removesuffix(".__init__"), name)] = param

    def _note_device_call(self, node: cst.Call, method: str | None, callee: str | None) -> None:
        """A method call (its scope), a move to a named device, a ``device=`` keyword handed to
        what the imports do not resolve."""
        if method is not None:
            self.scope_of[node] = self.walk.qualname
            if type(held := node.func.value) is cst.Call:  # type: ignore[attr-defined]  # a method call's func is an Attribute
                self.chained[held] = method
        if method == "to" and (device := dotted(arg_value(node, 0, "device"))) is not None:
            self.named_device_moves.append((self.walk.qualname, device, node))
        if callee is None and any(a.keyword is not None and is_device_name(a.keyword.value) for a in node.args):
            self.device_keywords.append((node, self.walk.qualname))

    if TYPE_CHECKING:

        @property
        def values(self) -> DeviceValueAnalysis: ...

        def _break(self, node: cst.CSTNode, rule: Rule, message: str) -> None: ...

    def _launch_index(self, value: cst.BaseExpression, scope: str) -> tuple[str, str] | None:
        """(the worker, its index parameter) where ``value`` is the process index a launcher hands
        the worker it starts (``mp.spawn(worker, ...)``, ported to ``torch_xla.launch``): that
        parameter, or a name every standing binding of which in the worker is it (``cfg.gpu = gpu``)."""
        spawned = {dotted(spawn.fn) for spawn in self.facts.distributed.spawns.values()}
        params = self.params.get(scope, [])
        if scope not in spawned or not params or (name := dotted(value)) is None:
            return None
        if name == params[0]:
            return scope, name
        # (an attribute's bindings are the module's: those of the worker, which run in it after
        # the launching process's)
        inside = {id(node) for node in walk(self.functions[scope])}
        bindings = [b for b in self.values._live(name, scope) if id(b.value) in inside]
        if bindings and all(dotted(b.value) == params[0] for b in bindings):
            return scope, params[0]
        return None

    def _device_parameters(self) -> None:
        """For the project's other files: the callables that move tensors to a device their
        caller hands in, a parameter of a function or of a class's ``__init__`` (bound to an
        attribute there and moved to in its methods)."""
        for scope, device, move in self.named_device_moves:
            owner, _, _ = scope.rpartition(".")
            function, param = scope, device
            if device.startswith("self.") and (found := self.init_devices.get((owner, device))) is not None:
                function, param = f"{owner}.__init__", found
            elif scope.count(".") > 1 or device not in self.params.get(scope, ()):
                continue  # (a nested function's own parameter: its calls are not followed across files)
            positional = self.params.get(function, [])[1 if "." in function else 0 :]
            index = positional.index(param) if param in positional else -1
            if index >= 0 or param in self.keyword_params.get(function, ()):
                self.part.device_parameters.add((function, index, param, code(move)))

    def _handed_devices(self) -> None:
        """A model handed to a callable of the project that moves it to a device the caller
        hands in and builds the optimizer over it (``Trainer(model, device=args.device)``, whose
        ``__init__`` does ``self.model.to(torch.device(device))``), or a callable that trains and
        moves tensors to the device it is handed: obligations (1) and (3) are the caller's,
        proven with the value it hands in; reported where that value ends off the XLA device (a
        flag's "cpu" default), as for a model this file moves."""
        project = self.walk.analysis(ProjectAnalysis)
        for call, callee, _ in self.handed:
            found = project.origin(callee)
            if found is None or (summary := found.summary) is None:
                continue
            for function, index, param, xla, at, through, move in sorted(summary.argument_moves):
                if (
                    not self._trained_here(call)
                    or xla
                    or not through
                    or "." in through
                    or function not in (found.name, f"{found.name}.__init__")
                    or not summary.builds_optimizer(found.name, index, param)
                ):
                    continue
                model = arg_value(call, index, param) if index >= 0 else None
                device = _handed(call, at, through)
                if model is None or device is None:
                    continue
                where = self.values.where_passed(device, self.handed_in[call])
                if where.on_xla is False and where.node is not None and where.node not in self.part.broken:
                    self._break(
                        where.node,
                        DEVICE_OFF_XLA,
                        xla111.handed_device_off_xla(code(model), callee, summary.path, move, code(device), where.why),
                    )
            # A trainer that moves its model and batches to the device it is handed, whatever
            # builds its optimizer (``optimizer_fn(self.model.parameters())``).
            self._trainer_device(call, callee, summary.device_parameters_of(found.name), summary.path)
        # The same of a trainer class or function of this file (``Trainer(device=args.device).fit(data)``).
        for call, callee, _ in self.handed:
            if "." not in callee and project.origin(callee) is None:
                local = sorted(
                    (index, param, move)
                    for function, index, param, move in self.part.device_parameters
                    if function in (callee, f"{callee}.__init__")
                )
                self._trainer_device(call, callee, local, "this file")

    def _trainer_device(self, call: cst.Call, callee: str, devices: list[tuple[int, str, str]], path: str) -> None:
        """``call`` of ``callee``, which moves tensors to the device it is handed (``devices``:
        its parameters that hand one in), trains here: where what it hands in ends off the XLA
        device, the chain breaks there (XLA111)."""
        for index, param, move in devices if self._trained_here(call) else ():
            handed = _handed(call, index, param)
            off = self.values.where_passed(handed, self.handed_in[call]) if handed is not None else None
            if handed is None or off is None or off.on_xla is not False or off.node is None:
                continue
            if off.node not in self.part.broken:
                # (``algorithm.to(device)``: the instance trains, its ``to`` moves what it holds)
                trainer = callee.removesuffix(".to") if method_name(call) == "to" else callee
                message = xla111.trainer_device_off_xla(trainer, path, move, code(handed), off.why)
                self._break(off.node, DEVICE_OFF_XLA, message)

    def _trained_here(self, call: cst.Call) -> bool:
        """``call`` of a project callable trains in this file: a function that trains, or a class
        whose instance this file trains (``trainer = Trainer(...)``, then ``trainer.fit(...)``, a
        method that trains); not one built only to export or evaluate."""
        project = self.walk.analysis(ProjectAnalysis)

        training = self.facts.training
        here = {*training.training_callables, *training.step_callables, *training.loop_runners}

        def trains(callee: str) -> bool:
            found = project.origin(callee)
            if found is None:
                return callee in here  # a callable of this file
            summary = found.summary
            return summary is not None and (summary.trains(found.name) or found.name in summary.loop_runners)

        if trains(built := dotted(call.func) or ""):
            return True
        if (method := self.chained.get(call)) is not None and trains(f"{built}.{method}"):
            return True  # ``Trainer(device=args.device).fit(data)``
        names = [name for name, calls in self.built.items() if any(b is call for b in calls)]
        # ``algorithm.to(device)``, a method of an instance this file built and trains
        # (``algorithm.train()``): rlkit's algorithm moving its trainer's networks.
        owner = dotted(call.func.value) if type(call.func) is cst.Attribute else None
        if owner is not None and owner in self.built:
            names.append(owner)
            built = dotted(self.built[owner][-1].func) or ""
        scope = self.handed_in[call]
        return any(
            callee.startswith(f"{name}.")
            and self.scope_of.get(method) == scope
            and (trains(callee) or trains(f"{built}{callee.removeprefix(name)}"))  # (``t.fit``: ``Trainer.fit``)
            for method, callee in project.calls
            for name in names
        )

    def _handed_launch_indices(self) -> None:
        """The process index a launcher hands the worker, handed on as the device of a callable
        (of this file or of another module of the project) that moves tensors to it
        (``Trainer(model, loader, device=config.gpu)``): an integer device is cuda:N, so the
        batches it moves never reach the XLA device (obligation 3)."""
        project = self.walk.analysis(ProjectAnalysis)
        local = sorted(
            (function.removesuffix(".__init__"), index, param, move)
            for function, index, param, move in self.part.device_parameters
        )
        ported = self.facts.device.index_moves.values()  # (XLA103 makes those the XLA device)
        for call, callee, _ in self.handed:
            found = project.origin(callee)
            if found is not None and found.summary is not None:
                named = f"`{callee}` ({found.summary.path})"
                devices = found.summary.device_parameters_of(found.name)
            else:
                named, devices = f"`{callee}`", [(i, param, move) for name, i, param, move in local if name == callee]
            for index, param, move in devices:
                handed = _handed(call, index, param)
                launched = self._launch_index(handed, self.handed_in[call]) if handed is not None else None
                if handed is None or launched is None or handed in ported or handed in self.part.broken:
                    continue
                worker, index_param = launched
                message = xla116.launch_index_as_device(code(handed), worker, index_param, named, move)
                self._break(handed, BATCH_OFF_XLA, message)
        # A callable the tool cannot follow (``get_trainer(config)(..., device=config.gpu)``, a
        # class looked up at run time) handed the index as its ``device=``.
        for call, scope in self.device_keywords:
            if type(call.func) is not cst.Call or project.origin(dotted(call.func.func) or "") is None:
                continue
            for arg in call.args:
                keyword = arg.keyword.value if arg.keyword is not None else None
                launched = self._launch_index(arg.value, scope) if is_device_name(keyword) else None
                if launched is None or arg.value in ported or arg.value in self.part.broken:
                    continue
                message = xla116.launch_index_as_unfollowed_device(
                    code(arg.value), *launched, code(call.func), str(keyword)
                )
                self._break(arg.value, BATCH_OFF_XLA, message)

    def _handed_indices(self) -> None:
        """An integer handed as the device of a callable (of this file or of another module of the
        project) that moves tensors to it (``move(batch, self.rank)`` into ``def move(batch, device):
        ... v.to(device)``): ``.to(0)`` is cuda:0, which fails without CUDA.  Where the value is an
        int here (a literal, a CUDA index of this file, or a parameter annotated ``int``, or named like
        an index with an int default, that it is bound from), the argument becomes the XLA device
        (XLA103): the callee uses that parameter as a device (it is named for one)."""
        project = self.walk.analysis(ProjectAnalysis)
        device = self.facts.device
        for call, callee, _ in self.handed:
            found = project.origin(callee)
            if found is not None and found.summary is not None:
                named, devices = f"`{callee}` ({found.summary.path})", found.summary.device_parameters_of(found.name)
            else:
                local = sorted(
                    (index, param, move)
                    for function, index, param, move in self.part.device_parameters
                    if function in (callee, f"{callee}.__init__")
                )
                named, devices = f"`{callee}`", local if "." not in callee else []
            for index, param, move in devices:
                handed = _handed(call, index, param)
                if handed is None or not is_device_name(param) or call in device.index_moves:
                    continue
                if handed in self.part.broken or (held := self._an_int(handed, self.handed_in[call])) is None:
                    continue
                device.index_moves[call] = handed
                device.index_why[call] = (
                    f"{named} moves tensors to its `{param}` (`{move}`), and {held}: an integer device is cuda:N, "
                    "which fails without CUDA"
                )

    def _an_int(self, value: cst.BaseExpression, scope: str) -> str | None:
        """How ``value``, read in ``scope``, is known to be an int, if it is."""
        if type(value) is cst.Integer:
            return f"`{value.value}` is one"
        if (name := dotted(value)) is None:
            return None
        if name in self.facts.device.cuda_indices and not is_device_name(name.rpartition(".")[2]):
            return f"`{name}` is a CUDA index here"  # (not ``device``: given to ``.cuda()``, it may be a device)
        function, param = scope, name
        if name.startswith("self.") and name.count(".") == 1:  # ``self.rank = rank`` in ``__init__``
            function = f"{scope.rpartition('.')[0]}.__init__"
            init = self.functions.get(function)
            bound = [
                dotted(sub.value)
                for sub in (walk(init) if init is not None else ())
                if type(sub) is cst.Assign and len(sub.targets) == 1 and dotted(sub.targets[0].target) == name
            ]
            if len(bound) != 1 or bound[0] is None:
                return None
            param = bound[0]
        defined = self.functions.get(function)
        params = defined.params if defined is not None else None
        for p in (*params.posonly_params, *params.params, *params.kwonly_params) if params is not None else ():
            if p.name.value != param:
                continue
            if p.annotation is not None and dotted(p.annotation.annotation) == "int":
                return f"`{name}` is the `{param}: int` parameter of `{function}`"
            if type(p.default) is cst.Integer and named_like_an_index(param):
                return f"`{name}` is the `{param}={p.default.value}` parameter of `{function}`"
        return None


def _handed(call: cst.Call, index: int, parameter: str) -> cst.BaseExpression | None:
    """What ``call`` passes for a callee's parameter (at ``index``; -1: by keyword only)."""
    value = arg_value(call, index, parameter) if index >= 0 else call_args(call)[1].get(parameter)
    return value.value if isinstance(value, cst.Arg) else value


def _device_call(value: cst.Call, resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    """``torch.device(x)``, of one argument."""
    return (
        resolve(value.func) == "torch.device"
        and len(value.args) == 1
        and not value.args[0].star
        and value.args[0].keyword is None
    )
