"""Where a device value ends after the port: the one device-value analysis the concerns
share (the obligations of docs/rules: the model and the batches reach the XLA device).

A value is followed through assignments (in order: a later assignment replaces the ones
its conditions do not leave standing), ``if``/``elif``/``else`` chains and conditional
expressions, the returns of the file's functions and methods, the returns of functions of
the project's other modules (their summaries), attributes (``self.device``), argparse
defaults, config dicts (``cfg["device"]``) and the known device helpers of libraries
(``library_apis.DEVICE_HELPERS``).  Conditions are evaluated as they read after the port on an XLA
host: an availability check that the port drops is True, one that stays is False, and a
string the port rewrote (``backend = "nccl"`` -> ``"xla"``) compares with its new value, and
so does the literal it is compared with where that is the CUDA one of a choice the port made
one value (``"gloo" if cfg.use_cpu else "nccl"``: ``backend == "nccl"`` becomes ``== "xla"``,
XLA114); a binding that such a condition drops says so (the port changed it, not the author).
Those comparisons are read in ported_comparisons.py.  A CUDA index or the CPU chosen by
comparing the index with a number (``args.device if args.device >= 0 else "cpu"``) is off XLA
whichever way it goes; the finding names the flag's default (this file's parser, or the summary
of the module whose ``parse_args()`` hands ``args`` in).

It is evaluated in ``conclude`` (the device concern's strings and checks are final then);
other analyses ask ``where(...)`` in their own ``conclude``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis, library_apis
from codemods.device.analysis import DeviceAnalysis
from codemods.device.bounded_questions import bounded
from codemods.device.call_sites import CallSites
from codemods.device.device_counts import DeviceCounts
from codemods.device.environment_flags import set_by_call, subscript_key
from codemods.device.flag_helpers import FlagHelpers
from codemods.device.from_project import decided_in_project, unset_devices, unset_in_project
from codemods.device.indexed_host_tensors import host_indexings
from codemods.device.ported_comparisons import PortedComparisons
from codemods.device.project_flags import ProjectFlags
from codemods.device.rules.xla121_device_from_library import from_library
from codemods.device.shapes import device_key, index_or_cpu, is_device_name
from codemods.device.where import UNKNOWN, XLA, Binding, Where, either
from codemods.device.widened_checks import widened_candidates
from codemods.engine.nodes import (
    arg_value,
    call_args,
    dotted,
    method_name,
    string_value,
)
from codemods.engine.walk import Walk
from codemods.project.analysis import ProjectAnalysis
from codemods.targets import spellings

if TYPE_CHECKING:
    from codemods.facts import Facts

# Availability checks of other accelerators: False on an XLA host.
_OTHER_ACCELERATOR_CHECKS = frozenset(
    {
        "torch.backends.mps.is_available",
        "torch.backends.mps.is_built",
        "torch.xpu.is_available",
        "torch.mps.is_available",
    }
)
_NAMES = {"cpu": "the CPU", "mps": "Apple's MPS device", "cuda": "a CUDA device", "meta": "the meta device"}


class DeviceValueAnalysis(ProjectFlags, PortedComparisons, DeviceCounts, FlagHelpers):
    facts: Facts

    name = "device_values"
    reads = ("imports", "device", "project", "distributed")
    conclude_reads = ("device", "distributed", "project", "flag_choices")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.device_values
        self.device = walk.analysis(DeviceAnalysis)
        self.project = walk.analysis(ProjectAnalysis)
        self.bindings: dict[str, list[Binding]] = defaultdict(list)
        self.returned: dict[str, list[Binding]] = defaultdict(list)
        self.params: dict[str, set[str]] = defaultdict(set)  # function -> its parameters
        # ``args.device = ...`` in a function with the parameter ``args``: (function, index of
        # the parameter without self, attribute) -> the values.
        self.parameter_sets: dict[tuple[str, int, str], list[cst.BaseExpression]] = defaultdict(list)
        # Names handed to a callable of another project module (``parse_gpu(args)``): name ->
        # (the call, the callable, the position).
        self.handed: dict[str, list[tuple[cst.Call, str, int]]] = defaultdict(list)
        self._positions: dict[str, list[str]] = {}  # function -> its positional parameters without self
        self.flag_defaults: dict[str, cst.BaseExpression] = {}  # args.device -> its default
        self.keyed: dict[str, list[cst.BaseExpression]] = defaultdict(list)  # "device" -> dict values
        self.comparisons: list[tuple[cst.Comparison, str, cst.SimpleString]] = []  # ported_comparisons.py
        self.helper_calls: list[cst.Call] = []
        # ``assert x in [...]``: the assertion, its test, the choices, the function it is in.
        self.assertions: list[tuple[cst.Assert, cst.Comparison, cst.List | cst.Tuple | cst.Set, str]] = []
        self.call_sites = CallSites()  # the calls of the file's functions: what their parameters hold
        # ``device, n_gpu = init_device(args)``: (scope, name) -> (the call, the name's position).
        self.unpacked: dict[tuple[str, str], list[tuple[cst.Call, int]]] = defaultdict(list)
        self._cache: dict[tuple[int, str], Where] = {}
        self._busy: set[tuple[int, str]] = set()
        self._following: set[tuple[str, str]] = set()
        self._depth = 0  # how deep the current question follows values (bounded_questions.py)
        self._asking: set[tuple[object, ...]] = set()  # the questions being answered (bounded_questions.py)
        self._answers: dict[tuple[object, ...], object] = {}  # answers no cut shaped (bounded_questions.py)
        self._cuts = 0  # how many answers a cut made "not known" (bounded_questions.py)
        # ``os.environ["DEVICE"] = value``: the variable -> (the value, the function it is set in);
        # read by ported_comparisons.py.
        self.environment: dict[str, list[tuple[cst.BaseExpression, str]]] = defaultdict(list)
        self.global_sets: dict[str, set[str]] = defaultdict(set)  # ``global device`` -> the functions
        self.flag_helper_calls = {}  # ``init_device(args.device)`` off XLA with the ported flag (flag_helpers.py)

    # -- walk -------------------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        self.params[self.walk.qualname] = {
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        }
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        self._positions[self.walk.qualname] = (
            positional[1:] if self.walk.class_depth and positional[:1] in (["self"], ["cls"]) else positional
        )

    def visit_Global(self, node: cst.Global) -> None:
        if self.walk.enclosing_function is not None:
            for item in node.names:
                self.global_sets[item.name.value].add(self.walk.qualname)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if (key := subscript_key(target.target, self.walk.resolve)) is not None:
                self.environment[key].append((node.value, self._scope()))
            names, values = target.target, node.value
            if type(names) is cst.Tuple and type(values) is cst.Tuple and len(names.elements) == len(values.elements):
                for name, value in zip(names.elements, values.elements):
                    self._bind(dotted(name.value), value.value, node)
            elif type(names) in (cst.Tuple, cst.List):
                self._unfollowed(names, node)  # device, rank = setup()
                if type(values) is cst.Call:
                    for index, element in enumerate(names.elements):  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
                        if (unpacked := dotted(element.value)) is not None:
                            self.unpacked[(self._scope_of(unpacked), unpacked)].append((values, index))
            else:
                self._bind(dotted(names), values, node)

    def visit_For(self, node: cst.For) -> None:
        self._unfollowed(node.target, node)

    def _unfollowed(self, targets: cst.BaseExpression, statement: cst.CSTNode) -> None:
        """Names bound to values the analysis does not follow: what they held before may be gone."""
        if type(targets) in (cst.Tuple, cst.List):
            for element in targets.elements:  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
                self._unfollowed(element.value, statement)
        elif type(targets) is cst.StarredElement:
            self._unfollowed(targets.value, statement)
        else:
            self._bind(dotted(targets), None, statement)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(dotted(node.target), node.value, node)

    def _bind(self, name: str | None, value: cst.BaseExpression | None, statement: cst.CSTNode) -> None:
        if name is not None:
            self.bindings[name].append(Binding(value, self._scope_of(name), self._placed(statement)))
            root, _, attr = name.partition(".")
            if (
                value is not None
                and is_device_name(attr)
                and "." not in attr
                and self.walk.enclosing_function is not None
            ):
                positions = self._positions.get(self.walk.qualname, [])
                if root in positions:
                    self.parameter_sets[(self.walk.qualname, positions.index(root), attr)].append(value)

    def _scope_of(self, name: str) -> str:
        """Attributes (``self.device``, ``args.device``) are one value file-wide; a plain name
        is its function's own."""
        return "" if "." in name or self.walk.enclosing_function is None else self.walk.qualname

    def _placed(self, node: cst.CSTNode) -> tuple[tuple[cst.If, bool], ...]:
        """The ``if`` statements around ``node``, each with whether ``node`` is in its body."""
        parents = self.walk.parents
        conds = [c for c in self.walk.conds if type(c) is cst.If]
        if not conds:
            return ()
        placed = []
        chain: list[int] = []
        key: int | None = id(node)
        while key is not None:
            chain.append(key)
            key = parents.get(key)
        for cond in conds:
            index = chain.index(id(cond)) if id(cond) in chain else -1
            child = chain[index - 1] if index > 0 else None
            placed.append((cond, child != id(cond.orelse)))
        return tuple(placed)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and self.walk.enclosing_function is not None:
            self.returned[self.walk.qualname].append(Binding(node.value, self.walk.qualname, self._placed(node)))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = string_value(node.key)
        if key is not None and is_device_name(key):
            self.keyed[key].append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.callee
        if (environment_set := set_by_call(node, self.walk.resolve)) is not None:
            self.environment[environment_set[0]].append((environment_set[1], self._scope()))
        self.call_sites.saw(node, callee, self.walk.qualname if self.walk.enclosing_function is not None else "")
        if (
            node.args
            and (func := dotted(node.func)) is not None
            and (func.split(".")[0] in self.facts.imports.project_names or func.split(".")[0] in self.project.built_by)
        ):
            for index, arg in enumerate(node.args):
                if arg.keyword is None and not arg.star and type(arg.value) is cst.Name:
                    self.handed[arg.value.value].append((node, func, index))
        if callee in library_apis.DEVICE_HELPERS:
            self.helper_calls.append(node)
        elif callee == "dict":
            for keyword, arg in call_args(node)[1].items():
                if is_device_name(keyword):
                    self.keyed[keyword].append(arg.value)
        elif method_name(node) == "add_argument":
            flag = next(
                (s for a in node.args if a.keyword is None and (s := string_value(a.value)) and s.startswith("--")),
                None,
            )
            keywords = call_args(node)[1]
            dest = string_value(keywords["dest"].value) if "dest" in keywords else None
            if flag is not None and "default" in keywords:
                self.flag_defaults[dest or flag.lstrip("-").replace("-", "_")] = keywords["default"].value

    def visit_Assert(self, node: cst.Assert) -> None:
        test = node.test
        if (
            type(test) is not cst.Comparison
            or len(test.comparisons) != 1
            or type(test.comparisons[0].operator) is not cst.In
        ):
            return
        choices = test.comparisons[0].comparator
        if isinstance(choices, (cst.List, cst.Tuple, cst.Set)):
            scope = self.walk.qualname if self.walk.enclosing_function is not None else ""
            self.assertions.append((node, test, choices, scope))

    def _scope(self) -> str:
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    # -- evaluation ------------------------------------------------------------------------

    def where(self, expr: cst.BaseExpression | None, scope: str = "") -> Where:
        """Where ``expr`` (in the function ``scope``) ends on an XLA host after the port."""
        if expr is None:
            return UNKNOWN
        key = (id(expr), scope)
        if key in self._cache:
            return self._cache[key]
        if key in self._busy:
            return UNKNOWN
        self._busy.add(key)
        found = self._where(expr, scope)
        self._busy.discard(key)
        self._cache[key] = found
        return found

    def where_passed(self, expr: cst.BaseExpression, scope: str, depth: int = 3) -> Where:
        """Where ``expr`` ends, a parameter of the function ``scope`` followed (``depth`` calls
        up) to what every call of the file passes for it: ``main(args.device)``, then
        ``Trainer(model, device=device)`` in ``main``."""
        found = self.where(expr, scope)
        name = dotted(expr)
        if found.on_xla is not None or found.elsewhere or name is None or depth == 0:
            return found
        if name not in self.params.get(scope, ()) or self._live(name, scope):
            return found
        passed = self.call_sites.arguments(scope, self._positions.get(scope, []), name)
        return either([self.where_passed(value, caller, depth - 1) for value, caller in passed]) if passed else found

    def _where(self, expr: cst.BaseExpression, scope: str) -> Where:
        device = self.facts.device
        kind = type(expr)
        if kind in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
            return self._device_string(expr)
        if kind is cst.Integer:
            return XLA if expr in device.int_devices else UNKNOWN
        if isinstance(expr, cst.IfExp) and (index := index_or_cpu(expr)) is not None:
            return Where(False, self._index_or_cpu_why(expr, index, scope), expr)
        if kind is cst.IfExp:
            test = self.truth(expr.test, scope, expr in device.selections)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            imported = self.flag_in(expr.test, scope)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            if test is not None:
                found = self.where(expr.body if test else expr.orelse, scope)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
                if found.on_xla is False and imported is not None:
                    return Where(False, f"{found.why}: {imported.why}, False", expr)
                return found
            if imported is not None and imported.elsewhere:
                return Where(None, imported.why, expr, True, imported.module)
            return either([self.where(expr.body, scope), self.where(expr.orelse, scope)])  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
        if kind is cst.Call:
            return self._call(expr, scope)  # type: ignore[arg-type]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
        if kind is cst.Subscript and (key := device_key(expr)) is not None:  # type: ignore[arg-type]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            keyed = self.keyed.get(key, [])
            return either([self.where(v, "") for v in keyed]) if keyed else UNKNOWN
        name = dotted(expr)
        if name is None:
            return UNKNOWN
        if name.endswith(".device") and (owner := self._built_by(name.removesuffix(".device"))) is not None:
            helper = library_apis.DEVICE_HELPERS.get(f"{owner}.device")
            if helper is not None:
                return XLA if helper.on_xla else Where(False, f"`{name}` ({helper.returns})", expr)
        values = self._live(name, scope)
        if values:
            found = either([self.where(b.value, b.scope) for b in values])
            if found.on_xla is False and (changed := self._changed_by_the_port(name, scope, values)) is not None:
                return replace(found, why=f"{found.why} {changed}")
            if found.on_xla is not False:
                # ``if args.cuda: device = "cuda"``, the flag from a module this run does not convert
                away = next(
                    (
                        (cond, flag)
                        for b in values
                        for cond, _ in b.conds
                        if (flag := self.flag_in(cond.test, b.scope)) is not None and flag.elsewhere
                    ),
                    None,
                )
                if away is not None:
                    return Where(None, away[1].why, away[0].test, True, away[1].module)
            return found
        if "." in name and (decided := decided_in_project(self.project, self.handed, name, self._options(name, scope))):
            return decided if decided.node is not None or decided.on_xla is not None else replace(decided, node=expr)
        if "." in name and (unset := unset_in_project(self.project, name)) is not None:
            return replace(unset, node=expr)
        if (
            name.startswith("args.")
            and (default := self.flag_defaults.get(dest := name.removeprefix("args."))) is not None
        ):
            # A "cpu" default of a device flag (``--device``, default "cpu", karpathy/makemore) is
            # where the model trains unless the run names another device: reported (XLA111).  A
            # flag of another name defaulting to "cpu" may choose something else.
            found = self.where(default, "")
            return (
                found
                if found.on_xla is not False or string_value(default) != "cpu" or is_device_name(dest)
                else UNKNOWN
            )
        return self._from_library(expr, self.walk.resolve(expr), name)

    def _index_or_cpu_why(self, expr: cst.IfExp, index: str, scope: str) -> str:
        """Why ``index if index >= 0 else "cpu"`` is off XLA whichever way it goes; the flag's
        default where this file's argparse gives it."""
        root, _, attr = index.partition(".")
        default = self.flag_defaults.get(attr) if attr else None  # a flag of this file's parser
        given = f" (`--{attr}` defaults to `{self.code(default)}`)" if default is not None else ""
        # ``args`` parsed in another module of the project: ``args = get_args()``, or a parameter
        # that every call hands ``get_args()``.
        passed = [b.value for b in self._live(root, scope)] or [
            value for value, _ in self.call_sites.arguments(scope, self._positions.get(scope, []), root)
        ]
        for value in passed if attr and not given else ():
            origin = self.project.origin(dotted(value.func) or "") if type(value) is cst.Call else None
            if origin is not None and origin.summary is not None and (text := origin.summary.flag_default(attr)):
                given = f" (`--{attr}` defaults to `{text}` in {origin.summary.path})"
        return (
            f"`{self.code(expr)}`{given}, either the CPU or a CUDA index (`.to(0)` is cuda:0, which fails "
            "without CUDA), never the XLA device"
        )

    def _device_string(self, expr: cst.BaseExpression) -> Where:
        if expr in self.facts.device.strings:
            return XLA
        text = string_value(expr)
        if text is None:
            return UNKNOWN
        kind = text.split(":")[0]
        if kind == "xla":
            return XLA
        if kind in _NAMES:
            return Where(False, f'"{text}" ({_NAMES[kind]})', expr)
        return UNKNOWN

    def _from_library(self, node: cst.BaseExpression, qualified: str | None, name: str) -> Where:
        """A device read from a package the tool does not follow: a call or name imported from it
        (``get_device()`` from mmengine.device), or a call or attribute of an object one of its
        calls built (``runner.device`` after ``runner = Runner(...)``).  Not proven: the
        obligations report it (XLA121); anything else is not followed (UNKNOWN)."""
        parts = name.split(".")
        for end in range(len(parts) - 1, 0, -1):
            if qualified is not None:
                break
            qualified = self._built_by(".".join(parts[:end]))
        package = self.project.library_package(qualified)
        if package is None or self.project.origin(name) is not None:
            return UNKNOWN
        return Where(None, from_library(self.code(node), package), node, library=package)

    def _built_by(self, name: str) -> str | None:
        """The qualified constructor of ``name`` (``accelerator = Accelerator()``), if it is
        bound once."""
        values = self.bindings.get(name, [])
        if len(values) == 1 and type(values[0].value) is cst.Call:
            return self.walk.resolve(values[0].value.func)
        return None

    def _call(self, call: cst.Call, scope: str) -> Where:
        device = self.facts.device
        if call in device.calls or call in self.part.library_devices:
            return XLA
        callee = self.walk.resolve(call.func)
        if callee in spellings("device"):
            return XLA
        if callee == "torch.device":
            return self.where(arg_value(call, 0, "type"), scope)
        if callee in library_apis.DEVICE_HELPERS:
            helper = library_apis.DEVICE_HELPERS[callee]
            return XLA if helper.on_xla else Where(False, f"`{self.code(call)}` ({helper.returns})", call)
        func = dotted(call.func)
        if method_name(call) in ("to", "cuda", "cpu"):
            return UNKNOWN
        if func is None:  # ``get_accelerator().get_current_device()``: the package of the first call
            head = call.func
            while isinstance(head, (cst.Attribute, cst.Call)):
                head = head.value if isinstance(head, cst.Attribute) else head.func
            inner = self.walk.resolve(head)
            return self._from_library(call, inner, "") if inner is not None else UNKNOWN
        local = self._function(func, scope) if callee is None else None
        if local is not None:
            returns = self._live_returns(local)
            if not returns:
                return UNKNOWN
            found = either([self.where(b.value, local) for b in returns])
            if found.on_xla is False:
                return Where(False, f"`{func}()` returns {found.why}", found.node)
            return self.flag_helper_calls.get(call, found) if found.on_xla is None else found
        if func == "str" and callee is None and local is None and len(call.args) == 1 and not call.args[0].star:
            return self.where(call.args[0].value, scope)  # ``str(torch.device(...))``: the same device, named
        origin = self.project.origin(func)
        if origin is None:
            return self._from_library(call, callee, func)
        if origin.summary is None:
            return Where(
                None, f"`{func}()` comes from another module of the project that this run does not read", call, True
            )
        verdict = origin.summary.device_of(origin.name)
        if verdict is None or verdict[0] is None:
            handed = self.project_flag_helper(call, origin.name, origin.summary, scope)
            if handed is not None:
                return handed
        if verdict is None:
            return UNKNOWN
        on_xla, why = verdict
        where = f"`{func}()` in {origin.summary.path}"
        return Where(on_xla, f"{where}, which returns {why}" if why else where, None)

    def where_returned(self, function: str) -> Where:
        """Where the returns of the file's ``function`` that can run end."""
        return either([self.where(b.value, function) for b in self._live_returns(function)])

    def _function(self, func: str, scope: str) -> str | None:
        """The function or method of this file that ``func`` names."""
        if func.startswith("self.") and "." in scope:
            func = f"{scope.rsplit('.', 1)[0]}.{func.removeprefix('self.')}"
        return func if func in self.params else None

    def code(self, node: cst.CSTNode) -> str:
        return cst.Module([]).code_for_node(node)

    # -- which bindings stand -----------------------------------------------------------------

    @bounded(list)
    def _live(self, name: str, scope: str) -> list[Binding]:
        """The bindings of ``name`` that can still hold when the function (or the file) goes on:
        in order, each drops the earlier ones that its own open conditions do not separate
        it from; those under a condition False after the port never run."""
        key = (name, scope)
        if key in self._following:
            self._cuts += 1
            return []  # a condition on the name's own value (``if x is None: x = ...``): not followed
        self._following.add(key)
        try:
            return self._standing(name, scope)
        finally:
            self._following.discard(key)

    def _standing(self, name: str, scope: str) -> list[Binding]:
        candidates = [b for b in self.bindings.get(name, []) if b.scope in (scope, "")]
        if scope and any(b.scope == scope for b in candidates):
            candidates = [b for b in candidates if b.scope == scope]
        elif name in self.params.get(scope, ()):
            return []
        standing: list[tuple[Binding, frozenset[tuple[int, bool]]]] = []
        for binding in candidates:
            open_conds = self._open(binding)
            if open_conds is None:
                continue
            standing = [(b, c) for b, c in standing if not open_conds <= c]
            standing.append((binding, open_conds))
        return [b for b, _ in standing]

    @bounded(list)
    def _options(self, name: str, scope: str) -> cst.Call | None:
        """The call whose result ``name``'s root is, bound once (``args = get_args()``)."""
        values = self._live(name.partition(".")[0], scope)
        return values[0].value if len(values) == 1 and type(values[0].value) is cst.Call else None

    def _live_returns(self, function: str) -> list[Binding]:
        """The returns that can run: up to the first one whose conditions all hold."""
        live = []
        for binding in self.returned.get(function, []):
            open_conds = self._open(binding)
            if open_conds is None:
                continue
            live.append(binding)
            if not open_conds:
                break
        return live

    def _open(self, binding: Binding) -> frozenset[tuple[int, bool]] | None:
        """The conditions of a binding not known after the port (None: one is known False)."""
        open_conds = set()
        for cond, in_body in binding.conds:
            test = self.truth(cond.test, binding.scope, cond in self.facts.device.ifs)
            if test is None:
                open_conds.add((id(cond), in_body))
            elif test is not in_body:
                return None
        return frozenset(open_conds)

    # -- conditions -------------------------------------------------------------------------

    @bounded(lambda: None)
    def truth(self, test: cst.BaseExpression, scope: str, ported: bool) -> bool | None:
        """What ``test`` is on an XLA host after the port (None: not known).  ``ported``: the
        port drops its availability checks (they hold)."""
        if test in self.facts.device.count_checks:  # ``if torch.cuda.device_count():``: an availability check
            return ported
        kind = type(test)
        if kind is cst.Call:
            callee = self.walk.resolve(test.func)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            if callee in apis.AVAILABILITY_CHECKS:
                return ported
            if callee in _OTHER_ACCELERATOR_CHECKS:
                return False
            return self._count_truth(test, scope)
        if kind is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            inner = self.truth(test.expression, scope, ported)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            return None if inner is None else not inner
        if kind is cst.BooleanOperation:
            left = self.truth(test.left, scope, ported)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            right = self.truth(test.right, scope, ported)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            if type(test.operator) is cst.And:  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
                return False if False in (left, right) else True if left is right is True else None
            return True if True in (left, right) else False if left is right is False else None
        if kind is cst.Comparison and len(test.comparisons) == 1:  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
            counted = self.count_test(test, scope)
            if counted is not None and counted[2] is not None:
                return counted[2]  # ``torch.cuda.device_count() > 0``: 0 on an XLA host where it stays
            return self._compare(test, scope)  # type: ignore[arg-type]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
        if isinstance(test, cst.Name) and test.value in ("True", "False"):
            return test.value == "True"
        if (name := dotted(test)) is not None and name not in self.params.get(scope, ()):
            flags = self.facts.device.flag_values
            live = self._live(name, scope)
            if not live and (imported := self._imported_flag(name, scope)) is not None:
                return imported.on_xla
            truths = {self.truth(b.value, b.scope, b.value in flags) if b.value is not None else None for b in live}
            return truths.pop() if len(truths) == 1 else None
        return None

    def _compare(self, test: cst.Comparison, scope: str) -> bool | None:
        operator = type(test.comparisons[0].operator)
        left = self.text(test.left, scope)
        comparator = test.comparisons[0].comparator
        if operator in (cst.In, cst.NotIn) and type(comparator) in (cst.List, cst.Tuple, cst.Set):
            options = [self.text(e.value, scope) for e in comparator.elements]  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
            if left is None or None in options:
                return None
            return (left in options) is (operator is cst.In)
        right = self.text(comparator, scope)
        if left is None or right is None or operator not in (cst.Equal, cst.NotEqual):
            return None
        return (left == right) is (operator is cst.Equal)

    @bounded(lambda: None)
    def text(self, expr: cst.BaseExpression | None, scope: str) -> str | None:
        """The string ``expr`` holds after the port (None: not one known string)."""
        if expr is None:
            return None
        ported = self.facts.distributed.backend_values.get(expr)
        if ported is not None:
            return ported
        if expr in self.facts.device.strings:
            return "xla"
        if expr in self.part.ported_comparisons:
            return self.part.ported_comparisons[expr][1]  # type: ignore[index]  # expr is in ported_comparisons (checked above), so a SimpleString
        if (value := string_value(expr)) is not None:
            return value
        if type(expr) is cst.IfExp:
            test = self.truth(expr.test, scope, expr in self.facts.device.selections)
            return self.text(expr.body if test else expr.orelse, scope) if test is not None else None
        if type(expr) is cst.Call:  # a function of the file that returns one string
            local = self._function(dotted(expr.func) or "", scope) if self.walk.resolve(expr.func) is None else None
            bindings = self._live_returns(local) if local is not None else []
        elif (name := dotted(expr)) is not None:
            bindings = self._live(name, scope)
        else:
            return None
        if not bindings and type(expr) is not cst.Call:  # a parameter: what every call of the file passes
            passed = self.call_sites.arguments(scope, self._positions.get(scope, []), dotted(expr))
            texts = {self.text(value, caller) for value, caller in passed}
            return texts.pop() if len(texts) == 1 else None
        texts = {self.text(b.value, b.scope) for b in bindings}
        return texts.pop() if len(texts) == 1 else None

    # -- results ----------------------------------------------------------------------------

    def conclude(self) -> None:
        part = self.part
        # First: the conditions below read these comparisons as ported (``text``).
        self._ported_comparisons()
        self._handed_flags()
        self._environment_flags()
        for assertion, comparison, choices, scope in self.assertions:
            value = self.text(comparison.left, scope)
            listed = {string_value(e.value) for e in choices.elements}
            if any(e.value in self.facts.device.flag_test_strings for e in choices.elements):
                continue  # a device flag's choices: its CUDA string becomes "xla" with the flag (XLA101)
            if value == "xla" and value not in listed and "cuda" in listed:
                part.asserted_choices[choices] = (assertion, value)
                self.facts.device.cuda_checks.discard(comparison)  # it holds once "xla" is listed
        part.widened_checks = widened_candidates(self.facts, self.comparisons, self.project.module)  # after XLA114's
        self._flag_helpers()  # (a helper's checks as XLA123 widens them; then the answers asked before)
        self._cache.clear()
        for call in self.helper_calls:
            helper = library_apis.DEVICE_HELPERS[self.walk.resolve(call.func) or ""]
            if helper.ported_when is not None and string_value(arg_value(call, 0, "device")) == helper.ported_when:
                part.library_devices.add(call)
        for name, candidates in self.device.flag_candidates.items():
            exporter = self.device.exporter_of(name)
            if exporter is None:
                continue
            flags = self.facts.device.flag_values
            truths = {self.truth(v, "", v in flags) for v in candidates}
            part.flags[(exporter, name.partition(".")[2])] = (
                truths.pop() if len(truths) == 1 else None,
                self.code(candidates[-1]),
            )
        part.unset_devices = unset_devices(self.bindings, self.global_sets, self.call_sites.calls)
        part.flag_defaults = {
            dest: self.code(default) for dest, default in self.flag_defaults.items() if is_device_name(dest)
        }
        for (function, index, attr), set_values in self.parameter_sets.items():
            found = either([self.where(v, function) for v in set_values])
            part.parameter_devices[(function, index, attr)] = (found.on_xla, found.why)
        for function in self.returned:
            found = self.where_returned(function)
            if found.on_xla is not None and (found.on_xla is False or is_device_name(function.rsplit(".", 1)[-1])):
                part.returns[function] = (found.on_xla, found.why)
        if self.project.module is not None:
            self.facts.device.host_indexings = host_indexings(self.project.module, self.walk.resolve, self._on_xla)

    def _on_xla(self, device: cst.BaseExpression | None, scope: str) -> bool | None:
        """Whether a move's device (None: ``.cuda()``) is the XLA device after the port (None: unknown)."""
        return True if device is None else self.where(device, scope).on_xla
