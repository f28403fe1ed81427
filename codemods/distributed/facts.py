"""The distributed concern's part of the fact sheet, which its analyses fill: how the
processes start (launch.py), where ranks and sizes are read (ranks.py), DDP and
DataParallel (ddp.py), the training loaders' samplers (samplers.py).

The script's processes are started by ``mp.spawn`` (spawn style), by a launcher that
runs the whole script per process such as torchrun (main style: the main guard's
code becomes ``_mp_fn``), by torch_xla already, or not at all (module style: the
training runs at module level, and no launcher can be added).  Once
``torch_xla.launch`` starts the processes, the launching process must not touch the
XLA runtime (it fails with "Runtime is already initialized"): ranks and sizes are
read from the runtime only in code that runs in the launched processes, and CUDA
device counts that the launching process hands to them are read again there.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

Style = Literal["spawn", "main", "module", "launched"]

# What the xla:// init method takes from the XLA runtime (and a CUDA device): the arguments
# of init_process_group that the port removes.
PROCESS_GROUP_DROPPED = frozenset({"world_size", "rank", "store", "device_id"})


@dataclass(frozen=True)
class ProcessGroup:
    """``init_process_group(...)``: what its backend and init method become.  An argument
    that is kept reads a variable or a flag whose values the tool makes "xla"/"xla://"."""

    arguments: tuple[tuple[str, cst.Arg], ...]  # by parameter name
    keep_backend: bool
    keep_init_method: bool
    # The statement line it is in (None: in a compound statement's header or a line with a
    # colon): where the MASTER_ADDR/MASTER_PORT settings of an env:// group go, just before.
    line: cst.SimpleStatementLine | None = None
    # The init method kept reads a command-line flag (``--dist-url``): the command line may give
    # another URL than the default the port makes "xla://" (tcp://), which needs the rank and
    # world size that xla:// takes from the runtime.
    init_method_from_flag: bool = False


@dataclass(frozen=True)
class Spawn:
    """``mp.spawn(fn, args=..., nprocs=...)``: the launch of the worker processes."""

    fn: cst.BaseExpression
    args: cst.BaseExpression | None
    start_method: cst.BaseExpression | None
    joins: bool  # join=True (the default): the call returns when the workers are done


@dataclass(frozen=True)
class SamplerPlan:
    """A training DataLoader that gets a DistributedSampler: the data set it reads (None:
    not a plain name, so it is reported) and its ``shuffle`` argument (moved to the sampler)."""

    dataset: str | None
    shuffle: cst.Arg | None


@dataclass(frozen=True)
class IterableData:
    """A training loader's data set that takes no sampler: the call that makes it, and the
    project module its class comes from when that module could not be read (it may be
    iterable-style: unknown)."""

    made_by: str
    unread_module: str | None = None


@dataclass(repr=False, eq=False)
class DistributedFacts:
    # DistributedDataParallel or FSDP is used: it reduces gradients itself (the optimizer
    # step stays plain, a mixed-precision step gets no all-reduce of its own).
    ddp: bool = False
    # ``convert --distributed``: make a one-device script multi-process.
    requested: bool = False
    # The script runs as several processes (or is asked to).
    multi_process: bool = False
    style: Style | None = None
    # ``add_argument("--launcher", choices=["none", "pytorch", ...], default="none")`` (OpenMMLab's and
    # BasicSR's scripts): the flag as written, whose default keeps the script non-distributed in
    # every process the XLA launcher starts.
    launcher_flag: str | None = None
    # What each library object the script builds (or hands on) that reads its own rank makes of the
    # processes: library_apis.LIBRARY_RANKS.
    library_ranks: list[str] = field(default_factory=list)
    process_groups: dict[cst.Call, ProcessGroup] = field(default_factory=dict)
    # Values of backend variables and flags (and init methods) that become "xla" / "xla://".
    backend_values: dict[cst.BaseExpression, str] = field(default_factory=dict)
    # Assertions on the backend read at run time (``assert dist.get_backend() in ["gloo", "nccl"]``,
    # ``== "nccl"``): the choices that gain "xla", or the "nccl" literal that becomes it (XLA114).
    asserted_backends: dict[cst.BaseExpression, cst.Assert] = field(default_factory=dict)
    # Ranks and sizes read from the environment, the process group, flags, CUDA: the
    # runtime concept each becomes; those in the launching process are only reported.
    runtime_reads: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Rank reads whose default, -1, says no launcher started the run (``int(os.getenv("RANK",
    # -1))``): the runtime's rank where several processes run, that default on one device.
    unlaunched_defaults: set[cst.CSTNode] = field(default_factory=set)
    parent_reads: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Reads of a ``--rank`` flag (``args.rank``, default and all) in the processes torch_xla
    # starts: every one of them gets the same command line, so the same rank.
    argv_ranks: set[cst.CSTNode] = field(default_factory=set)
    # Environment reads the tool does not rewrite (not turned into numbers).
    raw_env_reads: dict[cst.CSTNode, str] = field(default_factory=dict)
    # ``os.environ["MASTER_PORT"] = str(port)`` in the function that starts the process group,
    # with a value each process computes at run time (a free port, an MPI broadcast): the
    # xla:// rendezvous reads it in every process (the target -> the code of the value, and
    # whether an MPI broadcast computes it).
    varying_rendezvous: dict[cst.CSTNode, tuple[str, bool]] = field(default_factory=dict)
    # ``int(os.environ.get('RANK', -1)) != -1``, ``'LOCAL_RANK' in os.environ``: whether
    # the script runs as several processes (True: it does if the check holds).
    launched_checks: dict[cst.Comparison, bool] = field(default_factory=dict)
    # ``ckpt["Args"].local_rank is not None``: a saved run's flag tested as the script tests its own
    # (flag_tests.py); wrong against the port once that own test becomes True.
    saved_flag_tests: set[cst.Comparison] = field(default_factory=set)
    # The statement lines with an ``assert`` of such a check (``assert "RANK" in os.environ``):
    # the assert goes once its test is True.
    launch_assert_lines: set[cst.SimpleStatementLine | cst.SimpleStatementSuite] = field(default_factory=set)
    spawns: dict[cst.Call, Spawn] = field(default_factory=dict)
    # Workers whose parameters receive a CUDA device count from the launching process:
    # (parameter, runtime concept) read again at their start.
    rereads: dict[cst.FunctionDef, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # CUDA device counts in the launching process that only feed the workers (the runtime
    # concept each would be read as in a worker).
    launcher_counts: dict[cst.Call, str] = field(default_factory=dict)
    # CUDA device counts that say how many devices one process drives (they guard a
    # DataParallel wrap, ``if n_gpu > 1:``): 1 on XLA, one device per process.
    per_process_counts: set[cst.Call] = field(default_factory=set)
    # DDP constructions: the device arguments they drop, and whether they lack
    # gradient_as_bucket_view=True.
    ddp_calls: dict[cst.Call, tuple[tuple[cst.Arg, ...], bool]] = field(default_factory=dict)
    ddp_inputs: set[cst.Call] = field(default_factory=set)
    # The module's classes that derive from torch's DistributedDataParallel, here or through a
    # class of another project module (``class DDP(DistributedDataParallel)``).
    ddp_classes: set[str] = field(default_factory=set)
    # Constructions of such classes (of this module or another): the class as written.
    ddp_subclass_calls: dict[cst.Call, str] = field(default_factory=dict)
    # nn.DataParallel constructions: removed (True) or reported; their statements that
    # only rewrap a name (``model = DataParallel(model)``) go; ``.module`` accesses on
    # the unwrapped names become the name.
    data_parallel: dict[cst.Call, bool] = field(default_factory=dict)
    dp_statements: set[cst.SimpleStatementLine] = field(default_factory=set)
    module_accesses: set[cst.Attribute] = field(default_factory=set)
    # DataParallel constructions kept (reported) because the model leaves the file, where the
    # `.module` uses that expect the wrapper cannot be followed: where it goes.
    kept_data_parallel: dict[cst.Call, str] = field(default_factory=dict)
    # Of those, the ones kept because the file loads a state dict into a wrapped model
    # (``model.load_state_dict(torch.load(path))``): the load. Its checkpoints carry
    # ``module.`` keys, which the bare model would not load.
    state_dict_loads: dict[cst.Call, cst.Call] = field(default_factory=dict)
    # The module's classes that derive from nn.DataParallel (here or through classes of the
    # project): whether they, or a base of the project, define their own ``scatter`` (for the
    # files that import them too).
    data_parallel_classes: dict[str, bool] = field(default_factory=dict)
    # Constructions of such a class with its own ``scatter``, which never runs without CUDA
    # (DataParallel then calls the wrapped module directly): the class as written, and the
    # module that defines it (None: this file). Reported.
    scattering_wraps: dict[cst.Call, tuple[str, str | None]] = field(default_factory=dict)
    # Of those, the ones whose calls in the file all get inputs on the device another way
    # (moved by hand, or batches of an iterable handed the device): nothing to change (info).
    fed_scattering_wraps: set[cst.Call] = field(default_factory=set)
    # Calls of a model whose DataParallel wrapper the port removes (or whose DDP drops its
    # device_ids), handed tensors that the wrapper moved and nothing else does: what the
    # wrapper did, as the finding says it, and those inputs (reported: obligation 3).
    scattered_inputs: dict[cst.Call, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # Functions of the file that move the tensors of a parameter to the device in place
    # (``batch[key] = val.cuda()``): (qualified name, the parameter's index without self, the
    # parameter); a batch handed to one before the wrapped model's call is on the device.
    batch_movers: set[tuple[str, int, str]] = field(default_factory=set)
    # Functions of the file that return a model wrapped in nn.DataParallel, or in DDP with
    # device_ids (whose forward moved its inputs to the GPU on CUDA, which neither does on XLA):
    # (function, the position in the tuple it returns, -1 for the whole value) -> the wrapper as
    # written and what its forward did, as a finding says it. A caller's batches that reached the
    # device only through that move stay on the CPU.
    scattering_returns: dict[tuple[str, int], str] = field(default_factory=dict)
    # DistributedSampler calls without num_replicas/rank: the keywords they get.
    samplers: dict[cst.Call, tuple[str, ...]] = field(default_factory=dict)
    sampler_plans: dict[cst.Call, SamplerPlan] = field(default_factory=dict)
    # Training loaders over an iterable-style data set, which refuse a sampler: why the data
    # set is one: the call that makes it (reported: the data set must shard itself).
    iterable_loaders: dict[cst.Call, IterableData] = field(default_factory=dict)
    # The module's data set classes that are iterable-style (for the files that import them).
    iterable_datasets: set[str] = field(default_factory=set)
    # ``except`` handlers of a ``try`` that starts the process group and goes on without one,
    # where the ``try`` may still fail on XLA and a DDP construction follows unconditionally:
    # (what may fail, the DDP construction).
    group_fallbacks: dict[cst.ExceptHandler, tuple[cst.CSTNode, cst.Call]] = field(default_factory=dict)
    # Process groups started with the env:// rendezvous (written, or the default) in a ``try`` whose
    # ``except`` goes on without one: without a launcher's RANK/WORLD_SIZE (``python train.py``) the
    # rendezvous raises and the script trains on one process; the port keeps that rendezvous (xla://
    # would start a group of one, and what the script does only under a group, SyncBatchNorm, runs).
    env_fallback_groups: set[cst.Call] = field(default_factory=set)
    # Such groups in a module that a file of the run imports whose processes the tool cannot tell
    # (its summary cannot be read): that file, as findings show it (reported, not ported: under
    # torch_xla.launch env:// raises in every process, xla:// starts a group of one in a plain run).
    env_fallback_unknown: dict[cst.Call, str] = field(default_factory=dict)
    # A training loader with a sampler of another kind (reported).
    other_samplers: set[cst.Arg] = field(default_factory=set)
    # Epoch loops and epoch functions that get ``loader.sampler.set_epoch(epoch)``
    # first: (loader, epoch variable); loaders whose epochs the tool cannot find.
    set_epochs: dict[cst.CSTNode, tuple[str, str]] = field(default_factory=dict)
    no_epoch: set[cst.Call] = field(default_factory=set)
    # ``scaler.scale(loss).backward()`` statements followed by the gradients' all-reduce
    # (the optimizer whose gradients), and backward passes whose step is elsewhere.
    gradient_reduces: dict[cst.SimpleStatementLine, str] = field(default_factory=dict)
    unreduced_backwards: set[cst.Call] = field(default_factory=set)
    # model.share_memory() with mp.Process workers: Hogwild training.
    hogwild: cst.Call | None = None
    # PyTorch-Ignite launchers (idist.Parallel, initialize, spawn) and their backend
    # argument (None: not given, so idist runs serially).
    ignite_launchers: dict[cst.Call, cst.Arg | None] = field(default_factory=dict)
    # A launcher of its own: the script starts its workers as programs (subprocess,
    # os.exec*) with RANK/LOCAL_RANK/WORLD_SIZE in their environment, and starts no process
    # group itself.  It stays one process, as it is; the first such start is reported.
    own_launcher: cst.Call | None = None
    # ``dist.all_reduce(t, op=dist.ReduceOp.AVG)`` statements (the xla process group has no
    # AVG): -> xm.all_reduce("sum", [t], scale=1.0 / world size); any other use of a reduce
    # op the xla process group refuses is reported (the attribute).
    average_reduces: set[cst.Call] = field(default_factory=set)
    unsupported_reduce_ops: set[cst.Attribute] = field(default_factory=set)
    # Saves that only the master process reaches (a rank guard around them or their caller),
    # torch.save and xm.save, in any script.
    guarded_saves: set[cst.Call] = field(default_factory=set)
    # ``if rank == 0: print(...)``: one print that only the master process runs.
    master_prints: set[cst.If] = field(default_factory=set)
    # Where a module-level script's distributed setup starts (for the report), and
    # whether it stays under its environment check (``ddp = int(os.environ.get('RANK',
    # -1)) != -1``), which then keeps meaning "started by a launcher" (torchrun).
    module_level_anchor: cst.CSTNode | None = None
    module_level_checked: bool = False
    # The module, when it has such an anchor: the finding is made as the rewrite leaves it.
    module_level_script: cst.Module | None = None
    # Top-level callables whose launcher check stays (no entry point of this module starts
    # them: a helper's ``if 'RANK' in os.environ: ... init_process_group``), for the files
    # that import them; and calls of such a callable of another module in a script that
    # torch_xla.launch now starts (which sets none of those variables): the callable, as
    # the finding names it.
    launch_checked: set[str] = field(default_factory=set)
    external_launch_checks: dict[cst.Call, str] = field(default_factory=dict)
    # Functions, of this script that the XLA launcher starts or of another module it calls, that
    # still take the rank or world size from RANK/LOCAL_RANK/WORLD_SIZE (distributed/env_ranks.py):
    # the function, as the finding names it, -> what it reads.
    env_rank_readers: dict[str, str] = field(default_factory=dict)
    # The script starts its processes with the XLA launcher already (a torch_xla.launch or
    # xmp.spawn call of its own, as a port writes it: read on a second run).
    xla_launched: bool = False
    # Top-level callables that start a process group (for the files that import them), and the
    # first call of such a callable of another module that this run converts (so its group
    # runs on XLA) in a script: the callable, as a finding names it.
    group_starters: set[str] = field(default_factory=set)
    external_group_start: str | None = None
    # Collectives in the module's functions that run with no check that a process group is
    # started (distributed/collectives.py): the call -> what it resolves to
    # (``torch.distributed.all_gather``) and the function it is in; and, in a script with
    # external launch checks, the first such collective of its own or of a project module it
    # imports, as the finding names it (``torch.distributed.all_gather` (models/vit.py:28)``).
    unchecked_collectives: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    unchecked_collective: str = ""
    # The main guard whose code becomes ``_mp_fn(index)`` (main style), and the names it
    # binds that the module's functions read as globals (declared global there).
    entry_guard: cst.If | None = None
    guard_globals: tuple[str, ...] = ()
    # Spawn style: ``mp.spawn(...)`` as a statement of the main guard.  Where the platform
    # calls ``_mp_fn(index)`` itself (SageMaker's pytorchxla runtime), the guard's code
    # becomes ``_mp_fn`` and that spawn a direct call of the worker with the index.
    spawn_guard: cst.If | None = None
    guard_spawns: set[cst.Call] = field(default_factory=set)
    # Process groups started as the module is imported, in a script whose launcher the port
    # adds: in the launching process they start the XLA runtime (the xla:// rendezvous reads
    # the world size), and ``torch_xla.launch`` then raises "Runtime is already initialized".
    # A statement line that is nothing but such a call, at the top of the module before the
    # main guard that becomes ``_mp_fn(index)``, moves into ``_mp_fn`` (line -> call); any
    # other is reported.
    import_time_groups: dict[cst.SimpleStatementLine, cst.Call] = field(default_factory=dict)
    unmoved_import_time_groups: set[cst.Call] = field(default_factory=set)


@dataclass(repr=False, eq=False)
class EntryFacts:
    # ``def main(...)`` at module level, callable without arguments.
    main: cst.FunctionDef | None = None
    # ``if __name__ == "__main__":`` at module level (found as the walk enters it).
    main_guard: cst.If | None = None
    # An ``_mp_fn`` defined anywhere in the file (it is left as it is).
    mp_fn: cst.FunctionDef | None = None
    # The calls of module-level expression statements (``main()``, ``mp.spawn(...)``), outside
    # any ``def`` or class: what running the file starts besides its main guard.
    top_level_calls: list[cst.Call] = field(default_factory=list)

    def starts(self, spawns: Collection[cst.Call]) -> bool:
        """Running the file starts something: its main guard, or a module-level call of a plain
        name (``main()``, ``launch(...)``) or of a launcher (``mp.spawn(...)``); a module whose
        launcher sits in a function nobody in it calls (detectron2's ``engine/launch.py``) starts
        nothing: the script that imports it does."""
        return self.main_guard is not None or any(
            type(call.func) is cst.Name or call in spawns for call in self.top_level_calls
        )
