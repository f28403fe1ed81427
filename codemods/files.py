"""Files: finding the scripts under the given paths, reading them as bytes, writing
results atomically (temporary file in the same folder, then rename; mode kept)."""

from __future__ import annotations

import fnmatch
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

# Folders never worth walking into.
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
     ".pytest_cache", "node_modules", "build", "dist", "site-packages", ".eggs"}
)


class FileProblem(Exception):
    """A path that cannot be processed, with a message that names it."""


def _excluded(path: str, patterns: tuple[str, ...]) -> bool:
    parts = Path(path).parts
    return any(
        fnmatch.fnmatch(path, p) or any(fnmatch.fnmatch(part, p) for part in parts) for p in patterns
    )


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


def discover(paths: tuple[str, ...], exclude: tuple[str, ...] = ()) -> Iterator[str | FileProblem]:
    """Python files under ``paths``, in a stable order; problems are yielded in place.

    A file named explicitly is taken whatever its suffix; folders contribute their
    ``*.py`` files and Dockerfiles.  Symlinked folders are not followed (no loops)."""
    for path in paths:
        if not os.path.lexists(path):
            yield FileProblem(f"{path}: no such file or directory")
        elif os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if d not in SKIPPED_DIRS
                    and not os.path.islink(os.path.join(root, d))
                    and not _excluded(os.path.join(root, d), exclude)
                )
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if (name.endswith(".py") or is_dockerfile(name)) and not _excluded(full, exclude) and os.path.isfile(full):
                        yield full
        elif not _excluded(path, exclude):
            yield path


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
    directory = os.path.dirname(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        fd, temporary = tempfile.mkstemp(prefix=".xla-codemod-", suffix=".tmp", dir=directory)
    except OSError as error:
        raise FileProblem(f"cannot write: {error.strerror or error}") from None
    try:
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
