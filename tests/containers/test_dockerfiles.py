"""Dockerfiles (seed 004): snapshots of the fixtures under fixtures/containers/ (checked,
never rewritten), checks across the files of a run (SM308: a launcher's estimator against
the Dockerfile of its image), what lint says on the command line, and bad input.

Update snapshots with ``pytest --snapshot-update`` and read every changed one.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods import convert_source
from codemods.cli import main
from codemods.engine.report import FileReport, Report, render_text
from codemods.engine.rule import RuleSelection
from codemods.files import discover, is_dockerfile
from codemods.runner import Job, run
from tests.support.paths import FIXTURES, SNAPSHOTS
from tests.support.rule_cases import RUN_CASES

DOCKERFILES = sorted(p.relative_to(FIXTURES) for p in (FIXTURES / "containers").rglob("*") if is_dockerfile(p.name))


def lint_run(paths) -> list[FileReport]:  # type: ignore[no-untyped-def]
    """What `xla-codemod lint PATH...` runs, in this process."""
    job = Job("lint", "2.9", RuleSelection())
    return run([(str(path), job) for path in paths])


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=str)
def test_dockerfile_snapshot(dockerfile: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    """Dockerfiles are checked, never rewritten; a broken one gets its one-line error."""
    reports = lint_run([str(FIXTURES / dockerfile)])
    assert reports[0].changed is False
    text = render_text(Report(reports)).replace(str(FIXTURES) + "/", "")
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(text, f"{dockerfile}.report.txt")


def test_entry_point_outside_the_image_is_reported_across_files(snapshot) -> None:  # type: ignore[no-untyped-def]
    folder = FIXTURES / "containers" / "entry_point"
    reports = lint_run(discover((str(folder),)))
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(
        render_text(Report(reports)).replace(str(FIXTURES) + "/", ""), "containers/entry_point.report.txt"
    )


_SM_RUN_CASES = [case for case in RUN_CASES if case[0].startswith("SM")]


@pytest.mark.parametrize(
    "rule,kind,files", _SM_RUN_CASES, ids=[f"{r}-{k}-{i}" for i, (r, k, _) in enumerate(_SM_RUN_CASES)]
)
def test_run_case(rule: str, kind: str, files: dict[str, str], tmp_path: Path) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    reports = lint_run(discover((str(tmp_path),)))
    assert not any(r.error for r in reports), reports
    fired = [f for r in reports for f in r.findings if f.rule == rule]
    assert bool(fired) == (kind != "negative"), fired
    for finding in fired:  # on the Dockerfile, naming the launcher's estimator line
        assert "launch.py:" in finding.message


def test_checks_across_files_follow_the_selection_and_suppressions(tmp_path: Path) -> None:
    folder = FIXTURES / "containers" / "entry_point"
    for name in ("launch.py", "Dockerfile"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    assert CliRunner().invoke(main, ["lint", "--ignore", "SM308", str(tmp_path)]).exit_code == 0
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        dockerfile.read_text().replace("ENV SAGEMAKER", "# xla-codemod: ignore[SM308]\nENV SAGEMAKER")
    )
    assert CliRunner().invoke(main, ["lint", str(tmp_path)]).exit_code == 0


# -- the "done when" -------------------------------------------------------------------


def test_lint_says_what_a_dockerfile_misses_with_the_line(tmp_path: Path) -> None:
    dlc = tmp_path / "dlc" / "Dockerfile"
    dlc.parent.mkdir()
    dlc.write_text(
        "# extends a DLC\nFROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39\n"
        "RUN pip install transformers\n"
    )
    custom = tmp_path / "custom.Dockerfile"
    custom.write_text((FIXTURES / "containers" / "broken" / "Dockerfile.no-sagemaker-training").read_text())
    result = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 1
    assert f"{dlc}:2:1: error: SM302 no `ENV SAGEMAKER_SUBMIT_DIRECTORY`" in result.output
    assert f"{custom}:3:1: error: SM303 a custom image installs the SageMaker training toolkit" in result.output


# -- bad input -----------------------------------------------------------------------------------


def test_a_broken_dockerfile_gets_one_line_with_the_line_and_others_go_on(tmp_path: Path) -> None:
    broken = tmp_path / "Dockerfile"
    broken.write_text("FROM 1.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2\nRUN true\nENV A=1 B\nRUN true\n")
    fine = tmp_path / "ok.Dockerfile"
    fine.write_text("FROM 1.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2\n")
    result = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 2
    assert f'{broken}:3:1: error: cannot parse: Syntax error - can\'t find = in "B"' in result.output
    assert f"{fine}:1:1: error: SM302" in result.output


@pytest.mark.parametrize(
    "data,message",
    [
        (b"FROM x\x00\n", "binary file"),
        (b"FROM 1.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2\nRUN echo \xff\n", ":2:1: error: cannot decode"),
    ],
)
def test_unreadable_dockerfiles(data: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert result.exit_code == 2 and message in result.output, result.output


def test_dockerfiles_of_other_services_are_left_alone() -> None:
    web = 'FROM python:3.11\nRUN pip install flask\nCMD ["flask", "run"]\n'
    conversion = convert_source(web, filename="Dockerfile")
    assert conversion.findings == [] and conversion.output == web
    assert convert_source("FROM x\nENV A=1 B\n", filename="Dockerfile").findings == []  # not even parsed


def test_dockerfiles_are_found_by_name(tmp_path: Path) -> None:
    for name in ("Dockerfile", "gpu.Dockerfile", "Dockerfile.smp", "Dockerfile.dockerignore", "notes.txt", "train.py"):
        (tmp_path / name).write_text("")
    found = []
    for path in discover((str(tmp_path),)):
        assert isinstance(path, str), path  # not a FileProblem
        found.append(Path(path).name)
    found.sort()
    assert found == ["Dockerfile", "Dockerfile.smp", "gpu.Dockerfile", "train.py"]
