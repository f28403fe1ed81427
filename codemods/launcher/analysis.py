"""Launcher scripts: the SageMaker Python SDK estimators a file builds and what they are
given, and training scripts that run under SageMaker model parallel (smdistributed).

Values are followed the way a reader of the file would: a keyword's dict literal, a
``dict(...)`` call, a name bound once in the same file (``smp_options = {...}``).  What
cannot be known without running the file (a value read from a config file, built by a
function, passed in, or changed after it is built) stays an ``Unknown`` that says why:
the checks report it as "could not check", never guess.

Uses the light import table (codemods/engine/imports.py), no LibCST scope metadata.
"""

from __future__ import annotations

import ast
from collections import defaultdict

import libcst as cst

from codemods.engine.imports import ImportTable
from codemods.engine.nodes import dotted, walk
from codemods.engine.positions import code_of
from codemods.launcher.facts import (
    SET_DEVICE,
    SMP_TORCH,
    Argument,
    Constant,
    Construct,
    Entry,
    Estimator,
    LauncherFacts,
    Mapping,
    SmpScript,
    Unknown,
    Value,
)

# Estimator classes, by every qualified name they are imported under -> display name.
ESTIMATORS: dict[str, str] = {
    "sagemaker.pytorch.PyTorch": "PyTorch",
    "sagemaker.pytorch.estimator.PyTorch": "PyTorch",
    "sagemaker.tensorflow.TensorFlow": "TensorFlow",
    "sagemaker.tensorflow.estimator.TensorFlow": "TensorFlow",
    "sagemaker.huggingface.HuggingFace": "HuggingFace",
    "sagemaker.huggingface.estimator.HuggingFace": "HuggingFace",
    "sagemaker.estimator.Estimator": "Estimator",
    "sagemaker.Estimator": "Estimator",
}
COMPILER_CONFIGS = frozenset(
    {
        "sagemaker.pytorch.TrainingCompilerConfig",
        "sagemaker.pytorch.training_compiler.config.TrainingCompilerConfig",
        "sagemaker.huggingface.TrainingCompilerConfig",
        "sagemaker.huggingface.training_compiler.config.TrainingCompilerConfig",
        "sagemaker.tensorflow.TrainingCompilerConfig",
        "sagemaker.training_compiler.config.TrainingCompilerConfig",
    }
)
_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"})


