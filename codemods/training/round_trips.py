"""Obligation 2 of SPEC section 5 after the optimizer is built: a module whose parameters an
optimizer steps, moved to the CPU and back to the device (a checkpoint written as
``torch.save(self.encoder.cpu(), path)``, then ``self.encoder.to(self.device)``).

On CUDA, Module.cpu and Module.cuda swap each parameter's data in place, so the optimizer
keeps stepping the module's parameters.  XLA and CPU tensors cannot share data in place:
on XLA each move makes new Parameter objects, the optimizer steps the old ones and the
module stops training (checked on torch_xla 2.9).  There is no safe port: what runs
between the two moves may need the module on the CPU, and saving ``state_dict()`` instead
of the module changes what a later load gets; so XLA203 reports the move to the CPU and
names the move back.  A helper handed the module that moves it to the CPU and back itself
(SPADE's ``save_network``: ``torch.save(net.cpu().state_dict(), path); net.cuda()``, in the same
file or another module of the project) is reported at the call; so is one that moves it through
helpers handed the device (``move_all(torch.device("cpu"), net)``, ``move_all(device, net)``, with
``def move_all(device, *modules)``), and a class built with the module whose methods do so to what
``__init__`` kept (a rollout sampler's ``collect`` over ``self.policy``): reported where it is built
(``_round_trip_parameters`` records these as round trips of the argument).  An optimizer built
again after the move back holds the new parameters: no finding.  A method starts from what
``__init__`` and the class's other methods leave on ``self`` (pix2pixHD builds its optimizers in
``initialize``, over ``params = list(self.netG.parameters())``), but for a method that calls it
(it may run before the optimizer is built); ``self.save_network`` that the class inherits from a
base of another module is that base's method; and a file that keeps an optimizer on an
instance is read even where it steps nothing (another module steps ``model.optimizer_G``).
The rebuild must run after every round trip: after the move back in the same block, or in a block
around it (a rebuild under another ``if``, ``if step == milestone:`` beside ``if step % save_steps
== 0:``, runs once and leaves the later round trips with the old parameters: still reported).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, names_the_cpu, string_value, walk
from codemods.engine.positions import code_of
from codemods.project.analysis import ProjectAnalysis
from codemods.training.early_optimizers import EarlyOptimizers
from codemods.training.facts import InheritedRoundTrip, RoundTrip
from codemods.training.followed_events import canonical
from codemods.training.handed_parameters import parameter_named
from codemods.training.parameter_sources import PARAMETER_METHODS, module_calls

if TYPE_CHECKING:
    from codemods.training.records import _Function, _Loop, _Scope


@dataclass
class _Held:
    """What a scope knows of the modules optimizers hold, in the order of its events."""

    aliases: dict[str, str] = field(default_factory=dict)  # ``self.encoder`` -> ``encoder``
    wraps: dict[str, set[str]] = field(default_factory=dict)  # ``self.model`` -> {``encoder``}
    optimizers: dict[str, str] = field(default_factory=dict)  # a module -> the optimizer over it
    # ``net = getattr(self, 'net' + name)``: ``net`` -> (the attribute prefix, "" for any; the lookup as written)
    looked_up: dict[str, tuple[str, str]] = field(default_factory=dict)

    def copy(self) -> _Held:
        return _Held(
            dict(self.aliases), {k: set(v) for k, v in self.wraps.items()}, dict(self.optimizers), dict(self.looked_up)
        )

    def canonical(self, name: str) -> str:
        return canonical(name, self.aliases)

    def optimizer_of(self, name: str) -> str | None:
        """The optimizer that steps ``name``'s parameters: it holds ``name``, a module that
        holds it (a submodule, or a module built over it) or a submodule of it."""
        for module, optimizer in self.optimizers.items():
            if self.holds(module, name):
                return optimizer
        stepped = self.looked_up_modules(name)
        return self.optimizers[stepped[0]] if stepped else None

    def looked_up_modules(self, name: str) -> list[str]:
        """The modules optimizers step that ``name`` (``net``, ``net.module``) may be, where ``net`` was
        looked up on ``self`` by a built name: the instance's attributes that start with its prefix."""
        head = name.partition(".")[0]
        if head not in self.looked_up:
            return []
        prefix = self.looked_up[head][0]
        return [
            module
            for module in self.optimizers
            if module.startswith("self.") and module.split(".")[1].startswith(prefix)
        ]

    def holds(self, module: str, name: str) -> bool:
        """Moving ``name`` moves parameters of ``module`` (or of a module it is built over)."""
        return any(_related(name, within) for within in self._within(module))

    def _within(self, module: str) -> set[str]:
        found, todo = set(), [module]
        while todo:
            current = todo.pop()
            if current not in found:
                found.add(current)
                todo.extend(self.wraps.get(current, ()))
        return found


