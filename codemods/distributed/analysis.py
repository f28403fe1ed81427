"""Distributed training: what the script does with several processes or devices, and
what each of those things becomes on XLA.

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

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from codemods import apis
from codemods.distributed.entry import is_main_guard
from codemods.engine.nodes import (
    arg_value,
    call_args,
    dotted,
    fold_true,
    lone_call,
    method_name,
    names_in,
    receiver,
    string_value,
    walk,
)
from codemods.engine.walk import Analysis, Walk
from codemods.targets import spellings

Style = Literal["spawn", "main", "module", "launched"]

# Environment variables set by torchrun / torch.distributed.launch, and the XLA runtime
# concept that replaces each (see targets.py).
ENV_CONCEPTS = {
    "RANK": "global_ordinal",
    "LOCAL_RANK": "local_ordinal",
    "WORLD_SIZE": "world_size",
    "LOCAL_WORLD_SIZE": "local_process_count",
}
DIST_CONCEPTS = {"torch.distributed.get_rank": "global_ordinal", "torch.distributed.get_world_size": "world_size"}
# The XLA runtime's answers to the same questions, in every target's spelling: code that
# reads them (ported, or written for XLA) is multi-process code just as its source was.
XLA_RANK_READS = frozenset(name for concept in set(DIST_CONCEPTS.values()) | {"local_ordinal"} for name in spellings(concept))
INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
TORCH_SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn"})
XLA_LAUNCHERS = frozenset({"torch_xla.launch", "torch_xla.distributed.xla_multiprocessing.spawn"})
DATA_PARALLEL = frozenset(
    {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"}
)
DISTRIBUTED_SAMPLER = frozenset(
    {"torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler"}
)
DATA_LOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
PROCESS = frozenset({"torch.multiprocessing.Process", "multiprocessing.Process"})
SAVES = frozenset({"torch.save", "torch_xla.core.xla_model.save"})
# Tensor factories that DDP(device_ids=[...]) used to move to the GPU with its inputs.
FACTORIES = frozenset(
    f"torch.{name}" for name in "randn rand randint zeros ones empty full tensor arange randn_like rand_like".split()
)
# Argument positions: init_process_group(backend, init_method, timeout, world_size, rank,
# store, group_name, pg_options, device_id); spawn(fn, args, nprocs, join, daemon,
# start_method); DDP(module, device_ids, output_device, ...).
PROCESS_GROUP_PARAMETERS = ("backend", "init_method", "timeout", "world_size", "rank", "store", "group_name")
SPAWN_PARAMETERS = ("fn", "args", "nprocs", "join", "daemon", "start_method")
# What the xla:// init method takes from the XLA runtime (and a CUDA device).
PROCESS_GROUP_DROPPED = frozenset({"world_size", "rank", "store", "device_id"})
RANK_WORDS = ("rank", "master", "main_process", "is_main", "ordinal", "gpu_id")
BACKENDS = {"nccl", "gloo", "mpi", "ucc", "xla"}


@dataclass(frozen=True)
class ProcessGroup:
    """``init_process_group(...)``: what its backend and init method become.  An argument
    that is kept reads a variable or a flag whose values the tool makes "xla"/"xla://"."""

    arguments: tuple[tuple[str, cst.Arg], ...]  # by parameter name
    keep_backend: bool
    keep_init_method: bool


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


@dataclass
class DistributedFacts:
    # DistributedDataParallel or FSDP is used: it reduces gradients itself (the optimizer
    # step stays plain, a mixed-precision step gets no all-reduce of its own).
    ddp: bool = False
    # ``convert --distributed``: make a one-device script multi-process.
    requested: bool = False
    # The script runs as several processes (or is asked to).
    multi_process: bool = False
    style: Style | None = None
    process_groups: dict[cst.Call, ProcessGroup] = field(default_factory=dict)
    # Values of backend variables and flags (and init methods) that become "xla" / "xla://".
    backend_values: dict[cst.BaseExpression, str] = field(default_factory=dict)
    # Ranks and sizes read from the environment, the process group, flags, CUDA: the
    # runtime concept each becomes; those in the launching process are only reported.
    runtime_reads: dict[cst.CSTNode, str] = field(default_factory=dict)
    parent_reads: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Environment reads the tool does not rewrite (not turned into numbers).
    raw_env_reads: dict[cst.CSTNode, str] = field(default_factory=dict)
    # ``int(os.environ.get('RANK', -1)) != -1``, ``'LOCAL_RANK' in os.environ``: whether
    # the script runs as several processes (True: it does if the check holds).
    launched_checks: dict[cst.Comparison, bool] = field(default_factory=dict)
    spawns: dict[cst.Call, Spawn] = field(default_factory=dict)
    # Workers whose parameters receive a CUDA device count from the launching process:
    # (parameter, runtime concept) read again at their start.
    rereads: dict[cst.FunctionDef, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # CUDA device counts in the launching process that only feed the workers (the runtime
    # concept each would be read as in a worker).
    launcher_counts: dict[cst.Call, str] = field(default_factory=dict)
    # DDP constructions: the device arguments they drop, and whether they lack
    # gradient_as_bucket_view=True.
    ddp_calls: dict[cst.Call, tuple[tuple[cst.Arg, ...], bool]] = field(default_factory=dict)
    ddp_inputs: set[cst.Call] = field(default_factory=set)
    # nn.DataParallel constructions: removed (True) or reported; their statements that
    # only rewrap a name (``model = DataParallel(model)``) go; ``.module`` accesses on
    # the unwrapped names become the name.
    data_parallel: dict[cst.Call, bool] = field(default_factory=dict)
    dp_statements: set[cst.SimpleStatementLine] = field(default_factory=set)
    module_accesses: set[cst.Attribute] = field(default_factory=set)
    # DistributedSampler calls without num_replicas/rank: the keywords they get.
    samplers: dict[cst.Call, tuple[str, ...]] = field(default_factory=dict)
    sampler_plans: dict[cst.Call, SamplerPlan] = field(default_factory=dict)
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
    # Saves that only the master process reaches (a rank guard around them or their caller).
    guarded_saves: set[cst.Call] = field(default_factory=set)
    # ``if rank == 0: print(...)``: one print that only the master process runs.
    master_prints: set[cst.If] = field(default_factory=set)
    # Names (and attributes) that hold a DataLoader of this file, however they are called.
    loaders: set[str] = field(default_factory=set)
    # Where a module-level script's distributed setup starts (for the report), and
    # whether it stays under its environment check (``ddp = int(os.environ.get('RANK',
    # -1)) != -1``), which then keeps meaning "started by a launcher" (torchrun).
    module_level_anchor: cst.CSTNode | None = None
    module_level_checked: bool = False
    # The main guard whose code becomes ``_mp_fn(index)`` (main style), and the names it
    # binds that the module's functions read as globals (declared global there).
    entry_guard: cst.If | None = None
    guard_globals: tuple[str, ...] = ()
    # Spawn style: ``mp.spawn(...)`` as a statement of the main guard.  Where the platform
    # calls ``_mp_fn(index)`` itself (SageMaker's pytorchxla runtime), the guard's code
    # becomes ``_mp_fn`` and that spawn a direct call of the worker with the index.
    spawn_guard: cst.If | None = None
    guard_spawns: set[cst.Call] = field(default_factory=set)


@dataclass
class _Read:
    node: cst.CSTNode
    concept: str
    owner: str  # "" module level, "<guard>" the main guard, else the top-level def or class


class DistributedAnalysis(Analysis):
    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.guard: cst.If | None = None
        self.statement: cst.SimpleStatementLine | None = None
        self.skip: set[int] = set()  # nodes already accounted for by an enclosing read
        self.targets: set[int] = set()  # assignment targets (not reads)
        self.reads: list[_Read] = []
        self.local_rank_flag = False
        self.local_rank_reads: list[_Read] = []
        self.dist_calls: list[cst.CSTNode] = []  # distributed setup at module level, in order
        # Call graph by simple names: owner -> names called or passed; function -> params.
        self.calls: dict[str, set[str]] = defaultdict(set)
        self.call_sites: dict[str, list[list[str | None]]] = defaultdict(list)
        self.params: dict[str, list[str]] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self.spawn_owners: dict[cst.Call, str] = {}
        # Assignments anywhere in the file: dotted target -> values.
        self.assigned: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.flag_defaults: dict[str, cst.BaseExpression] = {}
        self.count_calls: list[tuple[cst.Call, str, str | None]] = []  # (call, owner, assigned name)
        self.rank_assignments: list[tuple[str, cst.BaseExpression]] = []
        self.ddp_names: set[str] = set()
        self.model_calls: list[tuple[str, cst.Call]] = []
        self.dp_calls: list[tuple[cst.Call, str | None, cst.SimpleStatementLine | None]] = []
        self.module_attrs: list[tuple[cst.Attribute, str | None]] = []
        self.sampler_calls: list[tuple[cst.Call, str]] = []
        self.loader_calls: dict[str, cst.Call] = {}  # dotted target -> DataLoader(...)
        self.returned_loaders: dict[str, cst.Call] = {}  # function -> the DataLoader it returns
        self.inline_loaders: set[cst.Call] = set()
        self.loader_owner: dict[cst.Call, str] = {}
        self.enclosing_for: dict[int, cst.For | None] = {}
        self.loop_function: dict[int, cst.FunctionDef | None] = {}
        self.backward_candidates: list[tuple[cst.SimpleStatementLine, cst.Call, str, str | None]] = []
        self.set_epoch_called = False
        self.shared: cst.Call | None = None
        self.xla_rank_reads = False
        self.processes = False
        self.saves: list[tuple[cst.Call, str, bool]] = []  # (save, innermost function, under a rank guard)
        self.guarded_calls: set[str] = set()
        self.pending_groups: list[tuple[cst.Call, tuple[tuple[str, cst.Arg], ...]]] = []
        self.rank_tests: dict[int, bool] = {}
        self.ddp_references: list[cst.Call] = []
        self.master_print_candidates: list[cst.If] = []
        self.xla_launches: dict[cst.Call, str] = {}  # torch_xla.launch / xmp.spawn calls already there -> owner
        self.module_defs: list[cst.FunctionDef | cst.ClassDef] = []  # outside any if

    # -- where we are -------------------------------------------------------------------

    @property
    def in_guard(self) -> bool:
        return self.guard is not None and bool(self.walk.conds) and self.walk.conds[0] is self.guard

    @property
    def owner(self) -> str:
        if self.walk.scopes:
            return self.walk.scopes[0]
        return "<guard>" if self.in_guard else ""

    def _rank_guarded(self) -> bool:
        """Inside an ``if`` on the rank (``if rank == 0:``, ``if master_process:``)."""
        return any(self._tests_rank(cond) for cond in self.walk.conds if type(cond) is cst.If)

    def _tests_rank(self, node: cst.If) -> bool:
        known = self.rank_tests.get(id(node))
        if known is None:
            known = any(word in name.lower() for name in names_in(node.test) for word in RANK_WORDS)
            self.rank_tests[id(node)] = known
        return known

    # -- walk -------------------------------------------------------------------------------

    def visit_If(self, node: cst.If) -> None:
        if self.walk.module_level and not self.walk.conds[:-1] and is_main_guard(node.test):
            self.guard = node
        elif node.orelse is None and _lone_print(node.body) is not None and _tests_master(node.test):
            self.master_print_candidates.append(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self.walk.class_depth == 1 and not self.walk.functions and not self.walk.conds:
            self.module_defs.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.walk.functions) == 1 and not self.walk.class_depth:
            name = node.name.value
            self.functions[name] = node
            if not self.walk.conds:
                self.module_defs.append(node)
            params = node.params
            self.params[name] = [p.name.value for p in (*params.posonly_params, *params.params)]

    def _loop(self, node: cst.For | cst.While) -> None:
        outer = self.walk.loops[-2] if len(self.walk.loops) >= 2 else None
        self.enclosing_for[id(node)] = outer if type(outer) is cst.For else None
        self.loop_function[id(node)] = self.walk.enclosing_function

    visit_For = _loop
    visit_While = _loop

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        """``scaler.scale(loss).backward()`` and the ``scaler.step(optimizer)`` after it."""
        statements = [s for s in node.body if type(s) is cst.SimpleStatementLine]
        for index, statement in enumerate(statements):
            backward = _scaled_backward(statement)
            if backward is None:
                continue
            scaler = dotted(receiver(receiver(backward)))  # type: ignore[arg-type]
            optimizer = next(
                (
                    dotted(arg_value(call, 0, "optimizer"))
                    for later in statements[index + 1 :]
                    if (call := lone_call(later)) is not None
                    and method_name(call) == "step"
                    and dotted(receiver(call)) == scaler
                ),
                None,
            )
            self.backward_candidates.append((statement, backward, scaler or "", optimizer))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for sub in walk(target.target):
                self.targets.add(id(sub))
            name = dotted(target.target)
            if name is not None:
                self._assignment(name, node.value)
            elif type(target.target) is cst.Tuple and type(node.value) is cst.Tuple:
                pairs = zip(target.target.elements, node.value.elements)
                for element, value in pairs:
                    if (element_name := dotted(element.value)) is not None:
                        self._assignment(element_name, value.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        for sub in walk(node.target):
            self.targets.add(id(sub))
        if node.value is not None and (name := dotted(node.target)) is not None:
            self._assignment(name, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for sub in walk(node.target):
            self.targets.add(id(sub))

    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        self.assigned[name].append(value)
        last = name.rsplit(".", 1)[-1].lower()
        if "rank" in last and "local" not in last and type(value) is cst.BinaryOperation:
            self.rank_assignments.append((self.owner, value))
        core = value
        while type(core) is cst.Call and method_name(core) in ("to", "cuda"):
            core = receiver(core)  # type: ignore[assignment]
        if type(core) is cst.Call:
            callee = self.walk.resolve(core.func)
            if callee == apis.DDP:
                self.ddp_names.add(name)
            elif callee in DATA_PARALLEL:
                self.dp_calls.append((core, name, self.statement if value is core else None))
            elif callee in DATA_LOADER:
                self.loader_calls[name] = core

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if type(value) is cst.Call and self.walk.resolve(value.func) in DATA_LOADER and self.walk.scopes:
            self.returned_loaders[self.walk.scopes[-1]] = value

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attr = node.attr.value
        if attr == "module":
            self.module_attrs.append((node, dotted(node.value)))
        elif attr == "local_rank" and id(node) not in self.targets | self.skip and type(node.value) is cst.Name:
            if node.value.value != "self":
                self.local_rank_reads.append(_Read(node, "local_ordinal", self.owner))
        elif attr == "set_epoch":
            self.set_epoch_called = True

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """``int(os.environ.get('RANK', -1)) != -1`` and ``'LOCAL_RANK' in os.environ``:
        is this a multi-process run?"""
        if len(node.comparisons) != 1:
            return
        operator, right = node.comparisons[0].operator, node.comparisons[0].comparator
        left = node.left
        if type(operator) in (cst.In, cst.NotIn) and self.walk.resolve(right) == "os.environ":
            if string_value(left) in ENV_CONCEPTS:
                self.part.launched_checks[node] = type(operator) is cst.In
                self._distributed_code(node)
            return
        if type(operator) not in (cst.Equal, cst.NotEqual):
            return
        read = _int_of(left)
        found = self._env(read) if read is not None else None
        if found is None or found[1] is None or _literal(found[1]) is None:
            return
        if _literal(found[1]) == _literal(right):
            self.part.launched_checks[node] = type(operator) is cst.NotEqual
            self.skip.update(id(n) for n in walk(left))
            self._distributed_code(node)

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.resolve(node.func)
        owner = self.owner
        if callee in apis.SET_DEVICE_CALLS:  # removed whole (XLA106): what it reads goes with it
            self.skip.update(id(n) for n in walk(node))
        elif callee == "torch.distributed.get_default_backend_for_device":
            # Raises for the XLA device ("Default backend not registered"): the backend is "xla".
            self.part.backend_values[node] = "xla"
            self.skip.update(id(n) for n in walk(node) if n is not node)
        if type(node.func) is cst.Name:
            self.calls[owner].add(node.func.value)
            self.call_sites[node.func.value].append([dotted(a.value) if a.keyword is None else None for a in node.args])
        for arg in node.args:
            if type(arg.value) is cst.Name:
                self.calls[owner].add(arg.value.value)  # functions handed on (run_demo(demo_basic))
        if (func := dotted(node.func)) is not None:
            self.model_calls.append((func, node))
        if self.walk.conds and self._rank_guarded():
            if (method := method_name(node)) is not None:
                self.guarded_calls.add(method)
            elif type(node.func) is cst.Name:
                self.guarded_calls.add(node.func.value)
        if id(node) in self.skip:
            return
        if method_name(node) == "share_memory":
            self.shared = node
        if method_name(node) == "add_argument":
            self._flag(node)
        if type(node.func) is cst.Name and node.func.value == "int" and callee is None and len(node.args) == 1:
            if (found := self._env(node.args[0].value)) is not None:
                self.skip.add(id(node.args[0].value))
                self.reads.append(_Read(node, ENV_CONCEPTS[found[0]], owner))
                self._distributed_code(node)
                return
        if (found := self._env(node)) is not None:
            self.part.raw_env_reads[node] = found[0]
        elif callee is not None:
            self._api_call(node, callee, owner)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if id(node) not in self.skip and (found := self._env(node)) is not None:
            self.part.raw_env_reads[node] = found[0]

    def _api_call(self, node: cst.Call, callee: str, owner: str) -> None:
        if callee == apis.DDP:
            self.ddp_references.append(node)
            self._ddp(node)
        elif callee in apis.FSDP_CLASSES or callee in apis.FSDP2 or callee in apis.XLA_FSDP_CLASSES:
            self.ddp_references.append(node)
            self._distributed_code(node)
        elif callee in DIST_CONCEPTS and not node.args:
            self.reads.append(_Read(node, DIST_CONCEPTS[callee], owner))
        elif callee in XLA_RANK_READS:
            self.xla_rank_reads = True  # already-ported code reads its rank as the original did
        elif callee == INIT_PROCESS_GROUP:
            self._process_group(node)
        elif callee in TORCH_SPAWN:
            self._spawn(node)
        elif callee in XLA_LAUNCHERS:
            self.part.style = "launched"
            self.xla_launches[node] = owner
        elif callee == "torch.cuda.device_count" and not node.args:
            self.count_calls.append((node, owner, self._assigned_name(node)))
        elif callee in DISTRIBUTED_SAMPLER:
            self.sampler_calls.append((node, owner))
        elif callee in DATA_LOADER:
            self.loader_owner[node] = owner
            self.inline_loaders.add(node)
        elif callee in PROCESS:
            self.processes = True
        elif callee in SAVES:
            self.saves.append((node, self.walk.scopes[-1] if self.walk.scopes else "", self._rank_guarded()))
        elif callee in DATA_PARALLEL and not any(node is c for c, _, _ in self.dp_calls):
            self.dp_calls.append((node, None, None))

    def _assigned_name(self, node: cst.Call) -> str | None:
        """The name a call's value is assigned to (``n = torch.cuda.device_count() if ... else 1``)."""
        statement = self.statement
        if statement is None or len(statement.body) != 1:
            return None
        small = statement.body[0]
        if type(small) is cst.Assign and len(small.targets) == 1 and any(n is node for n in walk(small.value)):
            return dotted(small.targets[0].target)
        return None

    def _distributed_code(self, node: cst.CSTNode) -> None:
        if not self.walk.scopes:  # module level: no launcher can start it
            self.dist_calls.append(node)

    def _env(self, node: cst.CSTNode) -> tuple[str, cst.BaseExpression | None] | None:
        """``os.environ["RANK"]``, ``os.environ.get("RANK", d)``, ``os.getenv("RANK", d)``:
        the variable and its default."""
        if type(node) is cst.Subscript and self.walk.resolve(node.value) == "os.environ" and len(node.slice) == 1:
            index = node.slice[0].slice
            name = string_value(index.value) if type(index) is cst.Index else None
            return (name, None) if name in ENV_CONCEPTS else None
        if type(node) is cst.Call and self.walk.resolve(node.func) in ("os.environ.get", "os.getenv"):
            name = string_value(arg_value(node, 0, "key"))
            return (name, arg_value(node, 1, "default")) if name in ENV_CONCEPTS else None
        return None

    def _flag(self, node: cst.Call) -> None:
        """``parser.add_argument("--dist-backend", default="nccl")``: the flag's default, by dest."""
        flags = [string_value(a.value) for a in node.args if a.keyword is None]
        keywords = call_args(node)[1]
        names = [f for f in flags if f]
        if any(f in ("--local_rank", "--local-rank") for f in names):
            self.local_rank_flag = True
        if "dest" in keywords:
            dest = string_value(keywords["dest"].value)
        else:
            long = next((f for f in names if f.startswith("--")), names[0] if names else None)
            dest = long.lstrip("-").replace("-", "_") if long else None
        if dest is not None and "default" in keywords:
            self.flag_defaults[dest] = keywords["default"].value

    def _process_group(self, node: cst.Call) -> None:
        named: list[tuple[str, cst.Arg]] = []
        for index, arg in enumerate(node.args):
            if arg.star:
                return  # unpacked: reported by the rewrite
            if arg.keyword is not None:
                named.append((arg.keyword.value, arg))
            elif index < len(PROCESS_GROUP_PARAMETERS):
                named.append((PROCESS_GROUP_PARAMETERS[index], arg))
        self.pending_groups.append((node, tuple(named)))
        self._distributed_code(node)

    def _spawn(self, node: cst.Call) -> None:
        args = dict(_by_position(node, SPAWN_PARAMETERS))
        if "fn" not in args:
            return
        join = args.get("join")
        self.part.spawns[node] = Spawn(
            args["fn"].value,
            args["args"].value if "args" in args else None,
            args["start_method"].value if "start_method" in args else None,
            join is None or (type(join.value) is cst.Name and join.value.value == "True"),
        )
        self.spawn_owners[node] = self.owner
        self._distributed_code(node)

    def _ddp(self, node: cst.Call) -> None:
        dropped = tuple(
            arg for name, arg in _by_position(node, ("module", "device_ids", "output_device"))
            if name in ("device_ids", "output_device")
        )
        bucket_view = call_args(node)[1].get("gradient_as_bucket_view")
        self.part.ddp_calls[node] = (dropped, bucket_view is None)
        self._distributed_code(node)

    # -- results ----------------------------------------------------------------------------

    def finish(self) -> None:
        part = self.part
        # DistributedDataParallel in a branch the device rewrite removes does not count.
        removed = {id(sub) for branch in self._removed_branches() for sub in walk(branch)}
        part.ddp = any(id(reference) not in removed for reference in self.ddp_references)
        part.multi_process = bool(
            part.requested or part.ddp or self.pending_groups or part.spawns or self.reads or part.launched_checks
            or self.xla_rank_reads
            or part.style == "launched" or (self.local_rank_flag and self.local_rank_reads)
        )
        if self.shared is not None and self.processes:
            part.hogwild = self.shared
            part.multi_process = False
        if self.local_rank_flag:
            self.reads.extend(self.local_rank_reads)
        self._loaders()
        part.loaders = set(self.loader_calls)

    def _removed_branches(self) -> list[cst.CSTNode]:
        """Branches of device ifs that cannot run once the accelerator check folds to
        True on XLA: the device rewrite removes them."""
        device = self.facts.device
        branches: list[cst.CSTNode] = []
        for node in device.ifs:
            folded = fold_true(node.test, device.is_available_call)
            branch = node.body if folded is False else node.orelse if folded is True else None
            if branch is not None:
                branches.append(branch)
        return branches

    def settle(self) -> None:
        """Plans for the rewrites; Accelerate and the Trainer do the distributed work of
        their scripts themselves, and Hogwild scripts are only reported."""
        part = self.part
        facts = self.facts
        if facts.huggingface.accelerators or facts.lightning.drives_training or part.hogwild is not None:
            part.multi_process = False
        self._data_parallel()
        if not part.multi_process or facts.huggingface.trainer_script:
            return
        if part.style is None:
            if part.spawns:
                part.style = "spawn"
            elif facts.entry.mp_fn is not None:
                part.style = "launched"
            elif self.guard is not None:
                part.style = "main"
            else:
                part.style = "module"
                part.module_level_anchor = self.dist_calls[0] if self.dist_calls else None
                # No function to start: the script stays one process as `python
                # train.py` and one per device under torchrun (xla:// supports it), so its
                # check for a launcher stays.
                part.module_level_checked = bool(part.launched_checks)
                part.launched_checks = {}
        if self.guard is not None and facts.entry.mp_fn is None:
            if part.style == "main":
                part.entry_guard = self.guard
            elif part.style == "spawn":
                # Spawns that are statements of their own in the guard's block.
                alone = {lone_call(statement) for statement in self.guard.body.body}
                part.guard_spawns = {call for call in part.spawns if call in alone}
                part.spawn_guard = self.guard if part.guard_spawns else None
            part.guard_globals = _shared_names(self.guard, self.module_defs)
        parent = self._processes()
        self._process_groups()
        self._reads(parent)
        self._rereads(parent)
        self._ddp_inputs()
        self._samplers(parent)
        self._gradient_reduces()
        self._guarded_saves()
        part.master_prints = set(self.master_print_candidates)

    # -- which code runs where ----------------------------------------------------------

    def _spawn_targets(self) -> dict[cst.Call, list[str]]:
        """The module functions each spawn starts (through one parameter: run_demo(demo_basic))."""
        targets: dict[cst.Call, list[str]] = {}
        for call, spawn in self.part.spawns.items():
            name = dotted(spawn.fn)
            owner = self.spawn_owners[call]
            if name in self.functions:
                targets[call] = [name]
            elif name is not None and name in self.params.get(owner, []):
                position = self.params[owner].index(name)
                targets[call] = sorted(
                    {site[position] for site in self.call_sites.get(owner, []) if len(site) > position}  # type: ignore[arg-type]
                    & set(self.functions)
                )
            else:
                targets[call] = []
        return targets

    def _processes(self) -> set[str]:
        """Owners (top-level functions and classes, "" for module level, "<guard>") whose code
        runs in the launching process, maybe also in the launched ones (code that only the
        launched processes run may read the XLA runtime)."""
        style = self.part.style
        if style in (None, "module"):
            return set()
        worker_roots: set[str] = set()
        parent_roots = {""}
        if style == "spawn":
            for call, names in self._spawn_targets().items():
                worker_roots.update(names)
                parent_roots.add(self.spawn_owners[call])
            parent_roots.add("<guard>")
        elif style == "main":
            worker_roots.add("<guard>")
        else:  # launched: the functions given to the XLA launcher, and _mp_fn; what calls the launcher
            worker_roots.update(n for n in self.functions if n == "_mp_fn")
            for launch, owner in self.xla_launches.items():
                target = dotted(arg_value(launch, 0, "fn"))
                worker_roots.update(n for n in (target, (target or "").removeprefix("self.")) if n in self.functions)
                parent_roots.add(owner)
            parent_roots.add("<guard>")
        return _closure(parent_roots - worker_roots, self.calls, worker_roots)

    # -- process groups ---------------------------------------------------------------------

    def _process_groups(self) -> None:
        for call, named in self.pending_groups:
            arguments = dict(named)
            keep_backend = self._sources_become("backend", arguments.get("backend"), "xla")
            keep_init = self._sources_become("init_method", arguments.get("init_method"), "xla://")
            self.part.process_groups[call] = ProcessGroup(named, keep_backend, keep_init)

    def _sources_become(self, parameter: str, arg: cst.Arg | None, value: str) -> bool:
        """Whether the argument may stay: it names a variable or a flag whose every value
        is a plain choice of strings, which become ``value``."""
        if arg is None:
            return False
        name = dotted(arg.value)
        if name is None:
            return False
        sources = list(self.assigned.get(name, []))
        dest = name.rsplit(".", 1)[-1]
        if "." in name and dest in self.flag_defaults:
            sources.append(self.flag_defaults[dest])
        if not sources or not all(_string_choice(s) for s in sources):
            return False
        if parameter == "backend" and not any(string_value(n) in BACKENDS for s in sources for n in walk(s)):
            return False
        for source in sources:
            self.part.backend_values[source] = value
        return True

    # -- ranks and sizes --------------------------------------------------------------------

    def _reads(self, parent: set[str]) -> None:
        part = self.part
        for read in self.reads:
            (part.parent_reads if read.owner in parent else part.runtime_reads)[read.node] = read.concept
        counts = self._count_names()
        for call, owner, name in self.count_calls:
            last = (name or "").rsplit(".", 1)[-1].lower()
            concept = "world_size" if "world" in last else "local_process_count"
            if owner not in parent:
                part.runtime_reads[call] = concept
            elif name is not None and name in counts.feeding:
                part.launcher_counts[call] = concept
        targets = {name for names in self._spawn_targets().values() for name in names}
        for owner, value in self.rank_assignments:
            params = self.params.get(owner, [])
            if owner in targets and params and params[0] in set(names_in(value)):
                part.runtime_reads[value] = "global_ordinal"

    def _count_names(self) -> _Counts:
        """Names that hold a CUDA device count (``ngpus_per_node = torch.cuda.device_count()``,
        and names assigned from them), and those of them handed to spawned workers."""
        counts = {name for _, _, name in self.count_calls if name is not None}
        for name, values in self.assigned.items():
            for value in values:
                if any(type(n) is cst.Call and self.walk.resolve(n.func) == "torch.cuda.device_count" for n in walk(value)):
                    counts.add(name)
        grew = True
        while grew:
            grew = False
            for name, values in self.assigned.items():
                if name not in counts and any(dotted(v) in counts for v in values):
                    counts.add(name)
                    grew = True
        feeding: set[str] = set()
        handed = [spawn.args for spawn in self.part.spawns.values() if spawn.args is not None]
        handed += [arg.value for launch in self.xla_launches for arg in launch.args[1:]]
        for sub in (sub for value in handed for sub in walk(value)):
            if (fed := dotted(sub)) in counts:
                feeding.add(fed)
        return _Counts(counts, feeding)

    def _rereads(self, parent: set[str]) -> None:
        """Worker parameters that receive a CUDA count from the launching process."""
        counts = self._count_names().names
        for call, names in self._spawn_targets().items():
            spawn = self.part.spawns[call]
            if type(spawn.args) is not cst.Tuple:
                continue
            for position, element in enumerate(spawn.args.elements):
                if dotted(element.value) not in counts:
                    continue
                for target in names:
                    params = self.params[target]
                    if position + 1 >= len(params):
                        continue
                    param = params[position + 1]
                    concept = "world_size" if "world" in param.lower() else "local_process_count"
                    function = self.functions[target]
                    self.part.rereads[function] = (*self.part.rereads.get(function, ()), (param, concept))

    # -- DDP and DataParallel -------------------------------------------------------------

    def _ddp_inputs(self) -> None:
        """Tensors made on the CPU and given straight to a DDP model: DDP(device_ids=...)
        moved them to the GPU; without device_ids they stay where they are."""
        if not any(dropped for dropped, _ in self.part.ddp_calls.values()):
            return
        for func, call in self.model_calls:
            if func not in self.ddp_names:
                continue
            for arg in call.args:
                value = arg.value
                if (
                    type(value) is cst.Call
                    and self.walk.resolve(value.func) in FACTORIES
                    and "device" not in call_args(value)[1]
                ):
                    self.part.ddp_inputs.add(value)

    def _data_parallel(self) -> None:
        """DataParallel is one process driving several GPUs: on XLA the wrapper goes, and
        ``.module`` on the names it wrapped becomes the name.  A ``.module`` the tool
        cannot place (on a name it does not know, or on a name DDP also wraps) keeps it."""
        part = self.part
        wrapped = {name for _, name, _ in self.dp_calls if name is not None}
        unknown = [
            base for _, base in self.module_attrs
            if base is None or (base not in wrapped and base not in self.ddp_names)
        ]
        accessed = {base for _, base in self.module_attrs}
        removable = not unknown and not (wrapped & self.ddp_names & accessed)
        for call, name, statement in self.dp_calls:
            part.data_parallel[call] = removable and _wrapped(call) is not None
            if removable and statement is not None and name is not None and dotted(_wrapped(call)) == name:
                part.dp_statements.add(statement)
        if removable:
            part.module_accesses = {node for node, base in self.module_attrs if base in wrapped}

    # -- data ---------------------------------------------------------------------------

    def _loaders(self) -> None:
        """Names that hold a DataLoader: assigned one, or the result of a function of the
        file that returns one, or handed on (``self.train_data = train_data``)."""
        loaders = self.loader_calls
        grew = True
        while grew:
            grew = False
            for name, values in self.assigned.items():
                if name in loaders:
                    continue
                for value in values:
                    found = None
                    if type(value) is cst.Call and type(value.func) is cst.Name:
                        found = self.returned_loaders.get(value.func.value)
                    elif (source := dotted(value)) is not None and source != name:
                        found = loaders.get(source)
                    if found is not None:
                        loaders[name] = found
                        grew = True
                        break

    def loader_call(self, name: str | None) -> cst.Call | None:
        """The DataLoader(...) that the name holds, if the file shows it."""
        return self.loader_calls.get(name) if name is not None else None

    def _samplers(self, parent: set[str]) -> None:
        part = self.part
        for call, owner in self.sampler_calls:
            if owner in parent:
                continue
            given = {name for name, _ in _by_position(call, ("dataset", "num_replicas", "rank"))}
            missing = tuple(k for k in ("num_replicas", "rank") if k not in given)
            if missing:
                part.samplers[call] = missing
        for loop in self.facts.training.all_loops:
            if type(loop) is not cst.For:
                continue
            loader, name = _iterated_loader(loop)
            call = loader if type(loader) is cst.Call and loader in self.inline_loaders else self.loader_call(name)  # type: ignore[assignment]
            if call is None or self.loader_owner.get(call, "") in parent:
                continue
            keywords = call_args(call)[1]
            if "batch_sampler" in keywords:
                continue
            sampler = keywords.get("sampler")
            if sampler is not None:
                value = sampler.value
                if type(value) is cst.Call and self.walk.resolve(value.func) not in DISTRIBUTED_SAMPLER:
                    part.other_samplers.add(sampler)
                continue
            if call in part.sampler_plans:
                continue
            dataset = arg_value(call, 0, "dataset")
            shuffle = keywords.get("shuffle")
            positional_shuffle = len([a for a in call.args if a.keyword is None]) > 2
            part.sampler_plans[call] = SamplerPlan(
                dotted(dataset) if not positional_shuffle else None, shuffle
            )
            if shuffle is not None and not _is_false(shuffle.value) and not self.set_epoch_called:
                self._set_epoch(loop, name, call)

    def _set_epoch(self, loop: cst.For, loader: str | None, call: cst.Call) -> None:
        outer = self.enclosing_for.get(id(loop))
        if loader is not None and outer is not None and type(outer.target) is cst.Name:
            self.part.set_epochs[outer] = (loader, outer.target.value)
            return
        function = self.loop_function.get(id(loop))
        if loader is not None and function is not None and outer is None:
            names = [p.name.value for p in function.params.params]
            epoch = next((n for n in names if "epoch" in n.lower()), None)
            if epoch is not None:
                self.part.set_epochs[function] = (loader, epoch)
                return
        self.part.no_epoch.add(call)

    # -- mixed precision, checkpoints ---------------------------------------------------------

    def _gradient_reduces(self) -> None:
        """Without DDP, mixed-precision steps (``scaler.step``) do not all-reduce the
        gradients (xm.optimizer_step would): the seed's ``xm.all_reduce`` follows backward."""
        if self.part.ddp or not self.facts.amp.active:
            return
        scalers = self.facts.amp.scaler_names
        for statement, backward, scaler, optimizer in self.backward_candidates:
            if scaler not in scalers:
                continue
            if optimizer is None:
                self.part.unreduced_backwards.add(backward)
            else:
                self.part.gradient_reduces[statement] = optimizer

    def _guarded_saves(self) -> None:
        for call, function, guarded in self.saves:
            if guarded or function in self.guarded_calls:
                self.part.guarded_saves.add(call)


