"""A single-file run of a script that reaches its project's training through a function that looks
its class up in a dict it builds there (``klass = {"compression": CompressionSolver}[cfg.solver]``,
then ``klass(cfg)``), the function imported by a function-local relative import (``from . import
solvers``): the modules that train are not converted, an error at that import (XLA003), as for a
call of the class by its name.  A dict of classes that train nothing is no error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

TRAIN = """\
import logging


def get_solver(cfg):
    from . import solvers

    return solvers.get_solver(cfg)


def main(cfg):
    solver = get_solver(cfg)
    return solver.run()


if __name__ == "__main__":
    logging.info("torch training")
    main(None)
"""

SOLVERS_INIT = "from .builders import get_solver\nfrom .base import Solver\n"

BUILDERS = """\
def get_solver(cfg):
    from .compression import CompressionSolver

    klass = {"compression": CompressionSolver}[cfg.solver]
    return klass(cfg)
"""

BASE = """\
import torch


class Solver:
    def __init__(self, cfg):
        self.device = cfg.device
        self.loader = [torch.zeros(2)]

    def run_step(self, batch):
        raise NotImplementedError

    def run(self):
        for batch in self.loader:
            self.run_step(batch)
"""

COMPRESSION = """\
import torch

from .base import Solver


class CompressionSolver(Solver):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.model = torch.nn.Linear(2, 2).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def run_step(self, batch):
        loss = self.model(batch.to(self.device)).sum()
        loss.backward()
        self.optimizer.step()
"""

# The class looked up only evaluates: it takes no step.
IDLE_COMPRESSION = """\
from .base import Solver


class CompressionSolver(Solver):
    def run_step(self, batch):
        return float(batch.sum())
"""


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _files(compression: str) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/train.py": TRAIN,
        "pkg/solvers/__init__.py": SOLVERS_INIT,
        "pkg/solvers/builders.py": BUILDERS,
        "pkg/solvers/base.py": BASE,
        "pkg/solvers/compression.py": compression,
    }


def _xla003(folder: Path, compression: str, target: str) -> list[tuple[int, str]]:
    write_project(folder, "proj", _files(compression))
    found = unfixed_findings(folder, ["pkg/train.py"], target)["train.py"]
    return [(line, message) for rule, line, message in found if rule == "XLA003"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_class_looked_up_in_a_function_local_dict_that_trains_is_an_error(tmp_path: Path, target: str) -> None:
    found = _xla003(tmp_path, COMPRESSION, target)
    assert [line for line, _ in found] == [5], found
    assert "holds a training loop or optimizer step on CUDA terms" in found[0][1]
    assert "`CompressionSolver` in pkg/solvers/compression.py has `self.optimizer.step()`" in found[0][1]


@pytest.mark.parametrize("target", TARGETS)
def test_a_class_looked_up_in_a_function_local_dict_that_trains_nothing_is_no_error(
    tmp_path: Path, target: str
) -> None:
    assert _xla003(tmp_path, IDLE_COMPRESSION, target) == []
