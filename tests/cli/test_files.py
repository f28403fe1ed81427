"""Finding files: git's view inside a work tree (real git), default excludes outside,
files named explicitly always taken, symlinks never followed out of the tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codemods.files import FileProblem, discover, is_candidate

SCRIPT = "import torch\n\ndevice = torch.device('cuda')\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def found(*paths: str, cwd: Path, exclude: tuple[str, ...] = ()) -> list[str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return [str(item) for item in discover(paths, exclude)]
    finally:
        os.chdir(old)


def write(path: Path, text: str = SCRIPT) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A work tree with tracked, untracked, ignored and excluded files, an unignored
    virtual environment and a symlink that leads out of the tree."""
    global_ignore = tmp_path / "global-gitignore"
    global_ignore.write_text("*.global-ignored.py\n")
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\texcludesFile = {global_ignore}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root / ".gitignore", "scratch/\n*.log\nforced.py\n")
    write(root / "train.py")
    write(root / "src" / "model.py")
    write(root / "src" / "new_untracked.py")
    write(root / "scratch" / "experiment.py")
    write(root / "notes.global-ignored.py")
    write(root / "local_only.py")
    (root / ".git" / "info" / "exclude").write_text("local_only.py\n")
    write(root / "forced.py")  # ignored, but tracked: git tracks it, so it is taken
    write(root / "env" / "lib" / "python3.11" / "site-packages" / "torch_thing" / "core.py")
    write(root / "env" / "pyvenv.cfg", "home = /usr/bin\n")
    write(root / "README.md", "torch.cuda.synchronize()\n")
    outside = tmp_path / "outside.py"
    write(outside)
    os.symlink(outside, root / "link_out.py")
    os.symlink("train.py", root / "link_in.py")
    git(root, "add", ".gitignore", "train.py", "src/model.py", "link_out.py", "link_in.py")
    git(root, "add", "-f", "forced.py")
    return root


def test_inside_git_only_what_git_tracks_or_would_track(repo: Path) -> None:
    assert found(".", cwd=repo) == ["./forced.py", "./src/model.py", "./src/new_untracked.py", "./train.py"]


def test_a_subfolder_is_seen_the_way_git_sees_it(repo: Path) -> None:
    assert found("src", cwd=repo / ".") == ["src/model.py", "src/new_untracked.py"]
    assert found(str(repo / "src"), cwd=repo.parent) == [
        str(repo / "src" / "model.py"),
        str(repo / "src" / "new_untracked.py"),
    ]


def test_files_named_explicitly_are_always_taken(repo: Path) -> None:
    assert found("scratch/experiment.py", "local_only.py", "README.md", cwd=repo) == [
        "scratch/experiment.py",
        "local_only.py",
        "README.md",
    ]


def test_a_folder_git_ignores_is_walked_when_named(repo: Path) -> None:
    assert found("scratch", cwd=repo) == ["scratch/experiment.py"]


def test_exclude_patterns_apply_inside_git(repo: Path) -> None:
    assert found(".", cwd=repo, exclude=("src",)) == ["./forced.py", "./train.py"]


def test_outside_git_the_default_excludes_apply(tmp_path: Path) -> None:
    write(tmp_path / "train.py")
    write(tmp_path / ".venv" / "lib" / "site.py")
    write(tmp_path / "build" / "lib" / "train.py")
    write(tmp_path / "pkg" / "__pycache__" / "x.py")
    write(tmp_path / "pkg" / "data.py")
    write(tmp_path / "pkg" / "notes.txt")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg_link")
    os.symlink(tmp_path / "train.py", tmp_path / "pkg" / "link.py")
    assert found(".", cwd=tmp_path) == ["./train.py", "./pkg/data.py"]


def test_a_file_named_twice_or_through_a_link_is_processed_once(repo: Path) -> None:
    assert found("train.py", "./train.py", "link_in.py", ".", cwd=repo) == [
        "train.py",
        "./forced.py",
        "./src/model.py",
        "./src/new_untracked.py",
    ]


def test_missing_path_is_a_problem_in_place(repo: Path) -> None:
    items = list(discover(["missing.py", str(repo / "train.py")]))
    assert isinstance(items[0], FileProblem) and str(items[0]) == "missing.py: no such file or directory"
    assert items[1] == str(repo / "train.py")


def test_candidates_are_judged_by_name() -> None:
    assert is_candidate("train.py")
    assert not is_candidate("README.md") and not is_candidate("train.pyc") and not is_candidate("py")
