"""Launch: whether the script runs as several processes, how they start (its style:
``mp.spawn``, a torchrun-style main guard, torch_xla already, or module level), which
code runs in the launching process and which in the launched ones, and what its
process groups become.

It decides once the others have walked: ranks.py (rank reads, launcher checks) and
ddp.py (DistributedDataParallel) say whether a script is multi-process too; it then
hands its processes to the rank reads (``RankAnalysis.place``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis, library_apis
from codemods.distributed.ddp import DdpAnalysis
from codemods.distributed.entry import code_owner
from codemods.distributed.env_ranks import env_rank_readers
from codemods.distributed.facts import ProcessGroup, Spawn
from codemods.distributed.launch_gate import starts_only_when_launched
from codemods.distributed.ranks import DEFAULT_BACKEND, RankAnalysis
from codemods.distributed.spawning_classes import worker_only_nodes
from codemods.engine.nodes import (
    arg_value,
    args_by_position,
    call_args,
    dotted,
    flag_dest,
    lone_call,
    method_name,
    names_in,
    string_value,
    target_names,
    walk,
)
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis, Walk
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts

INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
TORCH_SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn"})
XLA_LAUNCHERS = frozenset({"torch_xla.launch", "torch_xla.distributed.xla_multiprocessing.spawn"})
PROCESS = frozenset({"torch.multiprocessing.Process", "multiprocessing.Process"})
# Argument positions: init_process_group(backend, init_method, timeout, world_size, rank,
# store, group_name, pg_options, device_id); spawn(fn, args, nprocs, join, daemon,
# start_method).
PROCESS_GROUP_PARAMETERS = ("backend", "init_method", "timeout", "world_size", "rank", "store", "group_name")
SPAWN_PARAMETERS = ("fn", "args", "nprocs", "join", "daemon", "start_method")
BACKENDS = {"nccl", "gloo", "mpi", "ucc", "xla"}


class LaunchAnalysis(Analysis):
    facts: Facts

    name = "launch"
    fills = "distributed"
    reads = ("entry", "ranks", "ddp", "huggingface", "lightning")
    conclude_reads = ("project", "huggingface")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.ranks = walk.analysis(RankAnalysis)
        self.ddp = walk.analysis(DdpAnalysis)
        # Call graph by simple names: owner -> names called or passed; function -> params.
        self.calls: dict[str, set[str]] = defaultdict(set)
        self.call_sites: dict[str, list[list[str | None]]] = defaultdict(list)
        self.params: dict[str, list[str]] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self.spawn_owners: dict[cst.Call, str] = {}
        self.flag_defaults: dict[str, cst.BaseExpression] = {}
        self.pending_groups: list[tuple[cst.Call, tuple[tuple[str, cst.Arg], ...], cst.SimpleStatementLine | None]] = []
        # The functions that start a process group (they run in every process).
        self.group_functions: list[cst.FunctionDef] = []
        self.group_starts: dict[cst.Call, cst.FunctionDef] = {}  # each start in a function -> its innermost def
        # The statement line the walk is in (the last one it entered), the asserts and their
        # lines, and the module: where the rewrite hooks that change whole lines, or report
        # on the module, look.
        self.line: cst.SimpleStatementLine | cst.SimpleStatementSuite | None = None
        self.asserts: list[tuple[cst.Assert, cst.SimpleStatementLine | cst.SimpleStatementSuite]] = []
        self.module: cst.Module | None = None
        self.xla_launches: dict[cst.Call, str] = {}  # torch_xla.launch / xmp.spawn calls already there -> owner
        self.module_defs: list[cst.FunctionDef | cst.ClassDef] = []  # outside any if
        self.module_code: list[tuple[int, cst.CSTNode]] = []  # setup at module level: (walk order, node)
        self.shared: cst.Call | None = None
        self.processes = False
        # Owners whose code runs in the launching process (known once it concludes).
        self.parent: set[str] = set()
        self.worker_nodes: set[int] = set()  # code of methods only workers (or a run spawning none) run

    @property
    def owner(self) -> str:
        return code_owner(self.walk, self.facts.entry.main_guard)

    # -- walk -------------------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> None:
        self.line = node

    visit_SimpleStatementSuite = visit_SimpleStatementLine

    def visit_Assert(self, node: cst.Assert) -> None:
        if self.line is not None:
            self.asserts.append((node, self.line))

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

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.callee
        owner = self.owner
        if callee == DEFAULT_BACKEND:
            # Raises for the XLA device ("Default backend not registered"): the backend is "xla".
            self.part.backend_values[node] = "xla"
        if type(node.func) is cst.Name:
            self.calls[owner].add(node.func.value)
            self.call_sites[node.func.value].append([dotted(a.value) if a.keyword is None else None for a in node.args])
        for arg in node.args:
            if type(arg.value) is cst.Name:
                self.calls[owner].add(arg.value.value)  # functions handed on (run_demo(demo_basic))
        handed = (self.walk.resolve(a.value) for a in node.args if type(a.value) in (cst.Name, cst.Attribute))
        for named in (callee, *handed):
            rank = library_apis.LIBRARY_RANKS.get(named or "")
            if rank is not None and rank not in self.part.library_ranks:
                self.part.library_ranks.append(rank)  # ml.Accelerator(), argbind.bind(ml.Accelerator)
        if method_name(node) == "share_memory":
            self.shared = node
        if method_name(node) == "add_argument":
            self._flag(node)
        if callee == INIT_PROCESS_GROUP:
            self._process_group(node)
        elif callee in TORCH_SPAWN:
            self._spawn(node)
        elif callee in XLA_LAUNCHERS:
            self.part.style = "launched"
            self.part.xla_launched = True
            self.xla_launches[node] = owner
        elif callee in PROCESS:
            self.processes = True
        elif callee in apis.IGNITE_LAUNCHERS:
            self.part.ignite_launchers[node] = _ignite_backend(node)

    def _flag(self, node: cst.Call) -> None:
        """``parser.add_argument("--dist-backend", default="nccl")``: the flag's default, by dest."""
        keywords = call_args(node)[1]
        dest = flag_dest(node)
        if dest is not None and "default" in keywords:
            self.flag_defaults[dest] = keywords["default"].value
            if _keeps_one_process(keywords):
                self.part.launcher_flag = next(
                    (n for a in node.args if a.keyword is None and (n := string_value(a.value))), dest
                )

    def _process_group(self, node: cst.Call) -> None:
        named: list[tuple[str, cst.Arg]] = []
        for index, arg in enumerate(node.args):
            if arg.star:
                return  # unpacked: reported by the rewrite
            if arg.keyword is not None:
                named.append((arg.keyword.value, arg))
            elif index < len(PROCESS_GROUP_PARAMETERS):
                named.append((PROCESS_GROUP_PARAMETERS[index], arg))
        self.pending_groups.append((node, tuple(named), self._line_of(node)))
        if (owner := self.owner) and owner != "<guard>":
            self.part.group_starters.add(owner)
        if (function := self.walk.enclosing_function) is not None:
            self.group_starts[node] = function
            if function not in self.group_functions:
                self.group_functions.append(function)
        self._distributed_code(node)

    def _line_of(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The statement line ``node`` is in; None if it is in none (a compound statement's
        header, a line after a colon)."""
        line = self.line
        if type(line) is not cst.SimpleStatementLine:
            return None
        parents, wanted = self.walk.parents, id(line)
        key: int | None = id(node)
        while key is not None:
            if key == wanted:
                return line
            key = parents.get(key)
        return None

    def _spawn(self, node: cst.Call) -> None:
        args = dict(args_by_position(node, SPAWN_PARAMETERS))
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

    def _distributed_code(self, node: cst.CSTNode) -> None:
        if not self.walk.scopes:  # module level: no launcher can start it
            self.module_code.append((len(self.walk.parents), node))

    # -- results ----------------------------------------------------------------------------

    def finish(self) -> None:
        """Multi-process or not; Accelerate and Lightning do the distributed work of their
        scripts themselves, and Hogwild scripts are only reported."""
        part = self.part
        part.multi_process = bool(
            part.requested
            or part.ddp
            or self.pending_groups
            or part.spawns
            or self.ranks.reads_ranks()
            or part.style == "launched"
        )
        if self.shared is not None and self.processes:
            part.hogwild = self.shared
            part.multi_process = False
        start = self.ranks.program_start()
        if start is not None and not (self.pending_groups or part.spawns or part.ddp or part.style == "launched"):
            # A launcher of its own: its environment reads and checks are its own inputs.
            part.own_launcher = start
            part.multi_process = False
            part.launched_checks = {}
            part.raw_env_reads = {}
        facts = self.facts
        if facts.huggingface.accelerators or facts.lightning.drives_training or part.hogwild is not None:
            part.multi_process = False

    def conclude(self) -> None:
        """The style, which code runs where, the process groups (for a multi-process
        script: the Trainer does the distributed work of its scripts itself); then the
        lines of the asserts of a launcher check that becomes True."""
        self._settle_processes()
        checks = self.part.launched_checks
        if checks:
            self.part.launch_assert_lines = {
                line
                for assertion, line in self.asserts
                if any(type(n) is cst.Comparison and n in checks for n in walk(assertion.test))
            }

    def _settle_processes(self) -> None:
        part = self.part
        facts = self.facts
        if not part.multi_process or facts.huggingface.trainer_script:
            return
        guard = facts.entry.main_guard
        if part.style is None:
            if part.spawns:
                part.style = "spawn"
            elif facts.entry.mp_fn is not None:
                part.style = "launched"
            elif guard is not None:
                part.style = "main"
            else:
                part.style = "module"
                code = sorted([*self.ranks.module_code, *self.ddp.module_code, *self.module_code], key=lambda c: c[0])
                part.module_level_anchor = code[0][1] if code else None
                part.module_level_script = self.module if code else None
                # No function to start: the script stays one process as `python
                # train.py` and one per device under torchrun (xla:// supports it), so its
                # check for a launcher stays.
                part.module_level_checked = bool(part.launched_checks)
                part.launch_checked = {
                    owner
                    for check in part.launched_checks
                    if (owner := self.ranks.launch_check_owners.get(check))
                    and owner != "<guard>"
                    and self._starts_only_when_launched(check)
                }
                part.launched_checks = {}
        if guard is not None and facts.entry.mp_fn is None:
            if part.style == "main":
                part.entry_guard = guard
            elif part.style == "spawn":
                # Spawns that are statements of their own in the guard's block.
                alone = {lone_call(statement) for statement in guard.body.body}
                part.guard_spawns = {call for call in part.spawns if call in alone}
                part.spawn_guard = guard if part.guard_spawns else None
            part.guard_globals = _shared_names(guard, self.module_defs)
        self.parent = self._processes()
        self.worker_nodes = self._worker_nodes()
        self._process_groups()
        if part.style in ("main", "spawn") and facts.entry.mp_fn is None:
            self._import_time_groups()
        self.ranks.place(self)
        if part.style in ("main", "spawn", "launched"):
            self._external_launch_checks()

    def _starts_only_when_launched(self, check: cst.Comparison) -> bool:
        """The function of a launcher check starts no process group, or starts one that a run
        without a launcher may not reach (launch_gate.py): with one such a run starts too
        (ibot's ``init_distributed_mode``: ``elif torch.cuda.is_available(): ...`` falls
        through to it, and the port drops that check), so no caller is told it would not."""
        function = self.ranks.launch_check_functions.get(check)
        if function is None:
            return True
        starts = [call for call, where in self.group_starts.items() if where is function]
        # SLURM's task variables tell a run that srun started, which torch_xla.launch is not either.
        checks = {**self.part.launched_checks, **self.ranks.slurm_checks}
        return not starts or any(
            starts_only_when_launched(function, call, checks, self.walk.resolve) is not False for call in starts
        )

    def _external_launch_checks(self) -> None:
        """Calls of another module's callable that starts the process group only under a
        launcher check that stays there, or that takes its rank from the launcher's variables
        otherwise: the XLA launcher sets none of them."""
        for name, reads in env_rank_readers(self.module.code, loops_only=True) if self.module is not None else ():
            self.part.env_rank_readers[f"`{name}` (this file)"] = reads
        project = self.walk.analysis(ProjectAnalysis)
        for call, callee in project.calls:
            found = project.origin(callee)
            if found is None or found.summary is None:
                continue
            named = f"`{callee}` ({found.summary.path})"
            if found.summary.checks_launcher(found.name):
                self.part.external_launch_checks[call] = named
                continue
            if (env_reads := found.summary.reads_env_ranks(found.name)) is not None:
                self.part.env_rank_readers.setdefault(named, env_reads)
            if found.summary.starts_group(found.name) and not found.summary.pending:
                self.part.external_group_start = self.part.external_group_start or named
        if self.part.external_launch_checks:
            self.part.unchecked_collective = self._unchecked_collective(project)

    def _unchecked_collective(self, project: ProjectAnalysis) -> str:
        """A collective that this script, or a project module it imports (its model's, its
        training loop's), runs with no check that a process group is started, as a finding
        names it: the first of this file's, else of those modules' in the order of the imports."""
        for callee, function in self.part.unchecked_collectives.values():
            return f"`{callee}` (this file, in `{function}`)"
        seen: set[str] = set()
        for module, name in self.facts.imports.project_names.values():
            found = project.part.context.lookup(module, name)
            summary = found.summary if found is not None else None
            if summary is None or summary.path in seen:
                continue
            seen.add(summary.path)
            for callee, line in summary.collectives:
                return f"`{callee}` ({summary.path}:{line})"
        return ""

    # -- which code runs where ----------------------------------------------------------

    def spawn_targets(self) -> dict[cst.Call, list[str]]:
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
                    {site[position] for site in self.call_sites.get(owner, []) if len(site) > position}  # type: ignore[arg-type]  # sites hold None for a keyword or non-name argument (str | None): a mix of None and names would make sorted() raise; not reproduced
                    & set(self.functions)
                )
            else:
                targets[call] = []
        return targets

    def handed(self) -> list[cst.BaseExpression]:
        """What the launching process hands to the workers: spawn and launch arguments."""
        handed = [spawn.args for spawn in self.part.spawns.values() if spawn.args is not None]
        return handed + [arg.value for launch in self.xla_launches for arg in launch.args[1:]]

    @property
    def dp_guard_names(self) -> set[str]:
        return self.ddp.dp_guard_names

    def _worker_nodes(self) -> set[int]:
        """The code of the methods of a class that spawns ``self.<method>`` which only its workers, or
        its run that spawns none, run (distributed/spawning_classes.py)."""
        own = {
            call: spawn.fn for call, spawn in self.part.spawns.items() if (dotted(spawn.fn) or "").startswith("self.")
        }
        if not own or self.module is None:
            return set()
        return worker_only_nodes(self.module, list(own), list(own.values()))

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
            for call, names in self.spawn_targets().items():
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
        for call, named, line in self.pending_groups:
            arguments = dict(named)
            keep_backend = self._sources_become("backend", arguments.get("backend"), "xla")
            keep_init = self._sources_become("init_method", arguments.get("init_method"), "xla://")
            from_flag = keep_init and self._flag_of(arguments["init_method"]) is not None
            self.part.process_groups[call] = ProcessGroup(named, keep_backend, keep_init, line, from_flag)
        for function in self.group_functions:
            self._varying_rendezvous(function)

    def _varying_rendezvous(self, function: cst.FunctionDef) -> None:
        """``os.environ["MASTER_PORT"] = str(port)`` in a function that starts the process group, where
        the value comes from a call each process makes (``port = comm.bcast(_find_free_port(), root=0)``):
        the xla:// rendezvous builds its store from each process's MASTER_PORT, so processes that
        computed different ports never meet.  Under torch_xla.launch an MPI communicator's
        broadcast does not make them agree: each process is a world of its own."""
        assigned: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        writes: list[tuple[cst.CSTNode, cst.BaseExpression]] = []
        for statement in walk(function.body):
            if type(statement) is not cst.Assign:
                continue
            for target in statement.targets:
                if type(target.target) is cst.Name:
                    assigned[target.target.value].append(statement.value)
                elif self._environ_key(target.target) in _RENDEZVOUS_PORTS:
                    writes.append((target.target, statement.value))
        for written, value in writes:
            callees = _per_process_calls(value, assigned, self.walk.resolve, set())
            if callees:
                broadcast = any(callee.rpartition(".")[2] == "bcast" for callee in callees)
                self.part.varying_rendezvous[written] = (code_of(value), broadcast)

    def _environ_key(self, node: cst.BaseExpression) -> str | None:
        """``KEY`` of ``os.environ["KEY"]``."""
        if type(node) is not cst.Subscript or len(node.slice) != 1 or self.walk.resolve(node.value) != "os.environ":
            return None
        index = node.slice[0].slice
        return string_value(index.value) if type(index) is cst.Index else None

    def _import_time_groups(self) -> None:
        """The process groups that module-level code starts, in the launching process: those
        on a line of their own before a main guard that becomes ``_mp_fn`` move into it."""
        part = self.part
        guard = part.entry_guard
        top = list(self.module.body) if self.module is not None else []
        before_guard: set[cst.BaseStatement] = set()
        if guard is not None and guard in top and type(guard.body) is cst.IndentedBlock:
            before_guard = set(top[: top.index(guard)])
        main_guard = self.facts.entry.main_guard
        in_guard = set(walk(main_guard)) if main_guard is not None else set()
        for _, node in self.module_code:
            if type(node) is not cst.Call or node not in part.process_groups or node in in_guard:
                continue
            line = part.process_groups[node].line
            if line is not None and line in before_guard and lone_call(line) is node:
                part.import_time_groups[line] = node
            else:
                part.unmoved_import_time_groups.add(node)

    def _flag_of(self, arg: cst.Arg) -> cst.BaseExpression | None:
        """The default of the command-line flag the argument reads (``args.dist_url``), if any."""
        name = dotted(arg.value) or ""
        return self.flag_defaults.get(name.rsplit(".", 1)[-1]) if "." in name else None

    def _sources_become(self, parameter: str, arg: cst.Arg | None, value: str) -> bool:
        """Whether the argument may stay: it names a variable or a flag whose every value
        is a plain choice of strings, which become ``value``."""
        if arg is None:
            return False
        name = dotted(arg.value)
        if name is None:
            return False
        sources = list(self.ranks.assigned.get(name, []))
        if (default := self._flag_of(arg)) is not None:
            sources.append(default)
        if not sources or not all(_string_choice(s) for s in sources):
            return False
        if parameter == "backend" and not any(string_value(n) in BACKENDS for s in sources for n in walk(s)):
            return False
        for source in sources:
            self.part.backend_values[source] = value
        return True


# The port the xla:// rendezvous's store listens on, read from each process's environment.
_RENDEZVOUS_PORTS = frozenset({"MASTER_PORT"})
# Calls whose value is what they are handed (a conversion) or the environment the processes share.
_SAME_IN_EVERY_PROCESS = frozenset({"str", "int", "os.environ.get", "os.getenv"})


def _per_process_calls(
    value: cst.BaseExpression,
    assigned: dict[str, list[cst.BaseExpression]],
    resolve: Callable[[cst.BaseExpression], str | None],
    seen: set[str],
) -> list[str]:
    """The calls that the value (followed through the function's own names) holds that each process
    makes for itself: not a conversion (``str(port)``) or a read of the environment they share."""
    found: list[str] = []
    for node in walk(value):
        if type(node) is cst.Call:
            callee = resolve(node.func) or dotted(node.func) or ""
            if callee not in _SAME_IN_EVERY_PROCESS:
                found.append(callee)
        elif type(node) is cst.Name and node.value in assigned and node.value not in seen:
            seen.add(node.value)
            for assigned_value in assigned[node.value]:
                found += _per_process_calls(assigned_value, assigned, resolve, seen)
    return found


def _ignite_backend(call: cst.Call) -> cst.Arg | None:
    """The backend argument of an ignite launcher (its first parameter); an unpacked
    argument that may hold it; None if there is none."""
    backend = next((arg for name, arg in args_by_position(call, ("backend",)) if name == "backend"), None)
    return backend or next((arg for arg in call.args if arg.star), None)


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
        return [n for target in statement.targets for n in target_names(target.target)]
    if isinstance(statement, cst.AnnAssign | cst.AugAssign):
        return target_names(statement.target)
    if isinstance(statement, cst.Import | cst.ImportFrom) and not isinstance(names := statement.names, cst.ImportStar):
        return [(alias.evaluated_alias or alias.evaluated_name).split(".")[0] for alias in names]
    if type(statement) is cst.For:
        return target_names(statement.target)
    if isinstance(statement, cst.FunctionDef | cst.ClassDef):
        return [statement.name.value]
    return []


def _closure(roots: set[str], calls: dict[str, set[str]], stop: set[str]) -> set[str]:
    seen = set(roots)
    stack = list(roots)
    while stack:
        for name in calls.get(stack.pop(), ()):
            if name not in seen and name not in stop:
                seen.add(name)
                stack.append(name)
    return seen


def _string_choice(node: cst.BaseExpression) -> bool:
    """A string literal, or a choice between such (``'nccl' if cuda else 'gloo'``)."""
    if string_value(node) is not None:
        return True
    if type(node) is cst.IfExp:
        return _string_choice(node.body) and _string_choice(node.orelse)
    return False


# The values of a launcher flag that start the processes' group (mmcv's and BasicSR's init_dist).
_TORCH_LAUNCHERS = frozenset({"pytorch", "slurm", "mpi"})


def _keeps_one_process(keywords: dict[str, cst.Arg]) -> bool:
    """``choices=["none", "pytorch", "slurm", "mpi"], default="none"``: a flag that picks the
    launcher the script expects, whose default is none (no process group, no distributed mode)."""
    choices = keywords.get("choices")
    if string_value(keywords["default"].value) != "none" or choices is None:
        return False
    if not isinstance(choices.value, cst.List | cst.Tuple | cst.Set):
        return False
    values = {string_value(element.value) for element in choices.value.elements}
    return "none" in values and bool(values & _TORCH_LAUNCHERS)
