"""Training: models, optimizers and schedulers; which loops train (or evaluate on the
device) and what each needs (planned in loop_plans.py); optimizer steps and closures;
optimizers built before their model moves to the device.

What the analysis collects as the walk goes is TrainingWalk's, training_walk.py; this module
decides from it once the walk is done (``finish``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.library_models import library_builder, names_a_placement
from codemods.engine.nodes import in_source_order, walk
from codemods.project.analysis import ProjectAnalysis
from codemods.training.bound_methods import bound_steps
from codemods.training.device_less import builds_model, names_a_device, project_may_place
from codemods.training.loop_plans import owned_by
from codemods.training.training_walk import TrainingWalk

if TYPE_CHECKING:
    from codemods.training.records import ModelEvent, _Function


class TrainingAnalysis(TrainingWalk):
    name = "training"
    reads = (
        "imports",
        "device",
        "amp",
        "distributed",
        "entry",
        "fsdp",
        "huggingface",
        "lightning",
        "loaders",
        "project",
    )

    # -- results ----------------------------------------------------------------------------

    @property
    def _framework_drives_training(self) -> bool:
        """Accelerate, Lightning or Fabric runs the steps: their XLA support places the
        barriers, wraps the loaders and steps the optimizers."""
        return bool(self.facts.huggingface.accelerators) or self.facts.lightning.drives_training

    def _steps(self, receivers: list[str]) -> bool:
        """Some receiver of a ``.step()`` is an optimizer or a gradient scaler."""
        scalers = self.facts.amp.scaler_names
        return any(self.part.is_optimizer(r) or r in scalers for r in receivers)

    def finish(self) -> None:
        part = self.part
        for loop, checks, barrier in self.checked_barriers:
            loop.barrier = loop.barrier or self._barrier_stays(checks, barrier)
        for name, func_name in self.model_candidates:
            if func_name in self.module_classes:
                part.models.add(name)
        for loop in self.loop_records.values():
            for call, callee, arguments in loop.handed:
                if any(part.is_optimizer(name) for name in arguments):
                    part.step_wrappers[call] = callee
        for name, func_name in self.model_candidates:
            if func_name in self.classes:
                self.instances[name] = func_name
        self.follow_instances_into_parameters()
        self.note_factories()
        by_name = self._by_name()
        self.follow_handed(by_name)
        steps = self.step_functions(by_name)
        synced = self.synced_functions(steps)
        part.step_callables |= steps | bound_steps(self, steps, by_name)
        # Of those, the ones that step something other than a scheduler (``self.opt.step()`` of an
        # optimizer handed in), not only a backward pass (``LossScaler.backward``): for other files' XLA306.
        stepping = steps & self._closure(
            {
                fn.qualname
                for fn in self.function_records.values()
                if any(not part.is_scheduler(r) for r in fn.step_receivers)
            },
            by_name,
            optimizer=True,
        )
        part.optimizer_step_callables |= stepping | bound_steps(self, stepping, by_name)
        part.synced_callables |= synced
        optimizers = set(self.optimizer_classes.values())
        within = self._forward_computation() | self.generators | optimizers | self.autograd_functions
        part.loops_within_a_step = {loop.node for loop in self.loop_records.values() if owned_by(loop.owner, within)}
        part.optimizers |= {r.iterates[0] for r in self.loop_records.values() if r.iterates[1] in self.optimizer_lists}
        # ``for s in self.lr_schedulers: s.step()``: each is a scheduler (its step trains nothing)
        part.schedulers |= {
            r.iterates[0]
            for r in self.loop_records.values()
            if r.iterates[0] and part.is_scheduler(r.iterates[1]) and r.iterates[1] not in self.optimizer_lists
        }
        self.part_loops, self.part_loop_outers = set(), set()
        self.note_part_loops(steps, by_name)
        for loop in self.loop_records.values():
            # An optimizer's own update (over its param groups) is no loop to plan, nor one of a custom
            # autograd function's forward or backward (over its layers: it runs inside a backward pass).
            if not owned_by(loop.owner, optimizers | self.autograd_functions):
                self._plan_loop(loop, steps, synced, by_name)
        self.note_locked_steps(self.module_node, steps, by_name)
        self.note_trainers(by_name)
        self.sort_steps()
        for fn in self.function_records.values():
            handed = _handed_to_a_step(fn.qualname, self.closure_names) or self._returned_closure(fn)
            if handed and fn.backward and not fn.barrier and fn.node:
                part.closures.add(fn.node)
        self._input_guards()
        self._device_less()
        self._round_trip_parameters()
        self._follow_optimizer_helpers()
        self._callables_summary()
        self._optimizers_before_moves([self.module_scope, *self.function_records.values()])
        self.place_step_barriers(steps, synced, by_name)
        self.note_called_parameters()
        self.note_self_driven()
        self.note_unprepared_overrides()
        self.note_driven()
        self._moves_after_own_optimizers([self.module_scope, *self.function_records.values()])
        self._note_stale_parameter_lists([self.module_scope, *self.function_records.values()])
        self._note_returned_optimizers()
        self._moves_after_returned_optimizers([self.module_scope, *self.function_records.values()])
        self._round_trips([self.module_scope, *self.function_records.values()])

    def _device_less(self) -> None:
        """The file trains, but nothing in it moves anything or names a device, nothing it
        takes from the project's own modules may (see device_less.project_may_place), and it is not
        XLA, Accelerate, Lightning or Trainer code already.  Whether it names a device is recorded for
        every module: its summary tells the files that import it."""
        facts, device = self.facts, self.facts.device
        trains = [  # in the order of the code
            *(loop.node for loop in self.loop_records.values() if loop.node in self.part.all_loops),
            *(fn.node for fn in self.function_records.values() if fn.node in self.part.closures),
        ]
        followed = self.device.followed.calls  # ``h.to(x.device)``: where the input already is
        self.part.names_device = any(m[2] not in followed for m in self.moves) or names_a_device(self.device, device)
        project = self.walk.analysis(ProjectAnalysis)
        built = self._stepped_model_build() if trains else None
        if (
            built is None
            or self.part.names_device
            or facts.imports.xla_optional
            or project_may_place(facts.imports.project_names, project)
        ):
            return
        if self._framework_drives_training or facts.huggingface.trainer_script or facts.distributed.ddp:
            return
        if not facts.imports.table.imports_module("torch_xla"):
            self.part.device_less = trains[0]
            package = library_builder(
                project, built[2], self.walk.resolve_dotted(built[2]), built[4], names_a_placement
            )
            if package is not None:
                self.part.device_less_library = (built[2], package)

    def _stepped_model_build(self) -> ModelEvent | None:
        """How some function (or the module) builds a model that it builds an optimizer
        over: the script owns its model (a training function handed one may get it on the
        device); or how the file builds a model class of its own that builds an optimizer
        over its own parameters (``self.optimizer = optim.Adam(self.parameters())``, an RL
        agent).  None: neither."""
        scopes = [self.module_scope, *self.function_records.values()]
        self_optimizing = {
            scope.qualname.rsplit(".", 1)[0]
            for scope in scopes
            if "." in scope.qualname and any(e[0] == "optimizer" and e[1] == "self" for e in scope.events)
        }
        for scope in scopes:
            events = [*scope.events, *scope.lookup_builds]  # (``getattr(model, args.model)(adj)``, too)
            built = {e[1]: e for e in events if e[0] == "model" and self._builds_model(e[2], e[4])}
            if stepped := next((built[e[1]] for e in scope.events if e[0] == "optimizer" and e[1] in built), None):
                return stepped
            for e in scope.events:
                if e[0] == "model" and e[2] in self_optimizing and self._is_constructor(e[2]):
                    return e
        return None

    def _builds_model(self, callee: str, call: cst.Call) -> bool:
        """See device_less.builds_model."""
        project, qualified = self.walk.analysis(ProjectAnalysis), self.walk.resolve_dotted(callee)
        return builds_model(project, callee, qualified, call, self._is_constructor(callee))

    def _input_guards(self) -> None:
        """Moves that only run when a CUDA index is given: on CUDA the other path ran the
        model under DataParallel, which moved the inputs itself.  Where every model move
        of the file goes to the XLA device, and some model move is not under such a guard,
        the inputs must always follow."""
        guards = self.facts.device.index_guards
        if not guards:
            return
        guarded = {id(sub) for guard in guards for sub in walk(guard.body)}
        model_moves = [
            (device, node)
            for moved, device, node in self.moves
            if moved in self.part.models or moved.rsplit(".", 1)[-1] in ("model", "net")
        ]
        follows = (
            bool(model_moves)
            and all(self._goes_to_xla(device) for device, _ in model_moves)
            and any(id(node) not in guarded for _, node in model_moves)
        )
        for guard in guards:
            self.part.input_guards[guard] = follows

    def _returned_closure(self, fn: _Function) -> bool:
        """A closure its enclosing function returns (``make_closure(...)``), named like one a step
        hands: the step's scope holds the factory's result, not the definition."""
        if not any(fn.name == handed for _, handed in self.closure_names):
            return False
        scope = fn.qualname.rpartition(".")[0]
        return any(
            type(node) is cst.Return and type(node.value) is cst.Name and node.value.value == fn.name
            for outer in self.function_records.values()
            if outer.qualname == scope and outer.node is not None
            for node in in_source_order(outer.node.body, enter_scopes=False)
        )


def _handed_to_a_step(qualname: str, closures: set[tuple[str, str]]) -> bool:
    """The function ``qualname`` is the one a ``step(closure)`` hands by its name: defined in the
    step's scope or one that encloses it (another function's ``closure``, only called, is none)."""
    outer, _, name = qualname.rpartition(".")
    return any(
        name == handed and (outer == scope or not outer or scope.startswith(outer + ".")) for scope, handed in closures
    )
