"""Obligation 2 of SPEC section 5: the optimizer holds the parameters as they are after
the move.  Moving a module to XLA replaces its Parameter objects (on CUDA they are kept),
so an optimizer built over a model still on the CPU, which moves later, steps stale CPU
copies and the model trains nothing.

What the optimizer is built from is followed: ``model.parameters()`` and the parameters
of its submodules (``model.vision.parameters()``), parameter groups, the model's own
methods (``model.param_groups(wd)``), parameters collected into a name first
(``params = list(model.parameters())``) or filled in a loop over them (training/filled_parameters.py),
functions of this file or of the project that
read a model's parameters or build the optimizer, and the moves that follow, here, in
another function, or in a callable of another module (also of a keyword argument:
``kwargs["model"].to(device)``), for a model built here or handed in (a parameter, and
names bound to one: ``self.model = model``).  Where every later move goes to
the XLA device, the model is moved first (XLA203); where the optimizer's parameters come
from something the tool cannot follow while a model of the same function is still on
the CPU and moves later, that is an error naming it (XLA213).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device.ported_devices import CUDA
from codemods.engine.nodes import (
    call_args,
    dotted,
    walk,
)
from codemods.engine.positions import code_of
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_summary import Found
from codemods.training.argument_order import arguments_first
from codemods.training.conditional_moves import ConditionalMoves
from codemods.training.facts import EarlyOptimizer, MovedAt, UntracedParameters
from codemods.training.filled_parameters import filling_loops, moved_after, names_bound
from codemods.training.followed_events import binds_anew, canonical, moved_by_methods, moves_of
from codemods.training.handed_optimizer_moves import handed_optimizer_moves
from codemods.training.handed_parameters import (
    argument_name,
    handed_device,
    hands_the_cpu,
    parameter_named,
    through_bound,
)
from codemods.training.listed_modules import untraced_loop_moves
from codemods.training.parameter_sources import PARAMETER_METHODS, module_calls, returns_the_module, root_in
from codemods.training.split_prepares import split_prepares

if TYPE_CHECKING:
    from codemods.device.analysis import DeviceAnalysis
    from codemods.facts import Facts
    from codemods.training.facts import TrainingFacts
    from codemods.training.followed_events import FollowedEvent, HandedEvent, HandedOptimizerEvent, UntracedEvent
    from codemods.training.records import ModelEvent, OptimizerEvent, _Function, _Scope


# Calls that return a module over the same Parameter objects as the one they are handed, on the
# same device (a ScriptModule of it, dynamo's OptimizedModule around it): moving one moves the other,
# and ``model = torch.jit.script(model)`` leaves ``model`` where it was (checked on torch_xla 2.9:
# a move of the scripted module to the CPU and back replaces the parameters, as for the plain one).
SAME_PARAMETER_WRAPPERS = frozenset({"torch.jit.script", apis.TORCH_COMPILE})


class EarlyOptimizers(ConditionalMoves):
    """The part of TrainingAnalysis that checks what optimizers are built over."""

    facts: Facts
    part: TrainingFacts
    device: DeviceAnalysis
    module_classes: set[str]
    function_records: dict[int, _Function]
    module_node: cst.Module | None
    # Calls inside an optimizer's parameters argument, and the name each call's value is
    # assigned to (``optimizer = build(model, cfg)``).
    optimizer_inputs: set[cst.Call]
    call_targets: dict[cst.Call, str]
    # The parameter calls of loops that fill a name an optimizer is built from, and that optimizer
    # (``for k, v in dict(model.named_parameters()).items(): params += [...]``, ``SGD(params)``).
    filled_by: dict[cst.Call, cst.Call]

    def _is_model_constructor(self, constructor: str) -> bool:
        qualified = self.walk.resolve_dotted(constructor) or ""
        return constructor in self.module_classes or (
            qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1][:1].isupper()
        )

    def _is_wrapper(self, constructor: str) -> bool:
        """DataParallel(model) and DDP(model) sit wherever the wrapped model is, and
        ``torch.jit.script(model)``, ``torch.compile(model)`` hold its very parameters."""
        qualified = self.walk.resolve_dotted(constructor) or ""
        return qualified in apis.DISTRIBUTED or qualified in SAME_PARAMETER_WRAPPERS

    def _kept_arguments(self, constructor: str, arguments: tuple[tuple[int, str | None, str], ...]) -> tuple[str, ...]:
        """The names handed to a module class that it keeps as submodules, so that moving
        its instance moves them (``ModelWithLoss(model, loss)``): for a class of this file,
        those its ``__init__`` binds to an attribute (``self.model = model``; not a
        ``copy.deepcopy(model)``); for a class of torch.nn or another module, all."""
        if not self._is_constructor(constructor) or self._is_wrapper(constructor):
            return ()
        local = self._local_callable(constructor)
        if local is None or local.name != "__init__":
            return tuple(name for _, _, name in arguments)
        kept = set(local.bound.values())
        return tuple(
            name
            for index, keyword, name in arguments
            if (keyword if keyword is not None else local.params[index] if index < len(local.params) else None) in kept
        )

    def _goes_to_xla(self, device: str | None) -> bool:
        """A move to ``device`` ends on the XLA device on every path once ported: a
        ``.cuda()``, a CUDA index (ported where it is used), or a device that is XLA."""
        return (
            device == CUDA
            or device in self.facts.device.cuda_indices
            or (self.device.xla_on_every_path(device) and self.device.file_always_xla())
            or (device is not None and self.device.xla_once_flags_switched_on(device))
        )

    def _local_callable(self, callee: str) -> _Function | None:
        """The function of this file that ``callee`` runs: ``helper``, ``Trainer`` (its
        ``__init__``), ``self.helper``."""
        name = callee.removeprefix("self.")
        for fn in self.function_records.values():
            if fn.qualname in (name, f"{name}.__init__") or (callee != name and fn.qualname.endswith(f".{name}")):
                return fn
        return None

    def _argument_events(
        self,
        callee: str,
        call: cst.Call,
        feeding: bool,
        named: dict[cst.BaseExpression, str] | None = None,
        round_trips: bool = False,
    ) -> list[HandedEvent]:
        """What handing arguments to ``callee`` does to models: ("move", name, XLA or
        not, description) for an argument the callee moves to the device, ("optimizer",
        name, call, index) for one it builds an optimizer over or, where the call feeds an
        optimizer (``feeding``: it is in its parameters, or it builds it), whose
        parameters it reads; ("untraced", name, call, origin) for what a callable the
        tool cannot read is handed there.  ``named``: arguments that are not names, and
        the name each stands for (``to_gpu(Net())`` bound to ``model``: ``Net()`` is it).
        ``round_trips``: also ("cpu", name, call) before the move of an argument the callee
        moves to the CPU first (a save helper's ``net.cpu()``, then ``net.cuda()``)."""
        local = self._local_callable(callee)
        # Each project callable it may be (one of a dict's: ``Trainer = train_factory[task]``).
        project = self.walk.analysis(ProjectAnalysis)
        founds = [] if local is not None else project.origins(callee)
        # A class whose ``__init__`` is a base's (of another module): that base's too.
        founds += [f for f in project.origins(f"{callee}.__init__") if founds and f.summary is not founds[0].summary]
        found = founds[0] if founds else None
        summary = found.summary if found is not None else None
        positional, keywords = call_args(call)
        handed = [(i, None, a) for i, a in enumerate(positional) if not a.star] + [
            (None, k, a) for k, a in keywords.items()
        ]
        events: list[HandedEvent] = []
        builder = apis.LIBRARY_OPTIMIZER_BUILDERS.get(self.walk.resolve(call.func) or "")
        if local is None and summary is None and builder is not None:  # mmcv's ``build_optimizer(model, cfg)``
            (position, by_keyword), plain = builder, [a for a in positional if not a.star]
            handed_as: int | str = position if position < len(plain) else by_keyword
            module = plain[position] if position < len(plain) else keywords.get(by_keyword)
            held = None if module is None else dotted(module.value) or (named or {}).get(module.value)
            return [] if held is None else [("optimizer", held, call, handed_as, False)]
        if local is None and summary is None:
            # A callable the tool cannot read, whose result becomes an optimizer or its
            # parameters: what it is handed may be what the optimizer holds.
            if feeding and not (self.walk.resolve(call.func) or "").startswith("torch."):
                origin = (
                    f"`{callee}` ({found.summary.path if found and found.summary else 'not read'})"
                    if found
                    else f"`{callee}`"
                )
                events.extend(
                    ("untraced", name, call, origin, False) for _, _, arg in handed if (name := dotted(arg.value))
                )
            return events
        for index, keyword, arg in handed:
            name = dotted(arg.value) or (named or {}).get(arg.value)
            if name is None:
                continue
            if local is not None:
                param = (
                    keyword
                    if keyword in local.params or keyword in local.keyword_params
                    else (local.positional(index) if index is not None else None)
                )
                if param is None:
                    continue
                if round_trips and param in local.round_trip_params:
                    events.append(("cpu", name, call, "back"))
                for moved, device, move, owner in local.moved_params:
                    if moved == param:
                        device_from = handed_device(local, device)
                        if device_from is not None and hands_the_cpu(call, *device_from):
                            if round_trips:  # ``move_all(torch.device("cpu"), policy)``: a move to the CPU
                                events.append(("cpu", name, call))
                            continue
                        xla = self._goes_to_xla(device) or (
                            device_from is not None and self._goes_to_xla(argument_name(call, *device_from))
                        )
                        events.append(("move", name, xla, self._where(move, owner)))
                if (local.builds_optimizer or feeding) and param in local.parameters_of:
                    events.append(
                        ("optimizer", name, call, index if index is not None else keyword, not local.builds_optimizer)
                    )
            else:
                for each, at, by in self._with_base_inits(founds, index, keyword):
                    if each.summary is not None:
                        if round_trips and each.summary.round_trips_argument(each.name, at, by):
                            events.append(("cpu", name, call, "back"))
                        events.extend(self._summary_events(callee, call, name, each, at, by, feeding, round_trips))
        return events

    def _with_base_inits(
        self, founds: list[Found], index: int | None, keyword: str | None
    ) -> list[tuple[Found, int | None, str | None]]:
        """The project callables an argument (at ``index``, or as ``keyword``) is handed to: ``founds``,
        and for a class whose ``__init__`` hands it on to a base's (``super().__init__(opt, model)``),
        that base's ``__init__`` (of its module or another), with where the argument goes there, a few
        bases deep."""
        context = self.walk.analysis(ProjectAnalysis).part.context
        handed = [(each, index, keyword) for each in founds]
        pending = list(handed)
        while pending and len(handed) < 8:
            each, at, by = pending.pop()
            summary = each.summary
            if summary is None:
                continue
            for base, base_at, base_by in summary.base_init_handed(each.name.removesuffix(".__init__"), at, by):
                origin = summary.origin_of(base)
                found = (
                    Found(summary, f"{base}.__init__")
                    if origin is None
                    else context.lookup_from(summary, origin[0], f"{origin[1]}.__init__")
                )
                if found is not None and found.summary is not None and all(found != h[0] for h in handed):
                    handed.append((found, base_at, base_by))
                    pending.append((found, base_at, base_by))
        return handed

    def _summary_events(
        self,
        callee: str,
        call: cst.Call,
        argument: str,
        found: Found,
        index: int | None,
        keyword: str | None,
        feeding: bool,
        round_trips: bool = False,
    ) -> list[HandedEvent]:
        """What handing ``argument`` (at ``index``, or as ``keyword``) to the project callable
        ``found`` does (see ``_argument_events``)."""
        summary, name = found.summary, found.name
        assert summary is not None
        events: list[HandedEvent] = []
        summary_move = summary.moves_argument(name, index, keyword)
        xla, device_at, moves = summary_move or (False, None, "")
        if summary_move is not None and device_at is not None and hands_the_cpu(call, *device_at):
            if round_trips:  # a helper handed the CPU for the device it moves its argument to
                events.append(("cpu", argument, call))
        elif summary_move is not None:
            if not xla and device_at is not None:  # to a device the caller hands in
                xla = self._goes_to_xla(argument_name(call, *device_at))
            # A module this run does not convert keeps its CUDA moves: say so.
            pending = ", which this run does not convert," if summary.pending else ""
            where = f"{summary.path}: `{moves}`" if not xla else summary.path
            events.append(("move", argument, xla, f"`{callee}` ({where}){pending}"))
        builds = summary.builds_optimizer(name, index, keyword)
        if builds or (feeding and summary.reads_parameters(name, index, keyword)):
            events.append(("optimizer", argument, call, index if index is not None else keyword, not builds))
        return events

    @staticmethod
    def _where(move: cst.Call, owner: str) -> MovedAt:
        return MovedAt.of(f"`{code_of(move)}` in `{owner}`" if owner else f"`{code_of(move)}`", owner)

    def _callables_summary(self) -> None:
        """What other files need to know: which callables move or build optimizers over
        their arguments."""
        self._methods_moving_init_arguments()
        for fn in self.function_records.values():
            if fn.name == "__init__" and fn.node is not None:
                self._base_init_arguments(fn)
            # A parameter passed by keyword only (or a key of ``**kwargs``) has no index: -1.
            arguments = [*enumerate(fn.params), *((-1, param) for param in fn.keyword_params)]
            if fn.varargs is not None:  # ``*modules``: the arguments from its index on, recorded as ``*modules``
                arguments.append((len(fn.params), fn.varargs))
            for index, param in arguments:
                written = f"*{param}" if param == fn.varargs else param
                for moved, device, move, _ in fn.moved_params:
                    if moved == param:
                        xla = self._goes_to_xla(device)
                        # (``self.device`` after ``self.device = torch.device(device)``: the parameter ``device``)
                        handed = None if xla else handed_device(fn, through_bound(fn.bound, device))
                        at, through = handed if handed is not None else (-1, "")
                        self.part.argument_moves.add((fn.qualname, index, written, xla, at, through, code_of(move)))
                if param in fn.round_trip_params:
                    self.part.argument_round_trips.add((fn.qualname, index, written))
                if param in fn.parameters_of:
                    self.part.parameter_readers.add((fn.qualname, index, written))
                    if fn.builds_optimizer:
                        self.part.optimizer_builders.add((fn.qualname, index, written))

    def _base_init_arguments(self, init: _Function) -> None:
        """The parameters ``init`` hands on to its base's ``__init__`` as they are
        (``super().__init__(opt, model, optimizer=optimizer)``, ``Base.__init__(self, model)``)."""
        assert init.node is not None
        for sub in walk(init.node.body):
            if not (type(sub) is cst.Call and type(sub.func) is cst.Attribute and sub.func.attr.value == "__init__"):
                continue
            holder = sub.func.value
            if type(holder) is cst.Call and dotted(holder.func) == "super":
                base, skip = "", 0
            elif (written := dotted(holder)) is not None and not written.startswith("self"):
                base, skip = written, 1  # ``Base.__init__(self, ...)``: ``self`` first
            else:
                continue
            positional, keywords = call_args(sub)
            handed = [(i - skip, "", a) for i, a in enumerate(positional) if not a.star and i >= skip]
            handed += [(-1, k, a) for k, a in keywords.items()]
            for at, keyword, arg in handed:
                name = dotted(arg.value)
                if name in init.params:
                    self.part.base_init_arguments.add((init.qualname, init.params.index(name), name, base, at, keyword))

    def _methods_moving_init_arguments(self) -> None:
        """A method that moves an attribute ``__init__`` bound to its argument
        (``self.model = model``, then ``self.model.to(self.device)`` in ``train``) moves
        what the class was handed: recorded as a move of ``__init__``'s argument."""
        inits = {
            fn.qualname.removesuffix(".__init__"): fn for fn in self.function_records.values() if fn.name == "__init__"
        }
        # ``self.model_with_loss = ModelWithLoss(model)`` in ``__init__``: moving that attribute moves ``model``.
        wrapping: dict[str, dict[str, str]] = {qualname: {} for qualname in inits}
        for qualname, initializer in inits.items():
            for event in initializer.events:
                if event[0] == "wraps":
                    kept = self._kept_arguments(str(event[2]), event[3])
                    handed = [p for w in kept if (p := parameter_named(initializer, w)) is not None]
                    if handed:
                        wrapping[qualname][str(event[1])] = handed[0]
        for fn in self.function_records.values():
            init = inits.get(fn.qualname.rpartition(".")[0])
            if init is None or fn is init:
                continue
            bound = {**wrapping[fn.qualname.rpartition(".")[0]], **init.bound}
            for event in fn.events:
                if event[0] == "move" and (param := bound.get(str(event[1]))) is not None:
                    device = event[2]
                    device = through_bound(init.bound, device if isinstance(device, str) else None)
                    init.moved_params.append((param, device, event[3], fn.qualname))

    def _scope_events(self, scope: _Scope) -> list[FollowedEvent]:
        """The scope's events with calls replaced by what they do to models; moves
        ("move", name, goes to XLA, description); parameters collected into a name that
        an optimizer is built from (``params = list(model.parameters())``) as optimizers
        over their modules, where they are collected."""
        used = {name for event in scope.events if event[0] == "uses" for name in event[1]}
        # Names handed to a call that builds the optimizer (``get_optimizer(params, **cfg)``).
        used.update(
            name
            for event in scope.events
            if event[0] == "call" and self._builds_optimizer(event[1], event[2])
            for arg in event[2].args
            if (name := dotted(arg.value)) is not None
        )
        collected: set[str] = set()
        bound = {event[1] for event in scope.events if event[0] == "collect"}
        known = names_bound(scope)
        feeding = set(self.optimizer_inputs)
        for event in scope.events:
            if event[0] == "collect" and event[1] in used:
                calls = [sub for sub in walk(event[2]) if type(sub) is cst.Call]
                feeding.update(calls)
                if calls:  # ``params = []`` filled in a loop is not followed
                    collected.add(event[1])
        events: list[FollowedEvent] = []
        moves: dict[int, cst.Call] = {}  # the moves of the scope itself, by their index in ``events``
        for event in arguments_first(scope.events):
            if event[0] == "call":
                call = event[2]
                builds = self._builds_optimizer(event[1], call)
                events.extend(self._argument_events(event[1], call, call in feeding or builds))
                if builds:  # ``get_optimizer(model.parameters(), lr)``: the optimizer holds those
                    events.extend(
                        ("optimizer", owner, sub)
                        for arg in call.args
                        for sub, owner in module_calls(arg.value)
                        # (module_calls keeps only calls whose func is an Attribute)
                        if type(func := sub.func) is cst.Attribute and func.attr.value in PARAMETER_METHODS
                    )
            elif event[0] == "move":
                _, name, device, node = event
                moves[len(events)] = node
                events.append(("move", name, self._goes_to_xla(device), self._where(node, scope.qualname)))
            elif event[0] == "wraps":
                _, name, constructor, wrapped, device, moved_at = event
                kept = self._kept_arguments(str(constructor), wrapped)
                if kept:
                    moved = (
                        None if moved_at is None else (self._goes_to_xla(device), self._where(moved_at, scope.qualname))
                    )
                    events.append(("wraps", name, kept, moved))
            elif event[0] == "collect":
                if (source := dotted(event[2])) is not None:
                    events.append(("alias", event[1], source))
                if event[1] in collected and not returns_the_module(event[2]):
                    events.extend(("optimizer", owner, sub) for sub, owner in module_calls(event[2]))
            elif event[0] == "uses":
                # Names bound here to what is not followed (``params = []`` filled in a loop),
                # and tensors of a model (``model.weight``); a parameter of the function is
                # the caller's to answer for.
                untraced = [name for name in event[1] if name not in collected]
                # ``params`` filled in a loop over ``model.named_parameters()``: over ``model``.
                root = getattr(scope, "node", None) if scope.qualname else self.module_node
                filled = {name: filling_loops(root, name, event[2], known) for name in untraced if name in bound}
                for model, sub in (pair for name in untraced for pair in filled.get(name, ())):
                    self.filled_by[sub] = event[2]
                    # The loop read the parameters before a move between it and the optimizer:
                    # the list holds the Parameters the move replaced, as if built there.
                    at = moved_after(root, sub, model, events, moves)
                    events.insert(at, ("optimizer", model, sub))
                    moves = {i + (i >= at): node for i, node in moves.items()}
                events.extend(
                    ("untraced", name, event[2], "", name in bound) for name in untraced if not filled.get(name)
                )
            else:
                events.append(event)
        return self.conditional_moves(events, moves)

    def _builds_optimizer(self, callee: str, call: cst.Call) -> bool:
        """The call's value is bound to an optimizer's name, or its callee names one
        (``optimizer = get_optimizer(params, lr)``)."""
        target = self.call_targets.get(call)
        return target is not None and (self.part.is_optimizer(target) or "optim" in callee.rsplit(".", 1)[-1].lower())

    def _is_constructor(self, constructor: str) -> bool:
        """A model class of this file or torch.nn, or a class of another project file."""
        if self._is_model_constructor(constructor):
            return True
        return (
            constructor.rsplit(".", 1)[-1][:1].isupper()
            and self.walk.analysis(ProjectAnalysis).origin(constructor) is not None
        )

    def _optimizers_before_moves(self, scopes: list[_Scope]) -> None:
        self.filled_by = {}
        scope_events = [self._scope_events(scope) for scope in scopes]
        # Moves anywhere in the file, for a model that leaves the function that built it
        # (returned, or handed to a trainer class): (name, goes to XLA, description).
        everywhere = [e for events in scope_events for e in events if e[0] == "move"]
        # Moves of an attribute by the methods of a class: (class, ``self.model``) -> (the
        # method, goes to XLA, where); each runs after ``__init__``.
        attribute_moves: dict[tuple[str, str], list[tuple[str, bool, str]]] = {}
        for scope, events in zip(scopes, scope_events):
            for event in events:
                if event[0] == "move" and str(event[1]).startswith("self."):
                    key = (scope.qualname.rpartition(".")[0], str(event[1]))
                    attribute_moves.setdefault(key, []).append((scope.qualname, event[2], event[3]))
        # The attributes each class's ``__init__`` leaves bound to a model it built or was handed
        # and did not move (``self.model = model``): (on the CPU, handed in) by class.
        kept: dict[str, tuple[set[str], set[str]]] = {}
        inits_first = sorted(zip(scopes, scope_events), key=lambda pair: not pair[0].qualname.endswith(".__init__"))
        for scope, events in inits_first:
            on_cpu: set[str] = set()
            # Built by a call the tool does not know as a model class (a factory, a class
            # of a star import), or handed in (a parameter of the function): a model only
            # if the optimizer steps its parameters and this function moves it later.
            handed_in = set(getattr(scope, "params", ())) | set(getattr(scope, "keyword_params", ()))
            unknown = set(handed_in)
            # A method of a class: the attributes ``__init__`` kept, followed only to the moves
            # of this method (another method's may run before it).
            owner, _, method = scope.qualname.rpartition(".")
            built_held, handed_held = kept.get(owner, (set(), set())) if method != "__init__" else (set(), set())
            on_cpu |= built_held
            unknown |= handed_held
            handed_in |= handed_held
            inherited = built_held | handed_held
            # Models moved, or built on a device, in this function so far.
            moved_here: set[str] = set()
            # Names bound to another (``self.model = model``): the same module.
            aliases: dict[str, str] = {}
            for index, event in enumerate(events):
                name = event[1]
                if event[0] == "alias":
                    aliases[name] = canonical(event[2], aliases)
                    continue
                if event[0] == "wraps":
                    # Moving the wrapper (``ModelWithLoss(model, loss).to(device)``) moves the
                    # model built here (not the sizes a model class is handed).
                    _, _, wrapped, wrapper_moved = event
                    inner = next(
                        (c for w in wrapped if (c := canonical(str(w), aliases)) in on_cpu),
                        None,
                    )
                    if inner is not None:
                        aliases[name] = inner
                        if wrapper_moved is not None:
                            on_cpu.discard(inner)
                    continue
                if event[0] == "model" and (same := _same_parameters(self.walk.resolve_dotted, event)) is not None:
                    if isinstance(same, str):  # ``model = torch.jit.script(model)``: where it was
                        if (held := canonical(same, aliases)) != name:
                            aliases[name] = held
                        continue
                    event = same  # ``torch.compile(Net())``: as ``Net()``
                if event[0] == "model":
                    aliases.pop(name, None)
                    handed_in.discard(name)
                written, name = name, canonical(name, aliases)
                if event[0] == "move" or (event[0] == "model" and event[3]):
                    moved_here.add(name)
                elif event[0] == "model":
                    moved_here.discard(name)
                elif event[0] == "optimizer" and root_in(name, moved_here) is not None:
                    self.part.parameters_after_moves.add(event[2])
                if event[0] == "model":
                    _, _, constructor, built_moved, _ = event
                    if self._is_wrapper(constructor):
                        continue
                    known = self._is_constructor(constructor)
                    (on_cpu if known else unknown).add(name)
                    (unknown if known else on_cpu).discard(name)
                    if built_moved:
                        on_cpu.discard(name)
                        unknown.discard(name)
                elif event[0] == "move":
                    on_cpu.discard(name)
                    unknown.discard(name)
                elif event[0] == "untraced":
                    self._untraced(name, event, on_cpu, events[index + 1 :])
                elif event[0] == "optimizer" and self._built_again(self.filled_by.get(event[2]), events[index + 1 :]):
                    continue  # the groups are filled again after the move, for the same optimizer name
                elif event[0] == "optimizer" and (root := root_in(name, inherited)) is not None:
                    if later := moves_of(root, events[index + 1 :], aliases):
                        self._early(root, event, later, root in handed_in)
                elif event[0] == "optimizer" and (root := root_in(name, unknown)) is not None:
                    later = moves_of(root, events[index + 1 :], aliases) or moved_by_methods(
                        scope.qualname, written, attribute_moves, _held_as(root, events)
                    )
                    if later:
                        self._early(root, event, later, root in handed_in)
                    else:
                        self._untraced_loop(scope.qualname, root, written, event, events)
                elif event[0] == "optimizer" and (model := root_in(name, on_cpu)) is not None:
                    later = moves_of(model, events[index + 1 :], aliases) or moved_by_methods(
                        scope.qualname, written, attribute_moves, _held_as(model, events)
                    )
                    if not later:
                        # Moved elsewhere (returned, or handed to a trainer class)?  Only if
                        # the file moves some model at all, not before here in this
                        # function nor after it builds the name anew; otherwise it stays on the CPU.
                        last = model.rsplit(".", 1)[-1]
                        after = events[index + 1 :]
                        rebuilt = next((at for at, e in enumerate(after) if binds_anew(model, e)), len(after))
                        skipped = {id(e) for e in (*events[:index], *after[rebuilt:])}
                        later = [
                            (move[2], move[3])
                            for move in everywhere
                            if id(move) not in skipped
                            and (
                                (moved := str(move[1])).rsplit(".", 1)[-1] in (last, "model", "net")
                                or moved in self.part.models
                            )
                        ]
                    if later:
                        self._early(model, event, later)
                    else:
                        self._untraced_loop(scope.qualname, model, written, event, events)
            if method == "__init__":
                kept[owner] = _kept_attributes(aliases, on_cpu, unknown)
        functions = list(self.function_records.values())
        calls = {
            (dotted(n.func) or "").rsplit(".", 1)[-1]
            for n in (walk(self.module_node) if self.module_node is not None else ())
            if type(n) is cst.Call
        }
        handed_optimizer_moves(self.part, functions, calls.__contains__, self._goes_to_xla)
        split_prepares(self.part, functions, self.module_node, self.walk.resolve_dotted)

    def _early(
        self,
        model: str,
        event: OptimizerEvent | HandedOptimizerEvent,
        later: list[tuple[bool, str]],
        handed_in: bool = False,
    ) -> None:
        """The optimizer ``event`` (its call, and the argument and whether the callee only
        collects) is over ``model``, which moves later (``later``: whether to XLA, where)."""
        call, argument = event[2], event[3] if len(event) > 3 else None
        fixable = all(xla for xla, _ in later)
        where = ", ".join(dict.fromkeys(str(w) for _, w in later))
        collects = len(event) > 4 and bool(event[4])
        moved_in = frozenset(w.owner for _, w in later if isinstance(w, MovedAt) and w.owner)
        self.part.optimizer_before_move[call] = EarlyOptimizer(
            model, fixable, where, argument, collects, handed_in, moved_in
        )

    def _untraced_loop(
        self,
        qualname: str,
        model: str,
        written: str,
        event: OptimizerEvent | HandedOptimizerEvent,
        events: list[FollowedEvent],
    ) -> None:
        """An optimizer ``__init__`` builds over ``model``, held by the instance, which no move the
        tool follows moves, while another method of the class moves each element of a value of the
        instance it cannot read (``for m in self.nets.values(): m.to(device)``): XLA213."""
        held = [written] if written.startswith("self.") else _held_as(model, events)
        moves = untraced_loop_moves(qualname, held, self.function_records.values())
        if moves:
            over = ", ".join(dict.fromkeys(f"`{over}`" for over, _ in moves))
            where = ", ".join(dict.fromkeys(where for _, where in moves))
            self.part.untraced_parameters[event[2]] = UntracedParameters(model, f"`{model}`", where, over)

    def _built_again(self, optimizer: cst.Call | None, after: list[FollowedEvent]) -> bool:
        """The name ``optimizer`` is bound to is bound to another optimizer after a later move (the
        groups collected again after ``model.cuda()``): the one built before it is dropped."""
        target = None if optimizer is None else self.call_targets.get(optimizer)
        moved = next((at for at, e in enumerate(after) if e[0] == "move"), None)
        if target is None or moved is None:
            return False
        return any(
            e[0] in ("untraced", "optimizer") and self.call_targets.get(self.filled_by.get(e[2], e[2])) == target
            for e in after[moved + 1 :]
        )

    def _untraced(self, name: str, event: UntracedEvent, on_cpu: set[str], after: list[FollowedEvent]) -> None:
        """An optimizer built from ``name``, which the tool cannot follow (bound here), or
        which is a tensor of a model (``model.weight``), or a callable it cannot read,
        handed ``name``, whose result feeds an optimizer, while a model of this function
        is on the CPU and moves later here: its parameters may be stale."""
        _, _, call, origin, bound = event
        root = root_in(name, on_cpu)
        if root is None and (origin or not bound):
            return  # handed no model on the CPU, or a parameter of the function
        candidates = {root} if root is not None else on_cpu
        later = [(e[1], e[3]) for e in after if e[0] == "move" and e[1] in candidates]
        if not later or self._built_again(call, after):
            return
        model = later[0][0]
        source = (
            f"{origin}, handed `{name}`,"
            if origin
            else f"`{name}`, a tensor of `{root}`,"
            if root is not None and root != name
            else f"`{name}`, which the tool cannot trace,"
        )
        where = ", ".join(dict.fromkeys(str(w) for m, w in later if m == model))
        self.part.untraced_parameters[call] = UntracedParameters(model, source, where)


def _kept_attributes(aliases: dict[str, str], on_cpu: set[str], unknown: set[str]) -> tuple[set[str], set[str]]:
    """The attributes of ``self`` an ``__init__`` leaves on a model it built and did not move
    (``self.model = Net()``), and on one it was handed (``self.model = model``)."""
    built = {name for name in on_cpu if name.startswith("self.")}
    built |= {attr for attr, source in aliases.items() if attr.startswith("self.") and source in on_cpu}
    handed = {name for name in unknown if name.startswith("self.")}
    handed |= {attr for attr, source in aliases.items() if attr.startswith("self.") and source in unknown}
    return built, handed


def _held_as(name: str, events: list[FollowedEvent]) -> list[str]:
    """The attributes of the instance bound to ``name`` in the scope (``self.mac = mac``): the
    same module, which the class's other methods move through them."""
    return [str(e[1]) for e in events if e[0] == "alias" and e[2] == name and str(e[1]).startswith("self.")]


def _same_parameters(resolve: Callable[[str], str | None], event: ModelEvent) -> str | ModelEvent | None:
    """For ``name = torch.jit.script(...)`` or ``torch.compile(...)`` (a module over the same
    parameters, where its argument is): the name it is handed, or the event of the module it is
    built over (``torch.compile(Net().to(device))``: ``Net()``, moved); None for any other call."""
    _, name, constructor, moved, call = event
    if resolve(constructor) not in SAME_PARAMETER_WRAPPERS or not call.args:
        return None
    core = call.args[0].value
    while (
        type(core) is cst.Call
        and type(attribute := core.func) is cst.Attribute
        and attribute.attr.value in ("to", "cuda", "float", "double", "train", "eval")
    ):
        if moved is None and attribute.attr.value in ("to", "cuda"):
            moved = core
        core = attribute.value
    if moved is None and (held := dotted(core)) is not None:
        return held
    if type(core) is cst.Call and (inner := dotted(core.func)) is not None:
        return ("model", name, inner, moved, core)
    return None
