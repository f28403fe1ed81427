"""What each ``.step()`` of the file is: an optimizer's step to port (known by how it was
built, by its name, or as one a class keeps on its instances), one that stays plain (under
DDP, a framework, FSDP), or one the analysis cannot tell is an optimizer's.

A step in a training loop on what the function is handed (``opt.step()`` in ``def
train(model, opt, cfg)``, or ``self.opt.step()`` where ``__init__`` binds ``self.opt = opt``),
in a file that another file of the run imports, is the step of whatever its callers hand
there: it is ported, and its finding is held until the run is converted; it stands unless a
file of the run hands that parameter an optimizer (ModuleSummary.hands_optimizers)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from codemods.engine.nodes import dotted
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis
from codemods.project.handed_wrappers import plain_stepper
from codemods.training.facts import CallerOptimizer
from codemods.training.held_steppers import held_steppers

if TYPE_CHECKING:
    import libcst as cst

    from codemods.facts import Facts
    from codemods.training.facts import OptimizerStep, TrainingFacts
    from codemods.training.records import _Function, _Loop, _Scope


class StepKinds(Analysis):
    """The part of TrainingAnalysis that sorts the file's ``.step()`` calls."""

    facts: Facts
    part: TrainingFacts
    function_records: dict[int, _Function]
    module_scope: _Scope
    instances: dict[str, str]
    step_candidates: list[tuple[cst.Call, OptimizerStep, _Loop | None, _Function | None]]

    if TYPE_CHECKING:

        @property
        def _framework_drives_training(self) -> bool: ...

        def _local_callable(self, callee: str) -> _Function | None: ...

    def sort_steps(self) -> None:
        part = self.part
        project = self.walk.analysis(ProjectAnalysis)
        fsdp_importer = project.part.context.imported_by_fsdp()
        imported = project.part.context.imported_in_run()
        for name, kind in held_steppers(
            (step.optimizer for _, step, _, _ in self.step_candidates),
            self.instances,
            part.held_steppers,
            project.origin,
        ):
            (part.schedulers if kind == "scheduler" else part.optimizers).add(name)
        defined = {f.name for f in self.function_records.values()}
        for call, step, loop, function in self.step_candidates:
            if step.optimizer not in part.optimizers and self._wrapper_step(step.optimizer, project, function):
                continue  # its own step() steps the optimizer it holds: that step is the one to port
            if part.is_optimizer(step.optimizer):
                if not _closure_positional(call, step, step.optimizer in part.optimizers, defined):
                    if step.optimizer not in part.optimizers and self._ported_wrapper_step(project):
                        continue  # a project wrapper's ``step(loss)``: the step inside it is ported where it is
                    step = replace(step, closure_index=None, other_arguments=True)
                if self.facts.distributed.ddp or self._framework_drives_training:
                    continue  # the wrapper or the framework reduces the gradients
                if self.facts.fsdp.annotation is not None:
                    part.fsdp_steps[call] = self.facts.fsdp.annotation
                elif fsdp_importer and function is not None and step.optimizer.split(".")[0] in function.params:
                    part.caller_fsdp_steps[call] = function.qualname
                else:
                    part.optimizer_steps[call] = step
            elif (
                not call.args
                and "[" not in step.optimizer  # a dict's member (``optims["gen"]``) is ported only when known
                and step.optimizer not in part.schedulers
                and loop is not None
                and loop.node in part.loops
                and not _is_scheduler_name(step.optimizer)
                and "deepspeed" not in step.optimizer.rsplit(".", 1)[-1].lower()  # an engine: XLA004's (no optimizer)
                and not self._framework_drives_training  # (a prepared optimizer reduces the gradients itself)
            ):
                handed = None
                if imported and not fsdp_importer and not self.facts.distributed.ddp:
                    handed = caller_optimizer(step.optimizer, function, self.function_records.values())
                if handed is None:
                    part.unrecognized_steps.add(call)
                else:
                    part.optimizer_steps[call] = step
                    part.caller_optimizers[call] = handed

    def _ported_wrapper_step(self, project: ProjectAnalysis) -> bool:
        """The project has an optimizer wrapper (a class, also one defined in another class) whose
        own ``step`` steps the optimizer it holds (``def step(self, loss): ...;
        self._optim.step()``), the step the port makes ``xm.optimizer_step`` where the class is.
        A ``.step(loss)`` with an argument that is no closure, on something known as an optimizer
        only by its name, is that wrapper's step, not a torch optimizer's (whose ``step(closure)``
        would call the argument).  The wrapper's class is named as one (``Optimizer``,
        ``ScheduledOptim``, ``NoamOpt``): a trainer's ``step(batch)`` is none."""
        if any(_optimizer_wrapper_step(qualname) for qualname in self.part.step_callables):
            return True
        return any(
            found.summary is not None and _optimizer_wrapper_step(found.name)
            for found in project.part.context.named_methods("step", nested=True)
        )

    def _wrapper_step(self, stepped: str, project: ProjectAnalysis, function: _Function | None) -> bool:
        """``stepped`` is an instance of a class of the project that is no torch optimizer but
        defines its own ``step()`` (``self._optim.step()`` inside, with a schedule around it):
        ``xm.optimizer_step`` on it would fail (it reduces the gradients of the instance's
        ``param_groups``, which it has not), and the step its ``step()`` makes is ported where
        the class is.  Known by the class this file builds it with, or the project callable
        behind ``stepped.step``; or, for what ``function`` is handed (``self.optim`` that
        ``__init__`` binds to its parameter ``optim``), by what this file hands that parameter or
        the run's other files hand it (only such wrappers: project/handed_wrappers.py)."""
        if "[" in stepped:
            return False
        handed = caller_optimizer(stepped, function, self.function_records.values())
        if handed is not None:
            if handed.parameter != stepped and self._handed_only_wrappers(handed):
                return True
            if project.part.context.wrapper_handed(handed.callable, handed.index, handed.parameter):
                return True
        cls = self.instances.get(stepped)
        if cls is not None:
            bases, methods = self.facts.project.classes.get(cls, ((), ()))
            return plain_stepper(bases, methods)
        found = project.origin(f"{stepped}.step")
        if found is None or found.summary is None or found.name.count(".") != 1:
            return False
        owner = found.name.split(".")[0]
        return any(plain_stepper(bases, methods) for name, bases, methods in found.summary.classes if name == owner)

    def _handed_only_wrappers(self, handed: CallerOptimizer) -> bool:
        """Each call of this file to ``handed.callable`` (a function, or a class's ``__init__``)
        hands its parameter a name this file builds with a wrapper class of its own
        (``_wrapper_step``), and there is one; a call that hands it anything else, or passes
        arguments by a star, leaves it unproven."""
        import libcst as cst

        seen = False
        for scope in [self.module_scope, *self.function_records.values()]:
            for event in scope.events:
                if event[0] != "call" or not isinstance(call := event[2], cst.Call):
                    continue
                fn = self._local_callable(str(event[1]))
                if fn is None or fn.qualname not in (handed.callable, f"{handed.callable}.__init__"):
                    continue
                if any(arg.star for arg in call.args):
                    return False
                keyword = next(
                    (a for a in call.args if a.keyword is not None and a.keyword.value == handed.parameter), None
                )
                positional = [a for a in call.args if a.keyword is None]
                arg = keyword or (positional[handed.index] if 0 <= handed.index < len(positional) else None)
                if arg is None:
                    continue  # (the parameter's default)
                cls = self.instances.get(dotted(arg.value) or "")
                bases, methods = self.facts.project.classes.get(cls or "", ((), ()))
                if cls is None or not plain_stepper(bases, methods):
                    return False
                seen = True
        return seen


