"""Code that needs a package an XLA host never has: flash-attn builds its CUDA kernels when it is
installed, so on an XLA host its import raises ImportError. A use reached only when that import
worked (after it, in a ``try`` whose handler catches the ImportError and falls back; after such a
``try`` whose handler returns, ``except ImportError: return False``; under ``if
flash_attn is not None:``, or under a function of the file that returns False when it is None)
never runs there: XLA004 says nothing of it (loaded by the hooks: a rule module loads no LibCST)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods.engine.nodes import dotted

# Packages whose install builds CUDA kernels (no wheel or build without CUDA).
ABSENT_ON_XLA = frozenset({"flash_attn"})

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def never_runs_on_xla(ancestors: Sequence[cst.CSTNode], qualified: str) -> bool:
    """The reference (the last of ``ancestors``) is reached only where ``qualified``'s package
    imported, which it never does on an XLA host."""
    package = qualified.split(".", 1)[0]
    if package not in ABSENT_ON_XLA or not ancestors or not isinstance(ancestors[0], cst.Module):
        return False
    if _binds_or_tests_for_none(ancestors):
        return True
    module = ancestors[0]
    absent = _names_falsy_when_absent(module, package)
    for outer, inner in zip(ancestors, ancestors[1:]):
        if isinstance(outer, cst.Try) and inner is outer.body and _imports(outer.body, package) and _falls_back(outer):
            return True
        if isinstance(outer, (cst.Module, cst.IndentedBlock)) and _after_an_exiting_try(outer.body, inner, package):
            return True
        if isinstance(outer, (cst.If, cst.IfExp)) and inner is outer.body:
            test: cst.BaseExpression = outer.test
        elif isinstance(outer, cst.BooleanOperation) and isinstance(outer.operator, cst.And) and inner is outer.right:
            test = outer.left
        else:
            continue
        if absent and _requires_present(test, absent, module):
            return True
    return False


def _after_an_exiting_try(body: Sequence[cst.CSTNode], statement: cst.CSTNode, package: str) -> bool:
    """``statement`` follows, in the same block, a ``try`` that imports the package and whose
    handlers of the ImportError all return (``except ImportError: return False``; one that raises is no fallback): it runs
    only where the import worked."""
    for before in body:
        if before is statement:
            return False
        if (
            isinstance(before, cst.Try)
            and _imports(before.body, package)
            and _falls_back(before)
            and all(_exits(handler.body) for handler in before.handlers if _catches_import_error(handler))
        ):
            return True
    return False


def _exits(suite: cst.BaseSuite) -> bool:
    """The block ends with a ``return`` (the caller's fallback; a ``raise`` is no fallback: the
    code fails there)."""
    lines = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
    last = lines[-1] if lines else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and isinstance(
        last.body[-1], cst.Return
    )


def _binds_or_tests_for_none(ancestors: Sequence[cst.CSTNode]) -> bool:
    """The reference (the last of ``ancestors``) only binds the name (``flash_attn = None`` in
    the handler, ``unpad_input, pad_input = None, None``) or tests it against None (``flash_attn
    is not None``): no code of the package runs."""
    if len(ancestors) < 2:
        return False
    reference, parent = ancestors[-1], ancestors[-2]
    if isinstance(parent, cst.Element) and len(ancestors) > 3 and isinstance(ancestors[-3], (cst.Tuple, cst.List)):
        # one name of a tuple assigned to (``a, b = None, None``)
        return isinstance(ancestors[-4], cst.AssignTarget) and ancestors[-4].target is ancestors[-3]
    if isinstance(parent, cst.AssignTarget):
        return parent.target is reference
    if isinstance(parent, cst.Comparison) and parent.left is reference:
        targets = parent.comparisons
    elif isinstance(parent, cst.ComparisonTarget) and parent.comparator is reference and len(ancestors) > 2:
        comparison = ancestors[-3]  # ``None is not flash_attn``
        if not (isinstance(comparison, cst.Comparison) and _is_none(comparison.left)):
            return False
        targets = (parent,)
    else:
        return False
    return all(
        isinstance(t.operator, (cst.Is, cst.IsNot)) and (t.comparator is reference or _is_none(t.comparator))
        for t in targets
    )


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _imports(node: cst.CSTNode, package: str) -> bool:
    """An import of ``package`` (or of one of its modules) somewhere in ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Import):
            if any(_in_package(dotted(alias.name), package) for alias in current.names):
                return True
        elif isinstance(current, cst.ImportFrom):
            if current.module is not None and not current.relative and _in_package(dotted(current.module), package):
                return True
        else:
            stack.extend(current.children)
    return False