def _related(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".") or module.startswith(name + ".")


class RoundTrips(EarlyOptimizers):
    """The part of TrainingAnalysis that finds modules moved to the CPU and back after an
    optimizer was built over them."""

    _recording = True  # ``_trips_in`` records the round trips it finds
    branch_blocks: set[int]
    loop_records: dict[int, _Loop]

    def visit_If(self, node: cst.If) -> None:
        self.branch_blocks.add(id(node.body))
        if node.orelse is not None:
            self.branch_blocks.add(id(node.orelse))

    def visit_Try(self, node: cst.Try) -> None:
        self.branch_blocks.update(id(handler) for handler in node.handlers)
        if node.orelse is not None:
            self.branch_blocks.add(id(node.orelse))

    def _after_every(self, rebuild: cst.CSTNode, back: cst.CSTNode) -> bool:
        """``rebuild`` (later in the scope's events) runs whenever ``back`` ran: each block around
        it that may not run (an if's or else's, an except's, a loop's body) is around ``back`` too."""
        parents = self.walk.parents
        conditional = self.branch_blocks | {
            id(block) for loop in self.loop_records.values() for block in _loop_blocks(loop.node)
        }
        around_back: set[int] = set()
        key: int | None = id(back)
        while key is not None:
            around_back.add(key)
            key = parents.get(key)
        key = id(rebuild)
        while key is not None:
            if key in conditional and key not in around_back:
                return False
            key = parents.get(key)
        return True

    def _round_trip_parameters(self) -> None:
        """A function that moves what it is handed to the CPU and back through the project's
        helpers (``move_all(torch.device("cpu"), policy)``, then ``move_all(device, policy)``),
        and a method that does so to what its class's ``__init__`` bound to an argument
        (``self.policy`` in a sampler's ``collect``): calling the function, or building the
        class, hands the module to that round trip (recorded as a round trip of the argument)."""
        inits = {
            fn.qualname.removesuffix(".__init__"): fn for fn in self.function_records.values() if fn.name == "__init__"
        }
        for fn in self.function_records.values():
            init = inits.get(fn.qualname.rpartition(".")[0])
            on_cpu: set[tuple[int, str]] = set()
            for to_cpu, name in self._moves_in(fn):
                owner = _owner(fn, init, name)
                if owner is None:
                    continue
                if to_cpu:
                    on_cpu.add((id(owner[0]), owner[1]))
                elif (id(owner[0]), owner[1]) in on_cpu:
                    owner[0].round_trip_params.add(owner[1])

    def _moves_in(self, fn: _Function) -> list[tuple[bool, str]]:
        """The moves of ``fn``, in order: (to the CPU, the name moved), through the helpers it calls too."""
        moves: list[tuple[bool, str]] = []
        for event in fn.events:
            if event[0] == "cpu":
                moves.append((True, str(event[1])))
            elif event[0] == "move":
                moves.append((names_the_cpu(arg_value(event[3], 0, "device")), str(event[1])))
            elif event[0] == "call":
                handed = self._argument_events(str(event[1]), event[2], False, round_trips=True)
                moves.extend((e[0] == "cpu", str(e[1])) for e in handed if e[0] in ("cpu", "move"))
        return moves

    def _round_trips(self, scopes: list[_Scope]) -> None:
        part = self.part
        built_by = {
            sub: target for call, target in self.call_targets.items() if part.is_optimizer(target) for sub in walk(call)
        }
        self._self_round_trips(scopes)
        trains = part.all_loops or part.optimizer_steps or part.step_callables or part.training_callables
        if not trains and not any(target.startswith("self.") for target in built_by.values()):
            # The file trains nothing, and keeps no optimizer on an instance that another
            # module may step (``optimizer_G = model.optimizer_G``): no optimizer steps what it moves.
            return
        # A method starts from what its class's ``__init__`` left: ``self.optim`` over ``self.model``.
        inits = {
            scope.qualname.removesuffix(".__init__"): scope for scope in scopes if scope.qualname.endswith(".__init__")
        }
        after_init = {cls: self._trips_in(init, built_by, _Held()) for cls, init in inits.items()}
        methods = [scope for scope in scopes if scope.qualname and not scope.qualname.endswith(".__init__")]
        # What each other method leaves on ``self`` (an optimizer built in ``initialize`` or
        # ``setup``), read without recording its round trips: a method starts from it too.
        left = {
            scope.qualname: self._trips_in(scope, built_by, _Held(), record=False)
            for scope in methods
            if "." in scope.qualname
        }
        for scope in scopes:
            if scope.qualname.endswith(".__init__"):
                continue
            cls = scope.qualname.rpartition(".")[0]
            start = after_init[cls].copy() if cls in after_init else _Held()
            if scope.qualname in left:
                for other in methods:
                    if other is not scope and other.qualname.rpartition(".")[0] == cls and not _calls(other, scope):
                        _add_attributes(start, left[other.qualname])
            self._trips_in(scope, built_by, start)
        self._inherited_trips(scopes, after_init, left)

    def _self_round_trips(self, scopes: list[_Scope]) -> None:
        """Methods that move a module looked up on ``self`` by a built name to the CPU and back
        (CUT's ``save_networks``), whatever optimizers the class holds: a subclass (of another
        module too) whose optimizers step such an attribute strands them (``_inherited_trips``)."""
        for scope in scopes:
            if scope.qualname.count(".") != 1:
                continue
            held, on_cpu = _Held(), dict[str, tuple[cst.Call, str, str]]()
            for event in scope.events:
                if event[0] == "collect":
                    if (looked := looked_up_on_self(event[2])) is not None:
                        held.looked_up[str(event[1])] = looked
                    else:
                        held.looked_up.pop(str(event[1]), None)
                elif event[0] == "cpu" and str(event[1]).partition(".")[0] in held.looked_up:
                    on_cpu.setdefault(str(event[1]), (event[2], "", ""))
                elif event[0] == "move" and not names_the_cpu(arg_value(event[3], 0, "device")):
                    if (moved := _moved_back(str(event[1]), on_cpu)) is not None:
                        prefix, lookup = held.looked_up[moved.partition(".")[0]]
                        shown = f"`{lookup}`, `{code_of(on_cpu.pop(moved)[0])}` then `{code_of(event[3])}`"
                        self.part.self_round_trips.add((scope.qualname, prefix, shown))

    def _inherited_trips(self, scopes: list[_Scope], after_init: dict[str, _Held], left: dict[str, _Held]) -> None:
        """An optimizer over an attribute of a class (``self.optimizer_G`` over ``self.netG``) that
        inherits, from a base of this file or another module, a method moving ``getattr(self,
        'net' + name)`` to the CPU and back: reported at the optimizer's build."""
        project = self.walk.analysis(ProjectAnalysis)
        classes = project.part.classes
        built_at = {
            sub: call
            for call, target in self.call_targets.items()
            if self.part.is_optimizer(target)
            for sub in walk(call)
        }
        for cls, (bases, methods) in classes.items():
            trips: list[tuple[str, str, str, str]] = []  # (method, where, prefix, shown)
            for base in bases:
                if base in classes:
                    own = [t for t in self.part.self_round_trips if t[0].startswith(base + ".")]
                    trips += [(m, "", prefix, shown) for m, prefix, shown in own]
                elif (found := project.origin(base)) is not None and found.summary is not None:
                    trips += [
                        (m, found.summary.path, prefix, shown)
                        for m, prefix, shown in found.summary.self_round_trips
                        if m.startswith(found.name + ".")
                    ]
            trips = [t for t in trips if t[0].rpartition(".")[2] not in methods]
            if not trips:
                continue
            for scope in scopes:
                if scope.qualname.rpartition(".")[0] != cls:
                    continue
                for event in scope.events:
                    if event[0] != "optimizer" or (call := built_at.get(event[2])) is None:
                        continue
                    module = str(event[1])
                    if not module.startswith("self.") or call in self.part.inherited_round_trips:
                        continue
                    for method, where, prefix, shown in trips:
                        if module.split(".")[1].startswith(prefix):
                            optimizer = self.call_targets.get(call, "the optimizer")
                            trip = InheritedRoundTrip(module, optimizer, method, where, shown)
                            self.part.inherited_round_trips[call] = trip
                            break

    def _trips_in(self, scope: _Scope, built_by: dict[cst.CSTNode, str], held: _Held, record: bool = True) -> _Held:
        """Record the round trips of ``scope``'s events (unless ``record`` is False); what it holds at its end."""
        self._recording = record
        on_cpu: dict[str, tuple[cst.Call, str, str]] = {}  # module -> its move to the CPU, as written, optimizer
        # This scope's round trips: the move to the CPU -> the module, and the move back.
        found: dict[cst.Call, tuple[str, cst.CSTNode]] = {}
        # Names bound to modules' parameters (``params = list(self.netG.parameters())``) -> those modules.
        collected: dict[str, list[str]] = {}
        for event in scope.events:
            if event[0] == "collect":
                name, value = str(event[1]), event[2]
                # ``params = params + list(...)`` (and ``params += ...``, recorded so): collects more.
                more = type(value) is cst.BinaryOperation and dotted(value.left) == name
                source = dotted(value)
                if source is not None:
                    held.aliases[name] = held.canonical(source)
                elif not more:
                    held.aliases.pop(name, None)
                if (looked := looked_up_on_self(value)) is not None:
                    held.looked_up[name] = looked
                elif not more:
                    held.looked_up.pop(name, None)
                collected[name] = [
                    *(collected.get(name, []) if more else []),
                    *(
                        held.canonical(owner)
                        for sub, owner in module_calls(value)
                        if type(sub.func) is cst.Attribute and sub.func.attr.value in PARAMETER_METHODS
                    ),
                ]
            elif event[0] == "uses" and (optimizer := built_by.get(event[2])) is not None:
                for module in [module for name in event[1] for module in collected.get(name, ())]:
                    self._hold(held, module, optimizer, found, event[2])
            elif event[0] == "wraps":
                kept = self._kept_arguments(str(event[2]), event[3])
                held.wraps[held.canonical(str(event[1]))] = {held.canonical(name) for name in kept}
            elif event[0] == "optimizer" and (optimizer := built_by.get(event[2])) is not None:
                self._hold(held, held.canonical(str(event[1])), optimizer, found, event[2])
            elif event[0] == "cpu" or (event[0] == "move" and names_the_cpu(arg_value(event[3], 0, "device"))):
                move = event[2] if event[0] == "cpu" else event[3]
                module = held.canonical(str(event[1]))
                if (optimizer := held.optimizer_of(module)) is not None:
                    on_cpu.setdefault(module, (move, str(event[1]), optimizer))
            elif event[0] == "move" and (back := _moved_back(held.canonical(str(event[1])), on_cpu)) is not None:
                self._note_round_trip(back, on_cpu.pop(back), f"`{code_of(event[3])}`", found, event[3], held=held)
            elif event[0] == "call":
                # A helper handed the module moves it (back), or moves it to the CPU and back itself.
                complete = set()
                for moved in self._argument_events(
                    self._method_of(scope, str(event[1])), event[2], False, round_trips=True
                ):
                    module = held.canonical(str(moved[1]))
                    if moved[0] == "cpu" and (optimizer := held.optimizer_of(module)) is not None:
                        on_cpu.setdefault(module, (event[2], str(moved[1]), optimizer))
                        if len(moved) > 3:  # the callee moves it back itself
                            complete.add(module)
                    elif moved[0] == "move" and module in on_cpu:
                        self._note_round_trip(module, on_cpu.pop(module), str(moved[3]), found, event[2])
                for module in complete & on_cpu.keys():  # moved back through a helper of its own
                    self._note_round_trip(module, on_cpu.pop(module), f"`{event[1]}`", found, event[2], handed=True)
        return held

    def _hold(
        self,
        held: _Held,
        module: str,
        optimizer: str,
        found: dict[cst.Call, tuple[str, cst.CSTNode]],
        built: cst.CSTNode,
    ) -> None:
        """``optimizer`` is built over ``module``'s parameters (at ``built``): it steps them from here on."""
        held.optimizers[module] = optimizer
        for call in [
            call
            for call, (moved, back) in found.items()
            if held.holds(module, moved) and self._after_every(built, back)
        ]:
            self.part.round_trips.pop(call, None)  # built again after the move back: it holds the new ones
            del found[call]

    def _method_of(self, scope: _Scope, callee: str) -> str:
        """``self.save_network`` in a method of ``Model``, which this file does not define: the
        method ``Model`` inherits (``Model.save_network``, a base's of another module)."""
        if not callee.startswith("self.") or "." not in scope.qualname or self._local_callable(callee) is not None:
            return callee
        return scope.qualname.partition(".")[0] + callee.removeprefix("self")

    def _note_round_trip(
        self,
        module: str,
        trip: tuple[cst.Call, str, str],
        back: str,
        found: dict[cst.Call, tuple[str, cst.CSTNode]],
        back_node: cst.CSTNode,
        handed: bool = False,
        held: _Held | None = None,
    ) -> None:
        move, written, optimizer = trip
        looked = ""
        if held is not None and (modules := held.looked_up_modules(module)):
            shown = " or ".join(f"`{m}`" for m in modules[:3])
            looked = f"`{held.looked_up[module.partition('.')[0]][1]}`, which may be {shown}"
        if self._recording:
            self.part.round_trips[move] = RoundTrip(written, optimizer, back, handed, looked)
        found[move] = (module, back_node)


