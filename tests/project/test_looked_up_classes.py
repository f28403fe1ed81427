"""An instance of a class looked up by its name in another module (``algorithm_class =
algorithms.get_algorithm_class(name)`` with ``return globals()[name]``, or ``getattr(algorithms,
name)``), moved after it is built: the classes of that module that build their optimizer over
their own parameters in ``__init__`` (or run a base's that does) leave it stale (XLA203 at the
move, naming them), in a whole run and when the script is converted alone. Classes that build
it lazily, after moving themselves, or take it from outside give nothing. And a package inside
an unmarked package (``pkg/scripts/train.py`` doing ``from pkg import algorithms``) finds its
modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings

ALGORITHMS = """import torch
from torch import nn


def get_algorithm_class(name):
    if name not in globals():
        raise NotImplementedError(name)
    return globals()[name]


class Algorithm(nn.Module):
    def update(self, x):
        raise NotImplementedError


class ERM(Algorithm):
    def __init__(self, hparams):
        super().__init__()
        self.network = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=hparams["lr"])

    def update(self, x):
        loss = self.network(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class IGA(ERM):
    pass


class IRM(ERM):
    def __init__(self, hparams):
        super().__init__(hparams)
        self.register_buffer("update_count", torch.tensor([0]))
"""

SAFE_ALGORITHMS = """import torch
from torch import nn


def get_algorithm_class(name):
    return globals()[name]


class Lazy(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.network = nn.Linear(4, 2)
        self.optimizer = None

    def update(self, x):
        if self.optimizer is None:
            self.optimizer = torch.optim.Adam(self.network.parameters())
        self.optimizer.zero_grad()
        self.network(x).sum().backward()
        self.optimizer.step()


class MovedFirst(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.network = nn.Linear(4, 2)
        self.to(hparams["device"])
        self.optimizer = torch.optim.Adam(self.network.parameters())

    def update(self, x):
        self.optimizer.zero_grad()
        self.network(x).sum().backward()
        self.optimizer.step()


class Handed(nn.Module):
    def __init__(self, network, optimizer):
        super().__init__()
        self.network = network
        self.optimizer = optimizer

    def update(self, x):
        self.optimizer.zero_grad()
        self.network(x).sum().backward()
        self.optimizer.step()
"""

TRAIN = """import argparse

import torch

from {package} import algorithms

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--algorithm", default="ERM")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    {lookup}
    algorithm = algorithm_class({{"lr": 1e-3, "device": device}})
    algorithm.to(device)
    for step in range(10):
        algorithm.update(torch.randn(8, 4).to(device))
"""

BY_FUNCTION = "algorithm_class = algorithms.get_algorithm_class(args.algorithm)"
BY_GETATTR = "algorithm_class = getattr(algorithms, args.algorithm)"


def _write(root: Path, files: dict[str, str], marked: bool = True) -> None:
    if marked:
        (root / "pyproject.toml").write_text("[project]\nname = 'lookups'\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _stranded(found: dict[str, list[tuple[str, int, str]]], name: str) -> list[tuple[int, str]]:
    return [(line, message) for rule, line, message in found[name] if rule == "XLA203"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("lookup", [BY_FUNCTION, BY_GETATTR])
@pytest.mark.parametrize("alone", [False, True])
def test_a_class_looked_up_by_name_whose_init_builds_the_optimizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, lookup: str, alone: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {
        "pkg/__init__.py": "",
        "pkg/algorithms.py": ALGORITHMS,
        "train.py": TRAIN.format(package="pkg", lookup=lookup),
    }
    _write(tmp_path, files)
    found = unfixed_findings(tmp_path, ["train.py"] if alone else list(files), target)
    stranded = _stranded(found, "train.py")
    assert [line for line, _ in stranded] == [14], found["train.py"]
    assert stranded[0][1].startswith(
        "`algorithm.to(device)` moves `algorithm` to the XLA device after the `__init__` of `ERM`, `IGA` or "
        "`IRM` (pkg/algorithms.py), classes that `algorithm_class` may be (looked up by name), built "
        "`self.optimizer` over the instance's own parameters"
    ), stranded
    assert alone or not _stranded(found, "algorithms.py")


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_classes_that_build_lazily_after_moving_or_take_the_optimizer_strand_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {
        "pkg/__init__.py": "",
        "pkg/algorithms.py": SAFE_ALGORITHMS,
        "train.py": TRAIN.format(package="pkg", lookup=BY_FUNCTION),
    }
    _write(tmp_path, files)
    found = unfixed_findings(tmp_path, list(files), target)
    assert not [f for name in found for f in found[name] if f[0] == "XLA203"], found


@pytest.mark.parametrize("alone", [False, True])
def test_the_scripts_of_an_unmarked_package_find_its_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alone: bool
) -> None:
    """No .git nor pyproject.toml, and every file under the package: ``pkg/scripts/train.py``
    imports ``from pkg import algorithms``, as it runs with ``python -m pkg.scripts.train``."""
    repository = tmp_path / "repository"
    repository.mkdir()
    monkeypatch.chdir(repository)
    files = {
        "pkg/__init__.py": "",
        "pkg/algorithms.py": ALGORITHMS,
        "pkg/scripts/__init__.py": "",
        "pkg/scripts/train.py": TRAIN.format(package="pkg", lookup=BY_FUNCTION),
    }
    _write(repository, files, marked=False)
    found = unfixed_findings(repository, ["pkg/scripts/train.py"] if alone else list(files), "2.9")
    assert [line for line, _ in _stranded(found, "train.py")] == [14], found["train.py"]
