"""Small projects written into a folder, and the unfixed findings a check run gives them, for the
tests that compare a whole-project run with a single-file one."""

from __future__ import annotations

from pathlib import Path

from codemods.engine.report import FileReport
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run


def write_project(folder: Path, name: str, files: dict[str, str]) -> Path:
    """``folder`` holding a project marker named ``name`` and ``files`` (path in the folder ->
    text)."""
    folder.mkdir(exist_ok=True)
    (folder / "pyproject.toml").write_text(f"[project]\nname = '{name}'\n")
    for file_name, text in files.items():
        (folder / file_name).parent.mkdir(parents=True, exist_ok=True)
        (folder / file_name).write_text(text)
    return folder


def project_reports(folder: Path, files: dict[str, str], target: str, names: list[str]) -> dict[str, FileReport]:
    """``files`` written as a project into ``folder``, and a diff run of ``names`` (one run): its
    report of each, by file name."""
    write_project(folder, "proj", files)
    job = Job("diff", target, RuleSelection())
    return {Path(r.path).name: r for r in run([(str(folder / name), job) for name in names], workers=1)}


def unfixed_findings(folder: Path, names: list[str], target: str) -> dict[str, list[tuple[str, int, str]]]:
    """What `xla-codemod check` run on ``names`` (one run) leaves to a person, by file name: the
    rule, line and message of each finding the tool does not fix."""
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {
        Path(report.path).name: [(f.rule, f.line, f.message) for f in report.findings if not f.fixed]
        for report in reports
    }


def script_findings(folder: Path, files: dict[str, str], target: str, rule: str) -> list[tuple[int, str]]:
    """``files`` written as a project into ``folder``, and what a check run of its train.py alone
    leaves to a person of ``rule``: the line and message of each such finding."""
    write_project(folder, "proj", files)
    found = unfixed_findings(folder, ["train.py"], target)["train.py"]
    return [(line, message) for code, line, message in found if code == rule]
