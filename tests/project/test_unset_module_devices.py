"""A module-level device of a project module that stays None (the fourteenth held-out list's
rlkit: ``pytorch_util.device = None``, set only by ``set_gpu_mode``, whose only call the script
has commented out): ``algorithm.to(ptu.device)`` is ``.to(None)``, which moves nothing, so the
stepped model trains on the CPU. XLA111 says so at the move, or at ``algo.to(ptu.device)`` where an
instance of a project class that trains moves its trainer's network in its own ``to``; a script
that calls the setter (``ptu.set_gpu_mode(True)``, which the port makes choose the XLA device)
stays quiet."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods.cli import main
from codemods.engine.rule import RuleSelection
from codemods.files import discover
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

UTIL = """\
import torch

_use_gpu = False
device = None


def set_gpu_mode(mode, gpu_id=0):
    global _use_gpu
    global device
    _use_gpu = mode
    device = torch.device("cuda:" + str(gpu_id) if _use_gpu else "cpu")


def from_numpy(*args, **kwargs):
    return torch.from_numpy(*args, **kwargs).float().to(device)
"""

SCRIPT = """\
import torch

import util as ptu

if __name__ == "__main__":
    {setter}net = torch.nn.Linear(4, 2)
    net.to(ptu.device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(3):
        loss = net(ptu.from_numpy(torch.randn(8, 4).numpy())).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

ALGO = """\
import torch


class Trainer:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def train(self, x):
        loss = self.net(x).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


class Algo:
    def __init__(self, trainer):
        self.trainer = trainer

    def to(self, device):
        self.trainer.net.to(device)

    def run(self):
        for _ in range(3):
            self.trainer.train(torch.randn(8, 4))
"""

ALGO_SCRIPT = """\
import torch

import util as ptu
from algo import Algo, Trainer

if __name__ == "__main__":
    {setter}algo = Algo(Trainer(torch.nn.Linear(4, 2)))
    algo.to(ptu.device)
    algo.run()
"""


def _findings(folder: Path, target: str) -> dict[str, list[tuple[str, int, str]]]:
    job = Job("lint", target, RuleSelection())
    reports = run([(str(path), job) for path in discover((str(folder),))], workers=1)
    return {
        Path(r.path).name: [(f.rule, f.line, f.message) for f in r.findings if f.rule in ("XLA111", "XLA112")]
        for r in reports
    }


@pytest.mark.parametrize("target", TARGETS)
def test_device_left_none_is_the_cpu(tmp_path: Path, target: str) -> None:
    script = SCRIPT.format(setter="# ptu.set_gpu_mode(True)\n    ")
    repo = write_project(tmp_path / "proj", "proj", {"util.py": UTIL, "main.py": script})
    found = _findings(repo, target)["main.py"]
    assert [(rule, line) for rule, line, _ in found][:1] == [("XLA111", 8)], found
    assert "goes to `ptu.device`, which ends on `None` (the CPU), as " in found[0][2], found
    assert "util.py leaves `device` unless `set_gpu_mode()` sets it, which no code of the project calls" in found[0][2]


@pytest.mark.parametrize("target", TARGETS)
def test_device_set_by_the_script_stays_quiet(tmp_path: Path, target: str) -> None:
    script = SCRIPT.format(setter="ptu.set_gpu_mode(True)\n    ")
    repo = write_project(tmp_path / "proj", "proj", {"util.py": UTIL, "main.py": script})
    assert _findings(repo, target)["main.py"] == []


@pytest.mark.parametrize("target", TARGETS)
def test_moved_by_the_algorithm(tmp_path: Path, target: str) -> None:
    script = ALGO_SCRIPT.format(setter="# ptu.set_gpu_mode(True)\n    ")
    repo = write_project(tmp_path / "proj", "proj", {"util.py": UTIL, "algo.py": ALGO, "main.py": script})
    found = _findings(repo, target)["main.py"]
    assert [(rule, line) for rule, line, _ in found] == [("XLA111", 9)], found
    assert (
        found[0][2].startswith("`algo` (")
        and "moves to the device it is handed (`self.trainer.net.to(device)`)" in found[0][2]
    )
    assert "`None` (the CPU)" in found[0][2] and "the port leaves a CPU choice as the author wrote it" in found[0][2]


@pytest.mark.parametrize("target", TARGETS)
def test_moved_by_the_algorithm_after_the_setter(tmp_path: Path, target: str) -> None:
    script = ALGO_SCRIPT.format(setter="ptu.set_gpu_mode(True)\n    ")
    repo = write_project(tmp_path / "proj", "proj", {"util.py": UTIL, "algo.py": ALGO, "main.py": script})
    assert _findings(repo, target)["main.py"] == []


@pytest.mark.parametrize("target", TARGETS)
def test_module_imported_by_its_own_name(tmp_path: Path, target: str) -> None:
    script = SCRIPT.format(setter="").replace("import util as ptu", "import util").replace("ptu.", "util.")
    repo = write_project(tmp_path / "proj", "proj", {"util.py": UTIL, "main.py": script})
    found = _findings(repo, target)["main.py"]
    assert [(rule, line) for rule, line, _ in found][:1] == [("XLA111", 7)], found
    assert "goes to `util.device`, which ends on `None` (the CPU)" in found[0][2], found


@pytest.mark.parametrize("target", TARGETS)
def test_setter_imported_under_another_name_stays_quiet(tmp_path: Path, target: str) -> None:
    script = SCRIPT.format(setter="enable(True)\n    ").replace(
        "import util as ptu\n", "import util as ptu\nfrom util import set_gpu_mode as enable\n"
    )
    repo = write_project(tmp_path / "proj", "proj", {"util.py": UTIL, "main.py": script})
    assert _findings(repo, target)["main.py"] == []


@pytest.mark.parametrize("target", TARGETS)
def test_converted_project_still_reports_it(tmp_path: Path, target: str) -> None:
    script = SCRIPT.format(setter="")
    repo = write_project(tmp_path / "proj", "proj", {"util.py": UTIL, "main.py": script})
    result = CliRunner().invoke(main, ["convert", "--target", target, str(repo)])
    assert "failed" in result.output and "0 failed" in result.output, result.output
    assert '"xla" if _use_gpu else "cpu"' in (repo / "util.py").read_text()
    moved = (repo / "main.py").read_text().splitlines().index("    net.to(ptu.device)") + 1
    assert [(rule, line) for rule, line, _ in _findings(repo, target)["main.py"]][:1] == [("XLA111", moved)]
