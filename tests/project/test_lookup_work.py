"""A lookup follows re-exports and the bases a method is inherited from, a few hops deep, and a
project's classes share bases: a deep diamond-shaped hierarchy across modules (every class of a
level deriving from every class of the next, imported, or of its own module) is resolved with
work bounded by its classes, not by the paths through them, and asked again costs nothing; the
answers are those found without the kept ones (engine/speed.py's ``full_traversal``). A summary
asked while it is being made (an import cycle) gives no summary then, and that answer is not kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codemods.engine import speed
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.module_summary import Found
from codemods.project.resolver import FileImports, Project

LEVELS = 6  # deeper than the lookup's hops
WIDTH = 3  # classes per level

METHODS = ("fit", "update", "learn")
SCRIPTS = 4  # files of the run that ask the same


def _level(k: int) -> str:
    """Module ``level{k}``: WIDTH classes, each deriving from a class of its own module (the next
    one, if any) and from every class of the next level; the last level defines the methods."""
    lines = ["import torch", "from torch import nn", ""]
    if k + 1 < LEVELS:
        below = ", ".join(f"C{k + 1}_{i}" for i in range(WIDTH))
        lines += [f"from level{k + 1} import {below}", ""]
    for i in reversed(range(WIDTH)):
        if k + 1 == LEVELS:
            lines += [f"class C{k}_{i}(nn.Module):"]
            lines += [f"    def {m}(self, x):\n        return x" for m in METHODS]
        else:
            own = [f"C{k}_{i + 1}"] if i + 1 < WIDTH else []
            lines += [f"class C{k}_{i}({', '.join([*own, below])}):", "    pass"]
        lines.append("")
    return "\n".join(lines)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for k in range(LEVELS):
        (repo / f"level{k}.py").write_text(_level(k))
    for j in range(SCRIPTS):
        (repo / f"train{j}.py").write_text("from level0 import C0_0\n")
    monkeypatch.chdir(repo)
    yield repo


def _answers(repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Found | None], list[tuple[int, int]]]:
    """Every method of every class, asked by every script, twice over; how many lookups and hops each round ran."""
    scripts = [repo / f"train{j}.py" for j in range(SCRIPTS)]
    project = Project(repo, summarise_with("2.9", RuleSelection(), None), in_run=scripts)
    counts = {"lookups": 0, "followed": 0}
    lookup, follow = FileImports._lookup, FileImports._follow

    def counted_lookup(self: FileImports, module: str, name: str) -> Found | None:
        counts["lookups"] += 1
        return lookup(self, module, name)

    def counted_follow(self: FileImports, found: Found, hops: int) -> Found | None:
        counts["followed"] += 1
        return follow(self, found, hops)

    answers: list[Found | None] = []
    rounds = []
    with monkeypatch.context() as patch:
        patch.setattr(FileImports, "_lookup", counted_lookup)
        patch.setattr(FileImports, "_follow", counted_follow)
        for k in range(LEVELS):  # every summary made first: the counts are the lookups' own
            project.summary((repo / f"level{k}.py").resolve())
        for _ in range(2):
            counts["lookups"] = counts["followed"] = 0
            for script in scripts:
                imports = project.imports_of(script)
                for k in range(LEVELS):
                    for i in range(WIDTH):
                        answers += [imports.lookup(f"level{k}", f"C{k}_{i}.{method}") for method in METHODS]
            rounds.append((counts["lookups"], counts["followed"]))
    return answers, rounds


def _shown(answers: list[Found | None]) -> list[tuple[str, str] | None]:
    return [None if a is None else (a.summary.path if a.summary else "", a.name) for a in answers]


def test_diamond_hierarchy_bounded_work(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers, rounds = _answers(project, monkeypatch)
    with speed.full_traversal():
        unkept, unkept_rounds = _answers(project, monkeypatch)
    assert _shown(answers) == _shown(unkept)
    assert ("level5.py", "C5_0.fit") in _shown(answers)
    # Each (module, name, hops) is followed once, whichever script asks, each import looked up
    # once per asking module (the scripts, and the levels for their bases); asked again, nothing runs.
    (lookups, followed), again = rounds
    asked = LEVELS * WIDTH * len(METHODS)
    assert followed <= asked * 5
    assert lookups <= (SCRIPTS + LEVELS) * asked
    assert again == (0, 0)
    # Without the kept answers, every script and every round pays it all again.
    assert unkept_rounds[1] == unkept_rounds[0] and followed * SCRIPTS <= unkept_rounds[0][1]


def test_no_summary_while_made_is_not_kept(project: Path) -> None:
    project_ = Project(project, summarise_with("2.9", RuleSelection(), None), in_run=[project / "train0.py"])
    imports = project_.imports_of(project / "train0.py")
    level0 = (project / "level0.py").resolve()
    project_._reading.add(level0)  # (as while level0.py is being summarised: an import cycle)
    during = imports.lookup("level0", "C0_0.fit")
    project_._reading.discard(level0)
    after = imports.lookup("level0", "C0_0.fit")
    assert during == Found(None, "C0_0.fit")
    assert after is not None and after.summary is not None and after.summary.path == "level2.py"
