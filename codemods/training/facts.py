"""Training's parts of the fact sheet: models, optimizers and training loops (analysis.py),
the steps driven from elsewhere (drivers.py), optimizers built too early
(early_optimizers.py) and DataLoaders (loaders.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst


@dataclass(frozen=True)
class UndrivenStep:
    """An optimizer step (or a call that runs one) that no loop of the file drives."""

    function: str  # the qualified name of the function it is in
    what: str  # the step as the finding names it: ``optimizer.step()``, ``agent.update()``
    origin: str = ""  # for a call of another module's step: `Agent.update` (agent.py)
    # Another file of the run imports this one, or, for a method, the run converts other files
    # (a loop there may call it by its name on a value whose class the tool cannot tell): the
    # finding stands only if none of the run's files calls the function
    # (held_conditions.StandsUnlessCalled).
    held: bool = False
    imported: bool = False  # (held because another file of the run imports this one)
    # Named like a method of Python's containers (``update``): a loop's call of it on a value whose
    # class the tool cannot tell counts only where a call of unknown class built the value.
    container: bool = False


@dataclass(frozen=True)
class CallerOptimizer:
    """What a step's receiver is handed in as (training/step_kinds.py): the callable as its
    callers call it (``train``, ``Trainer.fit``; the class for what ``__init__`` binds), the
    parameter's index without self (-1: by keyword only), and the parameter."""

    callable: str
    index: int
    parameter: str


@dataclass(frozen=True)
class EarlyOptimizer:
    """An optimizer built over a model that is still on the CPU and moves to the device
    later: moving a module to XLA replaces its Parameter objects, so the optimizer would
    update stale CPU copies."""

    model: str
    # The model may simply be moved first: where it goes later is the XLA device on every path.
    fixable: bool
    moved_by: str  # where it moves, as the finding names it
    # The call hands the model to a function that builds the optimizer from it (the
    # argument's index); None: the call is the ``model.parameters()`` of an optimizer.
    argument: int | str | None = None  # a keyword argument: its name
    # The function only collects the parameters the optimizer is built from.
    collects: bool = False
    # The model is handed in (a parameter of the function): it may be on the CPU.
    handed_in: bool = False
    # The functions of this file whose moves these are (qualified names).
    moved_in: frozenset[str] = frozenset()


class MovedAt(str):
    """Where a move is, as a finding names it (`` `model.cuda()` in `Trainer.__init__` ``), with the
    function of this file it is in (``owner``, a qualified name; empty: the module level)."""

    owner: str = ""

    @classmethod
    def of(cls, text: str, owner: str) -> MovedAt:
        where = cls(text)
        where.owner = owner
        return where


@dataclass(frozen=True)
class HandedOptimizerMove:
    """A move of a model a callable is handed next to an optimizer built by its caller
    (training/handed_optimizer_moves.py)."""

    model: str  # the parameter moved
    optimizer: str  # the parameter the optimizer is handed in as
    function: str  # the callable's qualified name
    xla: bool  # the move goes to the XLA device on every path
    handed: CallerOptimizer  # as callers hand it: the finding stands unless a file of the run does


@dataclass(frozen=True)
class SplitPrepare:
    """An ``accelerator.prepare`` call that moves a model without the optimizers built over its
    parameters before it (training/split_prepares.py)."""

    receiver: str  # the accelerator as written; the hook reports only where the fact sheet knows it as one
    models: tuple[str, ...]  # the prepared arguments the optimizers are over
    # (the optimizer's name, its construction as written, the class of a non-optimizer holding it or None)
    stale: tuple[tuple[str, str, str | None], ...]


@dataclass(frozen=True)
class StaleParameterList:
    """An optimizer built over parameters a module class collected in ``__init__``
    (``self.params1 = list(self.convs.parameters())``), after the caller moved the instance to
    the device: the move replaced the parameters, the list holds the CPU ones (XLA203, at the
    optimizer; training/stale_parameter_lists.py)."""

    model: str  # the name the instance is bound to
    constructor: str  # the class as called
    attributes: tuple[str, ...]  # the lists' attributes (``params1``)
    written: tuple[str, ...]  # their assignments in ``__init__`` as written
    modules: tuple[str, ...]  # the modules whose parameters they collect (``self.convs``)
    origin: str  # where the class is, for a class of another module: `` (model.py)``
    xla: bool  # the move goes to the XLA device on every path (else: it may)


