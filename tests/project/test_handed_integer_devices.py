"""An int handed as the device of a function of another module that moves tensors to it
(direct-preference-optimization's shape): ``slice_and_move_batch_for_device(batch, rank, ws,
self.rank)`` into ``def ...(batch, rank, world_size, device): ... v.to(device)``, with
``self.rank`` the ``rank: int`` parameter of the trainer's ``__init__``.  ``.to(0)`` is cuda:0,
which fails without CUDA: XLA103 makes the argument the XLA device at the call; nothing where the
callee's parameter is no device (its own file ports it), or where the value is no known int."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]
DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}

UTILS = """\
import torch


def move(batch, {param}):
    return {{k: v.to({param}) for k, v in batch.items()}}
"""
TRAINERS = """\
import torch
{imports}


class Trainer:
    def __init__(self, model, {rank}):
        self.rank = rank
        self.model = model.cuda()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train(self, batches):
        for b in batches:
            b = {call}
            self.model(**b).sum().backward()
            self.opt.step()
"""


def _findings(tmp_path: Path, target: str, **fields: str) -> list[tuple[str, int, str]]:
    """The XLA103 findings of trainers.py in a check run of both files (run from the project)."""
    values = {"param": "device", "imports": "from utils import move", "rank": "rank: int = 0"}
    values.update({"call": "move(b, self.rank)"}, **fields)
    utils = UTILS.format(param=values["param"])
    write_project(tmp_path, "handed", {"utils.py": utils, "trainers.py": TRAINERS.format(**values)})
    job = Job("check", target, RuleSelection())
    reports = run([(str(tmp_path / name), job) for name in ("utils.py", "trainers.py")], workers=1)
    found = {
        Path(r.path).name: [(f.rule, f.line, f.message) for f in r.findings if f.rule == "XLA103"] for r in reports
    }
    assert [f for f in found["utils.py"] if "-> the XLA device" in f[2]] == []  # the callee is left as it is
    return found["trainers.py"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("imports", "call", "callee"),
    [
        ("from utils import move", "move(b, self.rank)", "`move` (utils.py)"),
        ("from utils import move", "move(b, device=self.rank)", "`move` (utils.py)"),
        ("import utils as u", "u.move(b, self.rank)", "`u.move` (utils.py)"),
    ],
    ids=["positional", "keyword", "module-alias"],
)
def test_an_int_handed_as_a_device_becomes_the_xla_device_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, imports: str, call: str, callee: str
) -> None:
    monkeypatch.chdir(tmp_path)
    ((rule, line, message),) = _findings(tmp_path, target, imports=imports, call=call)
    assert (rule, line) == ("XLA103", 13)
    assert message.startswith(f"self.rank -> {DEVICE[target]}: {callee} moves tensors to its `device`")
    assert "`self.rank` is the `rank: int` parameter of `Trainer.__init__`: an integer device is cuda:N" in message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("param", "rank"),
    [("rank", "rank: int = 0"), ("device", "rank"), ("device", "rank: str = 'cpu'")],
    ids=["the-callee-takes-a-rank", "no-known-int", "a-string"],
)
def test_no_finding_where_the_parameter_is_no_device_or_the_value_no_int(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, param: str, rank: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _findings(tmp_path, target, param=param, rank=rank) == []
