"""`xla-codemod verify` without torch: the scratch copy, the way back to the user's lines,
the judging of recorded runs, the reports and the command line's refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods.cli import main
from codemods.verify import scratch
from codemods.verify.checks import CHECKS, FP32_TOLERANCE, LOW_PRECISION_TOLERANCE, Recorded, loss_match, step_barrier
from codemods.verify.options import VerifyOptions
from codemods.verify.report import RENDERERS
from codemods.verify.verify import CANNOT_RUN, verify
from tests.support.paths import ROOT


def _here(where: object) -> tuple[str, int] | None:
    return (str(where[0]), int(where[1])) if isinstance(where, list) else None


def test_a_line_of_the_converted_copy_goes_back_to_the_original_line() -> None:
    original = "import torch\nmodel = Net().cuda()\nfor x in data:\n    step(x)\n"
    converted = (
        "import torch\nimport torch_xla\nmodel = Net().to(torch_xla.device())\nfor x in data:\n    step(x)\n"
        "    torch_xla.sync()\n"
    )
    line_of = scratch.LineMap(original, converted)
    assert [line_of(n) for n in range(1, 7)] == [1, 2, 2, 3, 4, 4]  # the added lines: the changed line, the last


def test_the_scratch_copy_leaves_out_git_environments_and_caches_and_links_large_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    for name in ("train.py", ".git/HEAD", "env/pyvenv.cfg", "env/lib/x.py", "__pycache__/train.pyc", "data/big.bin"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x" * (64 if name == "data/big.bin" else 1))
    monkeypatch.setattr(scratch, "LARGE_FILE_BYTES", 32)
    scratch.copy_project(project, tmp_path / "copy")
    copied = sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*"))
    assert copied == ["data", "data/big.bin", "train.py"]
    assert (tmp_path / "copy/data/big.bin").is_symlink() and not (tmp_path / "copy/train.py").is_symlink()


def test_the_project_is_the_git_work_tree_else_the_scripts_folder(tmp_path: Path) -> None:
    script = tmp_path / "src" / "train.py"
    script.parent.mkdir()
    script.write_text("")
    assert scratch.project_root(script) == script.parent.resolve()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert scratch.project_root(script) == tmp_path.resolve()


def _steps(*barriers: int, pending: tuple[int, ...] = ()) -> list[dict[str, object]]:
    return [
        {
            "kind": "optimizer_step",
            "index": i,
            "barriers": b,
            "place": ["t.py", 9],
            "pending_graph": pending[i - 1] if pending else 10,
        }
        for i, b in enumerate(barriers, start=1)
    ]


def test_the_step_barrier_is_judged_after_warm_up() -> None:
    assert step_barrier(Recorded(_steps(1, 2, 3, 4, 5)), _here).status == "pass"
    assert step_barrier(Recorded(_steps(1, 2, 3)), _here).status == "skip"
    missing = step_barrier(Recorded(_steps(0, 0, 0, 0, 0, pending=(10, 20, 30, 40, 50))), _here)
    assert (missing.status, missing.path, missing.line) == ("fail", "t.py", 9)
    assert "the pending graph grows from 10 to 50 IR lines" in missing.message


def _losses(values: list[list[float]], dtypes: tuple[str, ...] = ("float32",)) -> Recorded:
    return Recorded([{"kind": "losses", "values": values, "dtypes": list(dtypes), "place": ["t.py", 4]}])


def test_losses_are_compared_with_the_tolerance_of_their_precision() -> None:
    reference = _losses([[1.0], [0.9]])
    near = _losses([[1.0], [0.9 * (1 + FP32_TOLERANCE[0] / 2)]])
    assert loss_match(near, reference, "", _here)[0].status == "pass"
    parted, summary = loss_match(_losses([[1.0], [0.95]]), reference, "", _here)
    assert (parted.status, parted.line, summary["first_mismatch"]) == ("fail", 4, 2)
    assert "the losses part at optimizer step 2: original 0.9, port 0.95" in parted.message
    low = _losses([[1.0], [0.9 * (1 + LOW_PRECISION_TOLERANCE[0] / 2)]], ("bfloat16",))
    checked, summary = loss_match(low, reference, "", _here)
    assert checked.status == "pass" and summary["rtol"] == LOW_PRECISION_TOLERANCE[0]
    skipped, _ = loss_match(near, None, "no reference run (--reference none)", _here)
    assert (skipped.status, skipped.message) == ("skip", "no reference run (--reference none)")


def test_every_format_names_the_checks_and_json_keeps_the_contracts_shape() -> None:
    from codemods.verify.checks import Check
    from codemods.verify.verify import Verification

    checks = [
        Check(
            name,
            "fail" if name == "inputs-on-xla" else "pass",
            "message",
            "t.py" if name == "inputs-on-xla" else None,
            7 if name == "inputs-on-xla" else None,
        )
        for name in CHECKS
    ]
    verification = Verification(checks, {"port": [[1.0]], "reference": [[1.0]]}, 1)
    for render in RENDERERS.values():
        text = render(verification)
        assert all(name in text for name in CHECKS)
    data = json.loads(RENDERERS["json"](verification))
    assert data["verdict"] == "fail" and data["losses"]["port"] == [[1.0]]
    assert data["checks"][2] == {
        "check": "inputs-on-xla",
        "status": "fail",
        "path": "t.py",
        "line": 7,
        "message": "message",
    }
    assert "FAIL  inputs-on-xla            t.py:7: message" in RENDERERS["text"](verification)


def test_a_missing_script_cannot_be_verified(tmp_path: Path) -> None:
    verification = verify(str(tmp_path / "nowhere.py"))
    assert (verification.exit_code, verification.error) == (CANNOT_RUN, f"{tmp_path / 'nowhere.py'}: no such file")


def test_an_interpreter_without_torch_xla_is_a_reason_in_one_line(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch\n")
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text("#!/bin/sh\necho 'no torch here' >&2\nexit 3\n")
    python.chmod(0o755)
    verification = verify(str(script), options=VerifyOptions(python=str(python), reference="none"))
    assert verification.exit_code == CANNOT_RUN
    assert verification.error == f"{python} cannot import torch_xla (no torch here); install it there or pass --python"


def test_original_is_taken_with_converted_only(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["verify", "--original", "a.py", "--", "b.py"])
    assert result.exit_code == 2 and "--original is taken with --converted" in result.output


def test_the_tool_does_not_import_torch() -> None:
    code = "import sys, codemods.cli, codemods.verify.runs; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_cuda_reference_needs_a_gpu(tmp_path: Path) -> None:
    """Without one, the original's own device check would take the CPU: said, not pretended."""
    from codemods.verify.verify import _has_gpu, _reference_copy

    if _has_gpu():
        pytest.skip("this machine has an NVIDIA GPU")
    script = tmp_path / "train.py"
    options = VerifyOptions(reference="cuda")
    assert _reference_copy(script, tmp_path, options, tmp_path / "work") == (
        None,
        "no reference run: --reference cuda, and this machine has no NVIDIA GPU",
    )


def _crashed(message: str) -> Recorded:
    return Recorded(
        [
            {
                "kind": "finished",
                "reason": "crashed",
                "type": "RuntimeError",
                "message": message,
                "frames": [["t.py", 3, "<module>"]],
            }
        ]
    )


def test_a_crash_is_on_cuda_when_torch_says_cuda_was_reached() -> None:
    from codemods.verify.checks import is_cuda_crash

    assert is_cuda_crash(_crashed("Found no NVIDIA driver on your system."))
    assert is_cuda_crash(_crashed("Torch not compiled with CUDA enabled"))
    # A list of device names that happens to hold "cuda" is not a CUDA call.
    assert not is_cuda_crash(
        _crashed(
            "`fused=True` requires all the params to be floating point Tensors of "
            "supported devices: ['mps', 'cuda', 'cpu'] but torch.float32 and xla"
        )
    )