@dataclass(frozen=True)
class MovedOwnOptimizer:
    """A module whose class builds an optimizer over its own parameters in ``__init__``
    (``self.optim = Adam(self.parameters())``), moved to the device after it is built:
    the move replaces the parameters the optimizer holds (XLA203, at the move)."""

    model: str  # the name the instance is bound to
    constructor: str  # the class as called (``model.Generator``)
    attribute: str  # the optimizer's attribute (``optim``)
    origin: str  # where the class is, for a class of another module: `` (BigGAN.py)``
    xla: bool  # the move goes to the XLA device on every path (else: it may)
    # For a callable handed the instance that moves it (``to_gpu(model)``): the move it makes,
    # as the finding names it (``x.cuda()` in `to_gpu``, or the callable and its module).
    through: str = ""
    # For an optimizer built by a method the caller called (``model.compile(lr)``), not by
    # ``__init__``: that call and the method (`` `model.compile(0.1)` in `Base.compile` ``).
    built_by: str = ""
    # For an instance of a class looked up by its name (``algorithm_class(...)`` with
    # ``algorithm_class = get_algorithm_class(name)``): the classes it may be that build one.
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class MovedReturnedOptimizer:
    """``tok, model, optimizer = factory(cfg)``, where the factory built the optimizer over the
    model on the CPU and returned both, then a move of the model (XLA203, at the move)."""

    model: str  # the name the model is bound to
    optimizer: str  # the name the optimizer is bound to
    factory: str  # the factory's call, as written
    origin: str  # where the factory is, for one of another module: `` (pkg/models.py)``
    xla: bool  # the move goes to the XLA device on every path (else: it may)
    through: str = ""  # for a callable handed the model that moves it: the move it makes


@dataclass(frozen=True)
class MovedAfterInitOptimizers:
    """``self.to(device)`` in a module class's ``__init__`` after it built optimizers over the
    parameters of the instance or of the modules it registers (``self.optims = {name:
    Adam(m.parameters()) ...}``): the move replaces the parameters they hold (XLA203, at it)."""

    cls: str  # the class
    attributes: tuple[str, ...]  # the attributes that keep the optimizers (``optims``)
    xla: bool  # the move goes to the XLA device on every path (else: it may)
    # Where the optimizers were built or the move is made when a method of the class (or of a
    # base, in another module) does it: `` (`self.compile(...)` in `BaseModel.compile`)``.
    built_by: str = ""
    moved_by: str = ""


@dataclass(frozen=True)
class RoundTrip:
    """A module whose parameters an optimizer steps, moved to the CPU and back to the device
    after the optimizer is built (``torch.save(self.encoder.cpu(), path)`` then
    ``self.encoder.to(self.device)``): on XLA each move replaces its Parameter objects (on
    CUDA they are kept), so the optimizer steps the old ones (XLA203, at the move to the CPU)."""

    module: str  # as the move names it
    optimizer: str  # the optimizer that holds its parameters
    back: str  # the move back, as the finding names it
    # The call hands the module to a callable of the project that moves it there and back itself
    # (through helpers, or in a method of the class it builds): ``back`` names that callable.
    handed: bool = False
    # The module was looked up by a name built at run time (``net = getattr(self, 'net' + name)``):
    # that lookup, and the modules it may be.
    looked_up: str = ""


@dataclass(frozen=True)
class InheritedRoundTrip:
    """An optimizer over a module attribute (``self.netG``) of a class that inherits a method
    moving ``getattr(self, 'net' + name)`` to the CPU and back (CUT's ``BaseModel.save_networks``,
    in another module): on XLA the module gets new Parameter objects there (XLA203, at the optimizer)."""

    module: str  # ``self.netG``
    optimizer: str  # ``self.optimizer_G``
    method: str  # ``BaseModel.save_networks``
    where: str  # ``models/base_model.py``, or "" for this file
    trip: str  # the lookup and the moves, as the finding shows them


@dataclass(frozen=True)
class UntracedParameters:
    """An optimizer whose parameters come from something the tool cannot follow, built
    while a model of the same function is on the CPU and moves later (XLA213)."""

    model: str
    source: str  # what the parameters come from, as the finding names it
    moved_by: str
    # A later move through a loop over a value the tool cannot read (``self.nets.values()``):
    # that value, as the finding names it; "" for parameters from something it cannot read.
    over: str = ""


