"""Where a run's project starts: the folder of a file's repository (its markers, or the
outermost package that holds it), and the resolved paths the run keeps."""

from __future__ import annotations

import os
from pathlib import Path

from codemods.engine import speed


def resolved(path: Path | str) -> Path:
    """The absolute path with symlinks followed (as it is, when they loop).  Kept for the
    run: the runner and the resolver ask it of the same files many times, and following
    links is a walk over the path's parts in Python."""
    text = os.fspath(path)
    key = text if os.path.isabs(text) else os.path.join(os.getcwd(), text)
    found = _RESOLVED.get(key) if speed.shortcuts() else None
    if found is None:
        try:
            found = Path(key).resolve()
        except (OSError, RuntimeError):
            found = Path(os.path.abspath(key))
        _RESOLVED[key] = found
    return found


_RESOLVED: dict[str, Path] = {}


_ROOT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


def find_root(path: Path, top: Path | None = None, marks: dict[Path, bool] | None = None) -> Path:
    """The nearest folder at or above ``path``'s folder with .git, pyproject.toml, setup.py or
    setup.cfg (a copy of a repository without .git, such as pycls's, still has its setup.py); else
    ``top`` (the folder a run's files share) when ``path`` is under it; else its folder.
    ``marks``: whether each folder looked at has one, kept across calls (a run's folders
    share the folders above them)."""
    start = path.parent
    for folder in [start, *start.parents]:
        marked = marks.get(folder) if marks is not None else None
        if marked is None:
            marked = marks_a_root(folder)
            if marks is not None:
                marks[folder] = marked
        if marked:
            return folder
    return outermost_package(top if top is not None and start.is_relative_to(top) else start)


def outermost_package(folder: Path) -> Path:
    """``folder``, or the outermost package that holds it when it is a package's folder (a
    package's modules import each other by the top-level package's name, ``from domainbed import
    algorithms`` in ``domainbed/scripts/train.py``: the project is at least that package)."""
    try:
        while (
            (folder / "__init__.py").is_file() and folder.parent != folder and (folder.parent / "__init__.py").is_file()
        ):
            folder = folder.parent
    except OSError:  # a folder we may not look into: the project stops below it
        pass
    return folder


def is_package(folder: Path) -> bool:
    try:
        return (folder / "__init__.py").is_file()
    except OSError:
        return False


def marks_a_root(folder: Path) -> bool:
    try:
        return (folder / ".git").exists() or any((folder / marker).is_file() for marker in _ROOT_FILES)
    except OSError:  # a folder we may not look into: keep going up
        return False
