"""Snapshot tests: each fixture script converted for each target (as the diff a reviewer
reads: ``tests/snapshots/<target>/<fixture>.diff``), and its report.

Update with ``pytest --snapshot-update`` and read every changed snapshot before
committing it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import TARGETS
from codemods.engine.report import FileReport, Report, render_text
from tests.support.fixtures import convert_fixture, fixture_scripts, output_bytes, review_diff
from tests.support.paths import FIXTURES, SNAPSHOTS


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_fixture_snapshot(script: Path, target: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    conversion = convert_fixture(script, target)
    snapshot.snapshot_dir = SNAPSHOTS / target
    stem = str(script.with_suffix(""))
    snapshot.assert_match(
        review_diff(script, (FIXTURES / script).read_bytes(), output_bytes(conversion)), f"{stem}.diff"
    )
    report = Report([FileReport(str(script), conversion.changed, None, conversion.findings, target=target)])
    snapshot.assert_match(render_text(report), f"{stem}.report.txt")


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_fixture_conversion_is_idempotent(script: Path, target: str) -> None:
    once = convert_fixture(script, target)
    twice = convert_fixture(script, target, output_bytes(once))
    assert twice.output == once.output
    assert [f for f in twice.findings if f.fixed] == []
    # What needs a person stays reported on the converted file.
    assert {(f.rule, f.message) for f in twice.findings} <= {(f.rule, f.message) for f in once.findings}


BARRIER = {"2.9": "torch_xla.sync()", "sagemaker": "xm.mark_step()"}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_fixed_findings_point_at_the_new_code(script: Path, target: str) -> None:
    """``X -> Y`` findings of an in-place conversion point where Y now stands, and
    barrier findings at the barrier they added."""
    conversion = convert_fixture(script, target)
    lines = output_bytes(conversion).decode("utf-8").splitlines()
    for finding in conversion.findings:
        if finding.fixed and " -> " in finding.message:
            new = finding.message.split(" -> ", 1)[1].split(": ")[0].split(" (")[0]
        elif finding.fixed and finding.rule in ("XLA301", "XLA303", "XLA304"):
            new = BARRIER[target]
        else:
            continue
        assert lines[finding.line - 1][finding.col - 1 :].startswith(new), (finding, lines[finding.line - 1])
