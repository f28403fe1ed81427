"""The project around the file: what the callables it imports from the project's own
modules do (from their summaries, see module_summary.py), and which setup goes to, or comes
from, a module that still needs converting (each file is converted on its own terms)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.shapes import is_device_name
from codemods.engine.nodemap import NodeMap
from codemods.engine.nodes import arg_value, call_args, dotted, flag_dest, string_value
from codemods.engine.walk import Walk, assignments
from codemods.project.branch_classes import dict_keys
from codemods.project.callee_origins import CalleeOrigins
from codemods.project.dynamic_loads import Held, dynamic_loads, loaded_by_default, template_text, value_starts_import
from codemods.project.facts import NamedTraining
from codemods.project.handed_wrappers import handed_wrappers
from codemods.project.holdings import STEP_CAUSES
from codemods.project.import_context import outside_project
from codemods.project.module_summary import Found, ModuleSummary
from codemods.project.named_steps import inherited_choice, runtime_factory
from codemods.project.reach import amp_elsewhere, plain_step, registry_calls, unported_uses
from codemods.project.receivers import (
    BUILTIN_TYPES,
    CONFIG_BUILDERS,
    CONTAINER_BUILDERS,
    CONTAINER_LITERALS,
    globals_lookup,
    optimizer_arguments,
    used_of,
)

if TYPE_CHECKING:
    from codemods.facts import Facts

_MOVES = ("to", "cuda", "float", "double", "train", "eval")
# Imports by a name built at run time besides importlib.import_module (``builtins.exec`` of an import statement).
_EXECUTED_IMPORTS = ("importlib.__import__", "builtins.__import__", "builtins.exec")
# How many modules deep a single-file run follows what the file uses (see _unported_uses).
_MAX_DEPTH = 3
# Builtins that look a module's names up by a string made at run time.
_RUN_TIME_LOOKUPS = frozenset({"eval", "exec", "globals"})


class ProjectAnalysis(CalleeOrigins):
    facts: Facts

    name = "project"
    reads = ("imports",)
    conclude_reads = ("training",)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.project
        self.calls: list[tuple[cst.Call, str]] = []  # calls of names that may come from the project
        self.call_conds: dict[cst.Call, tuple[cst.If | cst.IfExp, ...]] = {}  # the conditions around each
        self.string_flags: dict[str, str] = {}  # ``add_argument("--model", default="votenet")``: dest -> default
        self.built_by: dict[str, tuple[str, str]] = {}  # name -> (module, callable) that built it
        # Every (module, callable) that built a name, in order: branches may build it apart
        # (``policy = TD3(...)`` under one condition, ``policy = DDPG(...)`` under another).
        self.builders: dict[str, list[tuple[str, str]]] = {}
        self.built_calls: dict[str, cst.Call] = {}  # name -> the call that built it (the last)
        # Each call bound to a name -> the project callables it may build, as (module, callable):
        # ``learner = le_REGISTRY[args.learner](mac)`` each class of the table (also for ``self.x``).
        self.call_builders: NodeMap[list[tuple[str, str]]] = NodeMap()
        # Names bound to a project callable (``Exp = Exp_Long_Term_Forecast``): name -> (module, callable).
        self.aliases: dict[str, tuple[str, str]] = {}
        # Names bound to one of several project callables, looked up in a dict of them
        # (``Trainer = train_factory[opt.task]``): name -> each (module, callable), in the
        # dict's order (``aliases`` holds the first).
        self.alternatives: dict[str, list[tuple[str, str]]] = {}
        self.device_calls: list[cst.Call] = []  # device = <call>
        self.function_calls: list[tuple[str, str]] = []  # (function, callee) of calls in functions
        # (function, name) of names a function uses without calling them where it names them: a
        # local alias (``block = Block``, then ``block(a, b)``) or an argument (``make_layer(Block, 2)``).
        self.function_names: list[tuple[str, str]] = []
        self._origins: dict[str, Found | None] = {}
        self._settled = False  # (CalleeOrigins.finish: the walk is over)
        self._all_origins: dict[str, list[Found]] = {}
        self.top_level: set[str] = set()  # the functions and classes this module defines
        self.bases: list[tuple[str, str]] = []  # (top-level class, a base class as written)
        self.module_aliases: list[tuple[str, str]] = []  # module-level ``name = other.attr``: (name, what it holds)
        self.attribute_uses: set[tuple[str, str]] = set()  # (imported project name, attribute of it)
        self.attribute_chains: set[tuple[str, ...]] = set()  # ``pkg.algos.CQLConfig``: its names, of a project name
        self.import_nodes: dict[str, cst.Import | cst.ImportFrom] = {}  # project name -> its import
        # A name that imports of several project modules bind (``from tasks.glue.get_trainer import get_trainer``
        # in one branch, ``from tasks.qa.get_trainer import get_trainer`` in another): each (module, name, import).
        self.import_choices: dict[str, list[tuple[str, str, cst.ImportFrom]]] = {}
        self.star_imports: list[tuple[str, cst.ImportFrom]] = []  # (module as written, its import)
        self._held: dict[tuple[str, str], list[Held]] = {}
        self.module: cst.Module | None = None
        # How each name the file binds is bound: True where the tool can tell the class of its value
        # (a literal, a call of an import from outside the project, of a builtin, of a class of the
        # file), False where it cannot (a call of a name bound at run time, ``getattr(...)``, an
        # attribute, a subscript), None for a call of a project callable (a class, or not: see
        # ``untyped``); one entry for each binding.
        self.bindings: dict[str, list[bool | None]] = defaultdict(list)
        # Names whose every binding is a call whose class the tool cannot tell (``algorithm =
        # algorithm_class(...)``, ``agent = make_agent(cfg)``, not a project function's: it may return
        # a dict): their callees as written (None: ``getattr(zoo, name)(...)``); None once one is not.
        self.call_bound: dict[str, list[str | None] | None] = {}
        # The functions of this file that return a container they build (``return {...}``, ``dict(...)``).
        self.container_returns: set[str] = set()
        # Names bound to a call of a name that is neither imported nor of the project: name -> that
        # callee (a class of this file, ``trainer = MyTrainer(...)``, whose bases may be the project's).
        self.local_calls: dict[str, str] = {}
        # Names bound to ``getattr(<project module>, name)``: name -> that module's summary.
        self.attribute_lookups: dict[str, ModuleSummary] = {}
        # ``import myproj.models``: (the module, its import), for the imports the file names nothing of.
        self.plain_imports: list[tuple[str, cst.Import]] = []
        self.side_effects: set[cst.CSTNode] = set()  # those of them that the file names nothing of
        self.named_names: set[str] = set()  # the names the file reads or binds, but in its imports
        # How often each name is written as a name (``named_names``), and as the attribute of an
        # access or the keyword of an argument (``out.cpu()``, ``f(gpu=True)``): more of the first
        # than of the second, and the file names it itself (a star import brings only that).
        self._name_counts: Counter[str] = Counter()
        self._not_names: Counter[str] = Counter()
        # The file looks names up at run time (``eval(f"{name}")``, ``globals()[name]``): any name may run.
        self._names_at_run_time = False
        self._importing = False
        self.scanned: set[str] = set()  # the packages among them whose modules a scan of their folder loads
        self.summaries: dict[str, ModuleSummary] = {}  # the modules held_by read, by path
        # (function, name) -> a string built at run time bound to it there (``import_str = f"from ..."``)
        self.strings: dict[tuple[str, str], cst.BaseExpression] = {}
        self.registry_calls: list[tuple[cst.Call, str]] = []  # ``train_dict[cfg.train.mode](...)``: (call, registry)
        # Module-level ``REGISTRY = {}``: a table once an item assignment fills it (``REGISTRY["q"] = QLearner``).
        self._empty_tables: set[str] = set()

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    # -- walk -------------------------------------------------------------------------------

    @assignments(unpack=False)
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        if type(value) is cst.FormattedString or (
            type(value) is cst.BinaryOperation and type(value.operator) is cst.Add
        ):
            self.strings[(self.walk.qualname, name)] = value  # (what an ``exec`` of it runs)
        if self.walk.enclosing_function is not None and (used := dotted(value)) is not None:
            self.function_names.append((self.walk.qualname, used))
        elif self.walk.enclosing_function is not None and type(literal := _subscripted(value)) is cst.Dict:
            # ``klass = {"compression": CompressionSolver, ...}[cfg.solver]``, then ``klass(cfg)``:
            # the function runs any of the dict's values.
            self.function_names.extend(
                (self.walk.qualname, used)
                for e in literal.elements
                if type(e) is cst.DictElement and (used := dotted(e.value)) is not None
            )
        elif self.walk.module_level and "." not in name and (used := dotted(value)) is not None:
            # ``furthest_point_sample = FurthestPointSampling.apply``: the name runs what it holds.
            self.module_aliases.append((name, used))
        while (
            type(value) is cst.Call
            and type(attribute := value.func) is cst.Attribute  # (method_name and receiver, at once)
            and attribute.attr.value in _MOVES
        ):
            value = attribute.value
        self.bindings[name].append(typed := self._typed(value))
        callees = self.call_bound.get(name, [])
        untold = type(value) is cst.Call and typed is False
        self.call_bound[name] = [*callees, dotted(value.func)] if untold and callees is not None else None  # type: ignore[attr-defined]  # value is a Call when untold
        project_names = self.facts.imports.project_names
        if (
            (type(value) is cst.Dict or type(value) is cst.List or type(value) is cst.Tuple)
            and self.walk.module_level
            and "." not in name
        ):
            values = [
                dotted(e.value) if type(e) is cst.DictElement or type(e) is cst.Element else None
                for e in value.elements
            ]
            if values and all(values):
                self.part.name_tables[name] = tuple(v for v in values if v)  # (all of them)
                if type(value) is cst.Dict:
                    self.part.table_keys[name] = dict_keys(value)
            elif not value.elements and type(value) is cst.Dict:
                self._empty_tables.add(name)
        self._table_lookup(value)
        if type(value) is cst.Subscript and "." not in name and (table := dotted(value.value)) is not None:
            self._looked_up(name, table)
            return
        if (
            type(value) is cst.Call
            and type(value.func) is cst.Subscript
            and (table := dotted(value.func.value)) is not None
            and (found := self._table_members(table))
        ):
            # ``learner = le_REGISTRY[args.learner](mac, args)``: an instance of one of the table's classes.
            self.call_builders[value] = found
            if "." not in name:
                self.built_by[name] = found[0]
                self.builders.setdefault(name, []).extend(found)
                self.built_calls[name] = value
                return
        if "." not in name and (loaded := loaded_by_default(value, self.walk, self.string_flags, self.part.context)):
            self.aliases.setdefault(name, loaded)  # ``GRU4Rec = importlib.import_module(args.model).GRU4Rec``
            self._origins.pop(name, None)
            return
        if type(value) in (cst.Name, cst.Attribute) and "." not in name and (other := dotted(value)) is not None:
            head, _, rest = other.partition(".")
            if head in project_names:  # ``Exp = Exp_Long_Term_Forecast``
                module, imported = project_names[head]
                self.aliases.setdefault(name, (module, ".".join(p for p in (imported, rest) if p)))
                self._origins.pop(name, None)
            return
        if type(value) is not cst.Call or (callee := dotted(value.func)) is None:
            return
        if callee == "getattr" and "." not in name and (looked := self._project_module(arg_value(value, 0, "o"))):
            self.attribute_lookups[name] = looked  # ``algorithm_class = getattr(algorithms, name)``
        head = callee.split(".")[0]
        if head not in project_names and head not in self.aliases:
            self.local_calls[name] = callee
        if name in self.built_by and any(dotted(a.value) == name for a in value.args):
            return  # ``model = apply_gradient_allreduce(model)``: a wrapper that hands the instance back
        if head in project_names or head in self.aliases:
            module, imported = project_names[head] if head in project_names else self.aliases[head]
            members = callee.split(".")[1:]
            self.built_by[name] = (module, ".".join(p for p in [imported, *members] if p))
            if (instance := self._returned_instance(*self.built_by[name])) is not None:
                self.built_by[name] = instance  # ``optimizer = build_optimizer(...)``: a MultiOptimizer
            built = [self.built_by[name]]
            for other, there in self.alternatives.get(head, [])[1:]:  # each class the dict may give
                built.append((other, ".".join(p for p in [there, *members] if p)))
            self.builders.setdefault(name, []).extend(built)
            self.built_calls[name] = value
            self.call_builders[value] = built
        if is_device_name(name):
            self.device_calls.append(value)

    def _project_module(self, value: cst.BaseExpression | None) -> ModuleSummary | None:
        """The summary of the project module that ``value`` (an imported name) is."""
        written = dotted(value) if value is not None else None
        if written is None or (head := written.split(".")[0]) not in self.facts.imports.project_names:
            return None
        module, imported = self.facts.imports.project_names[head]
        found = self.part.context.lookup(module, ".".join(p for p in [imported, *written.split(".")[1:]] if p))
        return found.summary if found is not None and not found.name else None

    def _typed(self, value: cst.BaseExpression) -> bool | None:
        """Whether the tool can tell the class of ``value`` (see ``bindings``)."""
        if type(value) in (cst.Name, cst.Attribute, cst.Subscript, cst.IfExp, cst.BooleanOperation, cst.Await):
            return False
        if type(value) is not cst.Call:
            return True  # a literal, a comprehension, an operation
        callee = dotted(value.func)
        if callee is None:
            return False  # ``getattr(zoo, name)(...)``, ``REGISTRY[name](...)``
        head = callee.split(".")[0]
        if (resolved := self.walk.resolve(value.func)) in CONFIG_BUILDERS:
            return False  # a class its configuration names (hydra is no project module of the run)
        if head in self.facts.imports.project_names or head in self.aliases:
            return None
        if resolved is not None or callee in self.part.classes:
            return True  # an import from outside the project, or a class of this file
        return callee in BUILTIN_TYPES

    def visit_Assign(self, node: cst.Assign) -> None:
        """``model, optimizer = get_model(device)``, a project function returning a tuple
        that holds instances of project classes: each name is built by its class.  At module
        level, ``REGISTRY["q_learner"] = QLearner`` fills the table ``REGISTRY = {}``."""
        target = node.targets[0].target if len(node.targets) == 1 else None
        if type(target) is cst.Subscript and self.walk.module_level:
            table, written = dotted(target.value), dotted(node.value)
            if table is not None and written is not None and table in self._empty_tables | set(self.part.name_tables):
                self.part.name_tables[table] = (*self.part.name_tables.get(table, ()), written)
            return
        if type(target) is not cst.Tuple and type(target) is not cst.List:
            return
        if type(node.value) is not cst.Call or (callee := dotted(node.value.func)) is None:
            return
        head, _, rest = callee.partition(".")
        if head not in self.facts.imports.project_names:
            return
        module, imported = self.facts.imports.project_names[head]
        found = self.part.context.lookup(module, ".".join(p for p in (imported, rest) if p))
        if found is None or found.summary is None:
            return
        for position, element in enumerate(target.elements):
            name = dotted(element.value)
            built = found.summary.returned_instance(found.name, position)
            if name is not None and built is not None and "." not in name:
                self.built_by[name] = (module, built)
                self.builders.setdefault(name, []).append(self.built_by[name])
                self._origins.pop(name, None)

    def visit_Return(self, node: cst.Return) -> None:
        if self.walk.enclosing_function is None or node.value is None:
            return
        if globals_lookup(node.value) and len(self.walk.scopes) == 1:  # ``return globals()[name]``, top-level
            self.part.globals_lookups.add(self.walk.qualname)
        if type(node.value) in CONTAINER_LITERALS or (
            type(node.value) is cst.Call and dotted(node.value.func) in CONTAINER_BUILDERS
        ):
            self.container_returns.add(self.walk.qualname)
        if type(node.value) is cst.Call and (callee := dotted(node.value.func)) is not None:
            # ``return MultiOptimizer(...)``: the instance itself (position -1)
            if callee.split(".")[0] in self.facts.imports.project_names or callee in self.part.classes:
                self.part.returned_instances.add((self.walk.qualname, -1, callee))
            return
        if type(node.value) is not cst.Tuple:
            return
        for position, element in enumerate(node.value.elements):
            value = element.value
            callee = dotted(value.func) if type(value) is cst.Call else None
            head = callee.split(".")[0] if callee is not None else None
            if callee is not None and (head in self.facts.imports.project_names or head in self.part.classes):
                self.part.returned_instances.add((self.walk.qualname, position, callee))

    def _returned_instance(self, module: str, function: str) -> tuple[str, str] | None:
        """The project class of the instance that ``function`` returns whole (``return
        MultiOptimizer(...)``), as (its module, its name there); None for anything else."""
        found = self.part.context.lookup(module, function)
        if found is None or found.summary is None or (cls := found.summary.returned_instance(found.name, -1)) is None:
            return None
        return module, cls

    def _looked_up(self, name: str, table: str) -> None:
        """``Trainer = train_factory[opt.task]``: a dict of project callables, of this file
        (``{'ctdet': CtdetTrainer}``, its values imported from the project) or imported from
        a project module: ``name`` is each of them."""
        found = self._table_members(table)
        if found:
            self.aliases[name] = found[0]
            self.alternatives[name] = found
            self._origins.pop(name, None)

    def _table_members(self, table: str) -> list[tuple[str, str]]:
        """The project callables a dict of them holds, as (module, callable): a table of this
        file whose values are imported from the project, or one imported from a project module."""
        project_names = self.facts.imports.project_names
        found: list[tuple[str, str]] = []
        if table in self.part.name_tables:
            for written in self.part.name_tables[table]:
                head, _, rest = written.partition(".")
                if head in project_names:
                    module, imported = project_names[head]
                    found.append((module, ".".join(p for p in (imported, rest) if p)))
        elif (head := table.split(".")[0]) in project_names:
            module, imported = project_names[head]
            there = self.part.context.lookup(module, ".".join(p for p in [imported, *table.split(".")[1:]] if p))
            if there is not None and there.summary is not None:
                # The dict's values are names of its module: found through it (its imports followed).
                found = [(module, written) for written in there.summary.table_of(there.name)]
        return [alternative for alternative in found if self.part.context.lookup(*alternative) is not None]

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        self._importing = True
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            module = "." * len(node.relative) + (dotted(node.module) or "" if node.module is not None else "")
            if node.relative or not outside_project(module):
                self.star_imports.append((module, node))
            for local, star in self.facts.imports.star_bound.items():
                if star is node:
                    self.import_nodes.setdefault(local, node)
            return
        for alias in node.names:  # type: ignore[union-attr]  # names is not ImportStar (checked above): mypy does not narrow it
            local = alias.evaluated_alias or alias.evaluated_name
            self.import_nodes.setdefault(local if type(node) is cst.ImportFrom else local.split(".")[0], node)
            if type(node) is cst.ImportFrom:
                module = "." * len(node.relative) + (dotted(node.module) or "" if node.module is not None else "")
                if node.relative or not outside_project(module):
                    self.import_choices.setdefault(local, []).append((module, alias.evaluated_name, node))
            if type(node) is cst.Import and alias.asname is None and not outside_project(alias.evaluated_name):
                self.plain_imports.append((alias.evaluated_name, node))

    visit_Import = _import
    visit_ImportFrom = _import

    def leave_Import(self, node: cst.Import) -> None:
        self._importing = False

    leave_ImportFrom = leave_Import

    def visit_Name(self, node: cst.Name) -> None:
        if not self._importing:  # (``model_zoo`` of ``getattr(model_zoo, name)``; not of its import)
            self.named_names.add(node.value)
            self._name_counts[node.value] += 1

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_names[node.keyword.value] += 1

    def names_itself(self, name: str) -> bool:
        """The file writes ``name`` as a name of its own (a call, a read, a binding), not only as an
        attribute (``out.cpu()``) or a keyword (``f(gpu=True)``), or it looks its names up at run time
        (``eval('{0}'.format(args.runner))``: ReChorus picks its runner so)."""
        return self._names_at_run_time or self._name_counts[name] > self._not_names[name]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.walk.scopes) == 1:
            self.top_level.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if len(self.walk.scopes) == 1:
            self.top_level.add(node.name.value)
            bases = tuple(base for arg in node.bases if arg.keyword is None and (base := dotted(arg.value)) is not None)
            self.bases.extend((node.name.value, base) for base in bases)
            methods = tuple(s.name.value for s in node.body.body if type(s) is cst.FunctionDef)
            self.part.classes[node.name.value] = (bases, methods)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_names[node.attr.value] += 1
        value = node.value
        if type(value) is cst.Name and value.value in self.facts.imports.project_names:
            self.attribute_uses.add((value.value, node.attr.value))
        root = value
        while type(root) is cst.Attribute:
            root = root.value
        if type(root) is cst.Name and root.value in self.facts.imports.project_names and type(value) is cst.Attribute:
            self.attribute_chains.add(tuple((dotted(node) or "").split(".")))
        if not (
            type(root) is cst.Name
            and root.value not in self.facts.imports.project_names
            and self.walk.resolve_dotted(root.value) is not None
        ):  # (``agent.load``, not ``torch.load``)
            self.part.named_attributes.add(node.attr.value)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = string_value(node)
        if isinstance(value, str) and value.isidentifier():  # ``getattr(agent, "load")``
            self.part.named_attributes.add(value)

    def _table_lookup(self, value: cst.BaseExpression) -> None:
        """``TRAINERS[args.trainer](...)`` or ``cls = TRAINERS[name]`` in a function, with
        ``TRAINERS = {"base": Trainer}`` a module-level dict (or list) of names: the function
        uses each of them (a factory; a single-file run follows it to what they hold, XLA003)."""
        if self.walk.enclosing_function is None or type(value) is not cst.Subscript:
            return
        table = dotted(value.value)
        if table is not None and "." not in table and table in self.part.name_tables:
            self.function_names.extend((self.walk.qualname, written) for written in self.part.name_tables[table])

    def visit_Call(self, node: cst.Call) -> None:
        callee = dotted(node.func)
        if callee is None:
            self._table_lookup(node.func)
            if type(node.func) is cst.Subscript and node.args and (registry := dotted(node.func.value)) is not None:
                self.registry_calls.append((node, registry))
            return
        self.calls.append((node, callee))
        if self.walk.conds:
            self.call_conds[node] = tuple(self.walk.conds)
        if callee == "getattr" and len(node.args) >= 2 and self.walk.resolve(node.func) is None:
            self._getattr_use(node)
        if callee in _RUN_TIME_LOOKUPS and callee not in self.top_level and self.walk.resolve(node.func) is None:
            self._names_at_run_time = True
        if self.walk.resolve(node.func) == "importlib.import_module" and node.args:
            if string_value(node.args[0].value) is None:
                self.part.dynamic_imports.append(node)
        elif node.args and (
            (callee in ("exec", "__import__") and callee not in self.top_level and self.walk.resolve(node.func) is None)
            or self.walk.resolve(node.func) in _EXECUTED_IMPORTS
        ):
            self._executed_import(node, callee.rpartition(".")[2])
        elif callee.endswith(".add_argument") and (dest := flag_dest(node)) is not None:
            keywords = call_args(node)[1]
            default = string_value(keywords["default"].value) if "default" in keywords else None
            if default is not None:
                self.string_flags[dest] = default
        imports = self.facts.imports
        if imports.unfollowed_stars and callee.startswith("torch.cuda.") and "torch" not in imports.table.bindings:
            # ``torch`` may come from a star import the tool could not read: the check is not known as torch's.
            self.part.hidden_checks[node] = imports.unfollowed_stars[-1][1]
        if self.walk.enclosing_function is not None:
            self.function_calls.append((self.walk.qualname, callee))
            self.function_names.extend(
                (self.walk.qualname, used) for arg in node.args if (used := dotted(arg.value)) is not None
            )

    def _getattr_use(self, node: cst.Call) -> None:
        """``getattr(trainers, "BasicTrainer")`` uses that attribute of the imported project name;
        ``getattr(trainers, config.trainer)``, a name known only at run time, may use any of them
        (``__dict__``: every name of the module that holds or reaches something, as
        ``trainers.__dict__[name]``)."""
        if "getattr" in self.top_level or type(holder := node.args[0].value) is not cst.Name:
            return
        if holder.value not in self.facts.imports.project_names:
            return
        attribute = string_value(node.args[1].value)
        self.attribute_uses.add((holder.value, attribute if isinstance(attribute, str) else "__dict__"))

    def _executed_import(self, node: cst.Call, callee: str) -> None:
        """``exec(f"from model.{kind}.{name} import {name}")`` (its text written there or bound
        to a name just above, in the same function), ``__import__(f"model.{name}")``: an import of a
        project module named only at run time, like ``importlib.import_module``."""
        value = node.args[0].value
        if type(value) is cst.Name:
            value = self.strings.get((self.walk.qualname, value.value), value)
        template = template_text(value)
        if template is None or "{" not in template:
            return
        if callee == "exec" and not value_starts_import(value):
            return
        self.part.dynamic_imports.append(node)
        self.part.loaded_names[node] = value

    # -- results ----------------------------------------------------------------------------

    def uses_amp(self) -> bool:
        """The file calls a project callable that trains with mixed precision."""
        return any(
            (found := self.origin(callee)) is not None
            and found.summary is not None
            and found.summary.uses_amp(found.name)
            for _, callee in self.calls
        )

    def conclude(self) -> None:
        project_names = self.facts.imports.project_names
        self.part.references = {
            (function.split(".")[0], callee)
            for function, callee in [*self.function_calls, *self.function_names, *self.bases, *self.module_aliases]
            if (head := callee.split(".")[0]) in self.top_level or head in project_names
        }
        self._conclude_calls()
        if (project_names or self.star_imports) and self.part.context.converted():
            unported_uses(self)
        if self.part.dynamic_imports and self.part.context.converted():
            dynamic_loads(self.part, self.string_flags, self.held_by)
        if self.registry_calls and self.part.context.converted():
            registry_calls(self)

    def _conclude_calls(self) -> None:
        is_optimizer = self.facts.training.is_optimizer
        wrappers = self.facts.training.step_wrappers
        for call in self.device_calls:
            found = self.origin(dotted(call.func) or "")
            if found is not None and (
                found.summary is None or (found.summary.pending and found.summary.chooses_device(found.name))
            ):
                self.part.external_devices[call] = found.summary.path if found.summary else None
        for function, callee in self.function_calls:
            found = self.origin(callee)
            if found is not None and found.summary is not None and function not in self.part.pending_via:
                path = found.summary.path if found.summary.pending else found.summary.pending_via(found.name)
                if path:
                    self.part.pending_via[function] = path
        for call, callee in self.calls:
            # Of what it may run (each class of a dict it was looked up in), one still to convert.
            founds = self.origins(callee)
            for index, keyword in optimizer_arguments(call, is_optimizer):
                self.part.optimizers_handed |= {(f.summary.path, f.name, index, keyword) for f in founds if f.summary}
            self.part.wrappers_handed |= handed_wrappers(call, founds, self._built, self.part.context)
            if not any(f.summary is None or f.summary.trains(f.name) for f in founds):
                self._named_training(call, callee)
            found = next((f for f in founds if f.summary is None or f.summary.pending), founds[0] if founds else None)
            summary = found.summary if found is not None else None
            if found is None or (summary is not None and not summary.pending):
                continue  # outside the project, or converted (now or before)
            if summary is None:
                if call in wrappers or any(is_optimizer(dotted(a.value)) for a in call.args):
                    self.part.external_training[call] = (callee, None)
            elif call in wrappers or summary.runs_step(found.name):
                self.part.external_steps[call] = f"`{callee}` ({summary.path})"
                if call in wrappers or summary.uses_amp(found.name):
                    self.part.scaled_steps.add(call)
            elif any(is_optimizer(dotted(a.value)) for a in call.args) and summary.trains(found.name):
                self.part.external_training[call] = (callee, summary.path)
            elif "." in found.name and summary.trains_unported(found.name):
                self.part.external_loops[call] = summary.path
            elif summary.uses_amp(found.name) and not amp_elsewhere(summary, found.name):
                self.part.external_amp[call] = (summary.path, summary.amp_parts(found.name))

    def _built(self, value: cst.BaseExpression) -> list[tuple[str, str]]:
        """The project callables that built ``value`` (a call of one, or a name one built)."""
        if type(value) is cst.Call:
            return self.call_builders.get(value, [])
        return self.builders.get(dotted(value) or "", [])

    def _named_training(self, call: cst.Call, callee: str) -> None:
        """``model.fit(...)`` on a value whose class the tool cannot tell, named like methods of the
        project's classes that train, in modules this run does not convert (named_training); not
        where the receiver is an optimizer or a scheduler (a gradient scaler's methods are generic
        names), or a class of this file defines a method of that name."""
        head, _, method = callee.rpartition(".")
        training = self.facts.training
        if (
            training.is_optimizer(head)
            or training.is_scheduler(head)
            or any(method in methods for _, methods in self.part.classes.values())
        ):
            return
        pending = [(f, f.summary) for f in self.named_origins(callee) if f.summary is not None and f.summary.pending]
        if pending:
            # (a class whose base, here or in another module, holds the CUDA device choice: its step is no plain one)
            inherited = next(
                (held for f, summary in pending if (held := inherited_choice(self, summary, f.name)) is not None), None
            )
            self.part.named_training[call] = NamedTraining(
                tuple(f.name for f, _ in pending),
                tuple(dict.fromkeys(summary.path for _, summary in pending)),
                any(summary.runs_step(f.name) for f, summary in pending),
                inherited is None and all(plain_step(summary, f.name) for f, summary in pending),
                inherited,
                runtime_factory(self, head),
            )

    # -- what a single-file run leaves on CUDA terms -------------------------------------------

    def held_by(self, summary: ModuleSummary, names: list[str], depth: int) -> list[Held]:
        """What the top-level ``names`` of that module hold, with what they reach."""
        found: list[Held] = []
        self.summaries.setdefault(summary.path, summary)
        for name in names:
            key = (summary.path, name.split(".")[0])
            if key not in self._held:
                self._held[key] = []  # (a cycle through the module's own names stops here)
                self._held[key] = self._held_by_name(summary, key[1], depth)
            found.extend(self._held[key])
        return found

    def _held_by_name(self, summary: ModuleSummary, top: str, depth: int) -> list[Held]:
        found = [(summary.path, cause, top, what, ported) for name, cause, what, ported in summary.holds if name == top]
        # A module-level table of callables (``TASKS = {"detection": DetSolver}``, called as
        # ``TASKS[task](cfg)``): what each of its values holds.
        table = summary.table_of(top) if top else ()
        if table:
            found.extend(self.held_by(summary, [value for value in table if value != top], depth))
        for name, used in summary.reaches:
            if name != top or not top:
                continue
            origin = summary.origin_of(used)
            if origin is None:  # one of the module's own names
                found.extend(self.held_by(summary, [used], depth))
            elif depth < _MAX_DEPTH and (other := self.part.context.lookup_from(summary, *origin)) is not None:
                if other.summary is not None:
                    found.extend(self.held_by(other.summary, ["", *used_of(other)], depth + 1))
        # A name the module imports from another of the project (``from loss_helper import
        # get_loss``, used as ``MODEL.get_loss``): what it holds there.
        origin = summary.origin_of(top) if top else None
        if origin is not None and depth < _MAX_DEPTH:
            other = self.part.context.lookup_from(summary, *origin)
            if other is not None and other.summary is not None and other.summary.path != summary.path:
                found.extend(self.held_by(other.summary, ["", *used_of(other)], depth + 1))
        return found

    def held_device(self, callee: str) -> Held | None:
        """What calling the project callable ``callee`` reaches, in a module this run does not
        convert, of a device choice that converting it would port or report (``"cuda:0"``, the
        default of a ``--device`` flag that the function which parses the options reaches
        through a dict of modules): (that module's path, cause, the name there, the code)."""
        found = self.origin(callee)
        if found is None or found.summary is None:
            return None
        held = self.held_by(found.summary, used_of(found), 0)
        return next((h for h in held if h[1] == "device"), None)

    def module_file(self, func: str) -> str:
        """The file of the project module a name comes from, as its import reads (``utils/env.py``)."""
        head = func.split(".")[0]
        module = next(
            (
                found[head][0]
                for found in (self.facts.imports.project_names, self.built_by, self.aliases)
                if head in found
            ),
            "",
        )
        return module.lstrip(".").replace(".", "/") + ".py" if module.strip(".") else "another module of the project"

    def named_already(self) -> set[tuple[str, str]]:
        """(module path, cause) that this file's XLA003 findings name already."""
        part = self.part
        named = {(path, "device") for path in part.external_devices.values() if path}
        named |= {(path, "step") for _, path in part.external_training.values() if path}
        named |= {(path, "step") for path in part.external_loops.values()}
        named |= {(path, "amp") for path, _ in part.external_amp.values()}
        named |= {(path, "step") for named_step in part.named_training.values() for path in named_step.paths}
        named |= {(held[1], held[2]) for named_step in part.named_training.values() if (held := named_step.inherited)}
        # (a step's finding names it as "`callee` (path)")
        named |= {(where.rpartition(" (")[2].removesuffix(")"), "step") for where in part.external_steps.values()}
        # (the training family's kinds: a finding that names the module's steps names its loops and steps too)
        return named | {(path, kind) for path, cause in named if cause == "step" for kind in STEP_CAUSES}


def _subscripted(value: cst.BaseExpression) -> cst.BaseExpression:
    """What ``value`` looks up in: ``{...}`` of ``{...}[key]``; else ``value``."""
    return value.value if type(value) is cst.Subscript else value
