"""Executed: a class that spawns its own method (ProDiff's ``Trainer``: ``fit`` spawns ``self.ddp_run``
with several devices and calls ``self.run`` itself otherwise; ``ddp_run`` starts the process group and
calls ``self.run`` too), whose ``run`` reads ``dist.get_rank()``.  Converted (torch_xla 2.9, CPU), the
read becomes the runtime's ordinal (XLA602), not XLA609's "the process that starts the others": with
two CPU devices each worker reads its own ordinal, and the run that spawns nothing reads 0.  The negative
control is why XLA609 stays for a method the launching process also calls before the launch
(``trainer.run()`` then ``trainer.fit()``): the same port there initializes the runtime before
torch_xla.launch, which then refuses to start ("Runtime is already initialized")."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import run_script

pytestmark = pytest.mark.executed

SCRIPT = """\
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


class Trainer:
    def __init__(self, gpus):
        self.gpus = gpus

    def fit(self):
        if self.gpus > 1:
            mp.spawn(self.ddp_run, nprocs=self.gpus)
        else:
            self.run()

    def ddp_run(self, index):
        dist.init_process_group("nccl", rank=index, world_size=self.gpus)
        self.run()

    def run(self):
        model = torch.nn.Linear(4, 2).cuda()
        rank = dist.get_rank() if dist.is_initialized() else 0
        with open(f"rank{rank}.txt", "w") as out:
            out.write(str(model(torch.ones(1, 4).cuda()).shape))


if __name__ == "__main__":
    Trainer(int(sys.argv[1])).fit()
"""
PARENT_FIRST = "    Trainer(int(sys.argv[1])).fit()\n"


def _converted(source: str) -> tuple[str, list[str]]:
    converted = convert_source(source.encode(), target="2.9")
    assert isinstance(converted.output, bytes)
    return converted.output.decode(), [f.rule for f in converted.findings]


def test_a_read_only_workers_and_the_single_run_make_is_the_runtimes(tmp_path: Path) -> None:
    output, rules = _converted(SCRIPT)
    assert "XLA609" not in rules and "XLA602" in rules, rules
    assert "rank = xr.global_ordinal() if dist.is_initialized() else 0" in output, output
    assert "torch_xla.launch(self.ddp_run" in output, output
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "train.py").write_text(output)
    run_script(tmp_path / "two", "train.py", "2", runner=False, env={"CPU_NUM_DEVICES": "2"})
    assert sorted(p.name for p in (tmp_path / "two").glob("rank*.txt")) == ["rank0.txt", "rank1.txt"]
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "train.py").write_text(output)
    run_script(tmp_path / "one", "train.py", "1", runner=False)
    assert [p.name for p in (tmp_path / "one").glob("rank*.txt")] == ["rank0.txt"]


def test_negative_control_the_same_port_before_the_launch_stops_it(tmp_path: Path) -> None:
    source = SCRIPT.replace(
        PARENT_FIRST, "    trainer = Trainer(int(sys.argv[1]))\n    trainer.run()\n    trainer.fit()\n"
    )
    output, rules = _converted(source)
    assert "XLA609" in rules, rules  # (left as it is: run() also runs in the launching process)
    ported = output.replace("rank = dist.get_rank() if", "rank = xr.global_ordinal() if").replace(
        "import torch_xla\n", "import torch_xla\nimport torch_xla.runtime as xr\n", 1
    )
    assert "xr.global_ordinal() if" in ported and "import torch_xla.runtime as xr" in ported
    (tmp_path / "train.py").write_text(ported)
    run = run_script(tmp_path, "train.py", "2", runner=False, check=False, env={"CPU_NUM_DEVICES": "2"})
    assert run.returncode != 0 and "Runtime is already initialized" in run.stderr, run.stderr[-2000:]
