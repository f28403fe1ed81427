"""docs/review.md's GitHub Actions workflow: its `run:` steps, run in a repository with a
CUDA training script, do what the page says (the patch and SARIF steps pass although the
tool exits 1 for them, the patch applies, the lint gate fails on the errors left)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from codemods import convert_source
from tests.support.cli import shell
from tests.support.paths import FIXTURES, ROOT
from tests.support.repos import git

REVIEW = (ROOT / "docs" / "review.md").read_text()
README = (ROOT / "README.md").read_text()
CUDA = (FIXTURES / "mnist_flags.py").read_text()


def workflow() -> dict[str, Any]:
    (block,) = [b for b in re.findall(r"```yaml\n(.+?)\n```", REVIEW, flags=re.S) if "jobs:" in b]
    loaded: dict[str, Any] = yaml.safe_load(block)
    return loaded


def test_the_workflow_installs_as_the_readme_says() -> None:
    (job,) = workflow()["jobs"].values()
    (install,) = [step["run"] for step in job["steps"] if "pip install" in step.get("run", "")]
    assert f"\n{install}" in README.replace("    #", "\n#")  # the README's pip line, without its comment
    uses = [step["uses"].split("@")[0] for step in job["steps"] if "uses" in step]
    assert uses == [
        "actions/checkout",
        "actions/setup-python",
        "actions/upload-artifact",
        "github/codeql-action/upload-sarif",
    ]
    assert job["permissions"]["security-events"] == "write"


def test_the_workflow_steps_gate_on_errors_and_keep_the_patch(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "train.py").write_text(CUDA)
    git("add", "train.py", cwd=repo)
    (job,) = workflow()["jobs"].values()
    steps = {step["name"]: step["run"] for step in job["steps"] if "name" in step}
    patch = shell(steps["Patch"], repo)
    assert patch.returncode == 0, patch.stderr  # exit 1 of --diff: "changes exist"
    assert (repo / "train.py").read_text() == CUDA
    git("apply", "xla.patch", cwd=repo)
    assert (repo / "train.py").read_bytes() == convert_source(CUDA.encode()).output
    git("checkout", "train.py", cwd=repo)
    sarif = shell(steps["SARIF"], repo)
    assert sarif.returncode == 0, sarif.stderr
    results = json.loads((repo / "xla.sarif").read_text())["runs"][0]["results"]
    assert {r["level"] for r in results} == {"error", "warning", "note"}
    lint = shell(steps["Lint"], repo)
    assert lint.returncode == 1 and "::error title=xla-codemod (XLA101)" in lint.stdout
    # A step that cannot process a file still fails: 2 is not "changes exist".
    (repo / "broken.py").write_text("import torch\ndef f(:\n")
    assert shell(steps["Patch"], repo).returncode != 0