@dataclass(frozen=True)
class LibraryStepper:
    """A call that hands an optimizer the file builds, and that no code the tool sees steps, to a
    callable of a package the tool does not follow (``somelib.fit(model, opt, loader)``): the
    library runs the steps (training/library_steppers.py; XLA307, at the call)."""

    optimizer: str  # the optimizer, as the file binds it
    callee: str  # the callable, qualified through the imports (``somelib.fit``)
    package: str  # its package (``somelib``); "" for a callable the tool cannot find (below)
    # A name the file never binds: the star imports of modules the tool cannot read, which alone may bind it
    # (``from main import *``: training/unresolved_callees.py).
    stars: tuple[cst.ImportFrom, ...] = ()
    missing: str = ""  # or the module of the project, whose file is missing, that it is imported from


@dataclass(frozen=True)
class OptimizerStep:
    """``optimizer.step(...)`` on a known optimizer, as xm.optimizer_step will take it."""

    optimizer: str
    closure_index: int | None = None  # which argument is the closure (LBFGS)
    other_arguments: bool = False  # arguments xm.optimizer_step cannot pass on: not mapped


@dataclass(frozen=True, repr=False)
class LockedStep:
    """A step a training loop reaches under a thread lock (training/locked_steps.py): the statement of
    the lock's block that takes it (the barrier goes right after it), the lock as written, and why
    the barrier cannot go there (None: it can)."""

    statement: cst.BaseStatement | None
    lock: str
    unplaceable: str | None = None


@dataclass(repr=False)
class LoopPlan:
    """What a loop needs: a barrier at the end of each iteration, or its loader wrapped."""

    kind: Literal["training", "evaluation"]
    wrap_loader: cst.BaseExpression | None = None
    wrap_device: str | None = None
    # An evaluation loop that reads to the host but accumulates device values across
    # iterations (``top1.update(acc1, n)``, ``total += correct``): what it accumulates into.
    accumulates: tuple[str, ...] = ()
    # A training loop whose steps run under a thread lock: the barrier goes inside the lock, not
    # at the end of the iteration (training/locked_steps.py).
    locked: tuple[LockedStep, ...] = ()
    # An evaluation loop iterates a loader or a dataset (``for x, y in val_loader``); else it is some
    # other loop over the device (a decoder's per-token loop, ``for di in range(max_length)``).
    over_data: bool = True


