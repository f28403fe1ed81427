"""`xla-codemod doctor` on torch_xla 2.9 (CPU, one device): the scripts of tests/data/doctor
run under the probe, and the doctor names the lines that make new graphs.

Each case lists the findings it must make (rule, a piece of the line it names); the
recompilation findings (XLD101, XLD102, XLD106) must be exactly those, and only the clean
script exits 0.  The runs are short (12 steps of tiny models) to keep CI fast.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codemods import RuleSelection, convert_source
from codemods.doctor.diagnose import DoctorOptions, diagnose
from codemods.engine.report import FileReport, Finding
from tests.support.fixtures import output_bytes
from tests.support.paths import DATA

pytestmark = pytest.mark.executed


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripts run in the current folder, as `xla-codemod doctor` runs them: a temporary one."""
    monkeypatch.chdir(tmp_path)


DOCTOR_DATA = DATA / "doctor"
STEPS = 12
RECOMPILATION = ("XLD101", "XLD102", "XLD106")


@dataclass(frozen=True)
class Case:
    script: str
    exit_code: int
    named: tuple[tuple[str, str], ...] = ()  # (rule, text of the line it names)


CASES = [
    Case(
        "slice_loop_index.py",
        1,
        (
            ("XLD101", "torch_xla.sync()"),
            ("XLD102", "features[start:start + 4]"),
            ("XLD102", "labels[start:start + 4]"),
        ),
    ),
    Case("scalar_per_step.py", 1, (("XLD101", "torch_xla.sync()"), ("XLD102", "beta.pow(step)"))),
    Case(
        "dynamic_shape.py",
        1,
        (
            ("XLD101", "torch_xla.sync()"),
            ("XLD102", "prediction[positive]"),
            ("XLD103", "prediction[positive]"),
        ),
    ),
    Case(
        "short_last_batch.py",
        1,
        (
            ("XLD101", "pl.MpDeviceLoader(loader, device)"),
            ("XLD102", "model(x)"),
            ("XLD106", "DataLoader(dataset, batch_size=8, shuffle=True)"),
        ),
    ),
    Case("clean.py", 0),
]


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def findings_of(diagnosis_files: list[FileReport], path: str) -> list[Finding]:
    return next(f.findings for f in diagnosis_files if f.path == path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.script)
def test_the_doctor_names_the_lines(case: Case, tmp_path: Path) -> None:
    script = tmp_path / case.script
    shutil.copy(DOCTOR_DATA / case.script, script)
    diagnosis = diagnose(str(script), options=DoctorOptions(steps=STEPS))
    found = findings_of(diagnosis.report.files, str(script))
    shown = "\n".join(f"{f.line}: {f.rule} {f.message}" for f in found)

    assert diagnosis.exit_code == case.exit_code, shown
    assert found[0].rule == "XLD100" and f"{STEPS} steps (stopped at the step limit" in found[0].message, shown
    expected = {(rule, line_of(script, text)) for rule, text in case.named}
    assert expected <= {(f.rule, f.line) for f in found}, shown
    assert {(f.rule, f.line) for f in found if f.rule in RECOMPILATION} == {
        (rule, line) for rule, line in expected if rule in RECOMPILATION
    }, shown
    if case.exit_code == 0:
        assert "steady state from step" in found[0].message and len(found) == 1, shown


def test_a_crash_names_the_last_line_of_the_script_in_its_traceback(tmp_path: Path) -> None:
    script = tmp_path / "crash.py"
    script.write_text(
        textwrap.dedent("""\
        import argparse
        import torch
        import torch_xla

        parser = argparse.ArgumentParser()
        parser.add_argument("--fail-at", type=int, required=True)
        args = parser.parse_args()
        total = torch.zeros((), device=torch_xla.device())
        for step in range(1, 9):
            total = total + step
            torch_xla.sync()
            if step == args.fail_at:
                raise ValueError(f"bad batch at step {step}")
    """)
    )
    crashed = diagnose(str(script), ["--fail-at", "2"])
    found = findings_of(crashed.report.files, str(script))
    assert crashed.exit_code == 2
    assert [(f.rule, f.line) for f in found] == [("XLD100", 1), ("XLD104", line_of(script, "raise ValueError"))]
    assert found[1].message == "the script crashed after 2 steps: ValueError: bad batch at step 2"

    refused = diagnose(str(script), ["--fail-at", "2", "--bogus"])
    found = findings_of(refused.report.files, str(script))
    assert refused.exit_code == 2
    assert found[1].rule == "XLD104" and found[1].line == line_of(script, "parser.parse_args()")
    assert found[1].message.startswith("the script exited with status 2 after 0 steps: ")
    assert "unrecognized arguments: --bogus" in found[1].message