class _Bindings:
    """Names bound in the file: plain assignments (followed when there is exactly one),
    names bound any other way, and names whose value is changed after it is built."""

    def __init__(self) -> None:
        self.assigned: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.other: dict[str, str] = {}  # name -> how it is bound
        self.mutated: set[str] = set()

    def note(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._target(target.target, node.value)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self._target(node.target, node.value)
        elif isinstance(node, cst.AugAssign):
            self._mutate(node.target)
        elif isinstance(node, cst.Del):
            self._mutate(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._other(node.target, "a loop variable")
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._other(node.asname.name, "bound by a with statement")
        elif isinstance(node, cst.NamedExpr):
            self._other(node.target, "bound inside an expression")
        elif isinstance(node, cst.Param):
            self.other.setdefault(node.name.value, "a function parameter")
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.other.setdefault(node.name.value, "a function or class")
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _MUTATORS:
            self._mutate(node.func.value)

    def _target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.assigned[target.value].append(value)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            self._mutate(target)
        else:
            self._other(target, "unpacked from another value")

    def _other(self, target: cst.CSTNode, how: str) -> None:
        for node in walk(target):
            if isinstance(node, cst.Name):
                self.other.setdefault(node.value, how)

    def _mutate(self, target: cst.CSTNode) -> None:
        while isinstance(target, (cst.Subscript, cst.Attribute)):
            target = target.value
        if isinstance(target, cst.Name):
            self.mutated.add(target.value)

    def follow(self, name: str) -> cst.BaseExpression | str:
        """The one expression bound to ``name``, or why it cannot be followed."""
        values = self.assigned.get(name, [])
        if name in self.other and not values:
            return f"`{name}` is {self.other[name]}"
        if name in self.other or len(values) > 1:
            return f"`{name}` is bound more than once"
        if not values:
            return f"`{name}` is not set in this file"
        if name in self.mutated:
            return f"`{name}` is changed after it is built"
        return values[0]


class _Resolver:
    def __init__(self, imports: ImportTable, bindings: _Bindings) -> None:
        self.imports = imports
        self.bindings = bindings

    def value(self, node: cst.BaseExpression, seen: frozenset[str] = frozenset()) -> Value:
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None") and node.value not in self.bindings.assigned:
                return Constant(node, {"True": True, "False": False, "None": None}[node.value])
            if node.value in seen:
                return Unknown(node, f"`{node.value}` refers to itself")
            if node.value in self.imports.bindings:
                return Unknown(node, f"`{node.value}` is imported")
            bound = self.bindings.follow(node.value)
            if isinstance(bound, str):
                return Unknown(node, bound)
            return self.value(bound, seen | {node.value})
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            text = node.evaluated_value
            return Constant(node, text) if isinstance(text, str) else Unknown(node, "it is a formatted string")
        if isinstance(node, cst.FormattedString):
            return Unknown(node, "it is a formatted string")
        if isinstance(node, (cst.Integer, cst.Float)):
            return Constant(node, ast.literal_eval(node.value))
        if (
            isinstance(node, cst.UnaryOperation)
            and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, (cst.Integer, cst.Float))
        ):
            return Constant(node, -ast.literal_eval(node.expression.value))
        if isinstance(node, cst.Dict):
            return self._dict_literal(node, seen)
        if isinstance(node, cst.Call):
            return self._call(node, seen)
        return Unknown(node, f"`{_short(node)}` is computed when the script runs")

    def _dict_literal(self, node: cst.Dict, seen: frozenset[str]) -> Mapping:
        entries: dict[str, Entry] = {}
        hidden: cst.CSTNode | None = None
        for element in node.elements:
            key = element.key if isinstance(element, cst.DictElement) else None
            text = key.evaluated_value if isinstance(key, (cst.SimpleString, cst.ConcatenatedString)) else None
            if key is None or not isinstance(text, str):
                hidden = hidden or element
                continue
            entries[text] = Entry(text, key, element.value, self.value(element.value, seen))
        return Mapping(node, entries, hidden)

    def _call(self, node: cst.Call, seen: frozenset[str]) -> Value:
        if isinstance(node.func, cst.Name) and node.func.value == "dict" and "dict" not in self.bindings.assigned:
            entries: dict[str, Entry] = {}
            hidden: cst.CSTNode | None = None
            for arg in node.args:
                if arg.keyword is not None:
                    key = arg.keyword.value
                    entries[key] = Entry(key, arg.keyword, arg.value, self.value(arg.value, seen))
                    continue
                inner = self.value(arg.value, seen) if not arg.star else None
                if isinstance(inner, Mapping):
                    entries.update(inner.entries)
                    hidden = hidden or inner.hidden
                else:
                    hidden = hidden or arg
            return Mapping(node, entries, hidden)
        qualified = self.imports.resolve(node.func)
        if qualified in COMPILER_CONFIGS:
            keywords = {a.keyword.value: self.value(a.value, seen) for a in node.args if a.keyword is not None}
            return Construct(node, qualified, keywords)
        return Unknown(node, f"it comes from `{_short(node)}`")


def _short(node: cst.CSTNode) -> str:
    """The node's code on one line, cut short for a message."""
    text = " ".join(code_of(node).split())
    return text if len(text) <= 40 else text[:37] + "..."


def estimator_kind(imports: ImportTable, call: cst.Call) -> str | None:
    qualified = imports.resolve(call.func)
    return ESTIMATORS.get(qualified) if qualified else None


def analyse_launcher(module: cst.Module, imports: ImportTable) -> LauncherFacts:
    """The estimators ``module`` builds and, for a training script under SageMaker model
    parallel, where it pins its GPU.  One walk over the parsed module."""
    collector = _Collector(imports)
    module.visit(collector)
    resolver = _Resolver(imports, collector.bindings)
    facts = LauncherFacts()
    for call in collector.calls:
        kind = estimator_kind(imports, call)
        if kind is not None:
            facts.estimators.append(_estimator(call, kind, resolver))
    if collector.smp_imports:
        script = SmpScript(
            collector.smp_imports[0],
            init_statements=collector.init_lines,
            inits=collector.calls_init,
            optional=not collector.calls_init and len(collector.guarded_imports) == len(collector.smp_imports),
        )
        for call in collector.calls:
            if imports.resolve(call.func) == SET_DEVICE:
                script.set_device_calls.append((call, _takes_smp_local_rank(call, imports, collector.bindings)))
        facts.smp_script = script
    return facts


_COLLECTED = frozenset(
    {
        cst.Assign,
        cst.AnnAssign,
        cst.AugAssign,
        cst.Del,
        cst.For,
        cst.CompFor,
        cst.WithItem,
        cst.NamedExpr,
        cst.Param,
        cst.FunctionDef,
        cst.ClassDef,
        cst.Call,
        cst.Import,
        cst.ImportFrom,
        cst.SimpleStatementLine,
    }
)


# Statements whose body may not run: an import under them is an option of the module.
_GUARDS = frozenset({cst.If, cst.Try, cst.TryStar})


class _Collector(cst.CSTVisitor):
    """The walk: bindings, calls, smdistributed imports and ``smp.init()`` lines
    (a visitor: LibCST's ``children`` is slow to walk by hand)."""

    def __init__(self, imports: ImportTable) -> None:
        super().__init__()
        self.imports = imports
        self.bindings = _Bindings()
        self.calls: list[cst.Call] = []
        self.smp_imports: list[cst.CSTNode] = []
        # Those under an `if` or a `try`, and how many of those the walk is in.
        self.guarded_imports: list[cst.CSTNode] = []
        self._guards = 0
        self.init_lines: list[cst.SimpleStatementLine] = []
        # A call of ``smp.init()``, as a statement or not.
        self.calls_init = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) not in _COLLECTED:  # most nodes: names, operators, whitespace
            if type(node) in _GUARDS:
                self._guards += 1
            return True
        self.bindings.note(node)
        if isinstance(node, cst.Call):
            self.calls.append(node)
            self.calls_init = self.calls_init or self.imports.resolve(node.func) == f"{SMP_TORCH}.init"
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and _imports_smp_torch(node):
            self.smp_imports.append(node)
            if self._guards:
                self.guarded_imports.append(node)
        elif isinstance(node, cst.SimpleStatementLine) and _is_smp_init(node, self.imports):
            self.init_lines.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        """Out of an `if` or a `try`."""
        if type(original_node) in _GUARDS:
            self._guards -= 1

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks: skip LibCST's lookup of them."""

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks: skip LibCST's lookup of them."""