@dataclass(repr=False, eq=False)
class TrainingFacts:
    optimizers: set[str] = field(default_factory=set)
    schedulers: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)
    loops: dict[cst.CSTNode, LoopPlan] = field(default_factory=dict)
    # Every training loop, also those that already end with a barrier, feed from a
    # device loader or run under Accelerate (they need no plan, but lazy-mode checks
    # such as host reads apply to them too).
    all_loops: set[cst.CSTNode] = field(default_factory=set)
    # Loops that run within another loop's iteration: those of a module class's forward
    # computation (in ``forward`` or a method it calls through ``self.``: part of the step) and
    # those of a generator (a data stream: each iteration runs inside the consumer's), and those
    # of an optimizer class's methods (its ``step()`` runs inside the training step, and those
    # loops are no training loops either); never evaluation loops that need a barrier of their own.
    loops_within_a_step: set[cst.CSTNode] = field(default_factory=set)
    # The file's classes whose ``forward`` is a module's: ``nn.Module`` subclasses (also through
    # the file's own classes) and library model bases' (another file's subclass: project/module_bases.py).
    forward_classes: set[str] = field(default_factory=set)
    # ``accelerator.backward(...)`` calls of loops over a loader Accelerate did not prepare (no
    # barrier of Accelerate's ends their steps: the port adds one).
    unprepared_backwards: set[cst.Call] = field(default_factory=set)
    # Those of loops over a prepared loader, or that end their steps otherwise (a barrier, gather).
    ended_backwards: set[cst.Call] = field(default_factory=set)
    # Of training_callables, those whose training loops Accelerate (Lightning, Fabric) runs: they
    # need nothing of the port (their loops get no barrier; the framework's steps end them).
    framework_trainers: set[str] = field(default_factory=set)
    # Functions passed as ``optimizer.step(closure)``: each call is a training step.
    closures: set[cst.FunctionDef] = field(default_factory=set)
    # ``model.parameters()`` calls that build an optimizer, and calls that hand a model
    # to a function building one (``create_optimizer(model, cfg)``), while the model is
    # still on the CPU and is moved to the device later, in this function, in another
    # one, or by a callable of another project file (``Trainer(model, ...)``).
    optimizer_before_move: dict[cst.Call, EarlyOptimizer] = field(default_factory=dict)
    # Moves of a model handed in next to its optimizer (handed_optimizer_moves.py).
    handed_optimizer_moves: dict[cst.Call, HandedOptimizerMove] = field(default_factory=dict)
    # The parameter reads an optimizer is built from (``model.parameters()``) that run after the
    # model was moved or built on a device in the same function (early_optimizers.py): those
    # optimizers already hold the moved parameters (split_prepares.py skips them).
    parameters_after_moves: set[cst.Call] = field(default_factory=set)
    # ``accelerator.prepare`` calls of a model apart from its optimizers (split_prepares.py).
    split_prepares: dict[cst.Call, SplitPrepare] = field(default_factory=dict)
    # Optimizers (or the calls of unread callables that feed them) whose parameters come
    # from what the tool cannot follow, while a model of the function moves later.
    untraced_parameters: dict[cst.Call, UntracedParameters] = field(default_factory=dict)
    # For this file and others: callables that move an argument to the device (qualified
    # name, index without ``self``, parameter, whether the device is the XLA device on
    # every path, and else the parameter that hands the device in: its index and name, or
    # -1 and ""), and callables that build an optimizer over an argument (name, index,
    # parameter).
    argument_moves: set[tuple[str, int, str, bool, int, str, str]] = field(default_factory=set)
    optimizer_builders: set[tuple[str, int, str]] = field(default_factory=set)
    # ``__init__`` methods that hand their parameters on to a base's (``super().__init__(opt, model,
    # optimizer=optimizer)``, ``Base.__init__(self, model)``): (the ``__init__``, the parameter's
    # index without ``self``, the parameter, the base as written or "" for ``super()``, the argument's
    # index there or -1, its keyword or "").  What the base's ``__init__`` (and the methods of the
    # class) do to that argument, the subclass's instance does to it.
    base_init_arguments: set[tuple[str, int, str, str, int, str]] = field(default_factory=set)
    # Module classes whose ``__init__`` builds an optimizer over the instance's own
    # parameters before any move of it: (class, the optimizer's attribute, the parameters
    # whose truth returns before it is built: ``if no_optim: return``); and the moves of
    # their instances after construction.
    own_optimizers: set[tuple[str, str, tuple[str, ...]]] = field(default_factory=set)
    # Those of them whose optimizers hold only the parameters of modules handed to ``__init__``
    # (``self.net = net``, then ``SGD(self.net.parameters())`` or ``self.net.get_optimizer()``):
    # (class, those parameters of ``__init__`` as (name, index without ``self``)).  A caller
    # that moved each of those modules before building the instance strands nothing.
    own_optimizer_children: set[tuple[str, tuple[tuple[str, int], ...]]] = field(default_factory=set)
    # Methods of module classes that return an optimizer over the instance's own parameters
    # (``Net.get_optimizer``); and module classes whose ``__init__`` binds what a method of a
    # child returns (``self.optimizer = self.net.get_optimizer()``) where no class of this file
    # or of its imports has such a method: (class, attribute, method, skips as above).
    optimizer_methods: set[str] = field(default_factory=set)
    method_optimizers: set[tuple[str, str, str, tuple[str, ...]]] = field(default_factory=set)
    # What the methods of module classes (not ``__init__``) do to the instance, in order:
    # (``Cls.method``, its effects): ("built", attribute, False, module) for an optimizer bound to
    # ``self.<attribute>`` over the parameters of ``module`` (``self``, a submodule ``self.net``:
    # ``self.optimizer = get_optimizer(name, self.parameters(), lr)`` in ``compile``), ("move",
    # the move as written, whether it goes to the XLA device on every path, "") for a move of
    # ``self`` to a device (``self.to(self.device)`` in ``model_to_device``).  An ``__init__`` (of
    # a subclass too, in another module) that calls the first and then the second strands the
    # optimizer.
    method_effects: dict[str, tuple[tuple[str, str, bool, str], ...]] = field(default_factory=dict)
    # Classes whose methods build an optimizer or a scheduler onto an attribute of the instance
    # (``self.opt_g = torch.optim.Adam(...)``): (class, attribute, "optimizer" or "scheduler").
    held_steppers: set[tuple[str, str, str]] = field(default_factory=set)
    moved_own_optimizers: dict[cst.Call, MovedOwnOptimizer] = field(default_factory=dict)
    # Module classes whose ``__init__`` collects parameters of the instance into an attribute
    # (``self.params1 = list(self.convs.parameters())``): (class, attribute, the assignment as
    # written, the module whose parameters it reads: ``self.convs``); and the optimizers built
    # over such a list after the instance moved.
    parameter_lists: set[tuple[str, str, str, str]] = field(default_factory=set)
    stale_parameter_lists: dict[cst.Call, StaleParameterList] = field(default_factory=dict)
    # Moves of a model that a factory returned with an optimizer over its CPU parameters
    # (training/returned_optimizers.py); and for other files, the functions of this one that
    # return such a pair: (function, the model's position, the optimizer's).
    moved_returned_optimizers: dict[cst.Call, MovedReturnedOptimizer] = field(default_factory=dict)
    returned_optimizers: set[tuple[str, int, int]] = field(default_factory=set)
    # ``self.to(device)`` in ``__init__`` after the optimizers were built there.
    moved_after_init_optimizers: dict[cst.Call, MovedAfterInitOptimizers] = field(default_factory=dict)
    # Moves to the CPU of a module an optimizer steps, which moves back to the device later.
    round_trips: dict[cst.Call, RoundTrip] = field(default_factory=dict)
    # Callables that move an argument to the CPU and back (a save helper's ``torch.save(net.cpu()
    # .state_dict(), path); net.cuda()``): (name, index, parameter).
    argument_round_trips: set[tuple[str, int, str]] = field(default_factory=set)
    # Methods that move a module looked up on ``self`` by a built name to the CPU and back (``net =
    # getattr(self, 'net' + name)``; ``net.module.cpu()``, then ``net.cuda()``): (method, the
    # attribute prefix, "" for any; the lookup and the moves as written).
    self_round_trips: set[tuple[str, str, str]] = field(default_factory=set)
    # Optimizers over such an attribute of a class that inherits such a method.
    inherited_round_trips: dict[cst.Call, InheritedRoundTrip] = field(default_factory=dict)
    # Callables that read an argument's parameters (``p.parameters()``): (name, index, parameter).
    parameter_readers: set[tuple[str, int, str]] = field(default_factory=set)
    # `if args.gpu is not None:` guards around input moves (DeviceFacts.index_guards): True
    # where the guard goes (every model of the file ends on the XLA device, so what feeds
    # it must too), False where it stays and is reported.
    input_guards: dict[cst.If, bool] = field(default_factory=dict)
    # A script that trains but names no device anywhere (it runs on the CPU): nothing is
    # ported (a barrier or an XLA optimizer step alone would not move it) and one finding
    # says so, at its first training loop or step.
    device_less: cst.CSTNode | None = None
    # Its model, built by a call of a package the tool does not follow (device/library_models.py):
    # the callee as written and the package (``("timm.create_model", "timm")``), named in the finding.
    device_less_library: tuple[str, str] | None = None
    # The module moves something or names a device somewhere (a project module whose model
    # class or factory does not leaves what the importing script builds on the CPU).
    names_device: bool = False
    # optimizer.step() calls to rewrite (none under DistributedDataParallel, which already
    # all-reduces), and zero-argument .step() calls in training loops on something the
    # analysis cannot tell is an optimizer.
    optimizer_steps: dict[cst.Call, OptimizerStep] = field(default_factory=dict)
    unrecognized_steps: set[cst.Call] = field(default_factory=set)
    # Calls of a package the tool does not follow that are handed an optimizer no code of the file
    # steps: the library runs its steps (training/library_steppers.py).
    library_steppers: dict[cst.Call, LibraryStepper] = field(default_factory=dict)
    # ``self.call_hook('after_train_iter')`` in a loop of a project's mmcv runner class (subclass or
    # registered in mmcv's RUNNERS), the class's name: mmcv's OptimizerHook steps there, with no
    # barrier in the loop (training/hooked_runners.py; XLA307, at the call).
    hooked_runner_steps: dict[cst.Call, str] = field(default_factory=dict)
    # Steps that stay plain in a file whose model is an FSDP one wrapped elsewhere (the
    # annotation that says so): FSDP reduce-scatters its gradients itself.
    fsdp_steps: dict[cst.Call, cst.Annotation] = field(default_factory=dict)
    # Steps that stay plain because their optimizer comes from the caller, in a file that a
    # file of the run wrapping a model in FSDP imports: which model it steps is not known here.
    # (call -> the function it is in, qualified)
    caller_fsdp_steps: dict[cst.Call, str] = field(default_factory=dict)
    # Steps ported on what the function is handed (in a file another file of the run imports),
    # their finding held until a file of the run is seen handing an optimizer there.
    caller_optimizers: dict[cst.Call, CallerOptimizer] = field(default_factory=dict)
    # Calls that hand the loss and an optimizer to a callable (a scaler wrapper such as
    # ``loss_scaler(loss, optimizer, ...)``), which runs the backward pass and the step.
    step_wrappers: dict[cst.Call, str] = field(default_factory=dict)
    # Statements that step an optimizer outside any loop, in functions that this file runs
    # outside its training loops (a demo that trains one step): the barrier goes right after.
    lone_steps: set[cst.SimpleStatementLine] = field(default_factory=set)
    # The statements that take a training loop's step under a thread lock: the barrier goes right
    # after each, inside the lock (training/locked_steps.py).
    locked_steps: dict[cst.BaseStatement, LockedStep] = field(default_factory=dict)
    # Optimizer steps (and calls that run one) that no loop of this file drives, in a file
    # that no other file of the run imports: reported (training/drivers.py).
    undriven_steps: dict[cst.Call, UndrivenStep] = field(default_factory=dict)
    # For other files (qualified names, see project/summary_from_facts.py): the callables that run
    # one training step per call, and those that run a training loop.
    step_callables: set[str] = field(default_factory=set)
    # Of those, the ones that step an optimizer (not only a backward pass: ``LossScaler.backward``).
    optimizer_step_callables: set[str] = field(default_factory=set)
    training_callables: set[str] = field(default_factory=set)
    # Those that run a training loop of the file through the functions they call (``fit`` whose
    # epoch loop calls ``self.train_epoch()``): what a method called by its name may run.
    loop_runners: set[str] = field(default_factory=set)
    # Step callables that end the step with the barrier themselves (already XLA code).
    synced_callables: set[str] = field(default_factory=set)
    # Step callables of other project modules that this file calls: (module path, name).
    driven_callables: set[tuple[str, str]] = field(default_factory=set)
    # Functions that return a function they define (a factory: ``train = make_train(...)``
    # then ``train(x)`` runs the inner one): function -> the inner function's qualified name.
    factories: dict[str, str] = field(default_factory=dict)
    # Factories whose returned function trains only when a parameter is true: (index, parameter).
    factory_switches: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Functions whose training loops call a positional parameter (``loss_scaler(loss,
    # optimizer)``): (function, index without self, parameter).
    called_parameters: set[tuple[str, int, str]] = field(default_factory=set)
    # Methods that a training loop of their class calls on ``self`` (``for ...: self.train_step()``
    # in ``Trainer.fit``): (class, method); a subclass's override of one is driven by that loop.
    self_driven: set[tuple[str, str]] = field(default_factory=set)

    def is_optimizer(self, name: str | None) -> bool:
        if name is None or name in self.schedulers:
            return False
        last = name.rsplit(".", 1)[-1].lower()
        return name in self.optimizers or ("optim" in last and "sched" not in last)

    def is_scheduler(self, name: str | None) -> bool:
        """A scheduler: known as one, or named like one (``lr_scheduler``, ``self.scheduler``, the
        target of ``for sched in self.lr_schedulers``): its ``step()`` takes no training step."""
        if name is None or name in self.optimizers:
            return False
        return name in self.schedulers or "sched" in name.rsplit(".", 1)[-1].lower()


@dataclass(repr=False, eq=False)
class LoaderFacts:
    # Names (and attributes) that hold a DataLoader of this file, however they are called.
    names: set[str] = field(default_factory=set)