def _optimizer_wrapper_step(qualname: str) -> bool:
    """``qualname`` is the ``step`` of a class named as an optimizer (``Algorithm.Optimizer.step``)."""
    owner, _, method = qualname.rpartition(".")
    return method == "step" and "opt" in owner.rpartition(".")[2].lower()


def caller_optimizer(
    stepped: str, function: _Function | None, functions: Iterable[_Function]
) -> CallerOptimizer | None:
    """What ``stepped`` is handed in as: a parameter of ``function`` (``opt``), or an attribute
    that its class's ``__init__`` binds to one of its own (``self.opt``); None: neither."""
    if function is None:
        return None
    if stepped in function.params or stepped in function.keyword_params:
        index = function.params.index(stepped) if stepped in function.params else -1
        return CallerOptimizer(function.qualname, index, stepped)
    owner, dot, attribute = function.qualname.rpartition(".")
    if not dot or not stepped.startswith("self.") or stepped.count(".") != 1:
        return None
    initializer = next((f for f in functions if f.qualname == f"{owner}.__init__"), None)
    param = initializer.bound.get(stepped) if initializer is not None else None
    if initializer is None or param is None:
        return None
    return CallerOptimizer(owner, initializer.params.index(param) if param in initializer.params else -1, param)


def _closure_positional(call: cst.Call, step: OptimizerStep, built_by_torch: bool, defined: set[str]) -> bool:
    """A positional first argument of ``x.step(arg)`` is a closure (what xm.optimizer_step
    passes on as ``closure=``) when ``x`` is built by a torch.optim class (``step(closure=None)``),
    or the argument is a lambda, a function of the file or a name that says it is one
    (``closure``); on a project's own optimizer wrapper (``MultiOptimizer.step(key)``) it may be
    anything else.  True without such an argument."""
    import libcst as cst

    if step.closure_index is None or call.args[step.closure_index].keyword is not None or built_by_torch:
        return True
    value = call.args[step.closure_index].value
    return type(value) is cst.Lambda or (
        type(value) is cst.Name and (value.value in defined or "closure" in value.value.lower())
    )


def _is_scheduler_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1].lower()
    return any(word in last for word in ("sched", "lr", "warmup"))
