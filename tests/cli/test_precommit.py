"""The pre-commit hooks, run by the real pre-commit from this project's
.pre-commit-hooks.yaml (a committed snapshot of the working tree, installed once per
test session into pre-commit's own environment: see the fixtures in conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.notebooks import DEVICE_CELL, LOOP_CELL, MODEL_CELL, notebook, sources
from tests.support.paths import FIXTURES, ROOT
from tests.support.repos import git, new_repo, pre_commit

# One worker builds the hook repository and pre-commit's environment for all of them.
pytestmark = pytest.mark.xdist_group("pre-commit")

CUDA_SCRIPT = (FIXTURES / "mnist_flags.py").read_text()
PORTED = "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\n"


def hook_config(hook_repo: tuple[Path, str], hooks: str) -> str:
    path, rev = hook_repo
    return f"repos:\n  - repo: {path}\n    rev: {rev}\n    hooks:\n{hooks}"


LINT = "      - id: xla-codemod-lint\n"
CONVERT = "      - id: xla-codemod-convert\n"


def test_hook_ids_say_what_they_do() -> None:
    """A checking hook and a converting hook, each id naming the command it runs."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {hook["id"]: hook["entry"] for hook in hooks} == {
        "xla-codemod-lint": "xla-codemod lint",
        "xla-codemod-convert": "xla-codemod convert",
    }


def test_lint_blocks_cuda_code_and_passes_once_converted(tmp_path: Path, hook_repo, pre_commit_home: Path) -> None:  # type: ignore[no-untyped-def]
    """The issue's check: the lint hook fails on a script with CUDA-only code and passes
    after `convert` when only warnings and infos remain."""
    repo = new_repo(tmp_path / "user", {"train.py": CUDA_SCRIPT, "ported.py": PORTED}, hook_config(hook_repo, LINT))
    blocked = pre_commit(repo, pre_commit_home, "--all-files")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "train.py:114:18: error: XLA101 [*] would replace" in blocked.stdout
    # Dockerfiles go to the same hook: a model-parallel image without METIS is an error.
    (repo / "image").mkdir()
    (repo / "image" / "Dockerfile").write_bytes(
        (FIXTURES / "containers" / "broken" / "Dockerfile.no-metis").read_bytes()
    )
    git("add", ".", cwd=repo)
    docker = pre_commit(repo, pre_commit_home, "--files", "image/Dockerfile")
    assert docker.returncode == 1 and "image/Dockerfile:3:1: error: SM306" in docker.stdout, (
        docker.stdout + docker.stderr
    )
    git("rm", "-q", "--cached", "image/Dockerfile", cwd=repo)
    (repo / "image" / "Dockerfile").unlink()
    converted = subprocess.run(
        [sys.executable, "-m", "codemods", "convert", "."], cwd=repo, capture_output=True, text=True
    )
    assert converted.returncode == 1, converted.stdout  # files changed
    assert "info: XLA502 `pin_memory=True` has no effect" in converted.stdout  # an info finding is left
    passed = pre_commit(repo, pre_commit_home, "--all-files")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    strict = new_repo(
        tmp_path / "strict",
        {"train.py": (repo / "train.py").read_text()},
        hook_config(hook_repo, LINT + "        args: [--fail-on, info]\n"),
    )
    assert pre_commit(strict, pre_commit_home, "--all-files").returncode == 1


