"""The project a file belongs to: its root, where its imports lead among the project's
files, and the summaries of those files.

The root is the nearest folder above the file that holds ``.git`` or ``pyproject.toml``.
An import resolves the way Python would find it when the script runs from its own folder
or from the root: ``from util.misc import X`` is ``util/misc.py`` (or
``util/misc/__init__.py``) next to the file or under the root; relative imports follow
the file's package.  Anything that resolves to no file of the project (installed
packages, the standard library) is outside it.

A summary (analysis/summary.py) comes from converting the module in memory, read but
never written; modules converted in the same run are not pending.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path

from codemods.analysis.summary import Found, ModuleSummary
from codemods.files import SKIPPED_DIRS, FileProblem, read_bytes
from codemods.pipeline import ConversionError, convert_source
from codemods.rules import RuleSelection

# How a module is summarised: its bytes, its path and its own import context.
Summarise = Callable[[bytes, "FileImports"], "ModuleSummary | None"]
_MAX_HOPS = 4

def find_root(path: Path) -> Path:
    """The nearest folder at or above ``path``'s folder with .git or pyproject.toml (else its folder)."""
    start = path.parent
    for folder in [start, *start.parents]:
        if (folder / ".git").exists() or (folder / "pyproject.toml").is_file():
            return folder
    return start


class Project:
    """Summaries of the project's modules, by resolved path; computed once each."""

    def __init__(self, root: Path, summarise: Summarise, in_run: Collection[Path] = ()) -> None:
        self.root = root.resolve()
        self.summarise = summarise
        self.in_run = {p.resolve() for p in in_run}
        self._summaries: dict[Path, ModuleSummary | None] = {}
        self._reading: set[Path] = set()
        self._paths: dict[str, Path] = {}

    def imports_of(self, path: Path) -> FileImports:
        return FileImports(self, path.resolve())

    def summary(self, path: Path) -> ModuleSummary | None:
        """The module's summary; None if it cannot be read or converted (or is being
        summarised already: an import cycle)."""
        if path in self._summaries:
            return self._summaries[path]
        if path in self._reading:
            return None
        self._reading.add(path)
        try:
            summary = self.summarise(read_bytes(str(path)), self.imports_of(path))
        except FileProblem:
            summary = None
        finally:
            self._reading.discard(path)
        if summary is not None:
            summary = replace(summary, path=self.display(path), pending=summary.pending and path not in self.in_run)
            self._paths[summary.path] = path
        self._summaries[path] = summary
        return summary

    def resolved(self, shown: str) -> Path | None:
        """The file behind a summary's path."""
        return self._paths.get(shown)

    def display(self, path: Path) -> str:
        """A path as findings show it: relative to the current folder where it can be."""
        try:
            return os.path.relpath(path)
        except ValueError:
            return str(path)

    def contains(self, path: Path) -> bool:
        return path.is_relative_to(self.root) and not any(part in SKIPPED_DIRS for part in path.relative_to(self.root).parts)


class FileImports:
    """Where one file's imports lead (see the module docstring)."""

    def __init__(self, project: Project, path: Path) -> None:
        self.project = project
        self.path = path
        folders = [path.parent, project.root]
        self.folders = list(dict.fromkeys(folders))

    def lookup(self, module: str, name: str, hops: int = 0) -> Found | None:
        """Follows names that a module imports from another (re-exports), a few hops deep."""
        found = self._lookup(module, name)
        if found is None or found.summary is None or hops >= _MAX_HOPS:
            return found
        origin = found.summary.origin_of(found.name) if found.name else None
        if origin is None:
            return found
        file = self.project.resolved(found.summary.path)
        further = FileImports(self.project, file).lookup(*origin, hops=hops + 1) if file is not None else None
        return further or found

    def _lookup(self, module: str, name: str) -> Found | None:
        dots = len(module) - len(module.lstrip("."))
        parts = [p for p in module.lstrip(".").split(".") if p]
        names = [p for p in name.split(".") if p]
        if dots:
            base = self.path.parent
            for _ in range(dots - 1):
                base = base.parent
            bases = [base]
        else:
            bases = self.folders
        for base in bases:
            found = self._find(base, parts, names)
            if found is not None:
                return found
        return None

    def _find(self, base: Path, parts: list[str], names: list[str]) -> Found | None:
        """The deepest file among ``parts + names`` prefixes (a name may be a submodule)."""
        whole = parts + names
        for size in range(len(whole), max(len(parts), 1) - 1, -1):
            file = _module_file(base, whole[:size])
            if file is not None and self.project.contains(file):
                return Found(self.project.summary(file), ".".join(whole[size:]))
        return None


def _module_file(base: Path, parts: list[str]) -> Path | None:
    if not parts:
        return None
    stem = base.joinpath(*parts)
    for candidate in (stem.with_name(stem.name + ".py"), stem / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


def summarise_with(target: str, selection: RuleSelection, max_bytes: int | None) -> Summarise:
    """Summaries made by converting modules in memory, the way the run converts files."""

    def summarise(data: bytes, imports: FileImports) -> ModuleSummary | None:
        try:
            summary = convert_source(
                data, target=target, selection=selection, locate="input", max_bytes=max_bytes, imports=imports
            ).summary
        except ConversionError:
            return None
        if summary is not None and summary == ModuleSummary():
            # Not a training script (skipped unparsed): it may still re-export names.
            summary = replace(summary, imported=_imported_names(data))
        return summary

    return summarise


def _imported_names(data: bytes) -> tuple[tuple[str, str, str], ...]:
    """(local name, module as written, name there) of each ``from ... import`` (Python's own
    parser: this is for files the conversion skipped)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return ()
    return tuple(
        (alias.asname or alias.name, "." * node.level + (node.module or ""), alias.name)
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name != "*"
    )
