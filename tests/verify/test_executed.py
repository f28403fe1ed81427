"""`xla-codemod verify` on torch_xla 2.9 (CPU, one device): a clean port passes every check
and matches its original; each planted defect of tests/data/verify fails its check at the
line that causes it.

The planted ports run with --converted (no conversion: they are written as ports) and 5
optimizer steps (3 of warm-up, 2 judged), each once for all the tests that read it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from codemods.verify.checks import CHECKS
from codemods.verify.options import VerifyOptions
from codemods.verify.verify import CANNOT_RUN, FAILED, PASSED, Verification, verify
from tests.support.paths import DATA, FIXTURES, ROOT
from tests.support.repos import git

pytestmark = pytest.mark.executed

VERIFY_DATA = DATA / "verify"
STEPS = 5


@dataclass(frozen=True)
class Planted:
    script: str
    check: str
    line_text: str  # the text of the line the failure names
    original: str | None = None  # the reference run's script


PLANTED = [
    Planted("model_on_cpu.py", "model-on-xla", "model = nn.Sequential("),
    Planted("optimizer_before_move.py", "optimizer-params-on-xla", "optimizer = torch.optim.SGD("),
    Planted("inputs_on_cpu.py", "inputs-on-xla", "model(x)"),
    Planted("no_barrier.py", "step-barrier", "optimizer.step()"),
    Planted("recompiles.py", "bounded-graphs", "x = features[step * 4:(step + 1) * 4]"),
    Planted("cuda_in_loop.py", "no-cuda-calls", "torch.cuda.synchronize()"),
    Planted("wrong_scaling_port.py", "loss-match", "(loss / 2).backward()", original="original.py"),
]


def _verified(script: str, original: str | None, folder: str) -> Verification:
    """A script of tests/data/verify run in a folder of its own (outside this git tree, which
    verify would copy whole)."""
    here = Path(folder)
    for name in {script, original} - {None}:
        shutil.copy(VERIFY_DATA / str(name), here / str(name))
    options = VerifyOptions(steps=STEPS, converted=True, original=str(here / original) if original else None)
    return verify(str(here / script), options=options)


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def _shown(verification: Verification) -> str:
    return "\n".join(f"{c.status} {c.check} {c.path}:{c.line} {c.message}" for c in verification.checks) + (
        f"\nerror: {verification.error}" if verification.error else ""
    )


@pytest.mark.parametrize("case", PLANTED, ids=lambda c: c.check)
def test_a_planted_defect_fails_its_check_at_its_line(case: Planted, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp(case.script.removesuffix(".py"))
    verification = _verified(case.script, case.original, str(folder))
    shown = _shown(verification)
    assert verification.exit_code == FAILED, shown
    assert [c.check for c in verification.checks] == list(CHECKS), shown
    failed = next(c for c in verification.checks if c.check == case.check)
    assert failed.status == "fail", shown
    script = folder / case.script
    assert (Path(str(failed.path)).resolve(), failed.line) == (script.resolve(), _line_of(script, case.line_text)), (
        shown
    )
    assert [c.check for c in verification.checks if c.status == "fail"] == [case.check], shown


def test_a_clean_port_passes_every_check_and_follows_its_original(tmp_path: Path) -> None:
    """Through the command line, as JSON (the contract's shape), on a port converted in place
    in a git work tree: the reference is the script as git's HEAD has it."""
    git("init", "-q", cwd=tmp_path)
    shutil.copy(VERIFY_DATA / "original.py", tmp_path / "train.py")
    git("add", "train.py", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "original", cwd=tmp_path)
    shutil.copy(VERIFY_DATA / "clean_port.py", tmp_path / "train.py")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codemods",
            "verify",
            "--steps",
            str(STEPS),
            "--converted",
            "--format",
            "json",
            "--",
            "train.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == PASSED, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "pass"
    assert [(c["check"], c["status"]) for c in report["checks"]] == [(name, "pass") for name in CHECKS]
    assert set(report["checks"][0]) == {"check", "status", "path", "line", "message"}
    losses = report["losses"]
    assert len(losses["port"]) == len(losses["reference"]) == STEPS and losses["first_mismatch"] is None
    assert "verify: running the port on XLA" in done.stderr  # progress, on standard error
    assert (tmp_path / "train.py").read_text() == (VERIFY_DATA / "clean_port.py").read_text()


def test_a_fixture_converted_by_the_tool_passes_against_its_original(tmp_path: Path) -> None:
    """The default mode: the project copied and converted in a scratch folder, the original
    run on the CPU as the reference; nothing of the user's folder is written."""
    script = tmp_path / "mnist_flags.py"
    shutil.copy(FIXTURES / "mnist_flags.py", script)
    before = script.read_bytes()
    verification = verify(str(script), options=VerifyOptions(reference="cpu"))
    shown = _shown(verification)
    assert verification.exit_code == PASSED, shown
    assert all(c.status == "pass" for c in verification.checks), shown
    assert len(verification.losses["port"]) == 10  # type: ignore[arg-type]
    assert script.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["mnist_flags.py"]


def test_a_lightning_port_on_a_cpu_only_torch_xla_cannot_run_and_says_why(tmp_path: Path) -> None:
    """Lightning's XLAAccelerator refuses a torch_xla with only the CPU: exit 2, naming the
    machine (not the port) as the reason."""
    script = tmp_path / "lightning_trainer.py"
    shutil.copy(FIXTURES / "lightning_trainer.py", script)
    verification = verify(str(script), options=VerifyOptions(steps=2, reference="none"))
    assert verification.exit_code == CANNOT_RUN, _shown(verification)
    assert verification.error is not None
    assert "MisconfigurationException" in verification.error
    assert "verify it on a TPU host" in verification.error
