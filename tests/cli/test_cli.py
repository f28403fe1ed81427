"""The command line: exit codes, in-place writes, --check/--diff, stdin, reports, config."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods import __version__
from codemods.cli import main
from codemods.rules import RULES
from tests.support.cli import LOADED_MODULES, invoke

SCRIPT = """\
import torch

device = torch.device("cuda")
for x in batches:
    model(x.to(device)).sum().backward()
    optimizer.step()
torch.backends.cudnn.benchmark = tune()
"""

CONVERTED = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
for x in batches:
    model(x.to(device)).sum().backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
torch.backends.cudnn.benchmark = tune()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "notes.py").write_text("print('no framework here')\n")
    return tmp_path


def test_convert_in_place_rewrites_and_exits_1(project: Path) -> None:
    result = invoke("convert", str(project))
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == CONVERTED
    assert (project / "notes.py").read_text() == "print('no framework here')\n"
    # Findings point into the converted file.
    assert f"{project / 'train.py'}:9:5: error: XLA301 [*] training loop: torch_xla.sync() ends" in result.output
    assert f"{project / 'train.py'}:10:1: info: XLA502 " in result.output
    # Written in place: the summary counts the file changed and the fixes made.
    assert "2 file(s) seen: 1 changed, 1 unchanged, 0 failed" in result.output
    assert "findings: error 3 (3 fixed), info 1 (1 manual)" in result.output


def _identity(path: Path) -> tuple[int, int, bytes]:
    """What a write would change: a replaced file gets a new inode and mtime."""
    status = path.stat()
    return status.st_ino, status.st_mtime_ns, path.read_bytes()


def test_convert_of_converted_code_writes_nothing(project: Path) -> None:
    (project / "train.py").write_text(CONVERTED)
    before = _identity(project / "train.py")
    result = invoke("convert", str(project / "train.py"))
    assert _identity(project / "train.py") == before
    assert "[*]" not in result.output
    # Only an info finding is left: below the default fail-on severity (error).
    assert "XLA502" in result.output and result.exit_code == 0
    assert invoke("convert", "--check", "--fail-on", "info", str(project / "train.py")).exit_code == 1


def test_file_libcst_does_not_reproduce_is_not_written_without_fixes(tmp_path: Path) -> None:
    """LibCST drops the two blank lines of this file; with nothing to fix, it stays as it is."""
    script = tmp_path / "a.py"
    script.write_bytes(b"import torch\r\nx = torch.zeros(1)\r\n\r\n\r\n  # c")
    before = _identity(script)
    result = invoke("convert", str(script))
    assert result.exit_code == 0, result.output
    assert _identity(script) == before
    assert "0 changed" in result.output


def test_file_that_cannot_come_back_exactly_is_left_alone_with_one_line(tmp_path: Path) -> None:
    script = tmp_path / "old_mac.py"
    script.write_bytes(b"import torch\rdevice = torch.device('cuda')\r\r\r  # c")
    before = _identity(script)
    result = invoke("convert", str(script))
    assert result.exit_code == 2
    assert _identity(script) == before
    (error,) = [line for line in result.output.splitlines() if "error" in line and str(script) in line]
    assert error.startswith(f"{script}:3:1: error: LibCST cannot give this file back exactly")


def test_check_and_diff_write_nothing(project: Path) -> None:
    before = (project / "train.py").read_bytes()
    check = invoke("convert", "--check", str(project))
    diff = invoke("convert", "--diff", str(project))
    assert (project / "train.py").read_bytes() == before
    assert check.exit_code == diff.exit_code == 1
    assert "+    torch_xla.sync()" in diff.stdout
    assert diff.stdout.startswith("--- a/")
    # With --diff the report goes to stderr, so stdout is a clean patch.
    assert "XLA301" in diff.stderr and "XLA301" not in diff.stdout
    # Findings point into the unchanged input, and say what the fix would do.
    assert f"{project / 'train.py'}:4:1: error: XLA301 [*] would fix: training loop" in check.output
    assert f"{project / 'train.py'}:6:5: error: XLA201 [*] would replace optimizer.step() with" in check.output
    assert "2 file(s) seen: 1 would change, 1 unchanged, 0 failed" in check.output and " 1 changed" not in check.output


def test_clean_file_exits_0(project: Path) -> None:
    assert invoke("convert", str(project / "notes.py")).exit_code == 0
    assert invoke("lint", str(project / "notes.py")).exit_code == 0


def test_no_path_is_the_current_folder(project: Path) -> None:
    """As ruff does: a folder of CUDA scripts fails lint run there with no PATH."""
    linted = invoke("lint", cwd=project)
    assert linted.exit_code == 1 and "./train.py:3:10: error: XLA101 [*]" in linted.output
    assert (project / "train.py").read_text() == SCRIPT
    assert "2 file(s) checked, 0 failed" in linted.output
    converted = invoke("convert", cwd=project)
    assert converted.exit_code == 1 and (project / "train.py").read_text() == CONVERTED


def test_nothing_to_check_exits_2_with_one_line_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("torch.cuda.synchronize()\n")
    (tmp_path / "empty").mkdir()
    for command in ("lint", "convert"):
        for args, cwd in (((), tmp_path), (("empty",), tmp_path), ((str(tmp_path / "empty"),), None)):
            result = invoke(command, *args, cwd=cwd)
            assert result.exit_code == 2, (command, args)
            (line,) = result.stderr.splitlines()
            assert line.startswith("xla-codemod: error: nothing to check in ") and "--allow-empty" in line
            assert result.stdout == ""
            allowed = invoke(command, "--allow-empty", *args, cwd=cwd)
            assert allowed.exit_code == 0, allowed.output
    # A file named on the command line and excluded on purpose is not "nothing to check".
    (tmp_path / "train.py").write_text(SCRIPT)
    assert invoke("lint", "--exclude", "train.py", "train.py", cwd=tmp_path).exit_code == 0
    # pre-commit may run a hook with no file names at all (always_run): it checks nothing.
    for command in ("lint", "convert"):
        under_pre_commit = invoke(command, cwd=tmp_path, env={"PRE_COMMIT": "1"})
        assert under_pre_commit.exit_code == 0 and under_pre_commit.output == ""
    assert (tmp_path / "train.py").read_text() == SCRIPT


def test_stdin_to_stdout() -> None:
    result = invoke("convert", "-", input=SCRIPT)
    assert result.exit_code == 1
    assert result.stdout == CONVERTED
    assert "-:9:5: error: XLA301 [*] training loop" in result.stderr


def test_lint_reports_without_writing(project: Path) -> None:
    result = invoke("lint", str(project / "train.py"))
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == SCRIPT
    lines = [line for line in result.output.splitlines() if ": XLA" in line]
    # The infos the tool fixes (imports added) are hidden; each line shows its severity.
    assert [line.split()[1:3] for line in lines] == [
        ["error:", "XLA101"],
        ["error:", "XLA301"],
        ["error:", "XLA201"],
        ["info:", "XLA502"],
    ]
    assert 'would replace torch.device("cuda") with torch_xla.device()' in lines[0]
    assert "1 file(s) checked, 0 failed" in result.output and "changed" not in result.output.replace("unchanged", "")
    assert "findings: error 3 (3 fixable), info 1 (1 manual)" in result.output
    assert "2 info(s) hidden: fixable by the tool, nothing to do (--show-info shows them)" in result.output
    shown = invoke("lint", "--show-info", str(project / "train.py")).output
    assert shown.count(": info: XLA001 [*] would add `import torch_xla` for the rewritten code") == 1
    assert "hidden" not in shown
    assert invoke("lint", "--fail-on", "info", str(project / "train.py")).output.count("XLA001") == 3
    (project / "pyproject.toml").write_text("[tool.xla-codemod]\nshow-info = true\n")
    assert invoke("lint", "train.py", cwd=project).output.count(": info: XLA001") == 2


def test_missing_path_exits_2_and_other_files_still_processed(project: Path) -> None:
    result = invoke("convert", str(project / "absent.py"), str(project / "train.py"))
    assert result.exit_code == 2
    assert "absent.py: error: no such file or directory" in result.output
    assert (project / "train.py").read_text() == CONVERTED


def test_syntax_error_is_reported_with_line_and_file_left_alone(project: Path) -> None:
    broken = "import torch\n\ndef f(:\n    pass\n"
    (project / "broken.py").write_text(broken)
    result = invoke("convert", str(project))
    assert result.exit_code == 2
    assert f"{project / 'broken.py'}:3:7: error: cannot parse: invalid syntax" in result.output
    assert (project / "broken.py").read_text() == broken
    assert (project / "train.py").read_text() == CONVERTED


def test_json_and_sarif_reports(project: Path) -> None:
    report = project / "report.json"
    invoke("lint", "--show-info", str(project / "train.py"), "--report", str(report), "--format", "json")
    data = json.loads(report.read_text())
    (entry,) = data["files"]
    assert entry["path"] == str(project / "train.py") and entry["changed"] is False and entry["error"] is None
    # lint: `fixable` on every finding, never `fixed`; messages say what the fix would do.
    assert {"rule": "XLA502", "severity": "info", "line": 7, "col": 1, "fixable": False} == {
        k: v for k, v in entry["findings"][-1].items() if k != "message"
    }
    assert all("fixed" not in finding for finding in entry["findings"])
    step = next(f for f in entry["findings"] if f["rule"] == "XLA201")
    assert (
        step["fixable"] is True
        and step["message"] == "would replace optimizer.step() with xm.optimizer_step(optimizer)"
    )
    summary = data["summary"]
    assert {k: summary[k] for k in ("files", "failed", "findings", "fixable", "manual", "hidden_info")} == {
        "files": 1,
        "failed": 0,
        "findings": 6,
        "fixable": 5,
        "manual": 1,
        "hidden_info": 0,
    }
    assert "changed" not in summary and "fixed" not in summary
    assert summary["by_severity"] == {"error": {"fixable": 3, "manual": 0}, "info": {"fixable": 2, "manual": 1}}
    assert summary["by_rule"]["XLA502"] == {"severity": "info", "fixable": 0, "manual": 1}
    # convert: `fixed` only for what it wrote.
    checked = json.loads(invoke("convert", "--check", "--format", "json", str(project / "train.py")).stdout)
    assert {f["fixed"] for f in checked["files"][0]["findings"]} == {False}
    assert checked["summary"]["would_change"] == 1 and "fixed" not in checked["summary"]
    written = json.loads(invoke("convert", "--format", "json", str(project / "train.py")).stdout)
    step = next(f for f in written["files"][0]["findings"] if f["rule"] == "XLA201")
    assert step["fixed"] is step["fixable"] is True and step["message"].startswith("optimizer.step() -> ")
    assert written["summary"]["changed"] == 1 and written["summary"]["fixed"] == 3
    assert written["summary"]["hidden_info"] == 2  # the imports added

    (project / "train.py").write_text(SCRIPT)
    sarif = json.loads(invoke("lint", str(project / "train.py"), "--format", "sarif").stdout)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0" and run["tool"]["driver"]["version"] == __version__
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {"XLA101", "XLA201", "XLA301", "XLA502"}
    location = run["results"][-1]["locations"][0]["physicalLocation"]
    assert location["region"] == {"startLine": 7, "startColumn": 1}
    # No page of a package index that does not exist.
    assert "informationUri" not in run["tool"]["driver"]


def test_select_and_ignore(project: Path) -> None:
    only_device = invoke("convert", "--diff", "--select", "XLA1", str(project / "train.py"))
    assert "torch_xla.device()" in only_device.stdout and "optimizer_step" not in only_device.stdout
    no_barrier = invoke("convert", "--diff", "--ignore", "XLA301,XLA5", str(project / "train.py"))
    assert "sync" not in no_barrier.stdout and "XLA502" not in no_barrier.stderr
    bad = invoke("lint", "--select", "XLA999", str(project))
    assert bad.exit_code == 2 and "unknown rule code" in bad.output


def test_target_from_pyproject_and_option(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.xla-codemod]\ntarget = "sagemaker"\nexclude = ["notes.py"]\n')
    sagemaker = invoke("convert", "--diff", "train.py", cwd=project)
    assert "xm.xla_device()" in sagemaker.stdout and "xm.mark_step()" in sagemaker.stdout
    explicit = invoke("convert", "--diff", "--target", "2.9", "train.py", cwd=project)
    assert "torch_xla.device()" in explicit.stdout
    (project / "pyproject.toml").write_text("[tool.xla-codemod]\ntargte = 1\n")
    assert invoke("lint", "train.py", cwd=project).exit_code == 2


def test_suppression_comment(project: Path) -> None:
    (project / "train.py").write_text(SCRIPT.replace("tune()", "tune()  # xla-codemod: ignore[XLA502]"))
    result = invoke("lint", "--select", "XLA5", str(project / "train.py"))
    assert result.exit_code == 0, result.output


def test_rules_lists_every_rule() -> None:
    output = invoke("rules").output
    for rule in RULES:
        assert rule.code in output
    assert "XLA201 [*] error   optimizer-step" in output
    assert "XLA105     warning cuda-check" in output


def test_python_dash_m_is_the_same_program(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "codemods", "lint", str(project / "train.py")], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "XLA301 [*]" in result.stdout


def test_file_mode_is_kept(project: Path) -> None:
    script = project / "train.py"
    script.chmod(0o750)
    invoke("convert", str(script))
    assert script.stat().st_mode & 0o777 == 0o750
    assert not [p for p in project.iterdir() if p.name.startswith(".xla-codemod-")]


def test_parallel_run_matches_sequential(tmp_path: Path) -> None:
    for index in range(6):
        (tmp_path / f"train_{index}.py").write_text(SCRIPT)
    result = invoke("convert", "-j", "3", str(tmp_path))
    assert result.exit_code == 1
    assert all((tmp_path / f"train_{i}.py").read_text() == CONVERTED for i in range(6))


WARNING_ONLY = "import torch\n\nif x.is_cuda:\n    pass\n"  # XLA105, a warning


def test_fail_on_sets_the_severity_that_fails(project: Path) -> None:
    (project / "checks.py").write_text(WARNING_ONLY)
    assert invoke("lint", str(project / "checks.py")).exit_code == 0
    assert invoke("lint", "--fail-on", "warning", str(project / "checks.py")).exit_code == 1
    assert (
        invoke("lint", "--fail-on", "error", str(project / "train.py")).exit_code == 1
    )  # fixable errors count for lint
    (project / "pyproject.toml").write_text('[tool.xla-codemod]\nfail-on = "warning"\n')
    assert invoke("lint", "checks.py", cwd=project).exit_code == 1
    assert invoke("lint", "--fail-on", "error", "checks.py", cwd=project).exit_code == 0  # the command line wins
    (project / "pyproject.toml").write_text('[tool.xla-codemod]\nfail-on = "warnings"\n')
    bad = invoke("lint", "checks.py", cwd=project)
    assert bad.exit_code == 2 and "fail-on must be one of: error, warning, info" in bad.output


def test_convert_counts_only_what_it_did_not_fix(project: Path) -> None:
    """Written in place, fixed errors no longer fail the run (the change itself does,
    exit 1, as --check does); a second run is clean unless what is left reaches fail-on."""
    assert invoke("convert", str(project / "train.py")).exit_code == 1
    assert invoke("convert", str(project / "train.py")).exit_code == 0
    assert invoke("convert", "--fail-on", "info", str(project / "train.py")).exit_code == 1
    (project / "crash.py").write_text("import torch\n\nname = torch.cuda.get_device_name(0)\n")  # XLA506, an error
    assert invoke("convert", str(project / "crash.py")).exit_code == 1


def test_overrides_per_path_and_the_command_line_wins(project: Path) -> None:
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(SCRIPT)
    (project / "checks.py").write_text(WARNING_ONLY)
    (project / "pyproject.toml").write_text(
        '[tool.xla-codemod]\nfail-on = "warning"\n\n'
        '[[tool.xla-codemod.overrides]]\npaths = ["legacy"]\ntarget = "sagemaker"\nignore = ["XLA5"]\n\n'
        '[[tool.xla-codemod.overrides]]\npaths = ["check*.py"]\nfail-on = "error"\n'
    )
    diff = invoke("convert", "--diff", ".", cwd=project)
    patches = {p.split("\n", 1)[0]: p for p in diff.stdout.split("--- a/")[1:]}
    assert "xm.mark_step()" in patches["legacy/old.py"] and "torch_xla.sync()" in patches["train.py"]
    assert "legacy/old.py:7:1: info: XLA502" not in diff.stderr and "./train.py:7:1: info: XLA502" in diff.stderr
    assert invoke("lint", "checks.py", cwd=project).exit_code == 0  # its override: only errors fail
    forced = invoke("convert", "--diff", "--target", "2.9", "legacy/old.py", cwd=project)
    assert "torch_xla.sync()" in forced.stdout
    assert invoke("lint", "--fail-on", "warning", "checks.py", cwd=project).exit_code == 1


@pytest.mark.parametrize("command", [["convert", "--check"], ["lint"], ["convert"]])
def test_a_file_without_torch_is_skipped_without_importing_libcst(tmp_path: Path, command: list[str]) -> None:
    plain = tmp_path / "util.py"
    plain.write_text("import os\n\n\ndef here():\n    return os.getcwd()\n")
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    skipped = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES, *command, str(plain)], capture_output=True, text=True, cwd=tmp_path
    )
    assert "exit 0" in skipped.stderr
    # The file the user named is not only counted unchanged: the run says why it was not parsed.
    assert "util.py was not parsed: it names none of torch, sagemaker" in skipped.stderr
    assert "libcst" not in skipped.stdout.split()
    assert "codemods.cli" in skipped.stdout.split()
    converted = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES, *command, str(script)], capture_output=True, text=True, cwd=tmp_path
    )
    assert "exit 1" in converted.stderr  # the probe sees LibCST when a file needs it
    assert "libcst" in converted.stdout.split()
    assert "was not parsed" not in converted.stderr


def test_a_run_large_enough_for_workers_loads_libcst_only_if_a_file_needs_it(tmp_path: Path) -> None:
    folder = tmp_path / "utils"
    folder.mkdir()
    for index in range(20):  # enough files for a process pool (runner.workers_for)
        (folder / f"util_{index}.py").write_text(f"import os\n\nVALUE = {index}\n")
    environment = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT"}
    command = [sys.executable, "-c", LOADED_MODULES, "convert", "--check", "-j", "2", str(folder)]
    skipped = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=environment)
    assert "exit 0" in skipped.stderr
    assert "libcst" not in skipped.stdout.split()
    (folder / "train.py").write_text(SCRIPT)
    converted = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=environment)
    assert "exit 1" in converted.stderr
    assert "libcst" in converted.stdout.split()  # loaded before the workers fork, for them to share


def test_a_training_script_loads_only_what_converting_it_needs(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    loaded = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES, "convert", "--check", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.split()
    assert "codemods.lazy.flow" in loaded  # the probe sees what converting loads
    for module in (
        "codemods.doctor.launch",
        "codemods.launcher.analysis",
        "codemods.launcher.facts",
        "codemods.launcher.rewrite",
        "codemods.launcher.rules.job",
        "codemods.containers.check",
        "codemods.containers.estimators",
        "codemods.containers.across_files",
        "concurrent.futures.process",
    ):
        assert module not in loaded, module


def test_a_run_gives_the_garbage_collector_back_as_it_found_it(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(SCRIPT)
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    result = invoke("convert", "--check", "-j", "1", str(tmp_path))
    assert result.exit_code == 1  # both would change: the run converted them
    assert (gc.get_threshold(), gc.get_freeze_count()) == (threshold, frozen)


def test_help_shows_each_commands_whole_summary() -> None:
    """click cuts a command's summary at the terminal's width unless it is its short_help;
    at 80 columns each summary is there in full (wrapped, never "...")."""
    output = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    flowing = " ".join(output.split())
    for name, command in main.commands.items():
        assert command.short_help and f"{name} {command.short_help}" in flowing, name


SPAWNED = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def train(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = torch.nn.Linear(2, 2).to(rank)


if __name__ == "__main__":
    mp.spawn(train, args=(8,), nprocs=8, join=True)
"""


