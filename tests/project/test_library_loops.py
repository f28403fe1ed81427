"""Training loops that live in a library (XLA307, ``library_apis.LIBRARY_LOOPS``): a script that hands its
model to mmcv's wrapper and runner through an OpenMMLab entry point gets the error at its call;
a project that carries its own copy of the entry point (an ``mmseg/`` package of its own) has
the copy checked as project code, the error at the wrapper and the runner inside it and none at
the script's call; a BasicSR script that names no torch is read all the same; a unit test's runner
trains nothing and is not reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.training.rules.xla307_library_training_loop import LIBRARY_TRAINING_LOOP
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

SCRIPT = """\
import torch
from mmseg.apis import train_segmentor


def main(cfg, model, datasets):
    model.init_weights()
    train_segmentor(model, datasets, cfg, distributed=False)


if __name__ == "__main__":
    main(None, torch.nn.Linear(2, 2), [])
"""
OWN_ENTRY = """\
import torch
from mmcv.parallel import MMDataParallel
from mmcv.runner import build_runner


def train_segmentor(model, datasets, cfg, distributed=False):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model = MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer))
    runner.run(datasets, cfg.workflow)
"""


def _library_loops(findings: dict[str, list[tuple[str, int, str]]], name: str) -> list[tuple[int, str]]:
    return [(line, message) for rule, line, message in findings[name] if rule == LIBRARY_TRAINING_LOOP.code]


@pytest.mark.parametrize("target", TARGETS)
def test_a_library_entry_point_is_reported_at_the_call(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "seg", "seg", {"tools/run.py": SCRIPT})
    found = _library_loops(unfixed_findings(folder, ["tools/run.py"], target), "run.py")
    assert [line for line, _ in found] == [7]
    assert "`train_segmentor` (OpenMMLab): it wraps the model in mmcv's MMDataParallel" in found[0][1]


@pytest.mark.parametrize("target", TARGETS)
def test_the_projects_own_copy_is_checked_as_project_code(tmp_path: Path, target: str) -> None:
    folder = write_project(
        tmp_path / "seg",
        "seg",
        {"tools/run.py": SCRIPT, "mmseg/__init__.py": "", "mmseg/apis/__init__.py": "from .train import *\n"}
        | {"mmseg/apis/train.py": OWN_ENTRY},
    )
    findings = unfixed_findings(folder, ["tools/run.py", "mmseg/apis/train.py"], target)
    assert _library_loops(findings, "run.py") == []
    copy = _library_loops(findings, "train.py")
    assert [line for line, _ in copy] == [8, 9]
    barrier = "torch_xla.sync()" if target == "2.9" else "xm.mark_step()"
    assert barrier in copy[1][1]


@pytest.mark.parametrize("target", TARGETS)
def test_a_basicsr_script_without_torch_is_read(tmp_path: Path, target: str) -> None:
    script = (
        "import os.path as osp\n\nimport myproj.models  # noqa: F401\nfrom basicsr.train import train_pipeline\n\n"
        'if __name__ == "__main__":\n    train_pipeline(osp.abspath(osp.join(__file__, osp.pardir)))\n'
    )
    model = (
        "import torch\nfrom basicsr.models.sr_model import SRModel\n\n\nclass Mine(SRModel):\n"
        "    def optimize_parameters(self, current_iter):\n        self.optimizer_g.zero_grad()\n"
        "        self.net_g(self.lq).mean().backward()\n        self.optimizer_g.step()\n"
    )
    folder = write_project(
        tmp_path / "sr",
        "sr",
        {"myproj/train.py": script, "myproj/__init__.py": "", "myproj/models/__init__.py": "from .mine import *\n"}
        | {"myproj/models/mine.py": model},
    )
    found = _library_loops(unfixed_findings(folder, ["myproj/train.py"], target), "train.py")
    assert [line for line, _ in found] == [7]
    assert "`train_pipeline` (BasicSR): it picks the device itself" in found[0][1]


@pytest.mark.parametrize("target", TARGETS)
def test_a_runner_in_a_unit_test_is_not_reported(tmp_path: Path, target: str) -> None:
    test = (
        "import torch\nfrom mmcv.runner import IterBasedRunner\n\n\ndef test_eval_hook():\n"
        "    runner = IterBasedRunner(torch.nn.Linear(2, 2), work_dir='.')\n    runner.run([[]], [('train', 1)])\n"
    )
    folder = write_project(tmp_path / "seg", "seg", {"tests/test_hooks.py": test})
    assert _library_loops(unfixed_findings(folder, ["tests/test_hooks.py"], target), "test_hooks.py") == []
