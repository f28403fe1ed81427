"""Optimizers handed to another module's training loop (OPTIMIZER_STEP): a step on what a
function, or a class through its ``__init__``, is handed is ported when another file of the
run imports the module, and its finding stands unless a file of the run hands a known
optimizer there; a single-file run of the module still reports it, unported."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

_TRAINER = """import torch


class Trainer:
    def __init__(self, model, opt, device):
        self.model = model
        self.opt = opt
        self.device = device

    def fit(self, steps):
        for _ in range(steps):
            loss = self.model(torch.randn(8, 4).to(self.device)).pow(2).mean()
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()


def train(model, opt, cfg):
    for _ in range(cfg["steps"]):
        model(torch.randn(8, 4).to(cfg["device"])).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def run(model, steps, *, o, device):
    for _ in range(steps):
        model(torch.randn(8, 4).to(device)).sum().backward()
        o.step()
"""
_MAIN = """import torch
import torch.nn as nn

from optim.base import Trainer, run, train


def main():
    cfg = {"device": "cuda:0", "steps": 5}
    model = nn.Linear(4, 2).to(cfg["device"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train(model, opt, cfg)
    Trainer(model, opt, cfg["device"]).fit(3)
    run(model, 3, o=opt, device=cfg["device"])


if __name__ == "__main__":
    main()
"""
_STEPS = ("self.opt.step()", "opt.step()", "o.step()")


def _convert(folder: Path, files: dict[str, str], converted: list[str], target: str) -> dict[str, list[str]]:
    """Each converted file's XLA201 findings (``*`` first when fixed); the files are rewritten."""
    (folder / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    job = Job("write", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in converted], workers=1)
    return {
        Path(report.path).resolve().relative_to(folder.resolve()).as_posix(): [
            ("* " if f.fixed else "") + f.message for f in report.findings if f.rule == "XLA201"
        ]
        for report in reports
    }


_FILES = {"optim/__init__.py": "", "optim/base.py": _TRAINER, "main.py": _MAIN}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_steps_on_an_optimizer_handed_in_by_a_file_of_the_run_are_ported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """main.py hands its AdamW to ``train`` (by position), to ``Trainer`` (which keeps it as
    ``self.opt``) and to ``run`` (by keyword): every step is ported, and no error stands."""
    monkeypatch.chdir(tmp_path)
    found = _convert(tmp_path, _FILES, list(_FILES), target)
    assert found["optim/base.py"] == [f"* {step} -> xm.optimizer_step({step[:-7]})" for step in _STEPS]
    converted = (tmp_path / "optim/base.py").read_text()
    assert all(f"xm.optimizer_step({step[:-7]})" in converted for step in _STEPS)
    assert "opt.step()" not in converted and "o.step()" not in converted
    barrier = "torch_xla.sync()" if target == "2.9" else "xm.mark_step()"
    assert converted.count(barrier) == 3


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_steps_on_what_no_file_of_the_run_hands_an_optimizer_keep_their_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """main.py hands something the analysis does not know for an optimizer: the steps are
    ported (the same as ``x.step()`` with one device) and each keeps an error naming what it steps."""
    monkeypatch.chdir(tmp_path)
    files = {**_FILES, "main.py": _MAIN.replace("torch.optim.AdamW(model.parameters(), lr=1e-3)", "make(model)")}
    found = _convert(tmp_path, files, list(files), target)
    handed = {"self.opt.step()": ("Trainer", "opt"), "opt.step()": ("train", "opt"), "o.step()": ("run", "o")}
    assert found["optim/base.py"] == [
        message
        for step, (callable_, parameter) in handed.items()
        for message in (
            f"* {step} -> xm.optimizer_step({step[:-7]})",
            f"`{step}` steps what `{callable_}` is handed as `{parameter}`, and no file of this run hands it a known "
            "optimizer there: check that it is one (its port, xm.optimizer_step, reads the optimizer's param_groups "
            f"with several processes), or else keep `{step}`",
        )
    ]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_single_file_run_of_the_module_reports_its_steps_unported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _convert(tmp_path, _FILES, ["optim/base.py"], target)
    assert found["optim/base.py"] == [
        f"`{step}` in a training loop: if this is an optimizer, call xm.optimizer_step({step[:-7]}) instead"
        for step in _STEPS
    ]
    assert all(step in (tmp_path / "optim/base.py").read_text() for step in _STEPS)


_GAN = """import torch
import torch.nn as nn


class GAN:
    def __init__(self, device):
        self.g = nn.Linear(4, 4).to(device)
        self.opt_g = torch.optim.Adam(self.g.parameters(), lr=1e-2)
        self.decay = torch.optim.lr_scheduler.StepLR(self.opt_g, 10)
"""
_RUNNER = """import torch
import torch.nn as nn

from gan import GAN


class Runner:
    def __init__(self, device):
        self.device = device
        self.gan = GAN(device)
        self.optims = []
        for net in (self.gan.g,):
            self.optims.append(torch.optim.SGD(net.parameters(), lr=0.1))

    def run(self, steps):
        for _ in range(steps):
            self.gan.g(torch.randn(8, 4, device=self.device)).sum().backward()
            self.gan.opt_g.step()
            self.gan.decay.step()
            for opt in self.optims:
                opt.step()


Runner(torch.device("cuda")).run(3)
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_optimizer_of_another_modules_class_held_an_instance_deeper_is_ported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``self.gan.opt_g.step()``, ``GAN`` from gan.py, is ported and its scheduler left alone; the
    list filled by ``append`` is stepped through a loop that gets no barrier of its own."""
    monkeypatch.chdir(tmp_path)
    found = _convert(tmp_path, {"gan.py": _GAN, "train.py": _RUNNER}, ["gan.py", "train.py"], target)
    assert found["train.py"] == [
        "* self.gan.opt_g.step() -> xm.optimizer_step(self.gan.opt_g)",
        "* opt.step() -> xm.optimizer_step(opt)",
    ]
    converted = (tmp_path / "train.py").read_text()
    assert "            self.gan.decay.step()\n" in converted
    barrier = "torch_xla.sync()" if target == "2.9" else "xm.mark_step()"
    assert f"                xm.optimizer_step(opt)\n            {barrier}\n" in converted
    assert converted.count(barrier) == 1


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_optimizer_handed_to_a_method_of_an_instance_is_ported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``trainer.fit(sgd, 3)`` on an instance of lib.py's ``Trainer``: ``opt.step()`` in ``Trainer.fit``."""
    monkeypatch.chdir(tmp_path)
    lib = _TRAINER.replace("    def fit(self, steps):", "    def fit(self, sgd, steps):").replace("self.opt.", "sgd.")
    main = (
        "import torch\nfrom optim.base import Trainer\n\nmodel = torch.nn.Linear(4, 2).cuda()\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\ntrainer = Trainer(model, None, 'cuda')\ntrainer.fit(opt, 3)\n"
    )
    found = _convert(tmp_path, {**_FILES, "optim/base.py": lib, "main.py": main}, list(_FILES), target)
    assert "* sgd.step() -> xm.optimizer_step(sgd)" in found["optim/base.py"]
    assert not [message for message in found["optim/base.py"] if "`sgd.step()`" in message]


_WRAPPER = """import torch


class ScheduledAdam:
    def __init__(self, params):
        self._optim = torch.optim.Adam(params)

    def step(self):
        self._optim.step()
"""

_WRAPPER_MAIN = """import torch
import torch.distributed as dist

import commons


def train(model, optimizer_g):
    for x in [torch.randn(2, 4)]:
        model(x.cuda()).sum().backward()
        optimizer_g.step()


def main():
    dist.init_process_group("nccl")
    model = torch.nn.Linear(4, 2).cuda()
    optimizer_g = commons.ScheduledAdam(model.parameters())
    train(model, optimizer_g)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_wrapper_of_another_module_is_stepped_as_it_is_and_its_inner_step_is_ported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``optimizer_g`` (an optimizer by its name) is an instance of another module's class that
    is no torch optimizer but steps the one it holds: its call stays, and its class's inner step
    is ported (xm.optimizer_step on the wrapper fails on several devices: no param_groups)."""
    monkeypatch.chdir(tmp_path)
    files = {"commons.py": _WRAPPER, "main.py": _WRAPPER_MAIN}
    found = _convert(tmp_path, files, list(files), target)
    assert found == {"commons.py": ["* self._optim.step() -> xm.optimizer_step(self._optim)"], "main.py": []}
    assert "        optimizer_g.step()\n" in (tmp_path / "main.py").read_text()
