"""What a module holds that its conversion ports, or reports, as an error (a CUDA device
choice, ``.cuda()``, a training loop or optimizer step on CUDA terms, a checkpoint load
without a CPU map location..., and an ``importlib.import_module(name)`` of a name known only at run
time, which no single-file run can follow), by the top-level function, class or module-level name whose
code holds it; other module-level code, which runs on import, is held by "".  A single-file run reads it in the summaries of the project modules it
imports and does not convert (project/analysis.py): what the file uses of one that holds
such code keeps it on CUDA terms until the project is converted (XLA003)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from codemods.amp import rules as amp
from codemods.checkpoint.rules.xla403_load_map_location import LOAD_MAP_LOCATION
from codemods.cuda_only import rules as cuda_only
from codemods.cuda_only.rules.xla515_host_seed import HOST_SEED
from codemods.device import rules as device
from codemods.engine.nodes import dotted, string_value
from codemods.engine.rule import Rule
from codemods.huggingface import rules as huggingface
from codemods.project.lightning_hooks import lightning_hook
from codemods.project.named_steps import LOADED_PACKAGE
from codemods.release_names import rules as release_names
from codemods.training import rules as training

if TYPE_CHECKING:
    from codemods.engine.rewriter import PendingFinding

# Errors that depend on the files around the module (who drives its steps, where its
# devices come from, what its callers hand it), or that run on XLA as they are
# (``torch.save`` of XLA tensors): in another file's run they say nothing of the module.
_CONTEXTUAL = frozenset({"undriven-step", "device-from-project", "xla-save"})


def _causes() -> dict[Rule, str]:
    families = (
        ("device", device.RULES),
        ("step", training.RULES),
        ("amp", amp.RULES),
        ("cuda-only", cuda_only.RULES),
        # (a seed of the CPU generator alone runs on XLA: only the device's draws ignore it)
        ("seed", (HOST_SEED,)),
        ("checkpoint", (LOAD_MAP_LOCATION,)),
        ("trainer", huggingface.RULES),
        # (torch_xla names the target lacks: ``xm.xrt_world_size()`` in a module written for torch_xla < 2.7)
        ("release-names", release_names.RULES),
    )
    causes = {
        rule: _STEP_KINDS.get(rule.name, cause)
        for cause, rules in families
        for rule in rules
        if rule.severity == "error" and rule.name not in _CONTEXTUAL
    }
    # An optimizer over parameters a later move replaces (obligation 2): a cause of its own, which no
    # step barrier of the caller's loop closes (a plain step the loop drives is right on one process;
    # an optimizer stepping stale CPU copies trains nothing whatever drives it).
    causes.update({rule: "stale-optimizer" for rule in training.RULES if rule.name in _STALE_OPTIMIZERS})
    return causes


_STALE_OPTIMIZERS = frozenset({"optimizer-before-move", "untraced-optimizer-parameters"})


# The training family's errors that say less than "a training loop or optimizer step": an evaluation or
# inference loop over the device (XLA303: no optimizer step, only no barrier).
_STEP_KINDS = {"eval-loop-barrier": "eval-loop"}
STEP_CAUSES = frozenset({"step", *_STEP_KINDS.values()})


_CAUSE_OF = _causes()
_MAX_CODE = 60


def holdings(
    module: cst.Module,
    parents: dict[int, int | None],
    findings: Sequence[PendingFinding],
    start: Callable[[cst.CSTNode], tuple[int, int] | None],
    text_of: Callable[[cst.CSTNode], str | None],
    dynamic_imports: Mapping[cst.CSTNode, str] | None = None,
    availability_check: Callable[[cst.BaseExpression], bool] | None = None,
) -> tuple[
    tuple[tuple[str, str, str, bool], ...],
    tuple[tuple[str, str, tuple[str, ...]], ...],
    tuple[tuple[str, str, str, bool], ...],
]:
    """(top-level name, cause, the code and its line, whether converting the module ports
    it or only reports it) of each error finding, once per name and cause (ported when every
    such finding of the name and cause is fixed).  Code under ``if __name__ == "__main__":`` is held by nothing (it does
    not run on import); a module-level assignment (``device = torch.device("cuda" if ...)``)
    by the name it binds, and by each top-level function and class whose text reads that
    name; other module-level code by "" (it runs on import).  Second: (class, cause, methods) where
    every such finding of the class and cause is in one of those methods, which only a caller of the
    instance runs (``caller_only_methods``): a file that never calls them does not reach it.  Third: the
    same as the first, by the method of a top-level class whose code holds it (``FitMixin.fit``), for a
    finding at a call of that method."""
    tops: dict[int, tuple[str, ...]] = {}
    # (class, cause) -> the methods that hold it, None once a finding is elsewhere in the class.
    in_methods: dict[tuple[str, str], set[str] | None] = {}
    held: dict[tuple[str, str], str] = {}
    reported: set[tuple[str, str]] = set()  # (name, cause) with a finding the conversion does not fix
    skipped = _after_cuda_returns(module, parents, findings, availability_check) if availability_check else set()
    skipped |= _under_cuda_flags(module, findings, availability_check) if availability_check else set()
    skipped |= _tensor_chosen(module, findings, parents)
    found = [
        (_cause(finding.rule, finding.original), finding.original, finding.fixed)
        for finding in findings
        if not _inside(finding.original, skipped, parents)
    ]
    # ``importlib.import_module(name)``: converting the project converts what it may import.
    found += [("dynamic-import", node, True) for node in dynamic_imports or {}]
    anything = any(cause is not None for cause, _, _ in found)
    methods = caller_only_methods(module) if anything else {}
    every_method = _methods(module) if anything else {}
    by_method: dict[tuple[str, str], tuple[str, bool]] = {}  # (Cls.method, cause) -> (code, ported)
    for cause, node, fixed in found:
        if cause is None or node is None:
            continue
        if not tops:
            tops = {id(statement): _names(statement) for statement in module.body}
        key: int | None = id(node)
        while key is not None and key not in tops:
            key = parents.get(key)
        if key is None:
            continue
        method = _method_of(node, methods, parents)
        for name in tops[key]:
            known = in_methods.get((name, cause), set())
            in_methods[(name, cause)] = None if known is None or method is None else {*known, method}
        code = _quoted(module, node)
        position = start(node)
        what = f"`{code}`" + (f" (line {position[0]})" if position else "")
        if cause == "dynamic-import" and dynamic_imports and (package := dynamic_imports.get(node)):
            what += LOADED_PACKAGE.format(package)
        if (qualified := _method_of(node, every_method, parents)) is not None:
            kept = by_method.get((qualified, cause))
            if kept is None or (kept[1] and not fixed):  # (what stays reported first)
                by_method[(qualified, cause)] = (what, fixed if kept is None else False)
            elif not fixed:
                by_method[(qualified, cause)] = (kept[0], False)
        for name in tops[key]:
            if not fixed and (name, cause) not in reported:  # (the code shown is what stays reported)
                reported.add((name, cause))
                held[(name, cause)] = what
            else:
                held.setdefault((name, cause), what)
    assigned = {name for statement in module.body for name in _assigned(statement)}
    values = {(name, cause): what for (name, cause), what in held.items() if name in assigned}
    if values:
        for statement in module.body:
            if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or (text := text_of(statement)) is None:
                continue
            for (name, cause), what in values.items():
                if re.search(rf"\b{re.escape(name)}\b", text):
                    held.setdefault((statement.name.value, cause), f"{what}, in the module-level `{name}`")
                    in_methods[(statement.name.value, cause)] = None
                    if (name, cause) in reported:
                        reported.add((statement.name.value, cause))
    restricted = tuple(
        (name, cause, tuple(sorted(found))) for (name, cause), found in in_methods.items() if found and name
    )
    in_methods_held = tuple((name, cause, what, ported) for (name, cause), (what, ported) in by_method.items())
    return (
        tuple((name, cause, what, (name, cause) not in reported) for (name, cause), what in held.items()),
        restricted,
        in_methods_held,
    )


# Bases (their last part, as written) of the classes whose methods run only when called: plain
# classes, torch modules (``forward`` runs through ``__call__``) and data sets; a framework's base
# (a LightningModule, a Trainer) calls hooks the script never names.
_PLAIN_BASES = frozenset({"object", "Module", "Sequential", "ModuleList", "ModuleDict", "Dataset", "IterableDataset"})
# Methods that run without a call that names them.
_IMPLICIT = frozenset({"forward"})


def caller_only_methods(module: cst.Module) -> dict[int, str]:
    """The methods (by the id of their ``def``) of the module's top-level classes that run only when
    a caller names them: of a class whose bases are plain (``_PLAIN_BASES``, or classes of the module),
    not a dunder nor ``forward``, and that the module never names but in their ``def`` (as an attribute,
    ``self.load(...)``, ``agent.load``, or a string, ``getattr(self, "load")``); an attribute of a name
    the module imports (``torch.load``) names no method."""
    classes = {statement.name.value for statement in module.body if type(statement) is cst.ClassDef}
    imported: set[str] = set()
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.evaluated_alias or alias.evaluated_name
                    imported.add(bound.split(".")[0])
    candidates: dict[str, list[int]] = {}
    for statement in module.body:
        if type(statement) is not cst.ClassDef or type(statement.body) is not cst.IndentedBlock:
            continue
        bases = [dotted(arg.value) for arg in statement.bases if arg.keyword is None]
        lightning = any(base is not None and base.rpartition(".")[2] == "LightningModule" for base in bases)
        if not all(
            base is not None
            and (
                base in classes
                or base.rpartition(".")[2] in _PLAIN_BASES
                or base.rpartition(".")[2] == "LightningModule"
            )
            for base in bases
        ):
            continue
        for item in statement.body.body:
            name = item.name.value if type(item) is cst.FunctionDef else ""
            if (
                name
                and not name.startswith("__")
                and name not in _IMPLICIT
                and not (lightning and lightning_hook(name))
            ):
                candidates.setdefault(name, []).append(id(item))
    if not candidates:
        return {}
    named: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            root: cst.BaseExpression = node.value
            while type(root) is cst.Attribute:
                root = root.value
            if not (type(root) is cst.Name and root.value in imported and root is node.value):
                named.add(node.attr.value)

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            value = string_value(node)
            if isinstance(value, str):
                named.add(value)

    module.visit(_Names())
    return {key: name for name, keys in candidates.items() if name not in named for key in keys}


def caller_only_names(module: cst.Module) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(method, names) for each method name of ``caller_only_methods``: the attributes and string
    identifiers its code names that the module names nowhere outside such methods (whatever they are
    attributes of).  A call there runs only where a caller names the method: minDALL-E's
    ``iGPT.sampling`` calls ``block.sample(...)``, which names no ``sample`` for a file that never
    calls ``sampling``."""
    methods = caller_only_methods(module)
    if not methods:
        return ()
    inside: dict[str, set[str]] = {}
    outside: set[str] = set()

    class _Names(cst.CSTVisitor):
        def __init__(self) -> None:
            self.within: list[str] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if id(node) in methods:
                self.within.append(methods[id(node)])

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            if id(original_node) in methods:
                self.within.pop()

        def _named(self, name: str) -> None:
            if self.within:
                inside.setdefault(self.within[-1], set()).add(name)
            else:
                outside.add(name)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            self._named(node.attr.value)

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            value = string_value(node)
            if isinstance(value, str) and value.isidentifier():
                self._named(value)

    module.visit(_Names())
    return tuple(
        sorted((method, tuple(sorted(names - outside))) for method, names in inside.items() if names - outside)
    )


