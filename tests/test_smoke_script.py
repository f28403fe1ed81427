"""scripts/smoke.py, the real-repository harness: its figures and its exit code."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from codemods.lazy.flow import FlowAnalysis
from tests.conftest import FIXTURES

_SPEC = importlib.util.spec_from_file_location("smoke", Path(__file__).parent.parent / "scripts" / "smoke.py")
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
    assert "repo/train.py: convert: internal error (KeyError: 'a bug', in tests/test_smoke_script.py" not in out
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
    assert "does not terminate" in (errors["train.py"] or "") and "does not terminate" in (errors["utils/misc.py"] or "")
    assert "cannot parse" in (errors["old.py"] or "")  # the files after it still ran
    assert len(result.internal) == 2
