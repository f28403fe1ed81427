"""Ranks and sizes: where the script reads its rank, its local rank or the world size (the
environment torchrun sets, the process group, a ``--local_rank`` flag, CUDA device
counts), the checks for a launcher (``'LOCAL_RANK' in os.environ``), and what only the
master process runs (rank-guarded saves and prints).

Which process each read runs in is the launch's answer (launch.py): it hands its
processes to ``place`` once it knows them.  Reads in the launched processes become the
XLA runtime's; those in the launching process are only reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from codemods import apis
from codemods.distributed.display_reads import DisplayReads
from codemods.distributed.entry import code_owner
from codemods.distributed.flag_tests import local_rank_of_name, saved_flag_test
from codemods.distributed.rank_bound import rank_bound_read
from codemods.engine.nodes import (
    arg_value,
    call_args,
    dotted,
    is_none,
    lone_call,
    method_name,
    names_in,
    string_value,
    walk,
)
from codemods.engine.walk import Analysis, Walk, assignments, attributes_named
from codemods.targets import spellings

if TYPE_CHECKING:
    from codemods.facts import Facts

# Environment variables set by torchrun / torch.distributed.launch, and the XLA runtime
# concept that replaces each (see targets.py).
ENV_CONCEPTS = {
    "RANK": "global_ordinal",
    "LOCAL_RANK": "local_ordinal",
    "WORLD_SIZE": "world_size",
    "LOCAL_WORLD_SIZE": "local_process_count",
}
# Variables that SLURM's srun sets in each task it starts (``elif 'SLURM_PROCID' in os.environ:`` in
# DETR's and DeiT's ``init_distributed_mode``): a launcher of its own, which torch_xla.launch is not; the
# check stays as written (its branch reads them), but a start behind it is not reached by a plain run.
SLURM_TASK_VARIABLES = frozenset({"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NODEID"})
DIST_CONCEPTS = {"torch.distributed.get_rank": "global_ordinal", "torch.distributed.get_world_size": "world_size"}
# The XLA runtime's answers to the same questions, in every target's spelling: code that
# reads them (ported, or written for XLA) is multi-process code just as its source was.
XLA_RANK_READS = frozenset(
    name for concept in set(DIST_CONCEPTS.values()) | {"local_ordinal"} for name in spellings(concept)
)
DEFAULT_BACKEND = "torch.distributed.get_default_backend_for_device"
SAVES = frozenset({"torch.save", "torch_xla.core.xla_model.save"})
_LOG_METHODS = frozenset({"print", "info", "debug", "warning", "log"})
RANK_WORDS = ("rank", "master", "main_process", "is_main", "ordinal", "gpu_id", "process_index")


def run_there(names: Collection[str], calls_in: Mapping[str, Collection[str]]) -> set[str]:
    """``names`` (of callables called under a rank check) and what the functions of those names
    call, and so on: what runs where they run."""
    found = set(names)
    pending = list(found)
    while pending:
        for name in calls_in.get(pending.pop(), ()):
            if name not in found:
                found.add(name)
                pending.append(name)
    return found


class Processes(Protocol):
    """Which processes run what: the launch's answer (launch.py's LaunchAnalysis), by
    which the rank reads are placed (``RankAnalysis.place``)."""

    parent: set[str]  # the owners whose code runs in the launching process
    worker_nodes: set[int]  # but these nodes of theirs: in methods only workers, or a run spawning none, run
    params: dict[str, list[str]]
    functions: dict[str, cst.FunctionDef]

    def spawn_targets(self) -> dict[cst.Call, list[str]]: ...

    def handed(self) -> list[cst.BaseExpression]: ...

    @property
    def dp_guard_names(self) -> set[str]:
        """Names that guard a DataParallel wrap (``if n_gpu > 1:``)."""
        ...


@dataclass(repr=False)
class _Read:
    node: cst.CSTNode
    concept: str
    owner: str  # "" module level, "<guard>" the main guard, else the top-level def or class


_ORDINALS = ("global_ordinal", "local_ordinal")


def _minus_one(value: cst.BaseExpression | None) -> bool:
    """``-1`` or ``"-1"``: the default of a rank read when no launcher set the variable."""
    if type(value) is cst.UnaryOperation and type(value.operator) is cst.Minus:
        return type(value.expression) is cst.Integer and value.expression.value == "1"
    return value is not None and string_value(value) == "-1"


@dataclass(frozen=True)
class _Counts:
    names: set[str]
    feeding: set[str]


class RankAnalysis(Analysis):
    facts: Facts

    name = "ranks"
    fills = "distributed"
    reads = ("entry",)
    conclude_reads = ("project",)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.statement: cst.SimpleStatementLine | None = None
        self.skip: set[int] = set()  # nodes already accounted for by an enclosing read
        self.targets: set[int] = set()  # assignment targets (not reads)
        self.rank_reads: list[_Read] = []
        # The attributes a parsed ``--local_rank`` flag is read as: "local_rank", or the flag's
        # dest where it is another option's alias (``add_argument("--rank", "--local_rank")``:
        # ``args.rank``).  A launcher passes the flag; torch_xla.launch does not, so every
        # process would keep the default (rank 0 everywhere: each replica the same data shard).
        self.local_rank_dests: set[str] = set()
        self.rank_flag = False  # ``add_argument("--rank")`` without a --local_rank alias: read as ``args.rank``
        self.logged: set[int] = set()  # nodes in the arguments of a print or a log call (they only show it)
        # Reads of ``x.local_rank`` and ``x.rank`` (``x`` a name, not self): (attribute, read).
        self.local_rank_reads: list[tuple[str, _Read]] = []
        self.xla_rank_reads = False
        # Distributed setup at module level (launched checks, rank reads): (walk order, node).
        self.module_code: list[tuple[int, cst.CSTNode]] = []
        # Assignments anywhere in the file: dotted target -> values.
        self.assigned: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        # (call, owner, assigned name, innermost def)
        self.count_calls: list[tuple[cst.Call, str, str | None, cst.FunctionDef | None]] = []
        self.rank_assignments: list[tuple[str, cst.BaseExpression]] = []
        self.saves: list[tuple[cst.Call, str, bool]] = []  # (save, innermost function, under a rank guard)
        self.guarded_calls: set[str] = set()
        # The names each function (by its name) calls: a function called under a rank check runs
        # what it calls there too (``if is_master: save_trainer(...)``, whose ``tracker.save(...)``
        # runs ``self._save_state_dict(...)``: the torch.save in it is the master's alone).
        self.calls_in: dict[str, set[str]] = defaultdict(set)
        self.rank_tests: dict[int, bool] = {}
        self.master_print_candidates: list[cst.If] = []
        self.launch_check_owners: dict[cst.Comparison, str] = {}
        self.launch_check_functions: dict[cst.Comparison, cst.FunctionDef | None] = {}  # the innermost def
        self.slurm_checks: dict[cst.Comparison, bool] = {}  # ``'SLURM_PROCID' in os.environ``: holds under srun
        # ``args.local_rank == -1`` (a launcher never sets a local rank of -1): launch checks
        # if the script parses a --local_rank flag, as the environment's are (finish).
        self.local_rank_checks: dict[cst.Comparison, tuple[bool, str]] = {}
        self.saved_flag_tests: set[cst.Comparison] = set()  # ``ckpt["Args"].local_rank is not None``
        # A launcher of its own: programs it starts, one per worker (in a loop) or with an
        # environment of their own (``env=``), and rank variables it sets for them
        # (``env["RANK"] = ...``, ``dict(os.environ, RANK=...)``, ``{"WORLD_SIZE": ...}``).
        self.program_starts: list[cst.Call] = []
        self.env_writes = False
        self.display = DisplayReads()  # reads that only decide what a process shows

    @property
    def owner(self) -> str:
        return code_owner(self.walk, self.facts.entry.main_guard)

    def reads_ranks(self) -> bool:
        """The script reads its rank or size (from the environment, the process group,
        the XLA runtime, a ``--local_rank`` flag it parses) or checks for a launcher."""
        return bool(
            self.rank_reads
            or self.part.launched_checks
            or self.xla_rank_reads
            or any(name in self.local_rank_dests for name, _ in self.local_rank_reads)
        )

    def _rank_guarded(self) -> bool:
        """Inside an ``if`` on the rank (``if rank == 0:``, ``if master_process:``)."""
        return any(self._tests_rank(cond) for cond in self.walk.conds if type(cond) is cst.If)

    def _tests_rank(self, node: cst.If) -> bool:
        known = self.rank_tests.get(id(node))
        if known is None:
            known = any(word in name.lower() for name in names_in(node.test) for word in RANK_WORDS)
            self.rank_tests[id(node)] = known
        return known

    def _after_workers_return(self, node: cst.Call) -> bool:
        """The call follows, in its function's body, an ``if`` that returns in every process
        but the master (``if rank != 0: return``, ``if distributed and local_rank != 0: return``):
        only the master reaches it.  ``if debug and rank != 0: return`` is no such ``if``: with
        ``debug`` False every process goes on to the call."""
        function = self.walk.enclosing_function
        if function is None or type(function.body) is not cst.IndentedBlock:
            return False
        for statement in function.body.body:
            if any(sub is node for sub in walk(statement)):
                return False
            if type(statement) is cst.If and statement.orelse is None and _only_returns(statement.body):
                if _true_in_every_worker(statement.test):
                    return True
        return False

    # -- walk -------------------------------------------------------------------------------

    def visit_If(self, node: cst.If) -> None:
        self.display.saw_if(node)
        if node is self.facts.entry.main_guard:
            return
        if node.orelse is None and _lone_print(node.body) is not None and _tests_master(node.test):
            function = self.walk.enclosing_function
            if function is None or rank_bound_read(node, function, self._tests_rank) is None:
                self.master_print_candidates.append(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def visit_Assign(self, node: cst.Assign) -> None:
        self.display.saw_assign(node, self.walk.enclosing_function)
        for target in node.targets:
            for sub in walk(target.target):
                self.targets.add(id(sub))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        for sub in walk(node.target):
            self.targets.add(id(sub))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for sub in walk(node.target):
            self.targets.add(id(sub))

    @assignments()
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        self.assigned[name].append(value)
        last = name.rsplit(".", 1)[-1].lower()
        if "rank" in last and "local" not in last and type(value) is cst.BinaryOperation:
            self.rank_assignments.append((self.owner, value))

    @attributes_named("local_rank", "rank")
    def _local_rank(self, node: cst.Attribute) -> None:
        if id(node) not in self.targets | self.skip and type(node.value) is cst.Name:
            if node.value.value != "self":
                self.local_rank_reads.append((node.attr.value, _Read(node, "local_ordinal", self.owner)))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """``int(os.environ.get('RANK', -1)) != -1`` and ``'LOCAL_RANK' in os.environ``:
        is this a multi-process run?"""
        if saved_flag_test(node):
            self.saved_flag_tests.add(node)
        if len(node.comparisons) != 1:
            return
        operator, right = node.comparisons[0].operator, node.comparisons[0].comparator
        left = node.left
        if type(operator) in (cst.In, cst.NotIn) and self.walk.resolve(right) == "os.environ":
            if string_value(left) in ENV_CONCEPTS:
                self.part.launched_checks[node] = type(operator) is cst.In
                self.launch_check_owners[node] = self.owner
                self.launch_check_functions[node] = self.walk.enclosing_function
                self._distributed_code(node)
            elif string_value(left) in SLURM_TASK_VARIABLES:
                self.slurm_checks[node] = type(operator) is cst.In
            return
        if type(operator) in (cst.Is, cst.IsNot) and is_none(right) and local_rank_of_name(left):
            # ``args.local_rank is not None``: the flag a launcher passes (no default): a launch
            # check as ``!= -1`` is; the runtime's local ordinal is never None.
            self.local_rank_checks[node] = (type(operator) is cst.IsNot, self.owner)
            self.launch_check_functions[node] = self.walk.enclosing_function
            self.skip.add(id(left))
            return
        if type(operator) not in (cst.Equal, cst.NotEqual):
            return
        if (
            type(left) is cst.Attribute
            and left.attr.value == "local_rank"
            and type(left.value) is cst.Name
            and left.value.value != "self"
            and (_literal(right) or "").lstrip("-").isdigit()
            and int(_literal(right) or "0") < 0
        ):
            self.local_rank_checks[node] = (type(operator) is cst.NotEqual, self.owner)
            self.launch_check_functions[node] = self.walk.enclosing_function
            self.skip.add(id(left))
            return
        read = _int_of(left)
        found = self._env(read) if read is not None else None
        if found is None or found[1] is None or _literal(found[1]) is None:
            return
        if _literal(found[1]) == _literal(right) and _never_answered(found[0], found[1]):
            self.part.launched_checks[node] = type(operator) is cst.NotEqual
            self.launch_check_owners[node] = self.owner
            self.launch_check_functions[node] = self.walk.enclosing_function
            self.skip.update(id(n) for n in walk(left))
            self._distributed_code(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.display.saw_call(node)
        callee = self.walk.callee
        owner = self.owner
        func = node.func
        if (
            type(func) is cst.Attribute
            and func.attr.value == "local_rank"
            and type(func.value) is cst.Name
            and func.value.value != "self"
            and not node.args
        ):
            # ``args.local_rank()`` (it was given ``torch.cuda.current_device``): the call is the
            # read, replaced whole (``xr.local_ordinal()()`` would call an int)
            self.skip.add(id(func))
            self.local_rank_reads.append(("local_rank", _Read(node, "local_ordinal", owner)))
        if callee in apis.PROGRAM_STARTS and (self.walk.loop is not None or "env" in call_args(node)[1]):
            self.program_starts.append(node)  # one per worker, or given an environment of its own
        if any(arg.keyword is not None and arg.keyword.value in ENV_CONCEPTS for arg in node.args):
            self.env_writes = True
        if callee in apis.SET_DEVICE_CALLS:  # removed whole (XLA106): what it reads goes with it
            self.skip.update(id(n) for n in walk(node))
        elif callee == DEFAULT_BACKEND:  # replaced whole by "xla" (launch.py)
            self.skip.update(id(n) for n in walk(node) if n is not node)
        if self.walk.scopes and (called := method_name(node) or dotted(node.func)) is not None:
            self.calls_in[self.walk.scopes[-1]].add(called)
        if self.walk.conds and self._rank_guarded():
            if (method := method_name(node)) is not None:
                self.guarded_calls.add(method)
            elif type(node.func) is cst.Name:
                self.guarded_calls.add(node.func.value)
        if id(node) in self.skip:
            return
        if method_name(node) == "add_argument":
            self._local_rank_flag(node)
        if method_name(node) in _LOG_METHODS or apis.prints(callee, dotted(node.func)):
            self.logged.update(id(n) for n in walk(node))
        if type(node.func) is cst.Name and node.func.value == "int" and callee is None and len(node.args) == 1:
            if (found := self._env(node.args[0].value)) is not None:
                self.skip.add(id(node.args[0].value))
                self.rank_reads.append(_Read(node, ENV_CONCEPTS[found[0]], owner))
                if ENV_CONCEPTS[found[0]] in _ORDINALS and _minus_one(found[1]):
                    self.part.unlaunched_defaults.add(node)
                self._distributed_code(node)
                return
        if (found := self._env(node)) is not None:
            self.part.raw_env_reads[node] = found[0]
        elif callee in DIST_CONCEPTS and not node.args:
            self.rank_reads.append(_Read(node, DIST_CONCEPTS[callee], owner))
        elif callee in XLA_RANK_READS:
            self.xla_rank_reads = True  # already-ported code reads its rank as the original did
        elif callee == "torch.cuda.device_count" and not node.args:
            self.count_calls.append((node, owner, self._assigned_name(node), self.walk.enclosing_function))
        elif callee in SAVES:
            guarded = self._rank_guarded() or self._after_workers_return(node)
            self.saves.append((node, self.walk.scopes[-1] if self.walk.scopes else "", guarded))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if id(node) in self.targets:  # ``os.environ["RANK"] = ...``, ``env["RANK"] = ...``: a write
            index = node.slice[0].slice if len(node.slice) == 1 else None
            if type(index) is cst.Index and string_value(index.value) in ENV_CONCEPTS:
                self.env_writes = True
        elif id(node) not in self.skip and (found := self._env(node)) is not None:
            self.part.raw_env_reads[node] = found[0]

    def visit_Dict(self, node: cst.Dict) -> None:
        if any(type(e) is cst.DictElement and string_value(e.key) in ENV_CONCEPTS for e in node.elements):
            self.env_writes = True

    def program_start(self) -> cst.Call | None:
        """The first program this script starts with rank variables in its environment:
        the script launches its workers itself."""
        return self.program_starts[0] if self.program_starts and self.env_writes else None

    def _assigned_name(self, node: cst.Call) -> str | None:
        """The name a call's value is assigned to (``n = torch.cuda.device_count() if ... else 1``)."""
        statement = self.statement
        if statement is None or len(statement.body) != 1:
            return None
        small = statement.body[0]
        if type(small) is cst.Assign and len(small.targets) == 1 and any(n is node for n in walk(small.value)):
            return dotted(small.targets[0].target)
        return None

    def _local_rank_flag(self, node: cst.Call) -> None:
        """``add_argument("--local_rank", ...)``: the attribute its value is read as (its dest)."""
        positional, keywords = call_args(node)
        options = [string_value(a.value) or "" for a in positional]
        dest = string_value(keywords["dest"].value) if "dest" in keywords else None
        if not {"--local_rank", "--local-rank"} & set(options):
            self.rank_flag |= "--rank" in options and dest in (None, "rank")
            return
        first = next((option for option in options if option.startswith("--")), "--local_rank")
        self.local_rank_dests.add(dest or first[2:].replace("-", "_"))

    def _distributed_code(self, node: cst.CSTNode) -> None:
        if not self.walk.scopes:  # module level: no launcher can start it
            self.module_code.append((len(self.walk.parents), node))

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

    # -- results ----------------------------------------------------------------------------

    def finish(self) -> None:
        shows = self.display.only_shows
        self.part.raw_env_reads = {n: v for n, v in self.part.raw_env_reads.items() if not shows(n)}
        if self.local_rank_dests:
            # (a dest the script also assigns, ``args.rank = ...``, is not the flag's value alone)
            self.rank_reads.extend(
                read
                for name, read in self.local_rank_reads
                if name in self.local_rank_dests
                and (name == "local_rank" or not self.assigned.get(dotted(read.node) or ""))
            )
            for check, (launched, owner) in self.local_rank_checks.items():
                self.part.launched_checks[check] = launched
                self.launch_check_owners[check] = owner
            if self.local_rank_checks:
                self.part.saved_flag_tests = self.saved_flag_tests
        # Saves under a rank check, whether or not the analysis sees several processes: only
        # the master reaches them (an xm.save there hangs on torch_xla 1.13).
        guarded_calls = run_there(self.guarded_calls, self.calls_in)
        self.part.guarded_saves = {
            call for call, function, guarded in self.saves if guarded or function in guarded_calls
        }
        self.count_calls = [
            (call, owner, name, function)
            for call, owner, name, function in self.count_calls
            if not self._read_only_with_cuda(call, name, function)
        ]

    def conclude(self) -> None:
        """A save in a callable that another file of the run calls only under a rank check
        (``if rank == 0: utils.save_checkpoint(...)``): only the master reaches it too."""
        if not self.saves:
            return
        guarded = run_there(self.facts.project.context.rank_guarded_in_run(), self.calls_in)
        self.part.guarded_saves |= {call for call, function, _ in self.saves if function and function in guarded}

    def _read_only_with_cuda(self, call: cst.Call, name: str | None, function: cst.FunctionDef | None) -> bool:
        """The count only feeds what its function returns after a CUDA availability check
        in the same ``and`` (minGPT's ``return has_gpu and gpu_count >= min_gpus``): the
        function returns False on XLA whatever the count, which is no process count to port
        (``torch.cuda.device_count()`` is 0 there, in whichever process calls it)."""
        if function is None or (name is not None and "." in name):
            return False
        nodes = walk(function.body)
        guarded: set[int] = set()
        for node in nodes:
            if type(node) is cst.Return and node.value is not None:
                operands = _conjuncts(node.value)
                checked = next((i for i, operand in enumerate(operands) if self._checks_cuda(operand)), None)
                if checked is not None:
                    guarded.update(id(sub) for operand in operands[checked + 1 :] for sub in walk(operand))
        if name is None:
            return id(call) in guarded
        reads = [n for n in nodes if type(n) is cst.Name and n.value == name and id(n) not in self.targets]
        return bool(reads) and all(id(read) in guarded for read in reads)

    def _checks_cuda(self, node: cst.BaseExpression) -> bool:
        """``torch.cuda.is_available()``, or a name only ever assigned that (False on XLA)."""
        values = self.assigned.get(node.value, []) if type(node) is cst.Name else [node]
        return bool(values) and all(
            type(v) is cst.Call and not v.args and self.walk.resolve(v.func) in apis.AVAILABILITY_CHECKS for v in values
        )

    def place(self, launch: Processes) -> None:
        """Each read in the process it runs in, once the launch knows its processes (of a
        multi-process script); what only the master process runs."""
        part = self.part
        parent = launch.parent
        for read in self.rank_reads:
            in_parent = read.owner in parent and id(read.node) not in launch.worker_nodes
            (part.parent_reads if in_parent else part.runtime_reads)[read.node] = read.concept
        if self.rank_flag and "rank" not in self.local_rank_dests:
            part.argv_ranks = {
                read.node
                for name, read in self.local_rank_reads
                if name == "rank"
                and read.owner not in parent
                and id(read.node) not in self.logged
                and not self.assigned.get(dotted(read.node) or "")
            }
        counts = self._count_names(launch)
        for call, owner, name, _ in self.count_calls:
            last = (name or "").rsplit(".", 1)[-1].lower()
            concept = "world_size" if "world" in last else "local_process_count"
            if name is not None and name in launch.dp_guard_names:
                part.per_process_counts.add(call)
            elif owner not in parent and id(call) not in self.logged:
                # Only printed, it changes nothing (XLA511 says so), in a worker as in the
                # launching process: the port's own ``_mp_fn`` keeps the print as it is.
                part.runtime_reads[call] = concept
            elif name is not None and name in counts.feeding:
                part.launcher_counts[call] = concept
        targets = {name for names in launch.spawn_targets().values() for name in names}
        for owner, value in self.rank_assignments:
            params = launch.params.get(owner, [])
            if owner in targets and params and params[0] in set(names_in(value)):
                part.runtime_reads[value] = "global_ordinal"
        self._rereads(launch)
        part.master_prints = set(self.master_print_candidates)

    def _count_names(self, launch: Processes) -> _Counts:
        """Names that hold a CUDA device count (``ngpus_per_node = torch.cuda.device_count()``,
        and names assigned from them), and those of them handed to spawned workers."""
        counts = {name for _, _, name, _ in self.count_calls if name is not None}
        for name, values in self.assigned.items():
            for value in values:
                if any(type(n) is cst.Call and self.walk.resolve(n.func) in apis.DEVICE_COUNTS for n in walk(value)):
                    counts.add(name)
        grew = True
        while grew:
            grew = False
            for name, values in self.assigned.items():
                if name not in counts and any(dotted(v) in counts for v in values):
                    counts.add(name)
                    grew = True
        feeding: set[str] = set()
        for sub in (sub for value in launch.handed() for sub in walk(value)):
            if (name := dotted(sub)) in counts:  # type: ignore[operator,assignment]  # ``name`` is typed str by the loop above; dotted() may give None, which ``in counts`` finds absent
                feeding.add(name)
        return _Counts(counts, feeding)

    def _rereads(self, launch: Processes) -> None:
        """Worker parameters that receive a CUDA count from the launching process."""
        counts = self._count_names(launch).names
        for call, names in launch.spawn_targets().items():
            spawn = self.part.spawns[call]
            if type(spawn.args) is not cst.Tuple:
                continue
            for position, element in enumerate(spawn.args.elements):
                if dotted(element.value) not in counts:
                    continue
                for target in names:
                    params = launch.params[target]
                    if position + 1 >= len(params):
                        continue
                    param = params[position + 1]
                    concept = "world_size" if "world" in param.lower() else "local_process_count"
                    function = launch.functions[target]
                    self.part.rereads[function] = (*self.part.rereads.get(function, ()), (param, concept))


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


