"""What ``from <module> import *`` binds in the importing file, read from the module's text.

A project module that does ``import torch`` and ``import torch.nn as nn`` hands both names to
every file that star-imports it: that file's ``torch.cuda.is_available()`` is torch's, as if it
imported torch itself.  The names bound are the module's public top-level names (no leading
underscore) or, when it sets ``__all__`` to a list or tuple of strings, those: its imports
(``torch`` -> ``torch``, ``nn`` -> ``torch.nn``), its definitions and assignments, and what its
own star imports of project modules bind in turn.  Statements at module level are read, and those
in their ``if``, ``try`` and ``with`` blocks (``try: import torch_xla``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods.project.sys_path import module_statements


@dataclass(frozen=True)
class StarExports:
    """One module's top-level bindings, as a star import of it sees them (before ``__all__``)."""

    # (local name, qualified name) of each absolute import: ``import torch.nn as nn`` -> (nn, torch.nn).
    imported: tuple[tuple[str, str], ...]
    # Names the module binds itself: definitions, assignments, relative imports.
    own: tuple[str, ...]
    # Modules it star-imports in turn, as written (``.layers``, ``models``).
    stars: tuple[str, ...]
    # ``__all__`` when it is a literal list or tuple of strings (None: not set, or not readable).
    public: tuple[str, ...] | None

    def exported(self, name: str) -> bool:
        return name in self.public if self.public is not None else not name.startswith("_")


def star_exports(data: bytes) -> StarExports | None:
    """The bindings of the module whose text is ``data`` (None: not Python this tool reads)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return None
    imported: dict[str, str] = {}
    own: dict[str, None] = {}
    stars: list[str] = []
    public: tuple[str, ...] | None = None
    for statement in module_statements(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                local = alias.asname or alias.name.split(".")[0]
                imported[local] = alias.name if alias.asname else local
                own.pop(local, None)
        elif isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                if alias.name == "*":
                    stars.append(module)
                elif statement.level:
                    own[alias.asname or alias.name] = None
                else:
                    imported[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own[statement.name] = None
            imported.pop(statement.name, None)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    public = _strings(statement.value)
                elif isinstance(target, ast.Name):
                    own[target.id] = None
                    imported.pop(target.id, None)
    return StarExports(tuple(imported.items()), tuple(own), tuple(stars), public)


def _strings(value: ast.expr | None) -> tuple[str, ...] | None:
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return tuple(names) if len(names) == len(value.elts) else None
