"""The scratch copies ``xla-codemod verify`` runs: the script's project copied (nothing of
the user's tree is written), the script and the project modules it imports converted with
the library, and the way back from a line of the converted copy to the user's file.

What is copied: the git work tree that holds the script (its root), else the script's
folder; without ``.git``, virtual environments (a folder with ``pyvenv.cfg``, or one of the
names ``convert`` skips: ``.venv``, ``venv``, ``node_modules``, caches, ``build``...).  Files
of LARGE_FILE_BYTES or more (datasets, checkpoints) are linked, not copied: the runs read
them where they are.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from codemods.engine.rule import RuleSelection
from codemods.files import SKIPPED_DIRS
from codemods.project.resolver import imported_files
from codemods.runner import Job, project_of, run

LARGE_FILE_BYTES = 16 * 2**20


def project_root(script: Path) -> Path:
    """The git work tree root that holds ``script``, else its folder."""
    folder = script.resolve().parent
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git
        return folder
    top = done.stdout.strip()
    return Path(top).resolve() if done.returncode == 0 and top else folder


def copy_project(root: Path, into: Path) -> None:
    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set()
        for name in names:
            path = os.path.join(directory, name)
            if name in SKIPPED_DIRS or os.path.islink(path):
                skipped.add(name)
            elif os.path.isdir(path) and os.path.exists(os.path.join(path, "pyvenv.cfg")):
                skipped.add(name)
        return skipped

    def copy_or_link(source: str, target: str) -> None:
        if os.path.getsize(source) >= LARGE_FILE_BYTES:
            os.symlink(os.path.realpath(source), target)
        else:
            shutil.copy2(source, target)

    shutil.copytree(root, into, ignore=ignore, copy_function=copy_or_link)


@dataclass
class Conversion:
    changed: int  # files the conversion changed
    errors: list[str]  # files it could not convert, "path: message"
    findings: int  # findings on the script itself


def convert_copy(script: Path, target: str) -> Conversion:
    """Convert, in the copy, the script and the project files it imports (and those they
    import), as ``xla-codemod convert`` converts them: in one run, each after its imports.
    The rest of the project is left as it is (a repository's other scripts do not run)."""
    job = Job("write", target, RuleSelection(select=("ALL",)))
    files = _imported_closure(script.resolve(), job)
    reports = run([(str(file), job) for file in sorted(files)], 1)
    return Conversion(
        sum(1 for r in reports if r.changed),
        [f"{r.path}: {r.error}" for r in reports if r.error],
        sum(len(r.findings) for r in reports if Path(r.path).resolve() == script.resolve()),
    )


def _imported_closure(script: Path, job: Job) -> set[Path]:
    found, waiting = {script}, [script]
    while waiting:
        file = waiting.pop()
        try:
            data = file.read_bytes()
        except OSError:
            continue
        for imported in imported_files(project_of(file, job), file, data) - found:
            found.add(imported)
            waiting.append(imported)
    return found


class LineMap:
    """From a line of a converted file to the line of the original it came from (for an
    added line: the line it replaces, or the original line before it)."""

    def __init__(self, original: str, converted: str) -> None:
        self._map: dict[int, int] = {}
        before, after = original.splitlines(), converted.splitlines()
        matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            for j in range(j1, j2):
                if tag == "equal":
                    self._map[j + 1] = i1 + (j - j1) + 1
                elif tag == "replace":
                    self._map[j + 1] = min(i1 + (j - j1), i2 - 1) + 1
                else:  # inserted: the original line before
                    self._map[j + 1] = max(i1, 1)

    def __call__(self, line: int) -> int:
        return self._map.get(line, line)


def changed_since_head(root: Path) -> dict[Path, bytes]:
    """The files of a git work tree that differ from HEAD, with their text at HEAD (relative
    paths); empty outside git."""

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)

    try:
        listed = git("diff", "--name-only", "-z", "HEAD", "--", ".")
    except OSError:  # no git
        return {}
    if listed.returncode != 0:
        return {}
    found = {}
    for name in filter(None, listed.stdout.decode("utf-8", "surrogateescape").split("\0")):
        shown = git("show", f"HEAD:{name}")
        if shown.returncode == 0:
            found[Path(name)] = shown.stdout
    return found