def _methods(module: cst.Module) -> dict[int, str]:
    """Every method of the module's top-level classes, by the id of its ``def``: ``Cls.method``."""
    return {
        id(item): f"{statement.name.value}.{item.name.value}"
        for statement in module.body
        if type(statement) is cst.ClassDef and type(statement.body) is cst.IndentedBlock
        for item in statement.body.body
        if type(item) is cst.FunctionDef
    }


def _method_of(node: cst.CSTNode, methods: dict[int, str], parents: dict[int, int | None]) -> str | None:
    """The method of ``methods`` whose code holds ``node``, or None."""
    key: int | None = id(node)
    while key is not None:
        if key in methods:
            return methods[key]
        key = parents.get(key)
    return None


def _after_cuda_returns(
    module: cst.Module,
    parents: dict[int, int | None],
    findings: Sequence[PendingFinding],
    availability_check: Callable[[cst.BaseExpression], bool],
) -> set[int]:
    """The statements no XLA host reaches: those after ``if not torch.cuda.is_available(): ...; return``
    (a test True without CUDA, which the conversion leaves as it is, whose body ends in a ``return`` or
    a ``raise`` and that has no ``else``) in the same block (``_DataParallel.__init__`` returning before
    its ``self.module.cuda(device_ids[0])``): what they hold never runs there."""
    from codemods.engine.nodes import fold_true, walk

    def without_cuda(test: cst.BaseExpression) -> bool:
        return (
            type(test) is cst.UnaryOperation and type(test.operator) is cst.Not and availability_check(test.expression)
        )

    changed = {id(f.original) for f in findings if f.fixed and f.original is not None}
    unreachable: set[int] = set()
    for node in walk(module):
        body = getattr(node, "body", None)
        if not isinstance(body, (list, tuple)):
            continue
        for index, statement in enumerate(body):
            if not (
                type(statement) is cst.If
                and statement.orelse is None
                and fold_true(statement.test, without_cuda) is True
                and not any(id(sub) in changed for sub in walk(statement.test))
                and _ends_in_exit(statement.body)
            ):
                continue
            unreachable.update(id(later) for later in body[index + 1 :])
            break
    return unreachable


