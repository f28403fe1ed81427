"""Which loop drives each optimizer step (obligation 4 of SPEC section 5: one step
barrier per optimizer step, in the loop that drives it, wherever that loop lives).

A step outside any loop of its own function is driven by whatever calls that function:
a training loop of this file (which gets the barrier, or has one, or feeds from a device
loader), code of this file that runs it once outside loops (the barrier goes right after
the step), or a loop of another file of the project.  Calls are followed through the
functions and methods of this file (``self.update()``, ``agent.update()`` with ``agent =
Agent()``), and into other project modules through their summaries.  A step that nothing
here drives, in a file that no other file of the run imports, is an error: its graph
would never be cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, lone_call
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis
from codemods.project.receivers import CONTAINER_METHODS
from codemods.targets import spellings
from codemods.training.facts import UndrivenStep
from codemods.training.step_guards import branch_not_taken

if TYPE_CHECKING:
    from codemods.facts import Facts
    from codemods.project.module_summary import Found
    from codemods.training.facts import TrainingFacts
    from codemods.training.records import _Function, _Loop, _Scope


class StepDrivers(Analysis):
    """The part of TrainingAnalysis that follows calls from loops to the steps they run."""

    facts: Facts
    part: TrainingFacts
    function_records: dict[int, _Function]
    loop_records: dict[int, _Loop]
    classes: set[str]
    instances: dict[str, str]
    used_outside_loops: set[str]
    stepped_members: set[str]  # loop variables whose loop steps each member (loop_plans.py)
    next_statement: dict[int, cst.BaseStatement]
    # (statement or None, the step or the call, its function or None, what it steps or calls, call site kind)
    step_sites: list[tuple[cst.SimpleStatementLine | None, cst.Call, _Function | None, str, str]]
    # Functions handed by name to a callable: (the loop or function of the call, the callable,
    # the index of the argument or -1, its keyword or None, the name handed).
    handed_functions: list[tuple[_Loop | _Function, str, int, str | None, str]]

    module_scope: _Scope
    optimizer_classes: dict[str, str]  # optimizer classes of this file: name -> qualified name
    _methods_defined: frozenset[str] | None = None  # (_method_names)

    if TYPE_CHECKING:

        def _local_callable(self, callee: str) -> _Function | None: ...

        def _steps(self, receivers: list[str]) -> bool: ...

        @property
        def _framework_drives_training(self) -> bool: ...

    # -- calls to functions of this file -------------------------------------------------

    def _by_name(self) -> dict[str, list[_Function]]:
        found: dict[str, list[_Function]] = {}
        for fn in self.function_records.values():
            found.setdefault(fn.name, []).append(fn)
        return found

    def local_targets(self, callee: str, by_name: dict[str, list[_Function]]) -> list[_Function]:
        """The functions of this file that calling ``callee`` may run: ``helper``,
        ``self.update``, ``agent.update`` where ``agent = Agent(...)``, ``Agent.update``;
        a method called on something of unknown type (a parameter) by its name (a method
        of a class, not a function nested in another: ``metrics.update({...})`` does not
        run the ``def update(engine, batch)`` of an ignite script)."""
        head, _, name = callee.rpartition(".")
        candidates = by_name.get(name, [])
        if not candidates or head in self.stepped_members:
            return []
        if head == "":  # a bare name runs a function, never a method (``step`` a variable, an import)
            return [fn for fn in candidates if fn.qualname.rpartition(".")[0].rpartition(".")[2] not in self.classes]
        if head in ("self", "cls"):
            return candidates
        owner = self.instances.get(head, head if head in self.classes else None)
        if owner is not None:
            exact = [fn for fn in candidates if fn.qualname == f"{owner}.{name}"]
            return exact or [fn for fn in candidates if "." in fn.qualname]  # inherited
        if (
            self.part.is_optimizer(head)
            or self.part.is_scheduler(head)
            or head in self.facts.amp.scaler_names
            or "scaler" in head.rpartition(".")[2].lower()  # ``self._scaler.step(optimizer)``
        ):
            return []
        if head in self.instances or self.walk.analysis(ProjectAnalysis).origin(callee) is not None:
            return []
        return [fn for fn in candidates if fn.qualname.rpartition(".")[0].rpartition(".")[2] in self.classes]

    def inherited_callee(self, callee: str, owner: str) -> str | None:
        """``self.backward`` called in a method (``owner``, its qualified name) of a class of this
        file: ``Sys.backward``, which ProjectAnalysis follows to the method the class inherits from a
        project class of another module (nothing where the class or a base of this file defines
        it); None for any other callee."""
        head, _, method = callee.partition(".")
        cls = owner.rpartition(".")[0]
        if head != "self" or not method or "." in method or cls not in self.walk.analysis(ProjectAnalysis).part.classes:
            return None
        return f"{cls}.{method}"

    def step_origins(self, callee: str, owner: str = "") -> list[Found]:
        """The project callables that calling ``callee`` may run (ProjectAnalysis.origins); for a
        method of a receiver whose class the tool cannot tell (``model = build_model(opt)``, a
        registry's class; a parameter), the project's methods of that name that train
        (ProjectAnalysis.named_origins), unless this file defines a method of that name (followed
        here), or the receiver is an optimizer, a scheduler or a gradient scaler."""
        project = self.walk.analysis(ProjectAnalysis)
        found = project.origins(callee)
        if not found and owner and (inherited := self.inherited_callee(callee, owner)) is not None:
            # only where ``self.backward`` names nothing else: ``self._opt(loss)`` with ``self._opt
            # = Optimizer(...)`` is the instance's ``__call__``, never an inherited attribute
            found = project.origins(inherited)
        if any(f.summary is None or f.summary.trains(f.name) for f in found):
            return found
        head, _, method = callee.rpartition(".")
        if (
            not head
            or head in self.instances
            or self.part.is_optimizer(head)
            or self.part.is_scheduler(head)
            or head in self.facts.amp.scaler_names
            or method in self._method_names()
        ):
            return []
        return [*found, *project.named_origins(callee)]

    def _method_names(self) -> frozenset[str]:
        """The names of the methods this file defines (and of functions nested in others): made
        once, when first asked after the walk (every function is recorded by then)."""
        if self._methods_defined is None:
            self._methods_defined = frozenset(fn.name for fn in self.function_records.values() if "." in fn.qualname)
        return self._methods_defined

    def _external_step(self, callee: str, owner: str = "", optimizer: bool = False) -> tuple[bool, bool, str]:
        """Calling ``callee`` (in ``owner``, a function's qualified name) runs a training step of
        another project module (``optimizer``: one that steps an optimizer, not only a backward
        pass): (whether it does, whether that callable ends the step with the barrier itself,
        where it is)."""
        for found in self.step_origins(callee, owner):
            if found.summary is None:
                continue
            if found.summary.steps_optimizer(found.name) if optimizer else found.summary.runs_step(found.name):
                return True, found.summary.syncs(found.name), f"`{found.name}` ({found.summary.path})"
        return False, False, ""

    def note_driven(self) -> None:
        """The step callables of other project modules that this file calls: it drives
        them (a loop of its own, or a step function whose call it answers for)."""
        project = self.walk.analysis(ProjectAnalysis)
        if project.part.context.test_file():
            return  # a unit test that runs a step once is no loop that drives it
        called = [
            *((name, "") for name in self.used_outside_loops),
            *((name, loop.owner) for loop in self.loop_records.values() for name in loop.called),
            *((name, fn.qualname) for fn in self.function_records.values() for name in fn.called),
        ]
        for callee, owner in dict.fromkeys(called):
            for found in self.step_origins(callee, owner):
                if found.summary is not None and found.summary.runs_step(found.name):
                    self.part.driven_callables.add((found.summary.path, found.name))
        # A step callable handed to a project callable that calls that parameter
        # (``train_one_epoch(..., loss_scaler)`` whose loop calls ``loss_scaler(...)``).
        for call, callee in project.calls:
            for found in project.origins(callee):
                if found.summary is None:
                    continue
                for index, param in found.summary.parameters_called(found.name):
                    for handed in self._handed(call, index, param):
                        if handed.summary is not None and handed.summary.runs_step(handed.name):
                            self.part.driven_callables.add((handed.summary.path, handed.name))

    def _handed(self, call: cst.Call, index: int, param: str) -> list[Found]:
        """The project callables that ``call`` hands as parameter ``param`` (at ``index``)."""
        project = self.walk.analysis(ProjectAnalysis)
        for position, arg in enumerate(call.args):
            if arg.star:
                return []
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == param or (keyword is None and position == index):
                name = dotted(arg.value)
                return project.origins(name) if name is not None else []
        return []

    def follow_instances_into_parameters(self) -> None:
        """A function of this file handed an instance (``run(agent, env)`` with ``agent =
        Agent()``) calls its methods through its parameter (``learner.update()``): the
        parameter is that instance's kind too, when every call agrees."""
        project = self.walk.analysis(ProjectAnalysis)
        kinds: dict[str, set[tuple[str, str] | str]] = {}
        scopes = [self.module_scope, *self.function_records.values()]
        for scope in scopes:
            for event in scope.events:
                if event[0] != "call":
                    continue
                fn = self._local_callable(str(event[1]))
                if fn is None:
                    continue
                call = event[2]
                assert isinstance(call, cst.Call)
                for param, arg in zip(fn.params, call.args):
                    if arg.keyword is not None or arg.star:
                        break
                    name = dotted(arg.value)
                    kind = self.instances.get(name) if name is not None else None
                    built = project.built_by.get(name) if name is not None and kind is None else None
                    if kind is not None or built is not None:
                        kinds.setdefault(param, set()).add(kind or built)  # type: ignore[arg-type]  # kind or built: one of them is not None (checked on the line above)
        for param, found in kinds.items():
            if len(found) != 1 or param in self.instances or param in project.built_by:
                continue
            (only,) = found
            if isinstance(only, str):
                self.instances[param] = only
            else:
                project.learn_instance(param, only)

    def note_handed(self, scope: _Loop | _Function | None, call: cst.Call) -> None:
        """A call in a loop or a function that hands functions on by name (``gpu_timer(train_step)``):
        what it may run through them, decided once every function is known (``follow_handed``)."""
        func = dotted(call.func) if scope is not None else None
        for index, arg in enumerate(call.args):
            if scope is not None and func is not None and not arg.star and type(arg.value) is cst.Name:
                keyword = arg.keyword.value if arg.keyword is not None else None
                self.handed_functions.append((scope, func, -1 if keyword else index, keyword, arg.value.value))

    def follow_handed(self, by_name: dict[str, list[_Function]]) -> None:
        """A function of this file handed to one of its functions that calls that parameter
        (``result = closure()``) runs where that call runs: the loop that calls
        ``gpu_timer(train_step)`` drives the step in ``train_step``."""
        for scope, func, index, keyword, name in self.handed_functions:
            if not by_name.get(name):
                continue
            for fn in self.local_targets(func, by_name):
                param = keyword if keyword is not None else fn.params[index] if index < len(fn.params) else None
                if param is not None and param in fn.called and name not in scope.called:
                    scope.called.append(name)

    def note_factories(self) -> None:
        """Functions that return a function defined in their body (``return train``)."""
        qualnames = {fn.qualname for fn in self.function_records.values()}
        for fn in self.function_records.values():
            if fn.node is None or not isinstance(fn.node.body, cst.IndentedBlock):
                continue
            for statement in fn.node.body.body:
                if not isinstance(statement, cst.SimpleStatementLine):
                    continue
                for small in statement.body:
                    if isinstance(small, cst.Return) and isinstance(small.value, cst.Name):
                        inner = f"{fn.qualname}.{small.value.value}"
                        if inner in qualnames:
                            self.part.factories[fn.qualname] = inner
                            self._note_step_switch(fn, inner)

    def _note_step_switch(self, factory: _Function, inner: str) -> None:
        """``get_step_fn(sde, train)`` whose inner function steps only under ``if train:``."""
        stepping = next((f for f in self.function_records.values() if f.qualname == inner), None)
        switches = stepping.step_switches if stepping is not None else None
        for index, param in enumerate(factory.params):
            if switches and param in switches:
                self.part.factory_switches[factory.qualname] = (index, param)

    def note_called_parameters(self) -> None:
        """Functions whose training loops (which get the barrier, or have one) call a
        parameter of theirs: a step callable handed there is driven by that loop."""
        in_loops: dict[str, set[str]] = {}
        for loop in self.loop_records.values():
            if loop.node in self.part.all_loops:
                in_loops.setdefault(loop.owner, set()).update(loop.called)
        for fn in self.function_records.values():
            for index, param in enumerate(fn.params):
                if param in in_loops.get(fn.qualname, ()):
                    self.part.called_parameters.add((fn.qualname, index, param))

    def note_self_driven(self) -> None:
        """Methods that a training loop of their class calls on ``self``: a subclass's
        override of one, in another module, is driven by that loop."""
        for loop in self.loop_records.values():
            class_name, _, _ = loop.owner.rpartition(".")
            if loop.node not in self.part.all_loops or class_name not in self.classes:
                continue
            for name in loop.called:
                head, _, method = name.partition(".")
                if head == "self" and method and "." not in method:
                    self.part.self_driven.add((class_name, method))

    def _overrides_driven(self, function: _Function) -> bool:
        """``function`` overrides a method that a training loop of a project base class
        (imported from another module) calls on ``self``."""
        class_name, _, method = function.qualname.rpartition(".")
        project = self.walk.analysis(ProjectAnalysis)
        for owner, base in project.bases:
            if owner != class_name:
                continue
            found = project.origin(base)
            if found is not None and found.summary is not None and found.summary.drives_override(found.name, method):
                return True
        return False

    # -- which functions run a step each call --------------------------------------------

    def step_functions(self, by_name: dict[str, list[_Function]]) -> set[str]:
        """Functions (qualified names) that run a training step each call: a backward pass
        or an optimizer step outside loops of their own, directly or through another such
        function, here or in another project module."""
        return self._closure(
            {fn.qualname for fn in self.function_records.values() if fn.backward or self._steps(fn.step_receivers)},
            by_name,
        )

    def optimizer_step_functions(self, by_name: dict[str, list[_Function]]) -> set[str]:
        """Functions that step an optimizer each call (not only a backward pass), directly
        or through another such function, here or in another project module."""
        return self._closure(
            {fn.qualname for fn in self.function_records.values() if self._steps(fn.step_receivers)},
            by_name,
            optimizer=True,
        )

    def _closure(self, steps: set[str], by_name: dict[str, list[_Function]], optimizer: bool = False) -> set[str]:
        functions = list(self.function_records.values())
        while True:
            more = {
                fn.qualname
                for fn in functions
                if fn.qualname not in steps
                and any(self.runs_step(c, steps, by_name, fn.qualname, optimizer) for c in fn.called)
            }
            if not more:
                return steps
            steps |= more

    def runs_step(
        self,
        callee: str,
        steps: set[str],
        by_name: dict[str, list[_Function]],
        owner: str = "",
        optimizer: bool = False,
    ) -> bool:
        """Calling ``callee`` (in ``owner``, a function's qualified name) runs a step (``optimizer``:
        an optimizer step, of ``steps`` here or of another module)."""
        if any(fn.qualname in steps for fn in self.local_targets(callee, by_name)):
            return True
        return self._external_step(callee, owner, optimizer)[0]

    def synced_functions(self, steps: set[str]) -> set[str]:
        """Step functions that end the step with the barrier themselves (already XLA code)."""
        return {fn.qualname for fn in self.function_records.values() if fn.qualname in steps and fn.barrier}

    def calls_synced(
        self, called: list[str], synced: set[str], by_name: dict[str, list[_Function]], owner: str = ""
    ) -> bool:
        """Some call runs a step that ends with its own barrier: the loop has its barrier."""
        for callee in called:
            if any(fn.qualname in synced for fn in self.local_targets(callee, by_name)):
                return True
            runs, syncs, _ = self._external_step(callee, owner)
            if runs and syncs:
                return True
        return False

    def note_trainers(self, by_name: dict[str, list[_Function]]) -> None:
        """Functions that run a training loop of this file through the functions they call, in a
        loop or not (``fit`` whose epoch loop calls ``self.train_epoch()``): for other files, they
        run a training loop too (``loop_runners``)."""
        if not self.part.training_callables:
            return
        trainers = set(self.part.training_callables)
        calls: dict[str, list[str]] = {}
        for fn in self.function_records.values():
            calls.setdefault(fn.qualname, []).extend(fn.called)
        for loop in self.loop_records.values():
            if loop.owner:
                calls.setdefault(loop.owner, []).extend(loop.called)
        while True:
            more = {
                owner
                for owner, called in calls.items()
                if owner not in trainers
                and any(fn.qualname in trainers for name in called for fn in self.local_targets(name, by_name))
            }
            if not more:
                self.part.loop_runners = trainers - self.part.training_callables
                return
            trainers |= more

    # -- steps no training loop drives ----------------------------------------------------

    def _reached(self, by_name: dict[str, list[_Function]]) -> set[str]:
        """Functions (qualified names) that the training loops of this file run."""
        loops = [loop for loop in self.loop_records.values() if loop.node in self.part.all_loops]
        pending = [fn for loop in loops for name in loop.called for fn in self.local_targets(name, by_name)]
        reached: set[str] = set()
        while pending:
            fn = pending.pop()
            if fn.qualname in reached:
                continue
            reached.add(fn.qualname)
            pending.extend(target for name in fn.called for target in self.local_targets(name, by_name))
        return reached

    def _optimizer_wrapper_steps(self) -> set[str]:
        """``step`` methods of classes named as optimizers (``class Optimizer:``) that step what the
        instance holds (``self._optimizer.step()``): a project's optimizer wrapper, which callers
        step as an optimizer (``self.optim.step()`` in their loops)."""
        found = set()
        for fn in self.function_records.values():
            owner = fn.qualname.rpartition(".")[0].rpartition(".")[2]
            if fn.name == "step" and owner in self.classes and "optim" in owner.lower() and fn.step_receivers:
                if all(r.startswith("self.") for r in fn.step_receivers):
                    found.add(fn.qualname)
        return found

    def place_step_barriers(self, steps: set[str], synced: set[str], by_name: dict[str, list[_Function]]) -> None:
        """Lone steps get a barrier right after them; steps that nothing here drives, in a
        file no other file of the run imports, are reported (UndrivenStep)."""
        if self._framework_drives_training or self.facts.huggingface.trainer_script:
            return
        reached = self._reached(by_name)
        # Who runs each function outside loops: the functions that call it there (a step
        # function's call is itself a step site), and code outside functions or a launcher.
        callers: dict[str, list[str]] = {}
        for caller in self.function_records.values():
            for name in caller.called:
                for fn in self.local_targets(name, by_name):
                    callers.setdefault(fn.qualname, []).append(caller.qualname)
        outside = {fn.qualname for name in self.used_outside_loops for fn in self.local_targets(name, by_name)}
        stepping = self.optimizer_step_functions(by_name)
        already_xla = self.facts.imports.table.imports_module("torch_xla")
        context = self.walk.analysis(ProjectAnalysis).part.context
        own_steps = {f"{qualname}.step" for qualname in self.optimizer_classes.values()}
        wrappers = self._optimizer_wrapper_steps()
        for statement, call, function, what, kind in self.step_sites:
            if function is None:
                continue  # module-level steps are left to the script's next host read
            if kind == "call":  # a call that runs a step of another function
                # (an optimizer step: a call that runs only a backward pass, ``scaler.backward(loss)``, is no step site)
                runs, syncs, origin = self._external_step(what, function.qualname, optimizer=True)
                local = [fn for fn in self.local_targets(what, by_name) if fn.qualname in stepping]
                if syncs or (not runs and not local) or any(fn.qualname in synced for fn in local):
                    continue
                if not runs and all(branch_not_taken(call, fn.params, fn.step_guards) for fn in local):
                    continue  # ``run("test")`` of a function that steps only under ``if phase == "train":``
            elif not self.part.is_optimizer(what) and what not in self.facts.amp.scaler_names:
                continue
            else:
                origin = ""
            if function.qualname in reached or function.qualname in synced or self._overrides_driven(function):
                continue
            if function.qualname in wrappers:
                continue  # an optimizer wrapper's own ``step``: the loop that calls ``optimizer.step()`` drives it
            runners = callers.get(function.qualname, [])
            if kind == "ported" and (function.qualname in outside or runners):
                continue  # a step in torch_xla's spelling that this file runs: its barrier is the caller's to have
            if function.qualname in outside or any(c not in steps for c in runners):
                # This file runs it outside loops, other than through a step function
                # (whose own call is the step site): the barrier goes right after the step.
                following = self.next_statement.get(id(statement)) if statement is not None else None
                barrier = lone_call(following) if following is not None else None
                if statement is not None and (
                    barrier is None or self.walk.resolve(barrier.func) not in spellings("sync")
                ):
                    self.part.lone_steps.add(statement)
                continue
            if any(c != function.qualname for c in runners):
                continue  # a step function calls it: that call is the step site
            imported = context.imported_in_run()
            held = imported or ("." in function.qualname and context.others_in_run())
            if already_xla and not held and context.mentioned_elsewhere("torch_xla") is not False:
                # Ported by hand, its driver elsewhere in an XLA project (or a project not known).  Where
                # the run's files import it, the run's loops decide (held); where no other file of the
                # project names torch_xla, the loop that calls it is still CUDA code with no barrier: the
                # import is the tool's own (a second run over its output) and the step is still undriven.
                continue
            if function.qualname in own_steps:
                continue  # an optimizer class's own ``step``: the loop that calls ``optimizer.step()`` drives it
            if context.test_file():
                continue  # a unit test runs its steps once: no graph grows
            shown = f"{what}()" if kind == "call" else f"{what}.step()"
            container = function.name in CONTAINER_METHODS  # (a loop's call counts on fewer receivers)
            self.part.undriven_steps[call] = UndrivenStep(function.qualname, shown, origin, held, imported, container)
