"""`xla-codemod doctor` without torch_xla: reading torch_xla's graph file, comparing graphs,
judging a run, citing static rules, and every way a script cannot run.

tests/data/doctor/slice_loop_index.graphs.txt is a real graph file: steps 2 and 3 of
tests/data/doctor/slice_loop_index.py under the probe on torch_xla 2.9 (CPU), with its
paths shortened to /project (the script's folder), /venv and /tool.  The doctor's runs
on torch_xla are in tests/doctor/test_executed.py.
"""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods import RuleSelection, convert_source
from codemods.cli import main
from codemods.doctor import graphs
from codemods.doctor.diagnose import DoctorOptions, diagnose
from codemods.doctor.findings import Places, judge
from codemods.doctor.observe import observe
from codemods.doctor.probe import UserCode
from codemods.doctor.rules import PREFIX, RUNTIME
from codemods.doctor.static import cross_reference
from codemods.engine.report import Finding
from codemods.rules import RULES
from tests.support.fixtures import output_text
from tests.support.paths import DATA

DOCTOR_DATA = DATA / "doctor"
GRAPH_FILE = (DOCTOR_DATA / "slice_loop_index.graphs.txt").read_text()
SCRIPT_LINES = (DOCTOR_DATA / "slice_loop_index.py").read_text().splitlines()


def line_of(text: str, lines: list[str] = SCRIPT_LINES) -> int:
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def parsed() -> list[graphs.Graph]:
    return [graphs.parse_entry(body) for _, _, body in graphs.entries(GRAPH_FILE)]


def is_user_file(filename: str) -> bool:
    return filename.startswith("/project/")


def user_frame(frames: list[graphs.Frame]) -> graphs.Frame:
    """The innermost frame of the script (every operation of its graph file has one)."""
    frame = graphs.user_frame(frames, is_user_file)
    assert frame is not None, frames
    return frame


def test_an_entry_keeps_the_stack_that_ran_it_innermost_first() -> None:
    step2, step3 = parsed()
    assert graphs.user_frame(step2.stack, is_user_file) == (
        "/project/slice_loop_index.py",
        line_of("torch_xla.sync()"),
        "<module>",
    )
    assert step2.stack[0][2] == "counting_step_marker"  # the probe's barrier, then torch_xla.sync
    assert step2.graph_hash != step3.graph_hash


def test_operations_carry_their_whole_python_stack() -> None:
    addmm = next(op for op in parsed()[1].operations.values() if op.label == "aten__addmm")
    assert addmm.frames[0][0].endswith("torch/nn/modules/linear.py")  # made inside nn.Linear ...
    assert user_frame(addmm.frames)[1] == line_of("model(x)")  # ... called from this line


def test_successive_graphs_differ_where_the_slices_are() -> None:
    step2, step3 = parsed()
    found = sorted(graphs.changes(step2, step3), key=lambda c: user_frame(c.operation.frames))
    assert [user_frame(c.operation.frames)[1] for c in found] == [
        line_of("features[start:start + 4]"),
        line_of("labels[start:start + 4]"),
    ]
    assert {(c.kind, c.operation.label) for c in found} == {("constant", "xla__select")}
    assert [c.difference() for c in found] == ["[4:8, 0:8] -> [8:12, 0:8]", "[4:8, 0:1] -> [8:12, 0:1]"]


def test_a_graph_has_no_changes_against_itself() -> None:
    step2, _ = parsed()
    assert graphs.changes(step2, step2) == []


def _project(tmp_path: Path) -> tuple[Path, str]:
    """The script and its graph file as if the run had happened in ``tmp_path``."""
    script = tmp_path / "slice_loop_index.py"
    shutil.copy(DOCTOR_DATA / "slice_loop_index.py", script)
    return script, GRAPH_FILE.replace("/project/", f"{tmp_path}/")


def _events(graph_file: str, step_compiles: list[int], reason: str = "steps") -> list[dict[str, object]]:
    """Probe events for a run whose steps end where the graph file's entries do."""
    ends = [offset for offset, _, _ in graphs.entries(graph_file)][1:] + [len(graph_file.encode())]

    def metrics(compiles: int) -> dict[str, list[float]]:
        return {"compiles": [compiles, compiles * 1e8], "executions": [compiles, 1e6], "from_device": [0, 0.0]}

    steps = [
        {"kind": "step", "index": i, "graphs_bytes": end, "metrics": metrics(c), "reads": [], "time": float(i)}
        for i, (end, c) in enumerate(zip(ends, step_compiles), start=1)
    ]
    finished: dict[str, object] = {
        "kind": "finished",
        "reason": reason,
        "metrics": metrics(step_compiles[-1]),
        "reads": [],
        "fallback_ops": [],
    }
    return [*steps, finished]


def test_judge_names_the_barrier_and_the_slices_after_warm_up(tmp_path: Path) -> None:
    script, graph_file = _project(tmp_path)
    observation = observe(_events(graph_file, [1, 2]), graph_file)
    assert observation is not None
    verdict = judge(
        observation, Places(script, "slice_loop_index.py"), UserCode(str(script)), warmup=1, limits="--steps 2"
    )
    found = verdict.findings["slice_loop_index.py"]
    assert verdict.exit_code == 1
    assert [(f.rule, f.line) for f in found] == [
        ("XLD100", 1),
        ("XLD102", line_of("features[start:start + 4]")),
        ("XLD102", line_of("labels[start:start + 4]")),
        ("XLD101", line_of("torch_xla.sync()")),
    ]
    assert found[1].col == 5 and "[4:8, 0:8] -> [8:12, 0:8]" in found[1].message
    assert "step barrier: ran 2 different graphs in 2 steps; 1 was compiled after warm-up (step 2)" in found[3].message
    assert "no steady state: 1 graph compiled after warm-up" in found[0].message


