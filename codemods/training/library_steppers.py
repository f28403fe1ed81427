"""Obligations 1 and 4 of SPEC section 5 for an optimizer that a package the tool does not follow
(``apis.unfollowed_package``) is handed and steps itself: ``somelib.fit(model, optimizer, loader)``,
``trainer = somelib.Trainer(model=model, optimizer=opt)`` then ``trainer.train()``, or a method of
an object such a package built (``engine = Engine()``, ``engine.train(h, loader, 10, opt)``).  The file
builds the optimizer over a model's parameters, or binds it from a call of a function of the file that
returns one it builds (``create_optimizer(lr)``: wide-residual-networks), or of a project function of another
module that builds one over an argument's parameters (``opt = build_optimizer(model, cfg)``:
ModuleSummary.optimizer_builders), or hands by the keyword ``optimizer=`` or ``optimizers=`` (a registry's
builder: llm-foundry), and no code the tool sees steps it: the library runs the
steps, with its own device choice and no step barrier, and the port cannot prove either (XLA307, at
the call that hands it).

Nothing is said where the optimizer may be stepped by code the tool sees or converts: a
``.step()`` on it or on what it is bound to (``for o in (opt_g, opt_d): o.step()``), a call that
hands it to this file's code, to the project's, to a method of a value the tool cannot tell
(``scaler.step(opt)``, ``accelerator.prepare(opt)``; an object a followed package or the project built) or to a followed package's call that is no
scheduler (``xm.optimizer_step(opt)``, ``functools.partial(train, opt)``), a return of it (a
factory), or a library call whose result the file steps (``opt = Lookahead(base)``).  Nor where a
followed framework drives the file's training (Lightning, Accelerate, the Transformers Trainer:
their rules), for Composer's Trainer handed its TPU device, for a library of ``library_apis.LIBRARY_LOOPS`` (XLA307's table) or of
``apis.CUDA_ONLY_PACKAGES`` (XLA004), for a call that by its name only schedules the learning
rate, saves, loads or logs, or in a test file; nor for an attribute (``self.optimizer``) of a file
that other files of the run import, which may step it.  Names are matched by their last part across the
file (``self.optimizer`` and ``optimizer``), which says "may be stepped" more often, never less."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis, library_apis
from codemods.engine.nodes import arg_value, dotted
from codemods.engine.walk import Analysis, Walk
from codemods.project.analysis import ProjectAnalysis
from codemods.training.facts import LibraryStepper
from codemods.training.hooked_runners import hooked_step_calls
from codemods.training.unresolved_callees import missing_module, steps_nothing, unread_stars

if TYPE_CHECKING:
    from codemods.facts import Facts

# Builtins and containers that never step what they are handed (a container binds it: followed).
_CONTAINERS = frozenset({"dict", "list", "tuple", "set", "zip", "enumerate", "reversed", "sorted"})
_INERT_BUILTINS = frozenset({"print", "len", "str", "repr", "type", "id", "isinstance", "hasattr", "vars"})
# Methods of loggers and strings that only write what they are handed.
_INERT_METHODS = frozenset({"info", "debug", "warning", "warn", "error", "log", "write", "print", "format"})
# Library calls that step with the XLA barrier themselves when handed the XLA device (the argument's
# index and keyword): ignite's trainer then runs ``supervised_training_step_tpu``, which ends each
# step with ``xm.optimizer_step(optimizer, barrier=True)``; the port makes the device the XLA device.
_XLA_AWARE = {"ignite.engine.create_supervised_trainer": (3, "device")}
# Words in a library callable's name that say it does not run the steps: it schedules the learning
# rate, saves, loads or logs (``timm.scheduler.create_scheduler(args, opt)``, ``save_checkpoint``).
# Keywords by which a call is handed an optimizer (Composer's ``optimizers=``, poutyne's ``optimizer=``).
_OPTIMIZER_KEYWORDS = frozenset({"optimizer", "optimizers"})
# Methods that run a library object's training loop: a result the file runs so is no optimizer.
_RUNS = frozenset({"fit", "fit_generator", "learn", "run", "train"})
_NO_STEP_WORDS = ("sched", "warmup", "lr", "save", "load", "checkpoint", "ckpt", "restore", "resume", "state", "log")


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _names_in(value: cst.BaseExpression) -> list[str]:
    """The name chains ``value`` is or holds: itself, the elements of a tuple, list, set or dict
    display, and the arguments of ``dict(...)`` and the like."""
    name = dotted(value)
    if name is not None:
        return [name]
    if isinstance(value, (cst.Tuple, cst.List, cst.Set)):
        return [n for element in value.elements for n in _names_in(element.value)]
    if type(value) is cst.Dict:
        return [
            n for element in value.elements if isinstance(element, cst.DictElement) for n in _names_in(element.value)
        ]
    if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in _CONTAINERS:
        return [n for arg in value.args for n in _names_in(arg.value)]
    return []


class LibraryStepperAnalysis(Analysis):
    facts: Facts

    name = "library_steppers"
    fills = "training"
    reads = ("imports", "project", "lightning", "huggingface")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.built: dict[str, str] = {}  # the last part of a name bound to an optimizer the file builds -> as written
        self.stepped: set[str] = set()  # last parts of what a step may take: ``x.step()``, ``scaler.step(x)``
        self.returned: set[str] = set()  # last parts of what a ``return`` or ``yield`` hands back
        self.bound_from: dict[str, set[str]] = {}  # last part of a name -> those of the names bound from it
        self.results: dict[cst.Call, list[str]] = {}  # a call -> last parts of the names its result is bound to
        # Calls that hand names on: (the call, its callee, the last parts of the names handed).
        self.handed: list[tuple[cst.Call, str | None, set[str]]] = []
        self.instances: dict[str, str] = {}  # the last part of a name bound to a call's result -> its callee
        self.methods: dict[cst.Call, str] = {}  # a call of a method -> the callee that built its object
        # Names bound to what a call of another callable returns: (the call, its callee, the name as written);
        # a project callable that builds an optimizer over an argument's parameters returns it (``finish``).
        self.helper_results: list[tuple[cst.Call, str, str]] = []
        self.run: set[str] = set()  # last parts of names the file runs a training loop of: ``trainer.fit()``
        self.keyword_handed: dict[str, str] = {}  # names handed as ``optimizer=`` or ``optimizers=``
        self.functions: list[str] = []  # the functions the walk is in, innermost last
        self.optimizer_functions: set[str] = set()  # functions of this file that return an optimizer they build
        self.defined: set[str] = set()  # the functions and classes the file defines, at any depth
        # Calls of callables the tool cannot find (unresolved_callees.py): the star imports that alone may
        # bind the name, or the module of the project, whose file is missing, it comes from.
        self.unresolved: dict[cst.Call, tuple[tuple[cst.ImportFrom, ...], str]] = {}
        # The step hooks an mmcv runner class of the file calls in its loops (hooked_runners.py) -> the class.
        self.hooked: dict[cst.Call, str] = {}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "step":
            if (stepped := dotted(func.value)) is not None:
                self.stepped.add(_last(stepped))
            self.stepped.update(_last(n) for arg in node.args for n in _names_in(arg.value))
            return
        if type(func) is cst.Attribute and func.attr.value in _RUNS and (runner := dotted(func.value)) is not None:
            self.run.add(_last(runner))
        if not node.args:
            return
        names = {_last(n) for arg in node.args for n in _names_in(arg.value)}
        for arg in node.args:  # ``Trainer(optimizers=optimizer)``: the library names what it is handed
            if arg.keyword is not None and arg.keyword.value in _OPTIMIZER_KEYWORDS and (held := dotted(arg.value)):
                self.keyword_handed.setdefault(_last(held), held)
        if names:
            self.handed.append((node, self.walk.callee, names))
            if self.walk.callee is None and (built_by := self._instance_class(func)) is not None:
                self.methods[node] = built_by

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, node.iter)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        targets = [_last(n) for n in _names_in(target)]
        if type(value) is cst.Call and not (type(value.func) is cst.Name and value.func.value in _CONTAINERS):
            callee = self.walk.resolve(value.func)
            name = dotted(target)
            if callee is not None and apis.is_optimizer_class(callee) and arg_value(value, 0, "params") is not None:
                if name is not None:
                    self.built[_last(name)] = name
            elif name is not None and (helper := callee or dotted(value.func)) is not None:
                self.helper_results.append((value, helper, name))
            for target_name in targets:
                if callee is None:
                    self.instances.pop(target_name, None)
                else:
                    self.instances[target_name] = callee
            self.results[value] = targets
            return
        for held in _names_in(value):
            self.bound_from.setdefault(_last(held), set()).update(targets)

    def _hands_back(self, value: cst.BaseExpression | None) -> None:
        if value is not None:
            self.returned.update(_last(n) for n in _names_in(value))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)
        self.defined.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.defined.add(node.name.value)
        self.hooked.update(dict.fromkeys(hooked_step_calls(node, self.walk.resolve), node.name.value))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_Return(self, node: cst.Return) -> None:
        self._hands_back(node.value)
        value = node.value
        if not self.functions or value is None:
            return
        if type(value) is cst.Call:  # ``return SGD([v for v in params.values()], lr)``
            callee = self.walk.resolve(value.func)
            if callee is not None and apis.is_optimizer_class(callee) and arg_value(value, 0, "params") is not None:
                self.optimizer_functions.add(self.functions[-1])
        elif (name := dotted(value)) is not None and _last(name) in self.built:  # ``opt = SGD(...); return opt``
            self.optimizer_functions.add(self.functions[-1])

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._hands_back(node.value)

    def finish(self) -> None:
        facts = self.facts
        project = self.walk.analysis(ProjectAnalysis)
        if not facts.project.context.test_file():
            facts.training.hooked_runner_steps.update(self.hooked)
        for helper_call, helper, written in self.helper_results:
            if _last(written) in self.built:
                continue
            if _last(helper) in self.optimizer_functions or _builds_optimizer(helper_call, helper, project):
                self.built[_last(written)] = written
        for name, written in self.keyword_handed.items():  # however it was built (a registry's builder)
            self.built.setdefault(name, written)
        if (
            not self.built
            or facts.project.context.test_file()
            or facts.lightning.drives_training
            or facts.huggingface.accelerators
            or facts.huggingface.trainer_script
        ):
            return
        imported = facts.project.context.imported_in_run()
        for name, written in self.built.items():
            if imported and "." in written:
                continue  # an attribute other files of the run may step (``agent.optimizer.step()``)
            carriers = self._carriers(name)
            if carriers & (self.stepped | self.returned):
                continue
            found: list[tuple[cst.Call, str, str]] = []
            for call, callee, names in self.handed:
                if not names & carriers or name in self.results.get(call, ()):
                    continue  # (the call that builds it, ``build_optimizer(model, cfg.optimizer)``, steps nothing)
                verdict = self._verdict(call, callee, project)
                if verdict == "may step":
                    break
                if verdict is not None and not self._result_stepped(call, project):
                    found.append((call, verdict, callee or ""))
            else:
                for call, package, callee in found:
                    stars, missing = self.unresolved.get(call, ((), ""))
                    callee = callee or dotted(call.func) or ""
                    facts.training.library_steppers[call] = LibraryStepper(written, callee, package, stars, missing)

    def _unread_stars(self, name: str) -> tuple[cst.ImportFrom, ...]:
        table = self.facts.imports.table
        bound = {*self.defined, *table.rebound, *table.bindings}
        return unread_stars(name, bound, self.facts.imports)

    def _result_stepped(self, call: cst.Call, project: ProjectAnalysis) -> bool:
        """What the library call returns (``opt = Lookahead(base)``) may be stepped by code the
        tool sees: a ``.step()`` on it, or a call that may step it (``xm.optimizer_step(opt)``)."""
        results = set(self.results.get(call, ()))
        if results & self.run:
            return False  # ``trainer.fit()``: the library's runner, which the file runs, is no optimizer
        return bool(results & (self.stepped | self.returned)) or any(
            names & results and self._verdict(other, callee, project) == "may step"
            for other, callee, names in self.handed
        )

    def _carriers(self, name: str) -> set[str]:
        """``name`` and every name bound from it (``self.opt = opt``, ``for o in (opt, d_opt)``)."""
        carriers, todo = {name}, [name]
        while todo:
            for bound in self.bound_from.get(todo.pop(), ()):
                if bound not in carriers:
                    carriers.add(bound)
                    todo.append(bound)
        return carriers

    def _instance_class(self, func: cst.BaseExpression) -> str | None:
        """The callable that built the object whose method ``func`` is: ``engine.train`` after
        ``engine = Engine()``, ``Engine().train``; None when the tool cannot tell."""
        if type(func) is not cst.Attribute:
            return None
        held = func.value
        if type(held) is cst.Call:
            return self.walk.resolve(held.func)
        name = dotted(held)
        return None if name is None else self.instances.get(_last(name))

    def _verdict(self, call: cst.Call, callee: str | None, project: ProjectAnalysis) -> str | None:
        """What a call handed the optimizer does with it: "may step" (code the tool converts or
        cannot tell, or a followed callable that is no scheduler), None (it does not step it), or
        the package of an unfollowed library callable that does, or "" for a callable the tool can
        find nowhere (``unresolved``)."""
        func = call.func
        if callee is None:
            if type(func) is cst.Name and func.value in _INERT_BUILTINS | _CONTAINERS:
                return None
            if type(func) is cst.Name and (stars := self._unread_stars(func.value)):
                self.unresolved[call] = (stars, "")
                return ""  # ``from main import *`` then ``loop_dataset(..., optimizer=optimizer)``
            if type(func) is cst.Attribute and func.attr.value in _INERT_METHODS:
                return None
            built_by = self.methods.get(call)
            if built_by is None:
                return "may step"
            if project.library_package(built_by) is None or built_by in library_apis.LIBRARY_LOOPS:
                return "may step"  # a followed package's or the project's object; a table's: reported there
            callee = f"{built_by}.{func.attr.value}"  # type: ignore[attr-defined]  # an Attribute (_instance_class)
        if project.origin(dotted(func) or callee) is not None:
            return "may step"  # the project's code: the run converts it (or XLA003 asks for it)
        package = project.library_package(callee)
        last = _last(callee).lower()
        if package is None and (missing := missing_module(callee, project)):
            if steps_nothing(callee):
                return None  # ``save_model(model, optimizer)``
            self.unresolved[call] = ((), missing)
            return ""  # a module of the project whose file is missing: no run reads its steps
        if package is None:
            scheduler = callee.startswith(apis.SCHEDULER_MODULE + ".") or "sched" in last or "warmup" in last
            return None if scheduler else "may step"
        if callee in _XLA_AWARE and arg_value(call, *_XLA_AWARE[callee]) is not None:
            return None  # handed the device, which the port makes the XLA device
        if package == "composer" and _composer_tpu(call):
            return None  # Composer's TPU device: it moves the model and loads each batch with XLA's loader
        if callee in library_apis.LIBRARY_LOOPS or package in apis.CUDA_ONLY_PACKAGES:
            return "may step"  # reported as what it is (XLA307's table, XLA004): not twice
        return None if any(word in last for word in _NO_STEP_WORDS) else package


def _composer_tpu(call: cst.Call) -> bool:
    """``device="tpu"`` or ``device=DeviceTPU()``: Composer's Trainer then moves the model to the XLA
    device and wraps its train loader in ``pl.MpDeviceLoader``, which ends each step with the barrier
    (composer/trainer/trainer.py, composer/devices/device_tpu.py)."""
    device = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "device"), None)
    if type(device) is cst.SimpleString:
        return device.value[1:-1].lower() == "tpu"
    if type(device) is cst.Call:
        device = device.func
    return device is not None and (dotted(device) or "").endswith("DeviceTPU")


def _builds_optimizer(call: cst.Call, callee: str, project: ProjectAnalysis) -> bool:
    """``callee`` is a callable of another module of the project that builds an optimizer over
    the parameters of an argument ``call`` hands it (``build_optimizer(model, cfg)``), whose result
    is that optimizer: ModuleSummary.optimizer_builders."""
    found = project.origin(dotted(call.func) or callee)
    if found is None or found.summary is None or not found.name:
        return False
    summary, name = found.summary, found.name
    return any(
        summary.builds_optimizer(name, None, arg.keyword.value)
        if arg.keyword is not None
        else summary.builds_optimizer(name, index, None)
        for index, arg in enumerate(call.args)
        if not arg.star
    )