def _only_returns(body: cst.BaseSuite) -> bool:
    """A block that is a bare ``return`` (or ``return None``)."""
    line = body.body[0] if isinstance(body, cst.IndentedBlock) and len(body.body) == 1 else body
    if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return False
    small = line.body
    value = small[0].value if len(small) == 1 and type(small[0]) is cst.Return else False
    return value is None or (type(value) is cst.Name and value.value == "None")


# Words of a condition that holds whenever the script runs in several processes
# (``distributed``, ``not single_spec``, ``world_size > 1``, ``dist.is_initialized()``).
_SEVERAL_PROCESSES = ("distributed", "ddp", "world", "multi", "parallel", "single", "is_initialized", "nproc", "gpus")


def _true_in_every_worker(test: cst.BaseExpression) -> bool:
    """True in every process but the master: the rank test itself (``rank != 0``), an ``or``
    with it, or an ``and`` of it with tests that hold whenever there are several processes
    (``distributed and local_rank != 0``; ``debug and rank != 0`` is no such test)."""
    if _tests_worker(test):
        return True
    if type(test) is not cst.BooleanOperation:
        return False
    if type(test.operator) is cst.Or:
        return _true_in_every_worker(test.left) or _true_in_every_worker(test.right)
    conjuncts = _conjuncts(test)
    return any(_tests_worker(c) for c in conjuncts) and all(
        _tests_worker(c) or any(word in name.lower() for name in _words(c) for word in _SEVERAL_PROCESSES)
        for c in conjuncts
    )


