"""A device string compared with "cuda" in a helper of another module (LibRecommender's
``configs.device_config``: ``if device == "cuda" and torch.cuda.is_available(): return
torch.device("cuda")``), whose callers' defaults (``def __init__(self, device="cuda")``) the port
rewrites to "xla" (XLA101).  In a run on the project the helper's comparison also accepts "xla"
(XLA123), so the model goes to the XLA device, for both targets; the helper converted alone (no
file of the run imports it, and it rewrites no string itself) keeps its comparison, with
XLA105's warning; a second run changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import project_reports

TARGETS = ["2.9", "sagemaker"]

CONFIGS = """\
import torch


def device_config(device):
    if device == "cuda" and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
"""

MODEL = """\
import torch
from configs import device_config


class Model:
    def __init__(self, device="cuda"):
        self.device = device_config(device)
        self.emb = torch.nn.Embedding(10, 4).to(self.device)
"""
FILES = {"configs.py": CONFIGS, "model.py": MODEL}
WIDENED = 'if device in ("cuda", "xla"):'


@pytest.mark.parametrize("target", TARGETS)
def test_the_helper_of_another_module_accepts_the_rewritten_default(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path / "p", FILES, target, ["configs.py", "model.py"])
    found = [(f.line, f.col, f.message) for f in reports["configs.py"].findings if f.rule == "XLA123"]
    assert found == [
        (
            5,
            8,
            '`device == "cuda"` -> `device in ("cuda", "xla")`: the port writes "xla" where the project wrote "cuda" '
            '(XLA101), and `device` may hold it here, so it also accepts "xla"',
        )
    ], reports["configs.py"].findings
    assert f"+    {WIDENED}" in reports["configs.py"].diff
    assert '+    def __init__(self, device="xla"):' in reports["model.py"].diff
    assert not [f for f in reports["configs.py"].findings if f.rule == "XLA105"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_helper_alone_keeps_its_comparison(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path / "p", FILES, target, ["configs.py"])
    assert not [f for f in reports["configs.py"].findings if f.rule == "XLA123"]
    assert WIDENED not in reports["configs.py"].diff
    assert [f for f in reports["configs.py"].findings if f.rule == "XLA105" and f.line == 5]


@pytest.mark.parametrize("target", TARGETS)
def test_a_second_run_changes_nothing(tmp_path: Path, target: str) -> None:
    first = tmp_path / "first"
    reports = project_reports(first, FILES, target, ["configs.py", "model.py"])
    assert all(r.error is None for r in reports.values())
    from codemods.engine.rule import RuleSelection
    from codemods.runner import Job, run

    job = Job("write", target, RuleSelection())
    run([(str(first / name), job) for name in FILES], workers=1)
    again = project_reports(first, {}, target, ["configs.py", "model.py"])
    assert not any(r.changed for r in again.values()), {n: r.diff for n, r in again.items()}
    assert not [f for r in again.values() for f in r.findings if f.rule in ("XLA105", "XLA123")]
