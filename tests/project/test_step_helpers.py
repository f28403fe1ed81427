"""A loop whose training step runs in a function or an optimizer class of another module, in a
run that converts only the script: the loop gets the step barrier; XLA003 names the helper only
where its step is wrong on XLA as it is (a CUDA gradient scaler, or several processes without
DDP, where a plain ``optimizer.step()`` does not reduce the gradients).  On one process the plain
step, closed by the loop's barrier, is what ``xm.optimizer_step`` computes (executed in
test_step_helpers_executed.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

UPDATE = """\
import torch


def update_step(value_net, policy_net, opt_v, opt_p, value_iters, x, target):
    for _ in range(value_iters):
        v_loss = (value_net(x) - target).pow(2).mean()
        opt_v.zero_grad()
        v_loss.backward()
        opt_v.step()
    p_loss = policy_net(x).pow(2).mean()
    opt_p.zero_grad()
    p_loss.backward()
    opt_p.step()
"""

SCALER = """\
import torch


class NativeScaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
        self._scaler.update()
"""

SCALED_TRAIN = """\
import torch

from scaling import NativeScaler

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_scaler = NativeScaler()
for epoch in range(2):
    x = torch.randn(8, 4).to(device)
    with torch.autocast("cuda"):
        loss = model(x).pow(2).mean()
    loss_scaler(loss, optimizer)
"""

TRAIN = """\
import torch
import torch.nn as nn

from core.update import update_step
{setup}
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
value_net = nn.Linear(4, 1).to(device)
policy_net = nn.Linear(4, 2).to(device)
{wrap}opt_v = torch.optim.Adam(value_net.parameters(), lr=0.01)
opt_p = torch.optim.Adam(policy_net.parameters(), lr=0.01)
for epoch in range(3):
    x = torch.randn(16, 4).to(device)
    target = torch.randn(16, 1).to(device)
    update_step(value_net, policy_net, opt_v, opt_p, 1, x, target)
"""

GROUP = '\ntorch.distributed.init_process_group("nccl")\n'
DDP = "value_net = nn.parallel.DistributedDataParallel(value_net)\n"

TWO_STEP = """\
import torch


class TwoStep(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, **kwargs):
        super().__init__(params, dict(**kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=0.05)

    @torch.no_grad()
    def second_step(self):
        self.base_optimizer.step()
        self.zero_grad()

    def step(self, closure=None):
        closure = torch.enable_grad()(closure)
        self.first_step()
        closure()
        self.second_step()
"""

TWO_STEP_TRAIN = """\
import torch

from twostep import TwoStep

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 1).to(device)
optimizer = TwoStep(model.parameters(), torch.optim.SGD, lr=0.1)
for epoch in range(2):
    for i in range(4):
        x = torch.randn(8, 4).to(device)
        model(x).pow(2).mean().backward()
        optimizer.first_step()
        model(x).pow(2).mean().backward()
        optimizer.second_step()
"""


def _cross_file(repo: Path, files: dict[str, str], target: str) -> list[Finding]:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "train.py"])
    conversion = convert_source(
        (repo / "train.py").read_bytes(), target=target, imports=project.imports_of(repo / "train.py")
    )
    assert b"torch_xla.sync()" in conversion.output or b"xm.mark_step()" in conversion.output  # the loop's barrier
    return [f for f in conversion.findings if f.rule == "XLA003"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("setup", "wrap", "says"),
    [
        # One process, plain steps: right on XLA as they are.
        ("", "", None),
        # Several processes without DDP: the plain step does not reduce the gradients.
        (GROUP, "", "its optimizer step must become xm.optimizer_step"),
        # Several processes with DDP: its backward reduces them, the plain step is right.
        (GROUP, DDP, None),
    ],
    ids=["one-process", "processes-without-ddp", "processes-with-ddp"],
)
def test_a_step_helper_of_another_module_is_named_only_where_its_step_is_wrong_on_xla(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, setup: str, wrap: str, says: str | None
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"core/__init__.py": "", "core/update.py": UPDATE, "train.py": TRAIN.format(setup=setup, wrap=wrap)}
    steps = [f for f in _cross_file(tmp_path, files, target) if "the training step runs in" in f.message]
    if says is None:
        assert steps == []
    else:
        (step,) = steps
        assert "the training step runs in `update_step` (core/update.py)" in step.message and says in step.message


@pytest.mark.parametrize("target", TARGETS)
def test_an_optimizer_class_of_another_module_stepped_on_one_process_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """sam's shape: the loop calls the class's ``first_step``/``second_step``; the second steps
    the base optimizer plainly, which one process runs right."""
    monkeypatch.chdir(tmp_path)
    assert _cross_file(tmp_path, {"twostep.py": TWO_STEP, "train.py": TWO_STEP_TRAIN}, target) == []
    train = TWO_STEP_TRAIN.replace("from twostep import TwoStep\n", f"from twostep import TwoStep\n{GROUP}")
    (step,) = _cross_file(tmp_path, {"twostep.py": TWO_STEP, "train.py": train}, target)
    assert "the training step runs in `optimizer.second_step` (twostep.py)" in step.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_scaler_wrapper_of_another_module_is_named_on_one_process_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    steps = [
        f
        for f in _cross_file(tmp_path, {"scaling.py": SCALER, "train.py": SCALED_TRAIN}, target)
        if "the training step runs in" in f.message
    ]
    (step,) = steps
    assert (
        "`loss_scaler` (scaling.py)" in step.message and "its gradient scaler must become the XLA one" in step.message
    )


@pytest.mark.parametrize("target", TARGETS)
def test_an_optimizer_class_own_step_is_no_undriven_step_in_a_run_on_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """sam's shape, whole: nothing calls ``TwoStep.step(closure)``; the loop that would call
    ``optimizer.step()`` is where its barrier goes, so its own ``step`` is no undriven step."""
    monkeypatch.chdir(tmp_path)
    _cross_file(tmp_path, {"twostep.py": TWO_STEP, "train.py": TWO_STEP_TRAIN}, target)
    files = [tmp_path / "twostep.py", tmp_path / "train.py"]
    project = Project(tmp_path, summarise_with(target, RuleSelection(), None), in_run=files)
    conversion = convert_source(files[0].read_bytes(), target=target, imports=project.imports_of(files[0]))
    assert b"xm.optimizer_step(self.base_optimizer)" in conversion.output
    assert not [f for f in conversion.findings if f.rule == "XLA306"]
