"""Files: finding the scripts under the given paths, reading them as bytes, writing
results atomically (temporary file in the same folder, then rename; mode kept)."""

from __future__ import annotations

import fnmatch
import os
import secrets
import stat
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

# Folders never worth walking into (outside git; inside git, for files git does not track).
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "node_modules",
        "build",
        "dist",
        "site-packages",
        ".eggs",
    }
)


class FileProblem(Exception):
    """A path that cannot be processed, with a message that names it."""


def _excluded(path: str, patterns: tuple[str, ...]) -> bool:
    parts = Path(path).parts
    return any(fnmatch.fnmatch(path, p) or any(fnmatch.fnmatch(part, p) for part in parts) for p in patterns)


def is_dockerfile(path: str) -> bool:
    """``Dockerfile``, ``*.Dockerfile`` or ``Dockerfile.*`` (not ``Dockerfile.dockerignore``,
    BuildKit's per-Dockerfile ignore file, nor a Python file named ``Dockerfile.py``)."""
    name = os.path.basename(path)
    lower = name.lower()
    return (
        lower == "dockerfile"
        or lower.endswith(".dockerfile")
        or (lower.startswith("dockerfile.") and not lower.endswith((".dockerignore", ".py")))
    )


def is_notebook(path: str) -> bool:
    """A Jupyter notebook: ``*.ipynb``."""
    return path.lower().endswith(".ipynb")


def is_candidate(name: str) -> bool:
    """Whether a file met in a folder is one the tool reads, judged by its name alone:
    a Python file, a Jupyter notebook or a Dockerfile.  Every kind of file the tool
    handles is one clause here (a file named on the command line is read whatever its name)."""
    return name.endswith(".py") or is_notebook(name) or is_dockerfile(name)


def discover(paths: Iterable[str], exclude: tuple[str, ...] = ()) -> Iterator[str | FileProblem]:
    """The files to process under ``paths``, in a stable order; problems are yielded in place.

    A file named explicitly is always taken, whatever its name.  A folder contributes
    its candidate files (``is_candidate``): inside a git work tree the ones git tracks
    or would track (``git ls-files --cached --others --exclude-standard``: .gitignore,
    .git/info/exclude and the global excludes honoured), elsewhere every file outside
    the ``SKIPPED_DIRS``.  Symlinks met in a folder are never followed (a link to a file
    of the tree reaches it anyway; one to a file outside would leave the tree).  A file
    named twice, or reached through a link as well, is processed once."""
    seen: set[str] = set()
    for path in paths:
        if not os.path.lexists(path):
            yield FileProblem(f"{path}: no such file or directory")
            continue
        if os.path.isdir(path):
            found: Iterable[str] = (
                f for f in _folder_files(path) if is_candidate(os.path.basename(f)) and not _excluded(f, exclude)
            )
        elif _excluded(path, exclude):
            continue
        else:
            found = [path]
        for file in found:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                yield file


def excluded_files(paths: Iterable[str], exclude: tuple[str, ...]) -> list[str]:
    """The files named in ``paths`` that ``exclude`` skips (left out on purpose: a run
    over them alone has not found nothing to check)."""
    return [path for path in paths if os.path.isfile(path) and _excluded(path, exclude)]


def _folder_files(folder: str) -> Iterator[str]:
    """Regular files (never symlinks) under ``folder``: git's view inside a work tree."""
    listed = _git_files(folder)
    for file in listed if listed is not None else _walk(folder):
        try:
            if stat.S_ISREG(os.lstat(file).st_mode):
                yield file
        except OSError:  # listed by git, but deleted or unreadable meanwhile
            continue


def _git(folder: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(["git", "-C", folder, *args], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):  # no git: as outside a work tree
        return None


def _git_files(folder: str) -> list[str] | None:
    """Files git tracks or would track under ``folder`` (relative names joined to it);
    None outside a work tree, where git cannot read the repository, or for a folder
    git ignores as a whole (named on the command line, it is walked instead).
    Untracked files in ``SKIPPED_DIRS`` (a virtual environment nobody ignored) are left out."""
    tracked = _git(folder, "ls-files", "-z", "--cached")
    untracked = _git(folder, "ls-files", "-z", "--others", "--exclude-standard")
    if tracked is None or untracked is None or tracked.returncode or untracked.returncode:
        return None
    names = _split(tracked.stdout) + [
        name for name in _split(untracked.stdout) if not SKIPPED_DIRS.intersection(name.split("/")[:-1])
    ]
    if not names:
        ignored = _git(folder, "check-ignore", "-q", ".")
        if ignored is not None and ignored.returncode == 0:
            return None
    return [os.path.join(folder, name) for name in sorted(set(names))]


def _split(output: bytes) -> list[str]:
    return [os.fsdecode(name) for name in output.split(b"\0") if name]


def _walk(folder: str) -> Iterator[str]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not os.path.islink(os.path.join(root, d)))
        for name in sorted(files):
            yield os.path.join(root, name)


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise FileProblem(f"cannot read: {error.strerror or error}") from None


def is_read_only(path: str) -> bool:
    """No write permission bit for anyone (root could write it anyway: don't)."""
    try:
        return not os.stat(path).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    except OSError:
        return False


def write_atomically(path: str, data: bytes, expected: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its mode.  Refuses when the
    file changed since it was read (``expected``), so a concurrent edit is not lost.
    A symlink is written through: its target changes, the link stays a link."""
    path = os.path.realpath(path)
    if read_bytes(path) != expected:
        raise FileProblem("changed on disk while being converted; left alone")
    # Named before it is made, so that an interrupt (Ctrl-C, SIGTERM) at any point, even while it is
    # being created, finds the name to remove: a file is left old or new, never a temporary beside it.
    temporary = os.path.join(os.path.dirname(path), f".xla-codemod-{secrets.token_hex(8)}.tmp")
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise FileProblem(f"cannot write: {error.strerror or error}") from None
        raise