def test_a_script_without_barriers_is_stopped_by_the_time_limit(tmp_path: Path) -> None:
    script = tmp_path / "forever.py"
    script.write_text(
        textwrap.dedent("""\
        import time
        import torch
        import torch_xla

        total = torch.zeros((), device=torch_xla.device())
        while True:
            total = total + 1
            time.sleep(0.05)
    """)
    )
    diagnosis = diagnose(str(script), options=DoctorOptions(timeout=3))
    found = findings_of(diagnosis.report.files, str(script))
    assert diagnosis.exit_code == 1
    assert [f.rule for f in found] == ["XLD100", "XLD105"]
    assert found[0].message.startswith("0 steps (stopped by the time limit; --steps 20, --timeout 3 s")
    assert "a training loop needs torch_xla.sync(), xm.mark_step() or an MpDeviceLoader" in found[1].message


def test_a_static_rule_on_a_line_the_run_names_is_cited(tmp_path: Path) -> None:
    script = tmp_path / "save_every_step.py"
    shutil.copy(DOCTOR_DATA / "save_every_step.py", script)
    diagnosis = diagnose(str(script), options=DoctorOptions(cross_reference=("XLA4",)))
    found = findings_of(diagnosis.report.files, str(script))
    assert diagnosis.exit_code == 0
    assert [(f.rule, f.line) for f in found] == [("XLD100", 1), ("XLD103", line_of(script, "torch.save("))]
    assert found[1].message.startswith("`.cpu()` reads a device value on the host 2 times per step")
    assert found[1].message.endswith("(static rule XLA401 xla-save flags this line too)")


# The acceptance case: a word-level language model converted by the tool slices a
# corpus kept on the device with the loop's offset; the fix keeps it on the host.
_CLI_WITHOUT_TORCH = """\
import json, sys
from codemods.cli import main
try:
    main()
finally:
    print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "torch_xla"))), file=sys.stderr)
"""


def run_doctor_cli(folder: Path, *args: str) -> tuple[int, dict[str, Any], list[str]]:
    """The command line in its own process: exit code, JSON report, torch modules it imported."""
    command = [sys.executable, "-c", _CLI_WITHOUT_TORCH, "doctor", "--steps", "8", "--format", "json", *args]
    result = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=900)
    imported = json.loads(result.stderr.strip().splitlines()[-1])
    return result.returncode, json.loads(result.stdout), imported


def test_word_lm_slicing_lines_then_a_steady_state_after_the_fix(tmp_path: Path) -> None:
    """Ported without the sliced-data rule (XLA711), the language model recompiles at every
    step on its slicing lines; fixed by hand (word_lm_fixed.py, what XLA711 writes), it
    reaches a steady state; and so does the tool's own conversion, which makes that fix."""
    main_py = tmp_path / "main.py"
    source = (DOCTOR_DATA / "word_lm.py").read_bytes()
    main_py.write_bytes(output_bytes(convert_source(source, selection=RuleSelection(ignore=("XLA711",)))))

    code, report, imported = run_doctor_cli(tmp_path, "--", "main.py")
    findings = {(f["rule"], f["line"]) for f in report["files"][0]["findings"]}
    assert imported == []
    assert code == 1, report
    slicing = {line_of(main_py, "data = source[i:i + seq_len]"), line_of(main_py, "target = source[i + 1:")}
    assert {line for rule, line in findings if rule == "XLD102"} == slicing, report
    assert ("XLD101", line_of(main_py, "torch_xla.sync()")) in findings

    shutil.copy(DOCTOR_DATA / "word_lm_fixed.py", main_py)
    code, report, imported = run_doctor_cli(tmp_path, "main.py")  # no "--": the script's name ends the options
    summary = report["files"][0]["findings"][0]
    assert imported == []
    assert code == 0, report
    assert summary["rule"] == "XLD100" and "steady state from step" in summary["message"]
    assert not {f["rule"] for f in report["files"][0]["findings"]} & set(RECOMPILATION)

    main_py.write_bytes(output_bytes(convert_source(source)))
    code, report, _ = run_doctor_cli(tmp_path, "main.py")
    assert code == 0, report