def _in_package(name: str | None, package: str) -> bool:
    return name is not None and (name == package or name.startswith(package + "."))


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else None
    caught = [dotted(element.value) for element in kinds] if kinds is not None else [dotted(handler.type)]
    return any(name in _IMPORT_ERRORS for name in caught)


def _falls_back(statement: cst.Try) -> bool:
    """A handler catches the ImportError (the code after the ``try`` is the fallback)."""
    return any(_catches_import_error(handler) for handler in statement.handlers)


def _names_falsy_when_absent(module: cst.Module, package: str) -> set[str]:
    """``try: import flash_attn`` / ``except ImportError: flash_attn = None`` (or ``HAS_FLASH =
    False``) at module level: the names the handler makes None or False."""
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.Try) or not _imports(statement.body, package):
            continue
        for handler in statement.handlers:
            if not _catches_import_error(handler):
                continue
            for line in handler.body.body:
                if not isinstance(line, cst.SimpleStatementLine):
                    continue
                for small in line.body:
                    if isinstance(small, cst.Assign) and dotted(small.value) in ("None", "False"):
                        names.update(n for t in small.targets if (n := dotted(t.target)) is not None)
    return names


def _and_parts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_and_parts(test.left), *_and_parts(test.right)]
    return [test]


def _or_parts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return [*_or_parts(test.left), *_or_parts(test.right)]
    return [test]


def _is_none_check(part: cst.BaseExpression, absent: set[str], negated: bool) -> bool:
    """``name is not None`` / ``name`` (``negated``: ``name is None`` / ``not name``) of a name
    that is falsy where the package is absent."""
    if isinstance(part, cst.UnaryOperation) and isinstance(part.operator, cst.Not):
        return _is_none_check(part.expression, absent, not negated)
    if dotted(part) in absent:
        return not negated
    if isinstance(part, cst.Comparison) and len(part.comparisons) == 1 and dotted(part.left) in absent:
        target = part.comparisons[0]
        if dotted(target.comparator) != "None":
            return False
        return isinstance(target.operator, cst.Is) if negated else isinstance(target.operator, cst.IsNot)
    return False


def _requires_present(test: cst.BaseExpression, absent: set[str], module: cst.Module) -> bool:
    """The test is False where the package is absent: one of its ``and`` parts asks for it, or
    calls a function of the file that returns False then."""
    for part in _and_parts(test):
        if _is_none_check(part, absent, negated=False):
            return True
        if isinstance(part, cst.Call) and isinstance(part.func, cst.Name):
            function = _function(module, part.func.value)
            if function is not None and _returns_false_when_absent(function, absent, module):
                return True
    return False


def _function(module: cst.Module, name: str) -> cst.FunctionDef | None:
    return next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def _returns_falsy(statement: cst.BaseSuite) -> bool:
    """A branch that only returns None or False."""
    lines = statement.body if isinstance(statement, cst.IndentedBlock) else [statement]
    if len(lines) != 1 or not isinstance(lines[0], cst.SimpleStatementLine) or len(lines[0].body) != 1:
        return False
    small = lines[0].body[0]
    return isinstance(small, cst.Return) and (small.value is None or dotted(small.value) in ("None", "False"))


def _returns_false_when_absent(function: cst.FunctionDef, absent: set[str], module: cst.Module) -> bool:
    """``if flash_attn is None: return False`` before any other return, or ``return flash_attn is
    not None and ...``: the function returns a falsy value where the package is absent."""
    if not isinstance(function.body, cst.IndentedBlock):
        return False
    for statement in function.body.body:
        if isinstance(statement, cst.If) and statement.orelse is None and _returns_falsy(statement.body):
            if any(_is_none_check(part, absent, negated=True) for part in _or_parts(statement.test)):
                return True
            continue  # another early `return False`
        if isinstance(statement, cst.SimpleStatementLine):
            returned = next((s for s in statement.body if isinstance(s, cst.Return)), None)
            if returned is not None:
                return returned.value is not None and _requires_present(returned.value, absent, module)
            continue
        return False  # a statement that may return otherwise
    return False


def unguarded_imports(module: cst.Module) -> list[tuple[cst.Import | cst.ImportFrom, str]]:
    """The module-level imports of a package an XLA host never has, outside a ``try`` (and
    outside an ``if``): importing the module raises ImportError there. Each with its package."""
    found: list[tuple[cst.Import | cst.ImportFrom, str]] = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                names = [dotted(alias.name) for alias in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                names = [dotted(small.module)]
            else:
                continue
            package = next((p for name in names for p in ABSENT_ON_XLA if _in_package(name, p)), None)
            if package is not None:
                found.append((small, package))
    return found