def _lone_print(body: cst.BaseSuite) -> cst.Call | None:
    """The block is one ``print(...)`` call that xm.master_print can take (no ``sep``,
    ``end``, ``file``, no unpacked arguments) and no comment."""
    if type(body) is not cst.IndentedBlock or len(body.body) != 1 or body.header.comment is not None:
        return None
    statement = body.body[0]
    if (
        type(statement) is not cst.SimpleStatementLine
        or len(statement.body) != 1
        or any(line.comment for line in (*statement.leading_lines, *body.footer))
        or statement.trailing_whitespace.comment is not None
    ):
        return None
    call = lone_call(statement)
    if call is None or not (type(call.func) is cst.Name and call.func.value == "print"):
        return None
    if any(arg.star or (arg.keyword is not None and arg.keyword.value != "flush") for arg in call.args):
        return None
    return call


def _tests_master(test: cst.BaseExpression) -> bool:
    """``rank == 0`` (a global rank: not a local one), ``master_process``, ``is_main_process()``."""
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if type(target.operator) is not cst.Equal or not (
            type(target.comparator) is cst.Integer and target.comparator.value == "0"
        ):
            return False
        names = [name.lower() for name in names_in(test.left)]
        return any("rank" in n or "ordinal" in n for n in names) and not any("local" in n for n in names)
    if type(test) is cst.Call and not test.args:
        test = test.func
    last = (dotted(test) or "").rsplit(".", 1)[-1].lower()
    return "master" in last or "main_process" in last


