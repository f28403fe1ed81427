"""Executed: reads of the process group's rank and size that run only once the group is up
(``if dist.is_available() and dist.is_initialized(): return dist.get_rank(), dist.get_world_size()``,
SimCLR's and TencentPretrain's shape), on torch_xla 2.9 (CPU, two devices under torch_xla.launch).

XLA602 leaves them as written: on the "xla" backend the port starts, they are the runtime's
ordinal and world size, so each process takes its own shard.  The negative control is the same
converted script with no process group started: the guard is False, every process reads rank 0
of 1 and takes the whole tensor (the check below sees it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.executed import converted_project, run_script

pytestmark = pytest.mark.executed

TRAIN = """\
import os

import torch
import torch.distributed as dist


def shard_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def main():
    if "LOCAL_RANK" in os.environ:
        dist.init_process_group("nccl")
    rank, world = shard_info()
    x = torch.arange(8.0).chunk(world)[rank]
    print(f"rank {rank} world {world} shard {x.tolist()}")


if __name__ == "__main__":
    main()
"""
FILES = {"train.py": TRAIN}
TWO_DEVICES = {"CPU_NUM_DEVICES": "2"}
# Not anchored to lines: the processes share one stdout, and one's line can run into another's.
SHARD = re.compile(r"rank (\d+) world (\d+) shard (\[[^\]]*\])")


def shards(output: str) -> set[tuple[str, str, str]]:
    return {(m.group(1), m.group(2), m.group(3)) for m in SHARD.finditer(output)}


def test_group_reads_under_is_initialized_stay_and_give_each_process_its_shard(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "xla", "group_reads", FILES)
    source = (folder / "train.py").read_text()
    assert "return dist.get_rank(), dist.get_world_size()" in source
    assert "torch_xla.launch(" in source
    got = run_script(folder, "train.py", runner=False, env=TWO_DEVICES)
    assert shards(got.output) == {("0", "2", "[0.0, 1.0, 2.0, 3.0]"), ("1", "2", "[4.0, 5.0, 6.0, 7.0]")}


def test_without_the_process_group_every_process_takes_the_whole_tensor(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "xla", "group_reads", FILES)
    script = folder / "train.py"
    script.write_text(script.read_text().replace('dist.init_process_group("xla", init_method="xla://")', "pass"))
    got = run_script(folder, "train.py", runner=False, env=TWO_DEVICES)
    assert shards(got.output) == {("0", "1", "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]")}