@pytest.mark.parametrize(
    ("target", "how"),
    [
        ("2.9", "`python SCRIPT`: torch_xla.launch in the script starts one process per XLA device"),
        ("sagemaker", '`distribution={"pytorchxla": {"enabled": True}}` (its runtime calls `_mp_fn(index)`'),
    ],
)
def test_a_conversion_that_changes_how_scripts_start_says_how_once(tmp_path: Path, target: str, how: str) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(SPAWNED)
    (tmp_path / "one_device.py").write_text(SCRIPT)
    result = invoke("convert", "--diff", "--target", target, ".", cwd=tmp_path)
    starts = [line for line in result.stderr.splitlines() if line.startswith("to start")]
    assert len(starts) == 1 and starts[0].startswith("to start ./a.py, ./b.py: ") and how in starts[0], result.stderr
    single = invoke("convert", "--target", target, "a.py", cwd=tmp_path)
    assert "`python a.py`" in single.output or "(its runtime calls `_mp_fn(index)`" in single.output
    assert "to start" not in invoke("lint", "--target", target, "b.py", cwd=tmp_path).output  # lint converts nothing
    json_start = json.loads(invoke("convert", "--check", "--format", "json", "b.py", cwd=tmp_path).stdout)["summary"][
        "start"
    ]
    assert [entry["files"] for entry in json_start] == [["b.py"]]
    assert "to start" not in invoke("convert", "--diff", "one_device.py", cwd=tmp_path).output


# A library module whose function spawns the workers (detectron2's engine/launch.py, held-out list 19):
# running it starts nothing, so the hint does not name it; a module-level call of that function does.
LIBRARY_LAUNCHER = SPAWNED.replace(
    'if __name__ == "__main__":\n    mp.spawn(train, args=(8,), nprocs=8, join=True)\n',
    "def launch(world_size):\n    mp.spawn(train, args=(world_size,), nprocs=world_size, join=True)\n",
)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_start_hint_names_only_files_that_start_something(tmp_path: Path, target: str) -> None:
    (tmp_path / "library.py").write_text(LIBRARY_LAUNCHER)
    (tmp_path / "script.py").write_text(f"{LIBRARY_LAUNCHER}\nlaunch(8)\n")
    result = invoke("convert", "--diff", "--target", target, ".", cwd=tmp_path)
    assert "XLA603" in result.output + result.stderr and "library.py:" in result.output + result.stderr
    starts = [line for line in result.stderr.splitlines() if line.startswith("to start")]
    assert len(starts) == 1 and starts[0].startswith("to start ./script.py: "), result.stderr