def _shared_names(guard: cst.If, defs: list[cst.FunctionDef | cst.ClassDef]) -> tuple[str, ...]:
    """Names the guard's own statements bind that the module's functions and classes read
    (and do not bind themselves): globals they need once the guard's code is a function."""
    bound = {name for statement in guard.body.body for name in _bound_by(statement)}
    read: set[str] = set()
    for definition in defs:
        used = bound & set(names_in(definition.body))
        if not used:
            continue
        own = {name for node in walk(definition) for name in _bound_by(node)}
        if type(definition) is cst.FunctionDef:
            own |= {p.name.value for p in walk(definition.params) if type(p) is cst.Param}
        read |= used - own
    return tuple(sorted(read))


def _bound_by(statement: cst.CSTNode) -> list[str]:
    """Names a statement binds in its own scope (assignments, imports, loops, defs)."""
    if type(statement) is cst.SimpleStatementLine:
        return [name for small in statement.body for name in _bound_by(small)]
    if type(statement) is cst.Assign:
        return [n for target in statement.targets for n in _target_names(target.target)]
    if isinstance(statement, cst.AnnAssign | cst.AugAssign):
        return _target_names(statement.target)
    if isinstance(statement, cst.Import | cst.ImportFrom) and not isinstance(statement.names, cst.ImportStar):
        return [(alias.evaluated_alias or alias.evaluated_name).split(".")[0] for alias in statement.names]
    if type(statement) is cst.For:
        return _target_names(statement.target)
    if isinstance(statement, cst.FunctionDef | cst.ClassDef):
        return [statement.name.value]
    return []