def test_fixing_hook_on_many_files_with_non_python_files_around(  # type: ignore[no-untyped-def]
    tmp_path: Path, hook_repo, pre_commit_home: Path
) -> None:
    files = {f"pkg{i % 3}/train_{i:02}.py": CUDA_SCRIPT for i in range(40)}
    files |= {
        "README.md": "Call torch.cuda.synchronize() before timing.\n",
        "notes.txt": "import torch\ndef f(:\n",
        "data.json": '{"torch": "cuda"}\n',
        "run.sh": "#!/bin/sh\npython -c 'import torch; torch.cuda.synchronize()'\n",
        "bin/train": "#!/usr/bin/env python\nimport torch\ndevice = torch.device('cuda')\n",  # Python by its shebang
        "docker/Dockerfile": "FROM python:3.11\nRUN pip install torch\n",  # checked, never rewritten
    }
    repo = new_repo(tmp_path / "user", files, hook_config(hook_repo, CONVERT))
    (repo / "bin" / "train").chmod(0o755)  # identify reads shebangs of executables only
    git("add", ".", cwd=repo)
    first = pre_commit(repo, pre_commit_home, "--all-files")
    assert first.returncode == 1 and "files were modified by this hook" in first.stdout, first.stdout + first.stderr
    expected = subprocess.run(
        [sys.executable, "-m", "codemods", "convert", "-"], input=CUDA_SCRIPT, capture_output=True, text=True
    ).stdout
    assert all((repo / name).read_text() == expected for name in files if name.endswith(".py"))
    assert "torch_xla.device()" in (repo / "bin" / "train").read_text()
    for name in ("README.md", "notes.txt", "data.json", "run.sh", "docker/Dockerfile"):
        assert (repo / name).read_text() == files[name]
    assert not list(repo.rglob(".xla-codemod-*"))
    git("add", ".", cwd=repo)
    second = pre_commit(repo, pre_commit_home, "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr


def test_hooks_with_zero_files(tmp_path: Path, hook_repo, pre_commit_home: Path) -> None:  # type: ignore[no-untyped-def]
    """pre-commit skips a hook that matches no file; an `always_run` hook gets no file
    names (pass_filenames or not) and passes: pre-commit chose the files, not the
    current folder.  With `args: [.]` the hook checks the folder, and a folder with
    nothing to check fails unless --allow-empty says that is fine."""
    repo = new_repo(
        tmp_path / "user", {"README.md": "torch.cuda.synchronize()\n"}, hook_config(hook_repo, LINT + CONVERT)
    )
    result = pre_commit(repo, pre_commit_home, "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("(no files to check)Skipped") == 2
    for extra in ("        always_run: true\n", "        always_run: true\n        pass_filenames: false\n"):
        forced = new_repo(
            tmp_path / f"forced{len(extra)}",
            {"README.md": "text\n", "train.py": CUDA_SCRIPT},
            hook_config(hook_repo, LINT + extra),
        )
        ran = pre_commit(forced, pre_commit_home, "--files", "README.md")
        assert ran.returncode == 0 and "Passed" in ran.stdout, ran.stdout + ran.stderr
    folder = "        always_run: true\n        pass_filenames: false\n        args: [{}.]\n"
    empty = new_repo(tmp_path / "empty", {"README.md": "text\n"}, hook_config(hook_repo, LINT + folder.format("")))
    failed = pre_commit(empty, pre_commit_home, "--all-files")
    assert failed.returncode == 1 and "xla-codemod: error: nothing to check in ." in failed.stdout, failed.stdout
    allowed = new_repo(
        tmp_path / "allowed", {"README.md": "text\n"}, hook_config(hook_repo, LINT + folder.format("--allow-empty, "))
    )
    passed = pre_commit(allowed, pre_commit_home, "--all-files")
    assert passed.returncode == 0, passed.stdout + passed.stderr


def test_hooks_take_notebooks(tmp_path: Path, hook_repo, pre_commit_home: Path) -> None:  # type: ignore[no-untyped-def]
    """pre-commit passes .ipynb files (identify's `jupyter` type) to both hooks: lint names
    the cell, convert ports the notebook in place, then both pass."""
    files = {"nb/train.ipynb": notebook(DEVICE_CELL, MODEL_CELL, LOOP_CELL)}
    repo = new_repo(tmp_path / "user", files, hook_config(hook_repo, LINT + CONVERT))
    first = pre_commit(repo, pre_commit_home, "--all-files")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "nb/train.ipynb:cell 2:4:10: error: XLA101 [*]" in first.stdout
    assert "files were modified by this hook" in first.stdout
    assert "torch_xla.device()" in sources((repo / "nb" / "train.ipynb").read_text())[1]
    git("add", ".", cwd=repo)
    second = pre_commit(repo, pre_commit_home, "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr
