"""Imports and XLA awareness: the file's import aliases (its own light table, no scope
metadata), the names it takes, where new imports go, and the code that already handles
XLA (torch_xla imported conditionally, branches on XLA or TPU availability)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from codemods import equivalent_apis
from codemods.engine.imports import ImportTable
from codemods.engine.nodes import children, dotted, names_in, target_names
from codemods.engine.walk import Analysis
from codemods.project.import_context import outside_project

if TYPE_CHECKING:
    from codemods.facts import Facts


class ImportAnalysis(Analysis):
    facts: Facts

    name = "imports"

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        part = self.facts.imports
        part.table.add(node, self.walk.module_level and node not in part.after_code)
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            self._star(node)
        names = node.names  # (an Import's are never a star)
        if not isinstance(names, cst.ImportStar):
            part.taken_names.update(alias.evaluated_alias or alias.evaluated_name.split(".")[0] for alias in names)
        if isinstance(node, cst.Import):
            modules = [dotted(alias.name) or "" for alias in node.names]
            for alias, module in zip(node.names, modules):
                if not outside_project(module):
                    if (asname := alias.evaluated_alias) is not None:  # (an ``as`` name)
                        part.project_names[asname] = (module, "")
                    else:
                        part.project_names[module.split(".")[0]] = (module.split(".")[0], "")
        else:
            modules = [dotted(node.module) or ""] if node.module is not None else []
            if not isinstance(node.names, cst.ImportStar):
                module = "." * len(node.relative) + (modules[0] if modules else "")
                if node.relative or not outside_project(module):
                    for alias in node.names:
                        part.project_names[alias.evaluated_alias or alias.evaluated_name] = (
                            module,
                            alias.evaluated_name,
                        )
                    self._reexported_checks(node, module)
        if self.walk.guard_depth and any(m == "torch_xla" or m.startswith("torch_xla.") for m in modules):
            part.xla_optional = True

    visit_Import = _import
    visit_ImportFrom = _import

    def _star(self, node: cst.ImportFrom) -> None:
        """``from net import *``: the names the project module binds are bound here, its
        imports as they are there (``torch`` is torch), its own names as names of the project."""
        part = self.facts.imports
        module = "." * len(node.relative) + (dotted(node.module) or "" if node.module is not None else "")
        if not node.relative and outside_project(module):
            return
        names = part.star_names_of(module)
        if names is None:
            part.unfollowed_stars.append((module, node))
            return
        module_level = self.walk.module_level and node not in part.after_code
        for local, qualified in names:
            if qualified is not None and (qualified == "torch_xla" or qualified.startswith("torch_xla.")):
                continue  # the port imports what it writes itself: another module's imports may change
            part.taken_names.add(local)
            part.project_names.pop(local, None)
            part.star_bound.pop(local, None)
            if qualified is not None:
                part.table.bind(local, qualified, module_level)
            if qualified is None or not outside_project(qualified):
                part.project_names[local] = (module, local)
                part.star_bound[local] = node

    def _reexported_checks(self, node: cst.ImportFrom, module: str) -> None:
        """``from ..extras.misc import is_torch_cuda_available``, where that project module imports it
        from a library (``from transformers.utils import is_torch_cuda_available``): the name is the
        library's availability check here too, False on XLA like ``torch.cuda.is_available()``."""
        part = self.facts.imports
        names = node.names
        if isinstance(names, cst.ImportStar):
            return
        wanted = {alias.evaluated_name for alias in names}
        if not wanted & {check.rsplit(".", 1)[-1] for check in equivalent_apis.LIBRARY_AVAILABILITY_CHECKS}:
            return  # (most imports: the project module is not read)
        exported = dict(part.star_names_of(module) or ())
        module_level = self.walk.module_level and node not in part.after_code
        for alias in names:
            qualified = exported.get(alias.evaluated_name)
            if qualified in equivalent_apis.LIBRARY_AVAILABILITY_CHECKS:
                local = alias.evaluated_alias or alias.evaluated_name
                part.table.bind(local, qualified, module_level)
                part.project_names.pop(local, None)

    def _branch(self, node: cst.If | cst.IfExp) -> None:
        if tests_for_xla(node.test):
            self.facts.imports.xla_guarded.add(node)

    visit_If = _branch
    visit_IfExp = _branch

    def _binds(self, target: cst.BaseExpression) -> None:
        """A name bound otherwise than by an import (the table's ``rebound``)."""
        self.facts.imports.table.rebound.update(target_names(target))

    def visit_Param(self, node: cst.Param) -> None:
        self._binds(node.name)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._binds(node.target)

    def _binds_target(self, node: cst.AnnAssign | cst.AugAssign | cst.For | cst.CompFor) -> None:
        self._binds(node.target)

    visit_AnnAssign = _binds_target
    visit_AugAssign = _binds_target
    visit_For = _binds_target
    visit_CompFor = _binds_target

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._binds(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._binds(node.target)  # ``if (g := make()):``

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._binds(node.name.name)  # ``except Exception as handler:``

    def _binds_name(self, node: cst.FunctionDef | cst.ClassDef | cst.MatchAs | cst.MatchStar) -> None:
        if node.name is not None:
            self._binds(node.name)  # ``def fit():``, ``class cfg:``, ``case [x, *rest]:`` (a pattern's capture)

    visit_FunctionDef = _binds_name
    visit_ClassDef = _binds_name
    visit_MatchAs = _binds_name
    visit_MatchStar = _binds_name

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._binds(node.rest)  # ``case {"k": v, **rest}:``


def tests_for_xla(test: cst.BaseExpression) -> bool:
    """``if HAS_XLA:``, ``if is_torch_xla_available():``, ``if args.tpu:``..."""
    return any(names_xla(name) for name in names_in(test))


# The words of a name (``is_torch_xla_available``, ``useTPU``, ``XLADevice``): parts between
# underscores and digits, split again where camel case starts a word.
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
# A word that is XLA or TPU, or one with a short prefix or suffix written together with it
# (``usetpu``, ``hasxla``, ``torchxla``, ``tpus``, ``xladevice``): never a word that only
# contains the letters (``output``, ``throughput``, ``xlarge``).
_XLA_WORD = re.compile(
    r"(?:use|is|has|on|run|with|enable|num|torch)?(?:xla|tpus?)(?:available|enabled|device|devices|cores)?"
)


def names_xla(name: str) -> bool:
    """A name that speaks of XLA or TPU by one of its words (``HAS_XLA``, ``args.tpu``,
    ``is_torch_tpu_available``), not one whose letters only contain them (``output`` holds
    "tpu", ``xlarge`` "xla"): a branch on a tensor named ``output`` is no branch on XLA."""
    return any(_XLA_WORD.fullmatch(word.lower()) for word in _WORDS.findall(name))


def import_anchor(module: cst.Module) -> cst.CSTNode | None:
    """The statement after which new imports go: the last torch_xla import of the
    leading import block (new torch_xla imports go next to the existing ones), else its
    last torch import, else the block's last import, else the docstring."""
    anchor = torch_anchor = xla_anchor = None
    for index, statement in enumerate(module.body):
        if type(statement) is not cst.SimpleStatementLine:
            break
        small = statement.body
        if (
            index == 0
            and len(small) == 1
            and type(small[0]) is cst.Expr
            and isinstance(small[0].value, (cst.SimpleString, cst.ConcatenatedString))
        ):
            anchor = statement
            continue
        if not all(type(s) in (cst.Import, cst.ImportFrom) for s in small):
            break
        anchor = statement
        for s in small:
            names = [dotted(a.name) or "" for a in s.names] if type(s) is cst.Import else [dotted(s.module) or ""]  # type: ignore[attr-defined]  # s is an Import or an ImportFrom: the else branch (not Import) is an ImportFrom, which mypy does not narrow by type()
            if any(n == "torch" or n.startswith("torch.") for n in names):
                torch_anchor = statement
            if any(n == "torch_xla" or n.startswith("torch_xla.") for n in names):
                xla_anchor = statement
    return xla_anchor or torch_anchor or anchor


def expect_imports(table: ImportTable, after_code: set[cst.Import | cst.ImportFrom]) -> None:
    """Before the walk: the names of the imports that run after module-level code, and
    ``torch_xla``, which a file that never imports it can only mean as the package (a
    rewrite may import it: the output must read the same)."""
    for statement in after_code:
        table.expect(statement)
    table.bindings.setdefault("torch_xla", "torch_xla")


def imports_after_code(module: cst.Module) -> set[cst.Import | cst.ImportFrom]:
    """The module-level imports that some module-level code runs before (``x = f()``,
    a loop's header or an earlier statement of its body, ``model.cuda()``; docstrings,
    ``pass``, definitions and the tests of ``if`` and ``try`` run none that a rewrite
    touches): names spelt through them would be unbound there."""
    late: set[cst.Import | cst.ImportFrom] = set()
    ran_code = False
    pending: list[cst.CSTNode] = list(reversed(module.body))
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    if ran_code:
                        late.add(small)
                elif not isinstance(small, cst.Pass) and not (
                    isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
                ):
                    ran_code = True
            continue
        if isinstance(node, cst.BaseCompoundStatement) and not isinstance(node, (cst.If, cst.Try, cst.TryStar)):
            ran_code = True  # a loop's iterable, a with's context managers, a match's subject
        # the statements inside, in the order of the code
        pending.extend(reversed([child for child in children(node) if not isinstance(child, cst.BaseExpression)]))
    return late
