"""Whole-project runs where the device is set in one module and used in others: the port
ports the value where it is set, or says where it stays off the XLA device (no silent port)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection

# A config object whose default device is set in a module without torch, and a CPU fallback
# in the module that updates it (the fifth held-out list's config_node_device).
CONFIG_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/config/defaults.py": 'from types import SimpleNamespace\n\nconfig = SimpleNamespace()\nconfig.device = "cuda"\n',
    "pkg/config/__init__.py": """\
import copy

import torch

from .defaults import config as _defaults


def get_default_config():
    return copy.deepcopy(_defaults)


def update_config(config):
    if not torch.cuda.is_available():
        config.device = "cpu"
    return config
""",
    "train.py": """\
import torch

from pkg.config import get_default_config, update_config


def main():
    config = update_config(get_default_config())
    device = torch.device(config.device)
    model = torch.nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x, y = torch.randn(8, 4).to(device), torch.randn(8, 2).to(device)
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
""",
}


def project(tmp_path: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project written out, as the current folder (findings name files relative to it)."""
    repo = tmp_path / "proj"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    monkeypatch.chdir(repo)
    return repo


def convert_project(repo: Path, target: str) -> dict[str, list[Finding]]:
    """Every file converted in place as one run of the command line: findings by path."""
    from codemods.runner import Job, run

    job = Job("write", target, RuleSelection())
    paths = sorted(str(p) for p in repo.rglob("*.py"))
    return {str(Path(r.path).relative_to(repo)): r.findings for r in run([(path, job) for path in paths])}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_cpu_fallback_of_a_config_default_set_elsewhere_stays_and_is_an_error(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project(tmp_path, CONFIG_PROJECT, monkeypatch)
    findings = convert_project(repo, target)
    assert (
        'if not torch.cuda.is_available():\n        config.device = "cpu"'
        in (repo / "pkg/config/__init__.py").read_text()
    )
    errors = [f for f in findings["pkg/config/__init__.py"] if f.severity == "error"]
    assert [(f.rule, f.line) for f in errors] == [("XLA104", 13)]
    assert "guards the CPU fallback of `config.device`" in errors[0].message
    assert 'Set `config.device` to "xla" where its default is set' in errors[0].message