def test_judge_needs_a_step_after_warm_up(tmp_path: Path) -> None:
    script, graph_file = _project(tmp_path)
    observation = observe(_events(graph_file, [1, 2], reason="completed"), graph_file)
    assert observation is not None
    verdict = judge(observation, Places(script, "s.py"), UserCode(str(script)), warmup=2, limits="--steps 20")
    assert verdict.exit_code == 1
    assert [(f.rule, f.line) for f in verdict.findings["s.py"]] == [("XLD100", 1), ("XLD105", 1)]
    assert "only 2 step barriers ran a graph (the script ended)" in verdict.findings["s.py"][1].message


def test_a_static_finding_on_the_same_line_is_cited(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\nimport torch_xla\n\nfor step in range(9):\n    torch.save(model.state_dict(), 'last.pt')\n"
    )
    runtime = [
        Finding("XLD100", 1, 1, "summary", False),
        Finding("XLD103", 5, 5, "`.cpu()` reads a device value on the host 2 times per step", False),
    ]
    cited = cross_reference({str(script): runtime}, ("XLA4",))[str(script)]
    assert cited[1].message.endswith("(static rule XLA401 xla-save flags this line too)")
    assert cited[0] == runtime[0]
    assert cross_reference({str(script): runtime}, ("XLA7",))[str(script)] == runtime
    assert cross_reference({str(script): runtime}, ())[str(script)] == runtime


def test_every_doctor_rule_is_a_runtime_rule_with_why_and_example() -> None:
    doctor_rules = [r for r in RULES if r.code.startswith(PREFIX)]
    assert [r.code for r in doctor_rules] == [f"XLD10{i}" for i in range(7)]
    for rule in doctor_rules:
        assert not rule.fixable and rule.why and rule.example_cases()
        assert all(e.filename == RUNTIME and e.after is None for e in rule.example_cases())
    severities = {r.code: r.severity for r in doctor_rules}
    assert severities["XLD100"] == "info" and severities["XLD104"] == "error"
    assert {severities[c] for c in ("XLD101", "XLD102", "XLD103", "XLD105", "XLD106")} == {"warning"}


def test_a_missing_script_cannot_run(tmp_path: Path) -> None:
    diagnosis = diagnose(str(tmp_path / "missing.py"))
    assert diagnosis.exit_code == 2
    assert diagnosis.report.files[0].error == "no such file"


def test_an_interpreter_that_cannot_start(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch_xla\n")
    diagnosis = diagnose(str(script), options=DoctorOptions(python=str(tmp_path / "no-python")))
    assert diagnosis.exit_code == 2
    assert (diagnosis.report.files[0].error or "").startswith(f"cannot start {tmp_path / 'no-python'}")


@pytest.fixture(scope="module")
def python_without_torch_xla(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("bare-venv")
    venv.create(folder, with_pip=False)
    return str(folder / "bin" / "python")


def test_an_interpreter_without_torch_xla_is_named_and_exits_2(tmp_path: Path, python_without_torch_xla: str) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch_xla\n")
    result = CliRunner().invoke(
        main, ["doctor", "--python", python_without_torch_xla, "--format", "json", "--", str(script)]
    )
    assert result.exit_code == 2, result.output
    report = json.loads(result.output)
    error = report["files"][0]["error"]
    assert error.startswith(f"{python_without_torch_xla} cannot import torch_xla (ModuleNotFoundError")
    assert error.endswith("install torch-xla there or pass --python")


def test_the_tool_process_does_not_import_torch(tmp_path: Path, python_without_torch_xla: str) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch_xla\n")
    check = (
        "import sys\n"
        "from codemods.doctor.diagnose import DoctorOptions, diagnose\n"
        f"diagnose({str(script)!r}, options=DoctorOptions(python={python_without_torch_xla!r}))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_xla')))\n"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_doctor_needs_a_script() -> None:
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 2
    assert "Missing argument '[--] SCRIPT [ARGS]...'" in result.output


def test_the_fixed_language_model_is_the_converted_one_with_the_slices_moved() -> None:
    """word_lm_fixed.py (the doctor's steady example) is what `convert` makes of word_lm.py
    with the sliced-data rule off, plus only the fix the doctor asks for (the one XLA711
    would make): the corpus stays on the host, slices move."""
    converted = output_text(
        convert_source((DOCTOR_DATA / "word_lm.py").read_text(), selection=RuleSelection(ignore=("XLA711",)))
    )
    fixed = (DOCTOR_DATA / "word_lm_fixed.py").read_text()
    diff = difflib.unified_diff(converted.splitlines(), fixed.splitlines(), lineterm="", n=0)
    changed = [line for line in diff if line[:1] in "-+" and not line.startswith(("---", "+++"))]
    code = [
        line
        for line in changed
        if '"""' not in line and not line[1:].startswith(("The corpus", "on the", "`xla", "lines:"))
    ]
    assert code == [
        "-    data = data.view(bsz, -1).t().contiguous()",
        "-    return data.to(device)",
        "+    return data.view(bsz, -1).t().contiguous()  # stays on the host: see get_batch",
        "-    data = source[i:i + seq_len]",
        "-    target = source[i + 1:i + 1 + seq_len].view(-1)",
        "+    data = source[i:i + seq_len].to(device)  # slice on the host, then move the slice",
        "+    target = source[i + 1:i + 1 + seq_len].view(-1).to(device)",
    ]
