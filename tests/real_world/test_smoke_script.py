"""scripts/smoke.py, the real-repository harness: its figures and its exit code."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from codemods.lazy.flow import FlowAnalysis
from tests.support.paths import FIXTURES, ROOT, scripts_importable

# How an internal error names a frame of this test (it must name the tool's own instead).
THIS_FILE = Path(__file__).resolve().relative_to(ROOT)
_SPEC = importlib.util.spec_from_file_location("smoke", ROOT / "scripts" / "smoke.py")
assert _SPEC is not None and _SPEC.loader is not None
smoke = importlib.util.module_from_spec(_SPEC)
sys.modules["smoke"] = smoke
_SPEC.loader.exec_module(smoke)


def _repository(root: Path) -> Path:
    folder = root / "repo"
    (folder / "utils").mkdir(parents=True)
    (folder / "train.py").write_bytes((FIXTURES / "mnist_flags.py").read_bytes())
    (folder / "utils" / "misc.py").write_text("import torch\n\ndef f(x):\n    return f(x) if x else x.cuda()\n")
    (folder / "old.py").write_text("import torch\nprint 'python 2'\n")
    (folder / "README.md").write_text("not code\n")
    return folder


def test_a_clean_folder_passes_with_its_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _repository(tmp_path)
    result = smoke.check_folder(folder, "2.9", timeout=120)
    by_path = {f.path: f for f in result.files}
    assert set(by_path) == {"train.py", "utils/misc.py", "old.py"}
    assert by_path["train.py"].changed and by_path["train.py"].findings > 5
    assert by_path["utils/misc.py"].changed and by_path["utils/misc.py"].error is None
    assert "cannot parse" in (by_path["old.py"].error or "")  # the input's fault, not a failure
    assert result.failures == 0
    assert (folder / "train.py").read_bytes() == (FIXTURES / "mnist_flags.py").read_bytes()  # a scratch copy
    assert smoke.main([str(folder), "--target", "2.9"]) == 0
    assert "0 internal errors, 0 recursion failures, 0 unparsable outputs, 0 not idempotent" in capsys.readouterr().out


def test_an_internal_error_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(self: FlowAnalysis) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(FlowAnalysis, "finish", broken)  # the forked child runs it too
    folder = _repository(tmp_path)
    assert smoke.main([str(folder), "--target", "sagemaker"]) == 1
    out = capsys.readouterr().out
    assert f"repo/train.py: convert: internal error (KeyError: 'a bug', in {THIS_FILE}" not in out
    assert "repo/train.py: convert: internal error (KeyError: 'a bug'" in out
    assert "repo/utils/misc.py: convert: internal error" in out


def test_a_file_that_does_not_terminate_is_reported_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def endless(self: FlowAnalysis) -> None:
        while True:
            time.sleep(0.05)

    monkeypatch.setattr(FlowAnalysis, "finish", endless)
    folder = _repository(tmp_path)
    result = smoke.check_folder(folder, "2.9", timeout=1)
    errors = {f.path: f.error for f in result.files}
    assert "does not terminate" in (errors["train.py"] or "") and "does not terminate" in (
        errors["utils/misc.py"] or ""
    )
    assert "cannot parse" in (errors["old.py"] or "")  # the files after it still ran
    assert len(result.internal) == 2


# --- executed mode: arguments, output reading and the verdict (nothing is run) ---------


def test_execute_arguments_make_a_spec(tmp_path: Path) -> None:
    setup = tmp_path / "fake_data.py"
    setup.write_text("open('data.txt', 'w').write('x')\n")
    args, script_args = smoke.parse(
        [
            "--execute",
            str(tmp_path),
            "train/main.py",
            "--setup",
            str(setup),
            "--replace",
            r"train/main.py::epochs = 90::epochs = 1\n",
            "--env",
            "SEED=1",
            "--env",
            "A=b=c",
            "--torchrun-env",
            "--converted-arg=--accel",
            "--no-compare",
            "dropout",
            "--run-timeout",
            "60",
            "--rtol",
            "0.01",
            "--",
            "--lr",
            "0.1",
            "--epochs",
            "2",
        ]
    )
    spec = smoke.execution_spec(args, script_args)
    assert spec.folder == tmp_path and spec.script == "train/main.py"
    assert spec.args == ["--lr", "0.1", "--epochs", "2"] and spec.converted_args == ["--accel"]
    assert spec.replace == [("train/main.py", "epochs = 90", "epochs = 1\n")]
    assert (
        spec.env["SEED"] == "1" and spec.env["A"] == "b=c" and spec.env["RANK"] == "0" and spec.env["WORLD_SIZE"] == "1"
    )
    assert spec.no_compare == "dropout" and spec.timeout == 60 and spec.rtol == 0.01
    assert "torchrun environment" in spec.name and not spec.torchrun
    launched = smoke.execution_spec(*smoke.parse(["--execute", "f", "s.py", "--torchrun"]))
    assert launched.torchrun and launched.env == {} and launched.name == "s.py (torchrun)"
    assert spec.setup is not None
    spec.setup(tmp_path)
    assert (tmp_path / "data.txt").read_text() == "x"  # run with the script's folder as working directory


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--execute", "f", "s.py", "--replace", "only::two"], "FILE::OLD::NEW"),
        (["--execute", "f", "s.py", "--env", "NOVALUE"], "NAME=VALUE"),
        (["--execute", "f"], "expected 2 arguments"),
        (["folder", "--", "--lr"], "only for --execute"),
        (["folder", "--execute", "f", "s.py"], "folders are not taken"),
        (["--known", "mnist-rnn", "--execute", "f", "s.py"], "not taken together"),
        ([], "give folders"),
    ],
)
def test_execute_argument_mistakes_are_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        smoke.parse(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_known_scripts_name_their_corpus_files() -> None:
    with scripts_importable():
        import smoke_scripts
    specs = smoke_scripts.known("all", Path("/corpus"))
    assert {s.name for s in specs} >= {"pytorch/examples mnist_rnn", "karpathy/build-nanogpt train_gpt2 (torchrun)"}
    assert all(s.setup is not None and str(s.folder).startswith("/corpus/") for s in specs)
    assert all(s.script in s.only for s in specs) and all(r[0] in s.only for s in specs for r in s.replace)
    with pytest.raises(SystemExit, match="no known script 'imagenet'"):
        smoke_scripts.known("imagenet", Path("/corpus"))


_XLA_OUTPUT = """using device: xla
step 0 loss 2.5000
SMOKE_COMPILES 3
step 1 loss: 2.25
SMOKE_COMPILES 5
Test set: Average loss: 1.9, Accuracy 3/10
SMOKE_COMPILES 6
SMOKE_RESULT {"exit": 0, "compiles": 6, "executions": 9, "optimizer_steps": 2, "stepped_devices": ["xla"], "loss_devices": ["xla"]}
"""


def test_a_run_s_output_is_read() -> None:
    run = smoke.parse_run(_XLA_OUTPUT, smoke.DEFAULT_LOSS_REGEX, smoke.RunResult("python train.py"))
    assert run.losses == [2.5, 2.25, 1.9] and run.compiles_at_losses == [3, 5, 6]
    assert (run.exit, run.compiles, run.executions, run.optimizer_steps) == (0, 6, 9, 2)
    assert run.stepped_devices == ["xla"] and run.loss_devices == ["xla"] and "SMOKE" not in run.tail
    failed = smoke.parse_run(
        'step 0 loss 1.0\nTraceback...\nSMOKE_RESULT {"exit": 1, "error": "RuntimeError: no", '
        '"compiles": 0, "executions": 0, "optimizer_steps": 0, "stepped_devices": [], '
        '"loss_devices": ["cpu"]}\n',
        smoke.DEFAULT_LOSS_REGEX,
        smoke.RunResult("x"),
    )
    assert failed.exit == 1 and failed.error == "RuntimeError: no" and failed.losses == [1.0]


def _run(**kwargs: object) -> object:
    values = dict(
        exit=0,
        losses=[2.0, 1.5, 1.2, 1.0, 0.9, 0.8, 0.7, 0.6],
        optimizer_steps=8,
        compiles=4,
        compiles_at_losses=[2, 3, 4, 4, 4, 4, 4, 4],
        stepped_devices=["xla"],
        loss_devices=["xla"],
    )
    values.update(kwargs)
    return smoke.RunResult("python train.py", **values)


def test_the_verdict_on_a_converted_run() -> None:
    spec = smoke.ExecSpec(Path("."), "train.py")
    eager = _run(stepped_devices=["cpu"], loss_devices=["cpu"], compiles=0, compiles_at_losses=[])
    compared, problems = smoke.judge(spec, eager, _run(), left_on_cpu=False)
    assert problems == [] and compared == "first 5 losses within 0.001 relative (largest difference 0.0e+00)"
    cases = {
        "the converted run failed: RuntimeError: x": _run(exit=1, error="RuntimeError: x", losses=[2.0]),
        "the converted run timed out": _run(exit=None, error="timed out after 9 s"),
        "the optimizers stepped parameters on cpu": _run(stepped_devices=["cpu"]),
        "backward() ran on tensors on cpu, xla": _run(loss_devices=["cpu", "xla"]),
        "a new graph at each of the last loss lines": _run(compiles_at_losses=[2, 3, 4, 5, 6, 7, 8, 9]),
        "loss 3 differs: eager 1.2, XLA 1.3": _run(losses=[2.0, 1.5, 1.3, 1.0, 0.9, 0.8, 0.7, 0.6]),
        "the converted run took 4 optimizer steps": _run(optimizer_steps=4),
        "the converted run compiled no XLA graph": _run(compiles=0),
    }
    for message, xla in cases.items():
        assert any(message in p for p in smoke.judge(spec, eager, xla, left_on_cpu=False)[1]), message
    # The original fails (a CUDA assertion): the converted run may fail only the same way.
    cuda = _run(exit=1, error="AssertionError: needs CUDA", losses=[], optimizer_steps=0, stepped_devices=[])
    assert smoke.judge(spec, cuda, _run(exit=1, error="AssertionError: needs CUDA", losses=[]), False)[1] == []
    assert smoke.judge(spec, cuda, _run(), left_on_cpu=False) == ("not compared: the original printed no loss", [])
    assert (
        "the original failed with: AssertionError"
        in smoke.judge(spec, cuda, _run(exit=1, error="ValueError: Invalid reduce op", losses=[]), left_on_cpu=False)[
            1
        ][0]
    )
    # Left on the CPU with XLA005: the converted run is the original's.
    assert smoke.judge(spec, eager, eager, left_on_cpu=True)[1] == []
    assert smoke.judge(spec, eager, eager, left_on_cpu=False)[1] != []
    # Not deterministic: said, and not a problem.
    loose = smoke.ExecSpec(Path("."), "train.py", no_compare="dropout")
    assert smoke.judge(loose, eager, cases["loss 3 differs: eager 1.2, XLA 1.3"], left_on_cpu=False) == (
        "not compared: dropout",
        [],
    )


@pytest.mark.executed
def test_execute_runs_a_fixture_before_and_after_conversion(tmp_path: Path) -> None:
    """One small fixture through the executed mode, as it is used by hand on public scripts:
    eager and converted runs, their losses compared, graphs counted, the devices seen."""
    (tmp_path / "train.py").write_bytes((FIXTURES / "mnist_flags.py").read_bytes())
    spec = smoke.ExecSpec(tmp_path, "train.py", replace=[("train.py", "make_dataset(320)", "make_dataset(256)")])
    result = smoke.execute(spec)
    assert result.problems == [], result
    assert result.eager.exit == 0 and result.xla.exit == 0
    assert result.eager.stepped_devices == ["cpu"] and result.xla.stepped_devices == ["xla"]
    assert result.xla.loss_devices == ["xla"] and result.eager.optimizer_steps == result.xla.optimizer_steps > 3
    assert len(result.xla.losses) == len(result.eager.losses) > 3 and result.compared.startswith("first 5 losses")
    assert 0 < result.xla.compiles == result.xla.compiles_at_losses[-1] and result.eager.compiles == 0
    assert any("XLA201" in f for f in result.findings)
    assert (tmp_path / "train.py").read_bytes() == (FIXTURES / "mnist_flags.py").read_bytes()  # a scratch copy