def _target_names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for element in target.elements for n in _target_names(element.value)]
    return []


@dataclass(frozen=True)
class _Counts:
    names: set[str]
    feeding: set[str]


def _closure(roots: set[str], calls: dict[str, set[str]], stop: set[str]) -> set[str]:
    seen = set(roots)
    stack = list(roots)
    while stack:
        for name in calls.get(stack.pop(), ()):
            if name not in seen and name not in stop:
                seen.add(name)
                stack.append(name)
    return seen


def _by_position(call: cst.Call, parameters: tuple[str, ...]) -> Iterable[tuple[str, cst.Arg]]:
    for index, arg in enumerate(call.args):
        if arg.keyword is not None:
            yield arg.keyword.value, arg
        elif not arg.star and index < len(parameters):
            yield parameters[index], arg


def _int_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "int" and len(node.args) == 1:
        return node.args[0].value
    return None


def _literal(node: cst.CSTNode | None) -> str | None:
    """A number or string literal's value as text (-1, '-1' and "-1" differ)."""
    if type(node) is cst.Integer:
        return node.value
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer:
        return "-" + node.expression.value
    value = string_value(node)
    return repr(value) if value is not None else None


def _string_choice(node: cst.BaseExpression) -> bool:
    """A string literal, or a choice between such (``'nccl' if cuda else 'gloo'``)."""
    if string_value(node) is not None:
        return True
    if type(node) is cst.IfExp:
        return _string_choice(node.body) and _string_choice(node.orelse)
    return False


def _is_false(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "False"


def _wrapped(call: cst.Call) -> cst.BaseExpression | None:
    return arg_value(call, 0, "module")


def _scaled_backward(statement: cst.SimpleStatementLine) -> cst.Call | None:
    """``scaler.scale(loss).backward()`` as a statement of its own."""
    call = lone_call(statement)
    if call is None or method_name(call) != "backward":
        return None
    inner = receiver(call)
    if type(inner) is cst.Call and method_name(inner) == "scale" and dotted(receiver(inner)) is not None:
        return call
    return None


def _iterated_loader(loop: cst.For) -> tuple[cst.BaseExpression, str | None]:
    loader = loop.iter
    if type(loader) is cst.Call and dotted(loader.func) == "enumerate" and loader.args:
        loader = loader.args[0].value
    return loader, dotted(loader)
