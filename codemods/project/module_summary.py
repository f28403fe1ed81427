"""What the other files of a project need to know of a module (plain data, no LibCST: a run
that skips every file never imports it; project/summary_from_facts.py makes summaries from fact
sheets; how a file looks up the modules it imports is project/import_context.py).

A summary is plain data (it crosses process boundaries): the module's callables that run
a training step each call, that run a training loop, that choose a device, that use
mixed precision; and whether the module still needs converting.  Names are qualified
within the module: ``train_one_epoch``, ``Trainer.train``, ``NativeScaler.__call__``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class UnmovedFeeding(NamedTuple):
    """A callable whose loop over a loader handed in feeds batches it does not move to a
    module handed in (``def train_one_epoch(model, data_loader, ...): for x, y in
    data_loader: model(x, y)``)."""

    callable: str  # qualified within its module
    model_index: int  # of the module's parameter, without self
    model: str  # the module's parameter
    loader_index: int
    loader: str  # the loader's parameter
    unmoved: tuple[str, ...]  # the batch names that reach the module unmoved
    # The callable only iterates the loader and takes its ``len`` (or hands it on where a
    # callable only does that): a device loader can stand in for it.
    only_iterated: bool
    # The reads of its unmoved batch parts that need them on the CPU (``meta["center"].numpy()``): a
    # device loader, which moves every tensor of each batch, would make them fail.
    host_reads: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModuleSummary:
    path: str = ""  # as findings name it (the project fills it in)
    steps: frozenset[str] = frozenset()
    # Of steps, those that step an optimizer (not only a backward pass: ``LossScaler.backward``).
    optimizer_steps: frozenset[str] = frozenset()
    trainers: frozenset[str] = frozenset()
    # Callables that run a training loop of the module through the callables they call (``fit``
    # calling ``self.train_epoch()``): what a method called by its name may run (ImportContext.named_methods).
    loop_runners: frozenset[str] = frozenset()
    # Of trainers, those whose training loops Accelerate (Lightning, Fabric) runs: nothing to port there.
    framework_trainers: frozenset[str] = frozenset()
    devices: frozenset[str] = frozenset()
    # Top-level callables and classes that run an op of compiled CUDA kernels of a third-party
    # module (BasicSR's basicsr.ops): (name, the op).
    kernel_users: tuple[tuple[str, str], ...] = ()
    names_device: bool = False  # it moves something or names a device somewhere
    amp: frozenset[str] = frozenset()  # top-level callables that build a gradient scaler or enter autocast
    amp_scalers: frozenset[str] = frozenset()  # those of them that build a gradient scaler
    amp_autocasts: frozenset[str] = frozenset()  # those of them that enter autocast
    # Methods (``Trainer.step``) that enter autocast or build a scaler, themselves or through a
    # method of their class they call on ``self`` (AmpFacts.method_owners).
    amp_methods: frozenset[str] = frozenset()
    # Still needs converting: neither converted in this run nor ported already.
    pending: bool = False
    # The file is not parsed (it names no torch, pipeline.is_read): what it calls is not known
    # (project_scans.unseen_callers).
    unread: bool = False
    # Names it imports from elsewhere (a package's __init__ re-exporting): name -> (module, name there).
    imported: tuple[tuple[str, str, str], ...] = ()
    # Callables that move an argument to the device: (name, index without self, parameter,
    # whether it ends on the XLA device on every path, and else the parameter that hands in
    # the device: its index and the device as written from it (``device``, ``args.device``),
    # or -1 and ""; and the move as written; index -1: a parameter passed by keyword only,
    # or a key of ``**kwargs``); callables that build an
    # optimizer over an argument's parameters: (name, index, parameter).
    argument_moves: frozenset[tuple[str, int, str, bool, int, str, str]] = frozenset()
    # Callables that move an argument to the device only if a parameter of theirs is true:
    # (name, the parameter's index without self or -1 for a keyword-only one, the parameter).
    flag_moves: frozenset[tuple[str, int, str]] = frozenset()
    # Callables that pick the device with a parameter (``torch.device("cuda" if use_cuda else
    # "cpu")``): (name, the parameter's index without self or -1 for a keyword-only one, the parameter).
    flag_choices: frozenset[tuple[str, int, str]] = frozenset()
    # Callables that move the tensors of an argument to the device in place (``batch[key] =
    # val.cuda()``): (name, index without self, parameter).
    batch_movers: frozenset[tuple[str, int, str]] = frozenset()
    # Callables that move tensors to a device their caller hands in: (callable, the parameter's
    # index without self or -1 for a keyword-only one, the parameter, a move as written).
    device_parameters: frozenset[tuple[str, int, str, str]] = frozenset()
    optimizer_builders: frozenset[tuple[str, int, str]] = frozenset()
    # ``__init__`` methods that hand a parameter on to their base's (TrainingFacts.base_init_arguments).
    base_init_arguments: frozenset[tuple[str, int, str, str, int, str]] = frozenset()
    # Module classes whose ``__init__`` builds an optimizer over the instance's own
    # parameters: (class, the optimizer's attribute, the parameters whose truth skips it);
    # moving an instance later strands it.
    own_optimizers: frozenset[tuple[str, str, tuple[str, ...]]] = frozenset()
    # Those whose optimizers hold only the parameters of modules handed to ``__init__``:
    # (class, those parameters as (name, index)); moved first by the caller, they strand nothing.
    own_optimizer_children: frozenset[tuple[str, tuple[tuple[str, int], ...]]] = frozenset()
    # Module classes whose ``__init__`` collects the instance's parameters into an attribute:
    # (class, attribute, the assignment as written, the module it reads); an optimizer over it
    # after a move is stale.
    parameter_lists: frozenset[tuple[str, str, str, str]] = frozenset()
    # LightningModules whose ``configure_optimizers`` returns an optimizer handed to ``__init__``:
    # (class, the parameter's index without self, its name, the attribute it is kept in).
    lightning_optimizer_receivers: frozenset[tuple[str, int, str, str]] = frozenset()
    # Methods of module classes that return an optimizer over the instance's own parameters
    # (``Net.get_optimizer``); module classes whose ``__init__`` binds what such a method of a
    # child may return (``self.optimizer = self.net.get_optimizer()``), the method being of a
    # class the module does not import: (class, attribute, method, skips); a file that moves an
    # instance and imports a class with that method strands it.
    optimizer_methods: frozenset[str] = frozenset()
    method_optimizers: frozenset[tuple[str, str, str, tuple[str, ...]]] = frozenset()
    # What methods of module classes do to the instance, in order (TrainingFacts.method_effects):
    # (``Cls.method``, its effects: ("built", attribute, False, the module whose parameters it
    # holds) | ("move", the move, goes to XLA, "")).
    method_effects: tuple[tuple[str, tuple[tuple[str, str, bool, str], ...]], ...] = ()
    # Classes whose methods build an optimizer or a scheduler onto an attribute of the
    # instance: (class, attribute, "optimizer" or "scheduler"); ``gan.opt_g.step()`` on an
    # instance of one steps that optimizer.
    held_steppers: frozenset[tuple[str, str, str]] = frozenset()
    # Functions that return a sparse tensor (``torch.sparse_coo_tensor(...)``): moving what
    # they return to the XLA device raises.
    sparse_returns: frozenset[str] = frozenset()
    # The elements of a returned tuple that are one (``return adj, features``: (function, 0)).
    sparse_element_returns: frozenset[tuple[str, int]] = frozenset()
    # The classes holding a sparse Parameter or buffer, which a move of the module takes to the device (class, attribute).
    sparse_holders: frozenset[tuple[str, str]] = frozenset()
    # Functions and methods whose every return reads a number to the host (``Net.get_step``
    # returning ``self.step.item()``): a call of one gives a Python number, no device tensor.
    host_returns: frozenset[str] = frozenset()
    # Functions and methods whose every return is a ``DataLoader(...)`` that ``accelerator.prepare``
    # did not return (huggingface/accelerate_loaders.py): an Accelerate loop over one needs the barrier.
    loader_returns: frozenset[str] = frozenset()
    # Methods whose return an Accelerate training loop of their class iterates as its loader and
    # the tool cannot follow (``loader = self.create_train_dataloader()``, abstract there): (class,
    # method); a subclass's override returning an unprepared loader leaves that loop without a step end.
    self_loaders: frozenset[tuple[str, str]] = frozenset()
    # Collectives its functions run with no check that a process group is started
    # (distributed/collectives.py): (``torch.distributed.all_gather``, line), in code order.
    collectives: tuple[tuple[str, int], ...] = ()
    # Functions that hand a parameter defaulting to False to an embedding's ``sparse=``:
    # (name, index without self or -1, parameter); and calls of such functions of other
    # modules that may pass True: (that module's path, the function, the call as named).
    sparse_functions: frozenset[tuple[str, int, str]] = frozenset()
    # Module-level functions that resize a parameter in place (``v.data.resize_(size)``): (name,
    # the parameter's index); a call handing one a tensor on the XLA device breaks there.
    resizing_functions: frozenset[tuple[str, int]] = frozenset()
    sparse_calls: frozenset[tuple[str, str, str]] = frozenset()
    # Calls of other modules' functions: (that module's path, the function), under a CUDA
    # availability check (never run on XLA), and anywhere else.
    cuda_guarded_calls: frozenset[tuple[str, str]] = frozenset()
    other_calls: frozenset[tuple[str, str]] = frozenset()
    # In a file that wraps a model in DistributedDataParallel: the project modules it
    # imports (their paths), whose mixed-precision steps DDP's backward already reduces.
    ddp_imports: frozenset[str] = frozenset()
    # Callables that read an argument's parameters (``[p for p in m.parameters() if ...]``).
    parameter_readers: frozenset[tuple[str, int, str]] = frozenset()
    argument_round_trips: frozenset[tuple[str, int, str]] = frozenset()
    # Methods that move ``getattr(self, <built name>)`` to the CPU and back (training/round_trips.py).
    self_round_trips: frozenset[tuple[str, str, str]] = frozenset()
    # Module-level names that alias a torch name (fairseq2's ``Device: TypeAlias = device``):
    # (name, torch name); a file that imports the name reads it as that torch name.
    aliases: tuple[tuple[str, str], ...] = ()
    # Callables that run a training step and end it with the step barrier themselves
    # (already XLA code): a loop that calls them needs no barrier of its own.
    synced: frozenset[str] = frozenset()
    # Step callables of other project modules that this one calls, and so drives (from a
    # loop, or from a step function of its own): (their module's path, their name).
    drives: frozenset[tuple[str, str]] = frozenset()
    # Functions that return a function they define: (function, the inner one's name).
    factories: tuple[tuple[str, str], ...] = ()
    # Factories whose returned function trains only when a parameter is true: (factory, index, parameter).
    factory_switches: tuple[tuple[str, int, str], ...] = ()
    # Callables whose training loops call a positional parameter: (callable, index without
    # self, parameter);
    # a file that hands one a step callable (an instance with a stepping ``__call__``) drives it.
    called_parameters: frozenset[tuple[str, int, str]] = frozenset()
    # Methods that a training loop of their class calls on ``self``: (class, method); a
    # subclass's override of one, in a module that imports the class, is driven by that loop.
    self_driven: frozenset[tuple[str, str]] = frozenset()
    # Functions that return a tuple holding an instance of a project class: (function,
    # position, the class as this module names it); ``model, optimizer = get_model()``.
    returned_instances: tuple[tuple[str, int, str], ...] = ()
    # What this module hands the ``__init__`` of project classes that define their own ``cuda``
    # (``QLearner(mac)``, ``le_REGISTRY[k](mac)``): (their module's path, the class, the argument's
    # index without self or -1 and its keyword, the class of the argument where it is an instance of a
    # project class with its own ``cuda`` and no torch module, else ""; that class's module's path
    # where it is pending, else "").  device/own_cuda.py, for ``self.mac.cuda()`` of ``self.mac = mac``.
    own_cuda_arguments: frozenset[tuple[str, str, int, str, str, str]] = frozenset()
    # What this module hands callables of other project modules whose attributes are CUDA indices
    # here (``Net(args)``, ``"cuda:" + str(args.device)``): (their module's path, their name, the
    # argument's index without self or -1 and its keyword, the attribute).  device/string_indices.py.
    index_attributes_handed: frozenset[tuple[str, str, int, str, str]] = frozenset()
    # Moves to an attribute of a parameter of a top-level function or a class's ``__init__``
    # (``.to(args.device)`` in ``Net.__init__(self, args)``): (the callable, the parameter's index
    # without self, the parameter, the attribute, the move's code and line); none where this run
    # converts the module (its own XLA103 ports them).
    parameter_attribute_moves: frozenset[tuple[str, int, str, str, str]] = frozenset()
    # Functions that return a name of the module looked up at run time (``return
    # globals()[name]``): what they return may be any class of the module.
    globals_lookups: frozenset[str] = frozenset()
    # Functions that return a model still on the CPU with an optimizer built over its
    # parameters (``return tensorizer, model, optimizer``): (function, the model's position,
    # the optimizer's); a caller that moves the model strands the optimizer.
    returned_optimizers: frozenset[tuple[str, int, int]] = frozenset()
    # Top-level functions that return what a call returns: (function, the module the callee is
    # imported from inside the function, "" for a name of the module's; the callee as written, or
    # the module-level dict of callables it calls one of (``return FACTORIES[kind](cfg)``: index
    # -2), or "" for a dict handed in as a parameter (``return table[kind](args)``: its index); the
    # call's positional arguments as written, "" for what is no name).
    forwards: tuple[tuple[str, str, str, int, tuple[str, ...]], ...] = ()
    # Callables of other project modules that this one hands an FSDP model to, which train it:
    # (their module's path, their name).
    trains_fsdp: frozenset[tuple[str, str]] = frozenset()
    # Callables of other project modules that this one hands a known optimizer: (their module's
    # path, their name, the argument's index without self, or -1 and its keyword).
    hands_optimizers: frozenset[tuple[str, str, int, str]] = frozenset()
    # Optimizers this module hands callables of other project modules: (their module's path, their
    # name, the argument's index without self, or -1 and its keyword, whether it is an instance of a
    # project class whose own ``step`` steps the torch optimizer it holds; project/handed_wrappers.py).
    hands_wrappers: frozenset[tuple[str, str, int, str, bool]] = frozenset()
    # Top-level callables that start the process group only under a launcher check that
    # stays (``if 'RANK' in os.environ``): torch_xla.launch sets none of those variables.
    launch_checks: frozenset[str] = frozenset()
    # Top-level callables that start a process group (``dist.init_process_group(...)``).
    group_starters: frozenset[str] = frozenset()
    # Top-level functions that, as converted, still read RANK, LOCAL_RANK or WORLD_SIZE from the
    # environment, or call one of the module's that does: (function, what; distributed/env_ranks.py).
    env_rank_readers: tuple[tuple[str, str], ...] = ()
    # The module's processes are started once per XLA device (torch_xla.launch or xmp.spawn, as
    # written or as the port writes them for mp.spawn and a torchrun-style main guard): they
    # have no RANK, WORLD_SIZE or MASTER_ADDR in their environment.
    launched: bool = False
    # A one-device script that ``convert --distributed`` starts so (a main guard, mp.spawn or ``_mp_fn``).
    launchable: bool = False
    # Running the module starts nothing (EntryFacts.starts), though the port wrote its launcher
    # (``mp.spawn`` in a library function): the report names no way to start it.
    starts_nothing: bool = False
    # Functions and methods that return a device: (name, whether it is the XLA device on every
    # path after the port, or None if that could not be followed; else what it returns there).
    device_returns: tuple[tuple[str, bool | None, str], ...] = ()
    # Callables whose loops feed batches to a module handed in as a parameter (an evaluation
    # function): a model on the XLA device handed to one must get its batches there.
    feeding: frozenset[str] = frozenset()
    # Callables whose loop feeds the batches of a loader handed in, unmoved, to a module handed
    # in (see ObligationFacts.unmoved_feeding): a caller that hands one a model on the XLA
    # device wraps the loader it hands in a device loader.
    unmoved_feeding: frozenset[UnmovedFeeding] = frozenset()
    # Data set classes that are iterable-style (a DataLoader over one refuses a sampler).
    iterable_datasets: frozenset[str] = frozenset()
    # Classes that derive from nn.DataParallel: (class, whether it or a base of the project
    # defines its own ``scatter``, which never runs without CUDA).
    data_parallel_classes: tuple[tuple[str, bool], ...] = ()
    # Functions that return a model wrapped in nn.DataParallel or in DDP with device_ids, whose
    # forward moved the inputs to the GPU on CUDA and does not on XLA: (function, the position
    # in the tuple it returns or -1 for the whole value, the wrapper as written and what its
    # forward did, as a finding says it).
    scattering_returns: tuple[tuple[str, int, str], ...] = ()
    # Classes that derive from transformers' TrainingArguments (or a TRL config).
    argument_classes: frozenset[str] = frozenset()
    # Classes that derive from a transformers Trainer (or a TRL Trainer, or such a class of the project).
    trainer_classes: frozenset[str] = frozenset()
    # Those whose ``get_train_dataloader`` returns a loader Accelerate never prepared (no step barrier on XLA).
    unbarriered_trainers: frozenset[str] = frozenset()
    # Classes whose ``forward`` is a module's (``nn.Module`` subclasses: TrainingFacts.forward_classes).
    forward_classes: frozenset[str] = frozenset()
    # Classes that derive from torch's DistributedDataParallel (DistributedFacts.ddp_classes).
    ddp_classes: frozenset[str] = frozenset()
    # Flags that functions return on an object (``args.cuda``): (function, attribute, what it
    # is on an XLA host after the port, None if not known; the code of its value).
    device_flags: tuple[tuple[str, str, bool | None, str], ...] = ()
    # The defaults of its argparse flags named like a device: (attribute, the default as written).
    flag_defaults: tuple[tuple[str, str], ...] = ()
    # Functions whose returns end off XLA when the parameter at an index (without self) is "xla", the
    # value the port writes into a device flag (device/flag_helpers.py): (function, index, why).
    xla_string_returns: tuple[tuple[str, int, str], ...] = ()
    # Its argparse device flags whose default or a choice is a CUDA string ("xla" once ported).
    ported_flags: frozenset[str] = frozenset()
    # Module-level names like a device that stay None unless a function the module never calls
    # sets them (``device = None``; ``def set_gpu_mode(on): global device; device = ...``):
    # (name, those functions).
    unset_devices: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Callables that set a device on an attribute of a parameter (``parse_gpu(args)`` sets
    # ``args.device``): (callable, index without self, attribute, where it ends on an XLA host
    # after the port, None if not known; what it is there).
    parameter_devices: tuple[tuple[str, int, str, bool | None, str], ...] = ()
    # Callables that call into a module that still needs converting (directly or through
    # others): (callable, that module's path).
    pending_calls: tuple[tuple[str, str], ...] = ()
    # Attributes that conditions around device code read here or in the project modules this
    # one imports (``use_gpu`` of ``if self.args.use_gpu:``).
    condition_attributes: frozenset[str] = frozenset()
    # What converting this module would port or report as an error, by the top-level name
    # whose code holds it ("" for module-level code, which runs on import): (name, cause,
    # the code and its line, as a finding names it; whether the conversion ports it, or only
    # reports it); see codemods/project/holdings.py.
    holds: tuple[tuple[str, str, str, bool], ...] = ()
    # Of those held by a class: (class, cause, methods) where every such finding is in one of those
    # methods, which run only when a caller names them (holdings.caller_only_methods: ``Agent.load``
    # with ``torch.load(path)``); a file that never calls them does not reach it.
    method_holds: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # The names among ``named_attributes`` that only such methods name (holdings.caller_only_names):
    # (method, names), which a run reaches only where something it reaches calls the method.
    caller_only_names: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The same as ``holds``, by the method of a top-level class whose code holds it (``FitMixin.fit``):
    # what a call of that method reaches.
    method_findings: tuple[tuple[str, str, str, bool], ...] = ()
    # The attributes the module names on anything but an import from outside the project, and the
    # identifiers its strings hold (ProjectFacts.named_attributes): the methods it may call.
    named_attributes: frozenset[str] = frozenset()
    # Names that top-level functions and classes use (calls, base classes): (name, what it
    # uses, as written: a top-level name of this module or an imported one, ``builders.build``).
    reaches: tuple[tuple[str, str], ...] = ()
    # Module-level dicts whose values are all names, a class or function of the module or an
    # imported one (``train_factory = {'ctdet': CtdetTrainer}``): (dict, the values as written).
    name_tables: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Top-level classes: (class, its bases as written, the methods it defines): a method it
    # does not define is its bases' (``CtdetTrainer.train`` is ``BaseTrainer.train``).
    classes: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()
    # Functions that return a CUDA availability check (``return torch.cuda.is_available() and
    # torch.cuda.device_count() > 0``), False on an XLA host: (name, the code returned).
    check_wrappers: tuple[tuple[str, str], ...] = ()

    def check_wrapper(self, name: str) -> str | None:
        """What ``name`` returns, where it is a function of the module that returns an availability check."""
        return next((returned for wrapper, returned in self.check_wrappers if wrapper == name), None)

    def held_in_methods(self, name: str, cause: str) -> tuple[str, ...]:
        """The methods of the class ``name`` that hold all it holds of ``cause``, each run only when a
        caller names it (empty: not so restricted)."""
        return next((methods for cls, c, methods in self.method_holds if (cls, c) == (name, cause)), ())

    def held_in(self, method: str) -> list[tuple[str, str, bool]]:
        """What the method ``Cls.method`` holds itself: (cause, the code and its line, ported)."""
        return [(cause, what, ported) for name, cause, what, ported in self.method_findings if name == method]

    def alias_of(self, name: str) -> str | None:
        return next((torch_name for local, torch_name in self.aliases if local == name), None)

    def origin_of(self, name: str) -> tuple[str, str] | None:
        """Where an imported name of this module comes from: (module as written, name)."""
        head, _, rest = name.partition(".")
        for local, module, there in self.imported:
            if local == head:
                return module, ".".join(p for p in (there, rest) if p)
        return None

    def data_parallel_class(self, name: str) -> bool | None:
        """Whether the class ``name`` scatters its inputs itself; None: not a DataParallel class."""
        return next((scatters for cls, scatters in self.data_parallel_classes if cls == name), None)

    def scattering_return(self, name: str, index: int) -> str | None:
        """The wrapper whose input move the function ``name`` returns at ``index`` (-1: whole), or None."""
        return next((w for f, i, w in self.scattering_returns if f == name and i == index), None)

    def inherits(self, name: str) -> tuple[str, ...]:
        """``Cls.method`` where the module's class ``Cls`` does not define ``method``: its bases
        as written (empty: it defines it, or ``Cls`` is no class of the module)."""
        cls, _, method = name.partition(".")
        if not method or "." in method:
            return ()
        return next((bases for c, bases, methods in self.classes if c == cls and method not in methods), ())

    def defines(self, name: str) -> bool:
        """``Cls.method`` where the module's class ``Cls`` defines ``method`` itself."""
        cls, _, method = name.partition(".")
        return (
            bool(method) and "." not in method and any(c == cls and method in methods for c, _, methods in self.classes)
        )

    def table_of(self, name: str) -> tuple[str, ...]:
        """The names the module's dict ``name`` holds as its values (empty: no such dict)."""
        return next((values for table, values in self.name_tables if table == name), ())

    def runs_step(self, name: str) -> bool:
        return name in self.steps

    def steps_optimizer(self, name: str) -> bool:
        """Calling ``name`` steps an optimizer (not only a backward pass)."""
        return name in self.optimizer_steps

    def made_by(self, name: str) -> str | None:
        """The function that calling what ``name`` returns runs, if ``name`` is a factory."""
        return next((inner for factory, inner in self.factories if factory == name), None)

    def step_switch(self, name: str) -> tuple[int, str] | None:
        """The parameter of the factory ``name`` that the function it returns trains only when true."""
        return next(((index, param) for factory, index, param in self.factory_switches if factory == name), None)

    def parameters_called(self, name: str) -> list[tuple[int, str]]:
        return sorted((index, param) for function, index, param in self.called_parameters if function == name)

    def returned_instance(self, name: str, position: int) -> str | None:
        """The project class (as this module names it) of the instance that ``name`` returns at ``position``."""
        return next((cls for function, at, cls in self.returned_instances if (function, at) == (name, position)), None)

    def drives_override(self, class_name: str, method: str) -> bool:
        """A training loop of ``class_name`` calls ``method`` on ``self``."""
        return (class_name, method) in self.self_driven

    def syncs(self, name: str) -> bool:
        return name in self.synced

    def trains(self, name: str) -> bool:
        """``name`` runs a training loop of the module: its own, or through the callables it calls
        (``train`` calling ``self.run_epoch("train", ...)``), or takes an optimizer step."""
        return name in self.trainers or name in self.steps or name in self.loop_runners

    def trains_unported(self, name: str) -> bool:
        """``name`` trains (``trains``) on terms the port has to change: not only in training loops
        that Accelerate (Lightning, Fabric) runs, which need nothing of it."""
        return self.trains(name) and not (
            name in self.framework_trainers and name not in self.steps and name not in self.loop_runners
        )

    def chooses_device(self, name: str) -> bool:
        return name in self.devices

    def uses_amp(self, name: str) -> bool:
        """Calling ``name`` (a top-level callable, or a method of a top-level class) runs code that
        sets up CUDA mixed precision; not ``train_one_epoch.items``, a method of what a function
        returns (``train_stats = train_one_epoch(...)``, a dict), which its own code does not hold;
        and of a class's methods only those that hold it or call a method that does
        (``trainer.load_checkpoint`` of a class whose ``__init__`` builds the scaler sets up none)."""
        head, _, rest = name.partition(".")
        return head in self.amp and (not rest or (self.defines_class(head) and name in self.amp_methods))

    def amp_parts(self, name: str) -> tuple[str, ...]:
        """What of CUDA mixed precision ``name`` (``uses_amp``) holds: its gradient scaler, its autocast,
        as a finding names them."""
        head = name.split(".")[0]
        return tuple(
            part
            for part, owners in (("gradient scaler", self.amp_scalers), ("autocast", self.amp_autocasts))
            if head in owners
        )

    def defines_class(self, name: str) -> bool:
        return any(cls == name for cls, _, _ in self.classes)

    def device_of(self, name: str) -> tuple[bool | None, str] | None:
        """Where the device that ``name`` returns ends on an XLA host (None: not a device)."""
        return next(((on_xla, why) for function, on_xla, why in self.device_returns if function == name), None)

    def flag_of(self, name: str, attribute: str) -> tuple[bool | None, str] | None:
        """What the flag ``attribute`` of what ``name`` returns is on an XLA host (None: no such flag)."""
        return next(
            (
                (on_xla, code)
                for function, attr, on_xla, code in self.device_flags
                if function == name and attr == attribute
            ),
            None,
        )

    def xla_string_return(self, name: str, index: int) -> str | None:
        """Where ``name``'s returns end off XLA with its parameter ``index`` "xla" (None: not off XLA)."""
        return next((why for function, at, why in self.xla_string_returns if function == name and at == index), None)

    def flag_default(self, attribute: str) -> str | None:
        """The default of the module's argparse flag ``attribute`` (a device flag), as written."""
        return dict(self.flag_defaults).get(attribute)

    def device_set_on(self, name: str, index: int, attribute: str) -> tuple[bool | None, str] | None:
        """Where the device that ``name`` sets on ``attribute`` of its argument ``index`` ends."""
        return next(
            (
                (on_xla, why)
                for function, position, attr, on_xla, why in self.parameter_devices
                if function in (name, f"{name}.__init__") and position == index and attr == attribute
            ),
            None,
        )

    def pending_via(self, name: str) -> str | None:
        """The path of a module still to convert that calling ``name`` runs code of."""
        return next((path for function, path in self.pending_calls if function in (name, f"{name}.__init__")), None)

    def feeds(self, name: str) -> bool:
        return name in self.feeding

    def feeds_unmoved(self, name: str) -> list[UnmovedFeeding]:
        return sorted(entry for entry in self.unmoved_feeding if entry.callable == name)

    def checks_launcher(self, name: str) -> bool:
        return name.split(".")[0] in self.launch_checks

    def reads_env_ranks(self, name: str) -> str | None:
        """What ``name`` reads of the launcher's variables (None: none)."""
        return dict(self.env_rank_readers).get(name.split(".")[0])

    def kernel_op(self, name: str) -> str | None:
        top = name.split(".")[0]
        return next((op for user, op in self.kernel_users if user == top), None)

    def starts_group(self, name: str) -> bool:
        return name.split(".")[0] in self.group_starters

    def moves_argument(
        self, name: str, index: int | None, keyword: str | None
    ) -> tuple[bool, tuple[int, str] | None, str] | None:
        """Calling ``name`` (a class: its ``__init__``) moves that argument to the device:
        whether to the XLA device on every path, and if not, where the device it goes to
        comes from (the index of the parameter, -1 for one passed by keyword only, and the
        device as written from it: ``args.device``), and the moves that may not go there,
        as written; None: it does not move it."""
        found = [moved for moved in self.argument_moves if _same_argument(moved, name, index, keyword)]
        if not found:
            return None
        if all(moved[3] for moved in found):
            return True, None, ""
        elsewhere = sorted(moved for moved in found if not moved[3])
        devices = {(moved[4], moved[5]) for moved in elsewhere}
        device_at = devices.pop() if len(devices) == 1 and next(iter(devices))[1] else None
        return False, device_at, "`, `".join(dict.fromkeys(moved[6] for moved in elsewhere))

    def moves_batch(self, name: str, index: int) -> bool:
        """Calling ``name`` moves the tensors of its argument at ``index`` to the device in place."""
        return any(function == name and at == index for function, at, _ in self.batch_movers)

    def device_parameters_of(self, name: str) -> list[tuple[int, str, str]]:
        """The parameters of ``name`` (a class: its ``__init__``) that hand in a device it moves
        tensors to: (index, parameter, a move as written)."""
        return sorted(
            (index, param, move)
            for function, index, param, move in self.device_parameters
            if function in (name, f"{name}.__init__")
        )

    def flag_moves_of(self, name: str) -> list[tuple[int, str]]:
        """The parameters of ``name`` (a class: its ``__init__``) that it moves to the device only if true."""
        return sorted(
            (index, param) for function, index, param in self.flag_moves if function in (name, f"{name}.__init__")
        )

    def flag_choices_of(self, name: str) -> list[tuple[int, str]]:
        """The parameters of ``name`` (a class: its ``__init__``) that it picks the device with."""
        return sorted(
            (index, param) for function, index, param in self.flag_choices if function in (name, f"{name}.__init__")
        )

    def base_init_handed(
        self, name: str, index: int | None, keyword: str | None
    ) -> list[tuple[str, int | None, str | None]]:
        """Calling ``name`` (a class: its ``__init__``) hands that argument on to the ``__init__`` of a
        base: (the base as written in this module, the argument's index there, or its keyword)."""
        handed = []
        for entry in sorted(self.base_init_arguments):
            if not _same_argument(entry, name, index, keyword):
                continue
            base = entry[3]
            if not base:  # ``super().__init__(...)``: the class's first base
                cls = entry[0].removesuffix(".__init__")
                base = next((bases[0] for c, bases, _ in self.classes if c == cls and bases), "")
            if base:
                handed.append((base, entry[4] if entry[4] >= 0 else None, entry[5] or None))
        return handed

    def builds_optimizer(self, name: str, index: int | None, keyword: str | None) -> bool:
        return any(_same_argument(built, name, index, keyword) for built in self.optimizer_builders)

    def reads_parameters(self, name: str, index: int | None, keyword: str | None) -> bool:
        return any(_same_argument(read, name, index, keyword) for read in self.parameter_readers)

    def round_trips_argument(self, name: str, index: int | None, keyword: str | None) -> bool:
        """Calling ``name`` moves that argument to the CPU and back to a device."""
        return any(_same_argument(trip, name, index, keyword) for trip in self.argument_round_trips)


def _same_argument(entry: tuple[object, ...], name: str, index: int | None, keyword: str | None) -> bool:
    callable_name, position, parameter = entry[:3]
    if keyword is None and str(parameter).startswith("*"):  # ``*modules``: every argument from its index on
        return callable_name in (name, f"{name}.__init__") and index is not None and index >= position  # type: ignore[operator]  # an entry's position is an int
    return callable_name in (name, f"{name}.__init__") and (
        position == index if keyword is None else parameter == keyword
    )


@dataclass(frozen=True)
class Found:
    """An imported name that a module of the project defines (summary None: that module
    could not be read or summarised)."""

    summary: ModuleSummary | None
    name: str  # qualified within the module; "" for the module itself


# What ``from <module> import *`` binds: (local name, the qualified name of what the module
# imported under it, or None for a name the module binds itself).
StarNames = tuple[tuple[str, "str | None"], ...]
