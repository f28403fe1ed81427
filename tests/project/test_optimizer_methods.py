"""A trainer module whose ``__init__`` takes its optimizer from a method of the detector it
holds (issue 32, simple-faster-rcnn: ``self.optimizer = self.faster_rcnn.get_optimizer()`` in
trainer.py, ``get_optimizer`` in model/faster_rcnn.py, inherited by the class train.py
imports from model/): train.py moves the trainer afterwards, so on XLA the optimizer steps
the stale CPU parameters (XLA203 at the move).  trainer.py does not import the detector's
module: the file that moves the instance, which imports both, resolves the method.  A
trainer never moved, or a method over another module's parameters, strands nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

FILES = {
    "model/__init__.py": "from model.vgg import DetectorVGG\n",
    "model/detector.py": """\
import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)

    def get_optimizer(self, lr=0.1):
        params = []
        for key, value in dict(self.named_parameters()).items():
            params += [{"params": [value], "lr": lr * 2 if "bias" in key else lr}]
        self.optimizer = torch.optim.SGD(params, momentum=0.9)
        return self.optimizer
""",
    "model/vgg.py": """\
from torch import nn

from model.detector import Detector


class DetectorVGG(Detector):
    def __init__(self):
        super().__init__()
        self.extra = nn.Linear(2, 2)
""",
    "trainer.py": """\
from torch import nn


class DetTrainer(nn.Module):
    def __init__(self, detector):
        super().__init__()
        self.detector = detector
        self.optimizer = self.detector.get_optimizer()

    def train_step(self, x):
        self.optimizer.zero_grad()
        self.detector.head(x).sum().backward()
        self.optimizer.step()
""",
}

TRAIN = """\
import torch

from model import DetectorVGG
from trainer import DetTrainer

detector = DetectorVGG()
{build}
for step in range(5):
    trainer.train_step(torch.randn(8, 4).cuda())
"""


def _findings(folder: Path, build: str, target: str, files: dict[str, str] = FILES) -> list[str]:
    (folder / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in {**files, "train.py": TRAIN.format(build=build)}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in ("train.py", "trainer.py", "model/detector.py")], workers=1)
    return [f"{Path(r.path).name} {f.line}: {f.message}" for r in reports for f in r.findings if f.rule == "XLA203"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize(
    ("build", "line", "move"),
    [
        ("trainer = DetTrainer(detector).cuda()", 7, "DetTrainer(detector).cuda()"),
        ("trainer = DetTrainer(detector)\ntrainer.to('cuda')", 8, "trainer.to('cuda')"),
    ],
)
def test_moving_the_trainer_strands_the_optimizer_its_detector_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, build: str, line: int, move: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (finding,) = _findings(tmp_path, build, target)
    assert finding.startswith(
        f"train.py {line}: `{move}` moves `trainer` to the XLA device after `DetTrainer.__init__`"
    )
    assert "(trainer.py) built `self.optimizer`" in finding and "build the optimizer after the move" in finding


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_trainer_never_moved_or_a_method_over_other_parameters_strands_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _findings(tmp_path, "trainer = DetTrainer(detector)", target) == []
    # The detector's method builds its optimizer over parameters of another module: not its own.
    other = FILES["model/detector.py"].replace("self.named_parameters()", "nn.Linear(4, 2).named_parameters()")
    assert (
        _findings(tmp_path, "trainer = DetTrainer(detector).cuda()", target, {**FILES, "model/detector.py": other})
        == []
    )


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize(
    "build",
    [
        "detector.cuda()\ntrainer = DetTrainer(detector).cuda()",
        "trainer = DetTrainer(DetectorVGG().cuda()).cuda()",
    ],
)
def test_a_detector_moved_before_the_trainer_is_built_strands_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, build: str
) -> None:
    """The optimizer holds the detector's moved parameters; moving the trainer keeps them."""
    monkeypatch.chdir(tmp_path)
    assert _findings(tmp_path, build, target) == []


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_detector_moved_after_the_trainer_is_built_strands_its_optimizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (finding,) = _findings(tmp_path, "trainer = DetTrainer(detector)\ndetector.cuda()\ntrainer.cuda()", target)
    assert finding.startswith("train.py 9: `trainer.cuda()` moves `trainer`"), finding
