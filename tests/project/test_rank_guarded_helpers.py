"""A save helper of another module that the training script calls only under a rank check
(``if rank == 0: utils.save_checkpoint(model, path)``): on torch_xla 1.13 (the sagemaker target)
``xm.save`` ends in a rendezvous of every process, so the master alone would wait forever; the
helper's ``torch.save`` stays, its state brought to the CPU first (XLA401), as for a save under a
rank check in its own file.  A helper some file calls without the check becomes xm.save."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.project import resolver
from codemods.project.text_scans import calls_under_rank_checks
from codemods.runner import Job, run
from tests.support.projects import write_project

UTILS = """\
import torch


def save_checkpoint(model, path):
    torch.save({"model": model.state_dict()}, path)


def save_everywhere(model, path):
    torch.save(model.state_dict(), path)
"""

TRAIN = """\
import torch
import torch.distributed as dist

import utils


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for x in [torch.randn(3, 4)]:
            model(x.cuda()).sum().backward()
            opt.step()
        if rank == 0:
            utils.save_checkpoint(model, "a.pt")
        utils.save_everywhere(model, "b.pt")


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_helper_called_under_a_rank_check_in_another_file_keeps_torch_save_on_1_13(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = write_project(tmp_path, "guarded", {"utils.py": UTILS, "train.py": TRAIN})
    job = Job("write", target, RuleSelection())
    run([(str(folder / name), job) for name in ("utils.py", "train.py")], workers=1)
    converted = (folder / "utils.py").read_text()
    if target == "sagemaker":
        assert 'torch.save(xm._maybe_convert_to_cpu({"model": model.state_dict()}), path)' in converted
    else:
        assert 'xm.save({"model": model.state_dict()}, path)' in converted
    assert "xm.save(model.state_dict(), path)" in converted  # called in every process


def test_only_the_files_with_a_rank_check_and_project_imports_are_parsed_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose rank checks guard no project file (it imports none) is not parsed for them."""
    monkeypatch.chdir(tmp_path)
    alone = TRAIN.replace("import utils\n", "").replace("utils.", "")
    folder = write_project(tmp_path, "guarded", {"utils.py": UTILS, "train.py": TRAIN, "alone.py": alone})
    parsed: list[bytes] = []

    def scan(data: bytes) -> set[str]:
        parsed.append(data)
        return calls_under_rank_checks(data)

    monkeypatch.setattr(resolver, "calls_under_rank_checks", scan)
    run(
        [
            (str(folder / name), Job("check", "sagemaker", RuleSelection()))
            for name in ("utils.py", "train.py", "alone.py")
        ]
    )
    assert parsed == [TRAIN.encode()]


# DALLE2-pytorch's shape: the script calls its own ``save_trainer`` only on the master, which calls
# ``tracker.save(...)`` of another module, which saves in ``self._save_state_dict(...)``.
TRACKERS = """\
import torch


class Tracker:
    def __init__(self, dummy_mode=False):
        self.dummy_mode = dummy_mode

    def _save_state_dict(self, model, path):
        torch.save({"model": model.state_dict()}, path)

    def save(self, model, path):
        if self.dummy_mode:
            return
        self._save_state_dict(model, path)
"""

CHAIN = """\
import torch
from accelerate import Accelerator

from trackers import Tracker


def save_trainer(tracker, model):
    tracker.save(model, "ckpt.pth")


def main():
    accelerator = Accelerator()
    is_master = accelerator.process_index == 0
    tracker = Tracker(dummy_mode=not is_master)
    model = accelerator.prepare(torch.nn.Linear(4, 2))
    for epoch in range(2):
        if is_master:
            save_trainer(tracker, model)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("guarded", [True, False])
def test_a_save_the_master_alone_reaches_through_the_scripts_own_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, guarded: bool
) -> None:
    """Under the rank check, the chain's torch.save stays on 1.13; called in every process (the
    near variant), it becomes xm.save there too."""
    monkeypatch.chdir(tmp_path)
    train = (
        CHAIN if guarded else CHAIN.replace("        if is_master:\n            save_trainer", "        save_trainer")
    )
    folder = write_project(tmp_path, "chain", {"trackers.py": TRACKERS, "train.py": train})
    job = Job("write", target, RuleSelection())
    run([(str(folder / name), job) for name in ("trackers.py", "train.py")], workers=1)
    converted = (folder / "trackers.py").read_text()
    if target == "sagemaker" and guarded:
        assert 'torch.save(xm._maybe_convert_to_cpu({"model": model.state_dict()}), path)' in converted
    else:
        assert 'xm.save({"model": model.state_dict()}, path)' in converted