def _estimator(call: cst.Call, kind: str, resolver: _Resolver) -> Estimator:
    estimator = Estimator(call, kind, {})
    for arg in call.args:
        if arg.keyword is not None:
            estimator.arguments[arg.keyword.value] = Argument(arg, resolver.value(arg.value))
        elif arg.star == "**":
            estimator.hidden = arg
    return estimator


def _imports_smp_torch(statement: cst.Import | cst.ImportFrom) -> bool:
    if isinstance(statement, cst.Import):
        return any((dotted(alias.name) or "").startswith(SMP_TORCH) for alias in statement.names)
    module = dotted(statement.module) if statement.module is not None and not statement.relative else None
    if module is None:
        return False
    if module.startswith(SMP_TORCH):
        return True
    names = statement.names
    return (
        module == "smdistributed.modelparallel"
        and not isinstance(names, cst.ImportStar)
        and any(alias.evaluated_name == "torch" for alias in names)
    )


def _is_smp_init(line: cst.SimpleStatementLine, imports: ImportTable) -> bool:
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
        return False
    call = line.body[0].value
    return isinstance(call, cst.Call) and imports.resolve(call.func) == f"{SMP_TORCH}.init"


def _takes_smp_local_rank(call: cst.Call, imports: ImportTable, bindings: _Bindings) -> bool:
    if len(call.args) != 1:
        return False
    value: cst.BaseExpression | str = call.args[0].value
    if isinstance(value, cst.Name):
        value = bindings.follow(value.value)
    return isinstance(value, cst.Call) and imports.resolve(value.func) == f"{SMP_TORCH}.local_rank"