def _moved_back(module: str, on_cpu: dict[str, tuple[cst.Call, str, str]]) -> str | None:
    """The module moved to the CPU that moving ``module`` back moves: it, or a submodule of it
    (``net.module.cpu()``, then ``net.cuda()``)."""
    return next((moved for moved in on_cpu if moved == module or moved.startswith(module + ".")), None)


def looked_up_on_self(value: cst.BaseExpression) -> tuple[str, str] | None:
    """``getattr(self, 'net' + name)``, ``getattr(self, f"net{name}")``, ``getattr(self, name)``: an
    attribute of the instance chosen at run time, (the prefix its name starts with, "" when not
    seen; the call as written); None for anything else (``getattr(self, "netG")`` is ``self.netG``)."""
    if not (
        type(value) is cst.Call
        and type(value.func) is cst.Name
        and value.func.value == "getattr"
        and len(value.args) in (2, 3)
        and not any(a.star or a.keyword for a in value.args)
        and type(value.args[0].value) is cst.Name
        and value.args[0].value.value == "self"
    ):
        return None
    name = value.args[1].value
    if type(name) is cst.SimpleString:
        return None
    prefix = ""
    if type(name) is cst.BinaryOperation and type(name.operator) is cst.Add:
        prefix = string_value(name.left) or ""
    elif type(name) is cst.FormattedString and name.parts and type(name.parts[0]) is cst.FormattedStringText:
        prefix = name.parts[0].value
    return prefix, code_of(value)