def _tests_worker(test: cst.BaseExpression) -> bool:
    """True in every process but the master: ``rank != 0``, ``config["local_rank"] > 0``,
    ``not is_main_process()``."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _tests_master(test.expression)
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if type(target.operator) not in (cst.NotEqual, cst.GreaterThan) or not (
        type(target.comparator) is cst.Integer and target.comparator.value == "0"
    ):
        return False
    return any("rank" in word.lower() or "ordinal" in word.lower() for word in _words(test.left))


def _words(node: cst.BaseExpression) -> list[str]:
    """The names and string keys a test reads (``config["local_rank"]``: config, local_rank)."""
    return [*names_in(node), *(string_value(n) or "" for n in walk(node) if type(n) is cst.SimpleString)]


def _conjuncts(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of an ``and`` chain, in order (the node itself if it is no ``and``)."""
    if type(node) is cst.BooleanOperation and type(node.operator) is cst.And:
        return [*_conjuncts(node.left), *_conjuncts(node.right)]
    return [node]


def _int_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "int" and len(node.args) == 1:
        return node.args[0].value
    return None


def _never_answered(variable: str, default: cst.BaseExpression) -> bool:
    """Whether a launcher never sets ``variable`` to ``default`` (a rank of -1, a size of 0),
    so that comparing the read with it asks "was the script launched?".  A default it can
    set (``LOCAL_RANK`` 0, ``WORLD_SIZE`` 1) makes the comparison a question about this
    process (``int(os.environ.get("LOCAL_RANK", 0)) == 0``: the first process of the host),
    which the runtime's read answers."""
    text = (
        string_value(default)
        if type(default) is not cst.Integer and type(default) is not cst.UnaryOperation
        else _literal(default)
    )
    try:
        value = int(text or "")
    except ValueError:
        return True
    return value < (1 if ENV_CONCEPTS[variable] in ("world_size", "local_process_count") else 0)


def _literal(node: cst.CSTNode | None) -> str | None:
    """A number or string literal's value as text (-1, '-1' and "-1" differ)."""
    if type(node) is cst.Integer:
        return node.value
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer:
        return "-" + node.expression.value
    value = string_value(node)
    return repr(value) if value is not None else None
