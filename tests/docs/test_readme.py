"""The README's commands stay true: CI runs the README's test command, the example
command converts a fixture that exists, and the examples of "Use it on a repository",
"Use it as a pre-commit hook" and "Use it in review" do what the README says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from codemods import convert_source
from tests.support.cli import shell
from tests.support.paths import FIXTURES, ROOT
from tests.support.reports import parse_github
from tests.support.repos import git, new_repo, pre_commit, release_tag

README = (ROOT / "README.md").read_text()
COMMANDS = re.findall(r"```sh\n(.+?)\n```", README)


def test_readme_has_the_two_commands() -> None:
    """The example (from a clone) and the test suite's command, each a ```sh block."""
    assert len(COMMANDS) == 2
    example, tests = COMMANDS
    assert "pip install -e ." in example and "xla-codemod convert --diff fixtures/" in example
    assert (ROOT / example.rsplit(" ", 1)[-1]).is_file()
    assert "pip install -e '.[test,xla]'" in tests and tests.endswith("python -m pytest")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert COMMANDS[1] in ci.splitlines()


def section(title: str) -> str:
    """The README's section under ``## title``."""
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.+?)\n```", text, flags=re.S)


def commands(title: str) -> list[str]:
    (block,) = blocks(section(title), "bash")
    return block.splitlines()


CUDA = (FIXTURES / "mnist_flags.py").read_text()
HELPER = "import os\n\n\ndef data_dir():\n    return os.environ.get('DATA', 'data')\n"


@pytest.fixture
def user_repository(tmp_path: Path) -> tuple[Path, set[str], dict[str, bytes]]:
    """A git repository with a dozen scripts (tracked and new training scripts, helpers
    without torch), an ignored scratch folder and a virtual environment nobody ignored;
    returns it, the training scripts git tracks or would track, and every file's bytes."""
    repo = tmp_path / "project"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    training = {f"src/train_{i}.py" for i in range(7)} | {"tools/finetune.py", "new_experiment.py"}
    files = {name: CUDA for name in training}
    files |= {"src/__init__.py": "", "src/paths.py": HELPER, "setup_env.py": HELPER}
    files |= {"scratch/old_train.py": CUDA, "scratch/debug.py": CUDA, ".gitignore": "scratch/\n"}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / "env")], check=True)
    site = next((repo / "env" / "lib").glob("python*")) / "site-packages" / "trainlib"
    site.mkdir(parents=True)
    (site / "loop.py").write_text(CUDA)
    git("add", *[name for name in files if name != "new_experiment.py" and not name.startswith("scratch/")], cwd=repo)
    snapshot = {
        str(p.relative_to(repo)): p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts
    }
    return repo, training, snapshot


def changed_files(repo: Path, before: dict[str, bytes]) -> set[str]:
    return {name for name, data in before.items() if (repo / name).read_bytes() != data}


def test_use_it_on_a_repository(user_repository) -> None:  # type: ignore[no-untyped-def]
    """One command converts exactly the training scripts git tracks or would track."""
    repo, training, before = user_repository
    preview, convert, annotate = commands("Use it on a repository")
    shown = shell(preview, repo)
    assert shown.returncode == 1 and changed_files(repo, before) == set()
    assert set(re.findall(r"^--- a/(\S+)$", shown.stdout, flags=re.M)) == training
    converted = shell(convert, repo)
    assert converted.returncode == 1, converted.stdout + converted.stderr
    assert changed_files(repo, before) == training
    assert f"{len(training) + 3} file(s) seen: {len(training)} changed, 3 unchanged, 0 failed" in converted.stdout
    after_convert = {name: (repo / name).read_bytes() for name in training}
    annotated = shell(annotate, repo)
    assert annotated.returncode == 1, annotated.stdout + annotated.stderr  # the TODO comments changed the files
    todo = re.compile(r"^ *# TODO\(xla-codemod\): (XLA\d+) .*\n", re.M)
    for name in training:
        text = (repo / name).read_text()
        # A comment for each finding left to a person (pin_memory in a dict; the short last batch).
        assert todo.findall(text) == ["XLA502", "XLA714"] and todo.sub("", text) == after_convert[name].decode()
    again = shell(annotate, repo)
    assert again.returncode == 0, again.stdout  # nothing to add, and only a warning and an info are left
    assert changed_files(repo, before) == training
    assert all(len(todo.findall((repo / name).read_text())) == 2 for name in training)


REPOSITORY_URL = "https://github.com/your-org/torch-xla-codemods"


@pytest.mark.xdist_group("pre-commit")
def test_use_it_as_a_pre_commit_hook(tmp_path: Path, hook_repo, pre_commit_home: Path) -> None:  # type: ignore[no-untyped-def]
    """The README's configuration, its `rev:` as written (the release tag), run by the
    real pre-commit against a clone of this project tagged as a release is."""
    (config,) = blocks(section("Use it as a pre-commit hook"), "yaml")
    (entry,) = yaml.safe_load(config)["repos"]
    hooks = entry["hooks"]
    defined = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {hook["id"] for hook in hooks} <= defined
    assert entry["repo"] == REPOSITORY_URL and entry["rev"] == release_tag()
    assert config.count(f"rev: {release_tag()}") == 1
    path, _ = hook_repo
    local = config.replace(f"repo: {REPOSITORY_URL}", f"repo: {path}")
    repo = new_repo(tmp_path / "user", {"train.py": CUDA}, local + "\n")
    blocked = pre_commit(repo, pre_commit_home, "--all-files")
    assert blocked.returncode == 1 and "error: XLA101 [*]" in blocked.stdout, blocked.stdout + blocked.stderr
    assert shell("xla-codemod convert train.py", repo).returncode == 1
    passed = pre_commit(repo, pre_commit_home, "--all-files")
    assert passed.returncode == 0, passed.stdout + passed.stderr


@pytest.mark.xdist_group("pre-commit")
def test_install_from_a_git_url_at_a_revision(tmp_path: Path, hook_repo) -> None:  # type: ignore[no-untyped-def]
    """The README's pip line, as written but for the repository's address: pip builds the
    project from the release tag of a clone (its dependencies are the environment's)."""
    from_git, from_clone = commands("Install")
    assert from_git.startswith(f'pip install "git+{REPOSITORY_URL}@{release_tag()}"')
    assert from_clone.startswith("pip install -e .")
    path, _ = hook_repo
    command = from_git.split("#")[0].strip().replace(REPOSITORY_URL, f"file://{path}")
    target = tmp_path / "installed"
    installed = shell(
        command.replace("pip install", f"{sys.executable} -m pip install -q --no-deps --target {target}", 1), tmp_path
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    version = subprocess.run(
        [sys.executable, "-m", "codemods", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(target)},
    )
    assert version.stdout == f"xla-codemod, version {release_tag()[1:]}\n", version.stdout + version.stderr
    assert (target / "codemods" / "cli.py").is_file()


def test_readme_states_the_suites_time_size_and_quick_subset() -> None:
    tests = section("Tests")
    assert re.search(r"about [\d.]+ GB", tests) and re.search(r"\*\*about \d+ minutes\*\*", tests)
    assert re.search(r"Measured on a two-core machine with `\.ci/run`\s+on a clean clone \(\d{4}-\d\d-\d\d\)", tests)
    assert 'python -m pytest -m "not executed"' in tests


def test_use_it_in_review(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "train.py").write_text(CUDA)
    git("add", "train.py", cwd=repo)
    annotations, comment, patch = commands("Use it in review")
    github = shell(annotations, repo)
    assert github.returncode == 1
    parsed = parse_github(github.stdout)
    assert {c["level"] for c in parsed} == {"error", "warning", "notice"} and all(
        c["file"] == "./train.py" for c in parsed
    )
    assert shell(comment, repo).returncode == 1
    tokens = MarkdownIt().parse((repo / "review.md").read_text())
    assert [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"] == [
        "xla-codemod",
        "`./train.py`",
    ]
    assert shell(patch, repo).returncode == 1
    assert (repo / "train.py").read_text() == CUDA
    git("apply", "xla.patch", cwd=repo)
    assert (repo / "train.py").read_bytes() == convert_source(CUDA.encode()).output
