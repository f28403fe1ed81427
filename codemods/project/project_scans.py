"""The resolver's scans of a project's files (project/resolver.py): its Python files, its
``setup.py`` files and the extensions they build, the methods of the files that take a training
step, a launcher's lines that name a file, and where a module's file is under a folder."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from codemods.files import SKIPPED_DIRS, FileProblem, read_bytes
from codemods.project.module_summary import ModuleSummary
from codemods.project.roots import resolved
from codemods.project.text_scans import built_extensions, takes_a_training_step

# A method of a class: ``def`` indented (a nested function matches too; its summary names no such method).
METHOD = re.compile(rb"^[ \t]+def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
# A method bound onto a class at run time (``setattr(Box, "post_forward_process", fn)``; training/bound_methods.py).
BOUND_METHOD = re.compile(rb"\bsetattr\(\s*[\w.]+\s*,\s*['\"](\w+)['\"]\s*,")
# How many Python files of a project the scan for methods reads, at most.
MAX_SCANNED = 20000


def python_files(root: Path) -> Iterator[Path]:
    """The project's Python files under ``root`` (the folders a run skips left out), at most MAX_SCANNED."""
    count = 0
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_DIRS and not f.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                count += 1
                if count > MAX_SCANNED:
                    return
                yield resolved(Path(folder) / name)


def setup_files(root: Path) -> Iterator[Path]:
    """The project's ``setup.py`` files under ``root`` (the folders a run skips left out),
    among at most MAX_SCANNED Python files."""
    return (path for path in python_files(root) if path.name == "setup.py")


def names_file(line: str, name: str, path: Path, bases: Sequence[Path]) -> bool:
    """A launcher's line names the file: by a path (``train.py``, ``../src/train.py``) that leads
    to it from the launcher's folder or from the root (where such scripts are run from)."""
    for match in re.finditer(r"[\w./~-]*" + re.escape(name) + r"(?![\w.-])", line):
        given = match.group(0)
        if (given == name or given.endswith("/" + name)) and not given.startswith(("/", "~")):
            if any(resolved(base / given) == path for base in bases):
                return True
    return False


def module_file_under(base: Path, parts: list[str]) -> Path | None:
    """The file of module ``parts`` under ``base`` (``parts.py`` or ``parts/__init__.py``), resolved."""
    if not parts:
        return None
    stem = base.joinpath(*parts)
    for candidate in (stem.with_name(stem.name + ".py"), stem / "__init__.py"):
        try:
            if candidate.is_file():
                return resolved(candidate)
        except OSError:  # unreadable: not a module this run can use
            continue
    return None


def methods_by_name(root: Path, test_file: Callable[[Path], bool]) -> dict[str, tuple[Path, ...]]:
    """The project's files (tests left out) that take a training step or bind a method onto a class
    (a quick textual scan), by the names of the methods they define or bind, among at most MAX_SCANNED files."""
    methods: dict[str, list[Path]] = {}
    for path in python_files(root):
        if test_file(path):
            continue
        try:
            data = read_bytes(str(path))
        except FileProblem:
            continue
        bound = BOUND_METHOD.findall(data) if b"setattr(" in data else []
        if bound or takes_a_training_step(data):
            for method in dict.fromkeys([*METHOD.findall(data), *bound]):
                methods.setdefault(method.decode(), []).append(path)
    return {name: tuple(paths) for name, paths in methods.items()}


def extensions_built(root: Path, display: Callable[[Path], str]) -> tuple[tuple[str, str], ...]:
    """The extension modules the project's ``setup.py`` files build (text_scans.py's
    ``built_extensions``), with the file as ``display`` names it."""
    found: list[tuple[str, str]] = []
    for path in setup_files(root):
        try:
            data = read_bytes(str(path))
        except FileProblem:
            continue
        found.extend((name, display(path)) for name in built_extensions(data))
    return tuple(found)


class _Run(Protocol):
    """What unseen_callers reads of the resolver's Project."""

    @property
    def in_run(self) -> set[Path]: ...

    def summary(self, path: Path) -> ModuleSummary | None: ...


_R = TypeVar("_R", bound=_Run)


def unseen_callers(
    project: _R, target: Path, name: str, imported_files: Callable[[_R, Path, bytes], set[Path]]
) -> tuple[tuple[str, str], ...]:
    """The files of the run the tool does not parse (they name no torch: ``ModuleSummary.unread``)
    that import ``target`` and name ``name``: they may call it with anything, where the tool cannot
    see it (``"*?:"``: ImportContext.index_attributes_handed's entry for a call not seen).
    ``imported_files``: the resolver's (the project files a file imports)."""
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    found: list[tuple[str, str]] = []
    for file in sorted(project.in_run):
        if file == target or (summary := project.summary(file)) is None or not summary.unread:
            continue
        try:
            data = read_bytes(str(file))
        except FileProblem:
            continue
        if word.search(data) and target in imported_files(project, file, data):
            found.append((summary.path, "*?:"))
    return tuple(found)


# What a file started once per XLA device has (read before its summary is asked for).
_LAUNCHES = re.compile(rb"\bspawn\s*\(|\blaunch\s*\(|init_process_group")


def launched_in_run(
    in_run: set[Path], summary: Callable[[Path], ModuleSummary | None], display: Callable[[Path], str], path: Path
) -> str | None:
    """A file of the run other than ``path`` whose processes are started once per XLA device (its
    summary's ``launched``), as findings show it; None where none is known to be."""
    for file in sorted(in_run):
        if file == path:
            continue
        try:
            data = read_bytes(str(file))
        except FileProblem:
            continue
        if _LAUNCHES.search(data) and (found := summary(file)) is not None and found.launched:
            return display(file)
    return None