def _under_cuda_flags(
    module: cst.Module, findings: Sequence[PendingFinding], availability_check: Callable[[cst.BaseExpression], bool]
) -> set[int]:
    """The bodies of the ``if`` statements no XLA host enters: a test that is False without CUDA as the
    conversion leaves it (a CUDA availability check it keeps, ``False``, an ``and`` with one of them, an
    ``or`` or a conditional expression of them alone), also through a name of the function that every
    assignment there binds to one (YOLOP's ``cuda = False if cpu_request else torch.cuda.is_available()``,
    ``if cuda: ng = torch.cuda.device_count()``): what they hold never runs there."""
    from codemods.engine.nodes import walk

    changed = {id(sub) for f in findings if f.fixed and f.original is not None for sub in walk(f.original)}
    nodes = walk(module)
    if not any(type(node) is cst.If for node in nodes):
        return set()
    bound: dict[tuple[int, str], list[cst.BaseExpression]] = {}  # (function, name) -> each value bound
    for function in (node for node in nodes if type(node) is cst.FunctionDef):
        for node in walk(function.body):
            if type(node) is cst.Assign:
                for target in node.targets:
                    key = (id(function), target.target.value if type(target.target) is cst.Name else "")
                    bound.setdefault(key, []).append(node.value if type(target.target) is cst.Name else cst.Name("x"))
            elif type(node) in (cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.NamedExpr):
                for name in walk(getattr(node, "target", None) or getattr(node, "asname", None) or node):
                    if type(name) is cst.Name:
                        bound.setdefault((id(function), name.value), []).append(cst.Name("x"))

    def false_on_xla(expr: cst.BaseExpression, function: int | None, depth: int = 0) -> bool:
        if depth > 4 or id(expr) in changed:
            return False
        if type(expr) is cst.Name:
            if expr.value == "False":
                return True
            values = bound.get((function, expr.value), []) if function is not None else []
            return bool(values) and all(false_on_xla(v, function, depth + 1) for v in values)
        if type(expr) is cst.BooleanOperation:
            sides = (false_on_xla(expr.left, function, depth + 1), false_on_xla(expr.right, function, depth + 1))
            return any(sides) if type(expr.operator) is cst.And else all(sides)
        if type(expr) is cst.IfExp:
            return false_on_xla(expr.body, function, depth + 1) and false_on_xla(expr.orelse, function, depth + 1)
        return availability_check(expr) and not any(id(sub) in changed for sub in walk(expr))

    functions: list[int | None] = [None]
    skipped: set[int] = set()

    class _Ifs(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            functions.append(id(node))

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            functions.pop()

        def visit_If(self, node: cst.If) -> None:
            if false_on_xla(node.test, functions[-1]):
                skipped.add(id(node.body))

    module.visit(_Ifs())
    return skipped


def _ends_in_exit(block: cst.BaseSuite) -> bool:
    """The block's last statement returns or raises."""
    if isinstance(block, cst.SimpleStatementSuite):
        return bool(block.body) and isinstance(block.body[-1], (cst.Return, cst.Raise))
    last = block.body[-1] if isinstance(block, cst.IndentedBlock) and block.body else None
    return (
        isinstance(last, cst.SimpleStatementLine)
        and bool(last.body)
        and isinstance(last.body[-1], (cst.Return, cst.Raise))
    )


def _tensor_chosen(module: cst.Module, findings: Sequence[PendingFinding], parents: dict[int, int | None]) -> set[int]:
    """What a tensor's own CUDA check decides that runs on XLA as it is, unconverted (test and CUDA
    branch): a device it chooses (``torch.device("cuda") if x.is_cuda else torch.device("cpu")``, when
    the conversion ports the check): an XLA tensor picks the CPU there, and what goes to that device
    only meets ``x`` on the XLA device, which torch_xla uploads it to (a loss's label mask); and an
    ``if x.is_cuda:`` that only moves values (``t = t.cuda()``) whose every read runs beside XLA tensors
    (device/host_tensors.py: an XLA tensor skips the moves, and ``t`` stays on the CPU).  A CUDA tensor
    type chosen so (``torch.cuda.FloatTensor if x.is_cuda else ...``) stays held where the conversion
    reports it: its CPU tensors meet XLA tensors where torch_xla takes none (``torch.max``)."""
    from codemods.device.host_tensors import skipped_moves_safe
    from codemods.engine.nodes import walk

    checks = {
        id(f.original): f.fixed for f in findings if f.rule.name == "tensor-cuda-check" and f.original is not None
    }
    if not checks:
        return set()
    kept = {key for key, fixed in checks.items() if not fixed}
    nodes = walk(module)
    functions = {id(node): node for node in nodes if type(node) is cst.FunctionDef}
    chosen: set[int] = set()
    for node in nodes:
        if type(node) is cst.IfExp and id(node.test) in checks and id(node.test) not in kept:
            chosen.update((id(node.test), id(node.body)))
        elif type(node) is cst.If and any(id(sub) in checks for sub in walk(node.test)):
            key = parents.get(id(node))
            while key is not None and key not in functions:
                key = parents.get(key)
            if skipped_moves_safe(node, functions.get(key) if key is not None else None):
                chosen.update((id(node.test), id(node.body)))
    return chosen


def _inside(node: cst.CSTNode | None, statements: set[int], parents: dict[int, int | None]) -> bool:
    key = id(node) if node is not None else None
    while key is not None:
        if key in statements:
            return True
        key = parents.get(key)
    return False


def _cause(rule: Rule, node: cst.CSTNode | None) -> str | None:
    """The family of an error finding: a device finding on an ``assert`` (``assert
    torch.cuda.is_available()``) is an assert that CUDA is present, not a device choice."""
    cause = _CAUSE_OF.get(rule)
    if cause == "device" and type(node) is cst.SimpleStatementLine and node.body:
        node = node.body[0]
    return "cuda-assert" if cause == "device" and type(node) is cst.Assert else cause


def _quoted(module: cst.Module, node: cst.CSTNode) -> str:
    """The code a holding shows: a statement's first line, or its lines joined when the first
    only opens a bracket (``assert (``); an ``assert`` without its message; an expression whole,
    on one line and without its outer parentheses (``self["device"] = (`` spreads its value over
    the next lines)."""
    if type(node) is cst.SimpleStatementLine and len(node.body) == 1 and type(node.body[0]) is cst.Assert:
        node = node.body[0]
    if type(node) is cst.Assert:
        test = node.test.with_changes(lpar=[], rpar=[]) if node.test.lpar else node.test
        node = node.with_changes(
            test=test, msg=None, comma=cst.MaybeSentinel.DEFAULT, whitespace_after_assert=cst.SimpleWhitespace(" ")
        )
    if isinstance(node, cst.BaseExpression) and node.lpar:
        node = node.with_changes(lpar=[], rpar=[])
    lines = [line.strip() for line in module.code_for_node(node).strip().splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if isinstance(node, cst.BaseExpression) or (lines and lines[0].endswith(("(", "[", "{", "\\"))):
        code = re.sub(r"([(\[{]) ", r"\1", " ".join(lines)).replace(" )", ")").replace(" ]", "]").replace(" }", "}")
    else:
        code = lines[0] if lines else ""
    return code if len(code) <= _MAX_CODE else code[: _MAX_CODE - 3] + "..."


def _names(statement: cst.BaseStatement) -> tuple[str, ...]:
    """The top-level names whose code a statement is: the function or class it defines,
    the names it assigns, "" for other code (it runs on import); none for the main guard."""
    if type(statement) is cst.FunctionDef or type(statement) is cst.ClassDef:
        return (statement.name.value,)
    if type(statement) is cst.If and _main_guard(statement.test):
        return ()
    return _assigned(statement) or ("",)


def _assigned(statement: cst.BaseStatement) -> tuple[str, ...]:
    """The names a module-level ``name = ...`` statement binds."""
    if type(statement) is not cst.SimpleStatementLine:
        return ()
    return tuple(
        target.target.value
        for small in statement.body
        if type(small) is cst.Assign
        for target in small.targets
        if type(target.target) is cst.Name
    ) + tuple(
        small.target.value
        for small in statement.body
        if type(small) is cst.AnnAssign and type(small.target) is cst.Name
    )


def _main_guard(test: cst.BaseExpression) -> bool:
    return type(test) is cst.Comparison and type(test.left) is cst.Name and test.left.value == "__name__"
