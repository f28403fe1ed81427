"""A training script whose optimizer, LR scheduler and accelerator another module of the project
provides through Accelerate's DeepSpeed integration, chosen by a config at run time (PickScore:
``class BaseDummyOptim(DummyOptim)``, ``DummyScheduler(...)``, ``Accelerator(deepspeed_plugin=
DeepSpeedPlugin(...))``, picked by Hydra).  On XLA Accelerate never runs DeepSpeed: the placeholders
come back from ``prepare`` unchanged and their ``step()`` raises.  A run on the project reports each
use where it is (XLA810), and the script's XLA807 (in that run and converted alone) does not say
"nothing to port" but names the integration; without those modules it still does."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

OPTIMIZER = """\
from accelerate.utils import DummyOptim


class BaseDummyOptim(DummyOptim):
    def __init__(self, model, lr=0.001):
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.lr = lr
"""

SCHEDULER = """\
from accelerate.utils import DummyScheduler


def dummy_scheduler(optimizer, steps):
    return DummyScheduler(optimizer, total_num_steps=steps)
"""

ACCELERATORS = """\
from accelerate import Accelerator, DeepSpeedPlugin


def deepspeed_accelerator(config):
    plugin = DeepSpeedPlugin(hf_ds_config=config)
    return Accelerator(deepspeed_plugin=plugin)
"""

SCRIPT = """\
import torch
from hydra.utils import instantiate


def main(cfg):
    accelerator = instantiate(cfg.accelerator)
    model = torch.nn.Linear(8, 1)
    optimizer = instantiate(cfg.optimizer, model=model)
    scheduler = instantiate(cfg.lr_scheduler, optimizer=optimizer)
    loader = torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=8)
    model, optimizer, scheduler, loader = accelerator.prepare(model, optimizer, scheduler, loader)
    for x in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(x).mean())
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
"""

FILES = {
    "lib/__init__.py": "",
    "lib/optimizers.py": OPTIMIZER,
    "lib/schedulers.py": SCHEDULER,
    "lib/accelerators.py": ACCELERATORS,
    "train.py": SCRIPT,
}
NAMES = ["train.py", "lib/optimizers.py", "lib/schedulers.py", "lib/accelerators.py"]


def _findings(folder: Path, names: list[str], target: str) -> dict[tuple[str, str, int], str]:
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {(f.rule, Path(report.path).name, f.line): f.message for report in reports for f in report.findings}


@pytest.mark.parametrize("target", TARGETS)
def test_each_use_is_an_error_where_it_is(tmp_path: Path, target: str) -> None:
    whole = _findings(write_project(tmp_path / "p", "p", FILES), NAMES, target)
    errors = {key for key in whole if key[0] == "XLA810"}
    assert errors == {
        ("XLA810", "optimizers.py", 4),
        ("XLA810", "schedulers.py", 5),
        ("XLA810", "accelerators.py", 5),
    }, whole
    assert "placeholder for the optimizer" in whole["XLA810", "optimizers.py", 4]
    loop = whole["XLA807", "train.py", 14]
    assert "nothing to port" not in loop and "DummyOptim, DummyScheduler, DeepSpeedPlugin" in loop, loop


@pytest.mark.parametrize("target", TARGETS)
def test_the_script_alone_names_the_integration(tmp_path: Path, target: str) -> None:
    single = _findings(write_project(tmp_path / "p", "p", FILES), ["train.py"], target)
    loop = single["XLA807", "train.py", 14]
    assert "nothing to port" not in loop and "another module of the project" in loop, loop


@pytest.mark.parametrize("target", TARGETS)
def test_without_those_modules_nothing_is_to_port(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"lib/__init__.py": "", "train.py": SCRIPT})
    single = _findings(folder, ["train.py"], target)
    assert "nothing to port" in single["XLA807", "train.py", 14], single
    assert not any(rule == "XLA810" for rule, _, _ in single), single


MODEL = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return x

    def save_checkpoint(self, path):
        torch.save(self.state_dict(), path)
"""

OWN_CHECKPOINT = """\
import torch
from accelerate import Accelerator
from lib.models import Net

accelerator = Accelerator()
if accelerator.state.deepspeed_plugin is not None:
    accelerator.state.deepspeed_plugin.deepspeed_config["gradient_clipping"] = 1.0
model = Net()
model, optimizer = accelerator.prepare(model, torch.optim.AdamW(model.parameters()))
model.save_checkpoint("out.pt")
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["train.py", "lib/models.py"], ["train.py"]])
def test_a_project_models_own_checkpoint_is_not_deepspeeds(tmp_path: Path, target: str, names: list[str]) -> None:
    """Review 22: ``prepare`` hands a project's model back as it is; its own ``save_checkpoint``
    runs on XLA (checked on accelerate 1.15), so it is no DeepSpeedEngine method, though the
    script reads the plugin (guarded)."""
    files = {"lib/__init__.py": "", "lib/models.py": MODEL, "train.py": OWN_CHECKPOINT}
    found = _findings(write_project(tmp_path / "p", "p", files), names, target)
    assert not any(rule == "XLA810" for rule, _, _ in found), found
