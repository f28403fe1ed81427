"""The pre-commit hooks, run by the real pre-commit against this repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "user"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "ported.py").write_text("import torch\nimport torch_xla\n\ndevice = torch_xla.device()\n")
    (repo / "regressed.py").write_text("import torch\n\ntorch.cuda.synchronize()\n")
    (repo / "README.txt").write_text("torch.cuda.synchronize() in prose is not Python\n")
    git("add", ".", cwd=repo)
    return repo


def try_repo(hook: str, repo: Path, *files: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home")}
    return subprocess.run(
        [PRE_COMMIT, "try-repo", str(ROOT), hook, "--files", *files],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_lint_hook_blocks_a_cuda_regression_and_passes_ported_code(user_repo: Path) -> None:
    blocked = try_repo("xla-codemod-lint", user_repo, "regressed.py", "ported.py", "README.txt")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "regressed.py:3:1: XLA501 [*]" in blocked.stdout
    passed = try_repo("xla-codemod-lint", user_repo, "ported.py")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    skipped = try_repo("xla-codemod-lint", user_repo, "README.txt")
    assert skipped.returncode == 0 and "no files to check" in skipped.stdout.lower()