def _loop_blocks(node: cst.CSTNode) -> list[cst.CSTNode]:
    """A loop's body and ``else`` block: they may run no time."""
    if type(node) is cst.For or type(node) is cst.While:
        return [node.body, *([node.orelse] if node.orelse is not None else [])]
    return []


def _calls(scope: _Scope, method: _Scope) -> bool:
    """``scope`` calls ``method`` of its own class (``self.setup()``): it may run before what
    ``scope`` builds."""
    name = method.qualname.rpartition(".")[2]
    return any(receiver == "self" and called == name for _, receiver, called, _ in scope.method_calls)


def _add_attributes(held: _Held, other: _Held) -> None:
    """Add to ``held`` what ``other`` (another method's end) holds of the instance's attributes."""
    held.aliases.update({k: v for k, v in other.aliases.items() if k.startswith("self.")})
    held.wraps.update({k: set(v) for k, v in other.wraps.items() if k.startswith("self.")})
    for module, optimizer in other.optimizers.items():
        if module.startswith("self.") and optimizer.startswith("self."):
            held.optimizers.setdefault(module, optimizer)


def _owner(fn: _Function, init: _Function | None, name: str) -> tuple[_Function, str] | None:
    """The function and parameter that ``name`` (moved in ``fn``) stands for: a parameter of
    ``fn``, or one its class's ``__init__`` bound to an attribute (``self.policy = policy``)."""
    if (param := parameter_named(fn, name)) is not None:
        return fn, param
    if init is not None and (param := init.bound.get(name)) is not None:
        return init, param
    return None
