"""The project's part of the fact sheet: names from the project's other modules (found by
analysis.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import libcst as cst

from codemods.project.import_context import GuessedImports, ImportContext


@dataclass(repr=False, eq=False)
class ProjectFacts:
    context: ImportContext = field(default_factory=GuessedImports)
    # Each finding: the call, and the path of the module to convert (None: it could not
    # be read, or the call hands things to a callable that comes in as a parameter).
    # device = get_device() with get_device from a module that chooses the device.
    external_devices: dict[cst.Call, str | None] = field(default_factory=dict)
    # An optimizer handed to a callable of a module that trains with it.
    external_training: dict[cst.Call, tuple[str, str | None]] = field(default_factory=dict)
    # For other files: project callables this file hands a known optimizer: (their module's
    # path, their name, the argument's index, or -1 and its keyword).
    optimizers_handed: set[tuple[str, str, int, str]] = field(default_factory=set)
    # For other files: optimizers this file hands project callables, and whether each is an
    # instance of a project optimizer wrapper (ModuleSummary.hands_wrappers).
    wrappers_handed: set[tuple[str, str, int, str, bool]] = field(default_factory=set)
    # A loop's training step run by a callable of another module (a scaler wrapper, a
    # helper): where it comes from, as the finding names it.
    external_steps: dict[cst.Call, str] = field(default_factory=dict)
    # Of those, the ones whose callable scales its gradients (a scaler wrapper, CUDA mixed
    # precision): its CUDA gradient scaler must become the XLA one.
    scaled_steps: set[cst.Call] = field(default_factory=set)
    # A method of an instance of another module's class that runs a training loop (an
    # agent's ``update()`` with its epochs inside), that module still to convert: its path.
    external_loops: dict[cst.Call, str] = field(default_factory=dict)
    # A method called on a value whose class the tool cannot tell (``model.fit(...)`` with ``model =
    # getattr(model_zoo, name)(...)``), named like methods of the project's classes that train, of
    # modules this run does not convert: (their names there, their paths, whether one takes the
    # step each call, else they run a training loop; whether each only takes a plain step, without
    # CUDA mixed precision, in a class that holds no CUDA device choice: right on one process as it is).
    named_training: dict[cst.Call, NamedTraining] = field(default_factory=dict)
    # Callables of another module that set up mixed precision (a scaler class): its path, and what
    # the callable holds of it ("gradient scaler", "autocast").
    external_amp: dict[cst.Call, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # For other files: functions and methods of this module that call a callable of a module
    # that still needs converting (or that does so in turn): name -> that module's path.
    pending_via: dict[str, str] = field(default_factory=dict)
    # For other files: what top-level functions and classes use (see ModuleSummary.reaches).
    references: set[tuple[str, str]] = field(default_factory=set)
    # In a run that does not convert them: project modules whose code that this file uses
    # holds what their conversion ports or reports as an error (see project/holdings.py).
    # The import that leads to each -> one per module imported.
    unported_uses: dict[cst.CSTNode, list[Unported]] = field(default_factory=dict)
    # The module, when it has such uses: their findings are made as the rewrite leaves it.
    unported_module: cst.Module | None = None
    # Calls of methods of project classes, in modules this run does not convert, whose own code holds
    # what converting them ports or reports (``model.fit(...)``): (the method there, what it holds).
    # (And the other methods that hold what converting them ports, that the call may run by its
    # receiver's class: ``model.rank`` on one of several classes of a dict.)
    reached_holdings: dict[cst.Call, tuple[str, Unported, tuple[str, ...]]] = field(default_factory=dict)
    # The attributes the file names on anything but an import from outside the project (``agent.load``,
    # not ``torch.load``), and the identifiers its strings hold: the methods of project classes it may call.
    named_attributes: set[str] = field(default_factory=set)
    # CUDA checks (``torch.cuda.is_available()``) whose ``torch`` no import of the file binds, with a
    # star import of a project module the tool could not read, which may bind it: that import.
    hidden_checks: dict[cst.Call, cst.ImportFrom] = field(default_factory=dict)
    # For other files: module-level dicts whose values are all names (``train_factory =
    # {'ctdet': CtdetTrainer, ...}``): name -> the values as written, in order.
    name_tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Of those that are dict literals of this file: their string keys, in the same order (None: no string).
    table_keys: dict[str, tuple[str | None, ...]] = field(default_factory=dict)
    # For other files: the module's top-level classes: name -> (bases as written, the methods it defines).
    classes: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    # For other files: functions that return a tuple holding an instance of a project class
    # (``return model, ScheduledOptim(...)``): (function, position, the class as written here).
    returned_instances: set[tuple[str, int, str]] = field(default_factory=set)
    # For other files: functions that return a name of this module looked up at run time
    # (``return globals()[name]``): a caller may build an instance of any class of the module.
    globals_lookups: set[str] = field(default_factory=set)
    # For other files: ``importlib.import_module(name)`` of a name not written here (a module a
    # config names, Palette's ``create_model``): what it runs, no run can follow.
    dynamic_imports: list[cst.Call] = field(default_factory=list)
    # Of those, the ``exec`` of an import statement and ``__import__``: the name it loads, as written
    # (``exec(import_str)`` with ``import_str = f"from model.{kind}.{name} import {name}"`` above).
    loaded_names: dict[cst.Call, cst.BaseExpression] = field(default_factory=dict)
    # In a run that does not convert them: such imports of this file, with the project modules
    # they may load and what those hold that their conversion ports or reports as an error.
    dynamic_loads: dict[cst.Call, DynamicLoad] = field(default_factory=dict)
    # In a single-file run: a function looked up in a registry (``train_dict[cfg.train.mode](loggers,
    # loaders, model, optimizer, scheduler)``) in a file that takes no optimizer step, with project
    # modules imported for their side effects (registering it): call -> (registry, those modules' paths).
    registry_calls: dict[cst.Call, tuple[str, tuple[str, ...]]] = field(default_factory=dict)


class NamedTraining(NamedTuple):
    """The project methods a call may run by its name (ProjectFacts.named_training, project/named_steps.py)."""

    names: tuple[str, ...]  # the methods (``SRModel.optimize_parameters``)
    paths: tuple[str, ...]  # their modules' paths
    steps: bool  # one takes the step each call (else they run a training loop)
    plain: bool  # each only takes a plain step, right on one process as it is
    # A base class of theirs, in a module the run does not convert, that holds the CUDA device choice
    # their methods run with (or CUDA mixed precision, a CUDA-only API): (the class, its module's path,
    # the cause, the code held and its line); None: none.
    inherited: tuple[str, str, str, str] | None = None
    # The receiver is what a project function returns from modules it imports by a name known only at
    # run time: (the function, that import's code and line, its module's path, the folder the modules are
    # looked for in); None: not so.
    factory: tuple[str, str, str, str] | None = None


@dataclass(frozen=True)
class Unported:
    path: str  # the module the file imports
    causes: tuple[str, ...]  # keys of project.rules' CAUSES (the families project/holdings.py tells apart)
    held: tuple[tuple[str, str, str], ...]  # (module path, top-level name there, the code and its line)
    # What converting those modules does with it: (True,) ports all of it, (False,) only reports
    # it (as errors to fix by hand), (False, True) some of each.
    ported: tuple[bool, ...]


@dataclass(frozen=True)
class DynamicLoad:
    """What an ``importlib.import_module(name)`` of a name known only at run time may load."""

    default: str | None  # the module a flag's default names (None: not known)
    package: str  # the package the name starts with ("" for none)
    paths: tuple[str, ...]  # the modules read (their paths)
    candidates: int  # how many modules it may load
    held: Unported  # what they hold (its path unused)
