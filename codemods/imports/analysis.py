"""Imports and XLA awareness: the file's import aliases (its own light table, no scope
metadata), the names it takes, where new imports go, and the code that already handles
XLA (torch_xla imported conditionally, branches on XLA or TPU availability)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.engine.walk import Analysis
from codemods.engine.imports import ImportTable
from codemods.project.summary import outside_project
from codemods.engine.nodes import dotted, names_in


@dataclass
class ImportFacts:
    table: ImportTable = field(default_factory=ImportTable)
    # Every name the file binds or uses (the walk adds each name it meets): new import
    # aliases must not collide with them.
    taken_names: set[str] = field(default_factory=set)
    # The statement after which new imports go.
    anchor: cst.CSTNode | None = None
    # Names that may come from the project's own modules: local name -> (module as
    # written, name in it); the name is "" for ``import util.misc as misc``.
    project_names: dict[str, tuple[str, str]] = field(default_factory=dict)
    # torch_xla imported inside try/if: the file keeps a non-XLA path, so the tool
    # may not add top-level torch_xla imports or move code onto the XLA device.
    xla_optional: bool = False
    # Ifs and conditional expressions that branch on XLA (or TPU) availability: their
    # code already handles XLA and is left exactly as written.
    xla_guarded: set[cst.CSTNode] = field(default_factory=set)


class ImportAnalysis(Analysis):
    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        part = self.facts.imports
        part.table.add(node, self.walk.module_level)
        if type(node) is not cst.ImportFrom or type(node.names) is not cst.ImportStar:
            part.taken_names.update(alias.evaluated_alias or alias.evaluated_name.split(".")[0] for alias in node.names)
        if type(node) is cst.Import:
            modules = [dotted(alias.name) or "" for alias in node.names]
            for alias, module in zip(node.names, modules):
                if not outside_project(module):
                    if alias.asname is not None:
                        part.project_names[alias.evaluated_alias] = (module, "")  # type: ignore[index]
                    else:
                        part.project_names[module.split(".")[0]] = (module.split(".")[0], "")
        else:
            modules = [dotted(node.module) or ""] if node.module is not None else []
            if type(node.names) is not cst.ImportStar:
                module = "." * len(node.relative) + (modules[0] if modules else "")
                if node.relative or not outside_project(module):
                    for alias in node.names:
                        part.project_names[alias.evaluated_alias or alias.evaluated_name] = (module, alias.evaluated_name)
        if self.walk.guard_depth and any(m == "torch_xla" or m.startswith("torch_xla.") for m in modules):
            part.xla_optional = True

    visit_Import = _import
    visit_ImportFrom = _import

    def _branch(self, node: cst.If | cst.IfExp) -> None:
        if tests_for_xla(node.test):
            self.facts.imports.xla_guarded.add(node)

    visit_If = _branch
    visit_IfExp = _branch


def tests_for_xla(test: cst.BaseExpression) -> bool:
    """``if HAS_XLA:``, ``if is_torch_xla_available():``, ``if args.tpu:``..."""
    return any("xla" in name.lower() or "tpu" in name.lower() for name in names_in(test))


def import_anchor(module: cst.Module) -> cst.CSTNode | None:
    """The statement after which new imports go: the last torch_xla import of the
    leading import block (new torch_xla imports go next to the existing ones), else its
    last torch import, else the block's last import, else the docstring."""
    anchor = torch_anchor = xla_anchor = None
    for index, statement in enumerate(module.body):
        if type(statement) is not cst.SimpleStatementLine:
            break
        small = statement.body
        if index == 0 and len(small) == 1 and type(small[0]) is cst.Expr and isinstance(
            small[0].value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            anchor = statement
            continue
        if not all(type(s) in (cst.Import, cst.ImportFrom) for s in small):
            break
        anchor = statement
        for s in small:
            names = [dotted(a.name) or "" for a in s.names] if type(s) is cst.Import else [dotted(s.module) or ""]
            if any(n == "torch" or n.startswith("torch.") for n in names):
                torch_anchor = statement
            if any(n == "torch_xla" or n.startswith("torch_xla.") for n in names):
                xla_anchor = statement
    return xla_anchor or torch_anchor or anchor
