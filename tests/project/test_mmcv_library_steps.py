"""Held-out list 23 (QueryInst's shapes, minimal): a project that carries its own copy of OpenMMLab's
``train_detector`` and its own mmcv runner.  The copy builds the optimizer with mmcv's
``build_optimizer(model, cfg.optimizer)`` before ``MMDataParallel(model.cuda(), ...)`` moves the model
(XLA203: the model is moved first, in a whole-project run and in a run of the file alone), and the
runner's loop calls ``self.call_hook('after_train_iter')``, where mmcv's OptimizerHook steps with no
barrier (XLA307 at that call, in both runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

TOOLS_TRAIN = """\
from mmdet.apis import train_detector


def main(model, cfg, datasets):
    train_detector(model, cfg, datasets)
"""
APIS_TRAIN = """\
from mmcv.parallel import MMDataParallel
from mmcv.runner import build_optimizer, build_runner


def train_detector(model, cfg, data_loaders):
    optimizer = build_optimizer(model, cfg.optimizer)
    model = MMDataParallel(model.cuda(), device_ids=cfg.gpu_ids)
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer))
    runner.run(data_loaders, cfg.workflow)
"""
RUNNER = """\
from mmcv.runner import RUNNERS
from .base_runner import BaseRunner


@RUNNERS.register_module()
class MyRunner(BaseRunner):
    def train(self, data_loader, **kw):
        self.model.train()
        for i, data_batch in enumerate(data_loader):
            self.call_hook("before_train_iter")
            self.outputs = self.model.train_step(data_batch, self.optimizer)
            self.call_hook("after_train_iter")
            self._iter += 1
"""
FILES = {
    "tools/train.py": TOOLS_TRAIN,
    "mmdet/__init__.py": "",
    "mmdet/apis/__init__.py": "from .train import train_detector\n",
    "mmdet/apis/train.py": APIS_TRAIN,
    "mmcv_custom/__init__.py": "",
    "mmcv_custom/runner/__init__.py": "",
    "mmcv_custom/runner/base_runner.py": "class BaseRunner:\n    pass\n",
    "mmcv_custom/runner/epoch_based_runner.py": RUNNER,
}


def _findings(folder: Path, names: list[str], target: str) -> dict[str, list[tuple[str, int, bool, str]]]:
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {
        str(Path(report.path).relative_to(folder)): [(f.rule, f.line, f.fixed, f.message) for f in report.findings]
        for report in reports
    }


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "single"])
@pytest.mark.parametrize("target", TARGETS)
def test_the_optimizer_builder_and_the_hooked_runner_loop(tmp_path: Path, target: str, whole: bool) -> None:
    folder = write_project(tmp_path / "p", "p", FILES)
    names = [name for name in FILES if name.endswith(".py")] if whole else ["mmdet/apis/train.py"]
    found = _findings(folder, names, target)
    early = [(line, fixed) for rule, line, fixed, _ in found["mmdet/apis/train.py"] if rule == "XLA203"]
    assert early == [(6, True)]
    if not whole:
        found = _findings(folder, ["mmcv_custom/runner/epoch_based_runner.py"], target)
    hooked = [
        (line, message)
        for rule, line, _, message in found["mmcv_custom/runner/epoch_based_runner.py"]
        if rule == "XLA307"
    ]
    assert [line for line, _ in hooked] == [12]
    assert "`MyRunner`, an mmcv runner class, runs the hooks where mmcv's OptimizerHook steps" in hooked[0][1]
