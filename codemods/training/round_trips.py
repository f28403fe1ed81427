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
file or another module of the project) is reported at the call.  An optimizer built again after
the move back holds the new parameters: no finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, names_the_cpu, walk
from codemods.engine.positions import code_of
from codemods.training.early_optimizers import EarlyOptimizers, _canonical
from codemods.training.facts import RoundTrip

if TYPE_CHECKING:
    from codemods.training.records import _Scope


@dataclass
class _Held:
    """What a scope knows of the modules optimizers hold, in the order of its events."""

    aliases: dict[str, str] = field(default_factory=dict)  # ``self.encoder`` -> ``encoder``
    wraps: dict[str, set[str]] = field(default_factory=dict)  # ``self.model`` -> {``encoder``}
    optimizers: dict[str, str] = field(default_factory=dict)  # a module -> the optimizer over it

    def copy(self) -> _Held:
        return _Held(dict(self.aliases), {k: set(v) for k, v in self.wraps.items()}, dict(self.optimizers))

    def canonical(self, name: str) -> str:
        return _canonical(name, self.aliases)

    def optimizer_of(self, name: str) -> str | None:
        """The optimizer that steps ``name``'s parameters: it holds ``name``, a module that
        holds it (a submodule, or a module built over it) or a submodule of it."""
        for module, optimizer in self.optimizers.items():
            if self.holds(module, name):
                return optimizer
        return None

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

    def _round_trips(self, scopes: list[_Scope]) -> None:
        part = self.part
        if not (part.all_loops or part.optimizer_steps or part.step_callables or part.training_callables):
            return  # the file trains nothing: no optimizer steps what it moves
        built_by = {
            sub: target for call, target in self.call_targets.items() if part.is_optimizer(target) for sub in walk(call)
        }
        # A method starts from what its class's ``__init__`` left: ``self.optim`` over ``self.model``.
        inits = {
            scope.qualname.removesuffix(".__init__"): scope for scope in scopes if scope.qualname.endswith(".__init__")
        }
        after_init = {cls: self._trips_in(init, built_by, _Held()) for cls, init in inits.items()}
        for scope in scopes:
            if scope.qualname.endswith(".__init__"):
                continue
            start = after_init.get(scope.qualname.rpartition(".")[0])
            self._trips_in(scope, built_by, start.copy() if start is not None else _Held())

    def _trips_in(self, scope: _Scope, built_by: dict[cst.CSTNode, str], held: _Held) -> _Held:
        """Record the round trips of ``scope``'s events; what it holds at its end."""
        on_cpu: dict[str, tuple[cst.Call, str, str]] = {}  # module -> its move to the CPU, as written, optimizer
        found: dict[cst.Call, str] = {}  # this scope's round trips: the move to the CPU -> the module
        for event in scope.events:
            kind = event[0]
            if kind == "collect":
                source = dotted(event[2])  # type: ignore[arg-type]  # an event is a tuple[object, ...] whose items' types depend on its kind (event[0])
                if source is not None:
                    held.aliases[str(event[1])] = held.canonical(source)
                else:
                    held.aliases.pop(str(event[1]), None)
            elif kind == "wraps":
                kept = self._kept_arguments(str(event[2]), event[3])  # type: ignore[arg-type]  # an event is a tuple[object, ...] whose items' types depend on its kind (event[0])
                held.wraps[held.canonical(str(event[1]))] = {held.canonical(name) for name in kept}
            elif kind == "optimizer" and (optimizer := built_by.get(event[2])) is not None:  # type: ignore[call-overload]  # an event is a tuple[object, ...] whose items' types depend on its kind (event[0])
                module = held.canonical(str(event[1]))
                held.optimizers[module] = optimizer
                for call in [call for call, moved in found.items() if held.holds(module, moved)]:
                    del self.part.round_trips[call]  # built again after the move back: it holds the new ones
                    del found[call]
            elif kind == "cpu" or (kind == "move" and names_the_cpu(arg_value(event[3], 0, "device"))):  # type: ignore[arg-type]  # an event is a tuple[object, ...] whose items' types depend on its kind (event[0])
                move = event[2] if kind == "cpu" else event[3]
                assert isinstance(move, cst.Call)
                module = held.canonical(str(event[1]))
                if (optimizer := held.optimizer_of(module)) is not None:
                    on_cpu.setdefault(module, (move, str(event[1]), optimizer))
            elif kind == "move" and (module := held.canonical(str(event[1]))) in on_cpu:
                self._note_round_trip(module, on_cpu.pop(module), f"`{code_of(event[3])}`", found)  # type: ignore[arg-type]  # an event is a tuple[object, ...] whose items' types depend on its kind (event[0])
            elif kind == "call":
                # A helper handed the module moves it (back), or moves it to the CPU and back itself.
                for moved in self._argument_events(str(event[1]), event[2], False, round_trips=True):  # type: ignore[arg-type]  # an event is a tuple[object, ...] whose items' types depend on its kind (event[0])
                    module = held.canonical(str(moved[1]))
                    if moved[0] == "cpu" and (optimizer := held.optimizer_of(module)) is not None:
                        on_cpu.setdefault(module, (event[2], str(moved[1]), optimizer))  # type: ignore[arg-type]  # an event is a tuple[object, ...] whose items' types depend on its kind (event[0])
                    elif moved[0] == "move" and module in on_cpu:
                        self._note_round_trip(module, on_cpu.pop(module), str(moved[3]), found)
        return held

    def _note_round_trip(
        self, module: str, trip: tuple[cst.Call, str, str], back: str, found: dict[cst.Call, str]
    ) -> None:
        move, written, optimizer = trip
        self.part.round_trips[move] = RoundTrip(written, optimizer, back)
        found[move] = module
