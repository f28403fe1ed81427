"""Git work trees and the real pre-commit, for the pre-commit hook and README tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
# What installing this project as a pre-commit hook repository needs.
PROJECT_FILES = ["pyproject.toml", "setup.cfg", "README.md", ".pre-commit-hooks.yaml", "codemods"]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def release_tag() -> str:
    """The tag a release of this version gets (DEVELOPERS.md, "Releasing")."""
    from codemods import __version__

    return f"v{__version__}"


def hook_repository(repo: Path) -> tuple[Path, str]:
    """This project as pre-commit sees a hook repository, made in ``repo``: a commit of the
    working tree (uncommitted changes included, build leftovers not), tagged as its release
    is (``release_tag()``), and the commit's hash."""
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "snapshot", cwd=repo)
    git("tag", release_tag(), cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo).strip()


def new_repo(root: Path, files: dict[str, str], config: str) -> Path:
    """A user's work tree at ``root``: the files and a pre-commit configuration, staged."""
    root.mkdir()
    git("init", "-q", cwd=root)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / ".pre-commit-config.yaml").write_text(config)
    git("add", ".", cwd=root)
    return root


def pre_commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("PRE_COMMIT", "CI")}
    return subprocess.run(
        [PRE_COMMIT, "run", *args],
        cwd=repo,
        env={**environment, "PRE_COMMIT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=900,
    )
