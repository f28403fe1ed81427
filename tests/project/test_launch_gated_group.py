"""A helper with a launcher check (``if 'RANK' in os.environ``) makes XLA609 ("every process
would skip the distributed setup") only where its ``init_process_group`` runs under that check:
in the branch it selects, or after an ``if`` whose other branches leave.  ibot's and DINO's
``init_distributed_mode`` falls through from ``elif torch.cuda.is_available():`` (always taken
once the port drops the check) to an unconditional start: every process under torch_xla.launch
starts the xla group, and the script's DDP says that the helper starts it (XLA604), not that
"this file starts none"."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

# ibot's shape: the start follows the chain, and the plain-run branch falls through to it.
FALLS_THROUGH = """\
import os
import sys

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        args.rank = int(os.environ["RANK"])
    elif torch.cuda.is_available():
        args.rank = 0
    else:
        sys.exit(1)
    dist.init_process_group(backend="nccl", init_method="env://")
"""
# The same chain whose plain-run branches all leave: the start runs only under a launcher.
LEAVES = FALLS_THROUGH.replace("        args.rank = 0\n", "        args.rank = 0\n        return\n")
# The check negated, through aliases (``from sys import exit as leave``, ``import os as _os``).
NEGATED = """\
import os as _os
from sys import exit as leave

import torch.distributed as dist


def init_distributed_mode(args):
    if not 'RANK' in _os.environ:
        leave(0)
    dist.init_process_group(backend="nccl", init_method="env://")
"""
# A start in the launcher's branch; the other branch falls through to nothing.
IN_BRANCH = """\
import os

import torch.distributed as dist


def init_distributed_mode(args):
    if "RANK" not in os.environ:
        args.distributed = False
    else:
        dist.init_process_group(backend="nccl", init_method="env://")
"""
# DETR's and DeiT's shape: the other branch that reaches the start is SLURM's (srun sets SLURM_PROCID,
# torch_xla.launch does not), written through an alias of os.environ.
SLURM_BRANCH = """\
from os import environ

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    if 'RANK' in environ and 'WORLD_SIZE' in environ:
        args.rank = int(environ["RANK"])
    elif 'SLURM_PROCID' in environ:
        args.rank = int(environ['SLURM_PROCID'])
        args.gpu = args.rank % torch.cuda.device_count()
    else:
        print('Not using distributed mode')
        args.distributed = False
        return
    args.distributed = True
    dist.init_process_group(backend="nccl", init_method="env://")
"""
# The same with a plain run that falls through to the start (no return): every process starts it.
SLURM_FALLS_THROUGH = SLURM_BRANCH.replace("        return\n", "")
SCRIPT = """\
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import utils


def main(args):
    utils.init_distributed_mode(args)
    model = DDP(torch.nn.Linear(4, 2).cuda(), device_ids=[args.gpu])
    t = torch.ones(2).cuda()
    dist.all_reduce(t)


if __name__ == "__main__":
    main(argparse.Namespace(gpu=0))
"""


def _run(folder: Path, names: list[str], target: str, mode: str = "write") -> dict[str, list[tuple[str, int, str]]]:
    job = Job(mode, target, RuleSelection())  # type: ignore[arg-type]
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).name: [(f.rule, f.line, f.message) for f in r.findings] for r in reports}


def _project(tmp_path: Path, helper: str) -> Path:
    return write_project(tmp_path / "p", "p", {"utils.py": helper, "train.py": SCRIPT})


@pytest.mark.parametrize("target", TARGETS)
def test_a_start_reached_without_a_launcher_makes_no_launch_check_error(tmp_path: Path, target: str) -> None:
    folder = _project(tmp_path, FALLS_THROUGH)
    found = _run(folder, ["train.py", "utils.py"], target, mode="check")
    assert not [f for f in found["train.py"] if f[0] == "XLA609"], found["train.py"]
    (ddp,) = [(line, message) for rule, line, message in found["train.py"] if rule == "XLA604"]
    assert ddp[0] == 12
    assert "over the xla process group that `utils.init_distributed_mode` (" in ddp[1]
    assert "utils.py) starts on XLA (a plain optimizer step" in ddp[1]
    assert "this file starts none" not in ddp[1]
    _run(folder, ["train.py", "utils.py"], target)
    helper = (folder / "utils.py").read_text()
    assert "    else:\n        args.rank = 0\n" in helper and "sys.exit" not in helper
    # a second run changes nothing
    before = {name: (folder / name).read_text() for name in ("train.py", "utils.py")}
    _run(folder, ["train.py", "utils.py"], target)
    assert {name: (folder / name).read_text() for name in before} == before


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "helper", [LEAVES, NEGATED, IN_BRANCH, SLURM_BRANCH], ids=["leaves", "negated-alias", "in-branch", "slurm"]
)
def test_a_start_only_under_the_check_keeps_the_error(tmp_path: Path, target: str, helper: str) -> None:
    folder = _project(tmp_path, helper)
    found = _run(folder, ["train.py", "utils.py"], target, mode="check")
    (manual,) = [(line, message) for rule, line, message in found["train.py"] if rule == "XLA609"]
    assert manual[0] == 11
    assert manual[1].startswith("`utils.init_distributed_mode` (")
    assert "utils.py) starts the process group only when" in manual[1]
    (ddp,) = [message for rule, _, message in found["train.py"] if rule == "XLA604"]
    assert "this file starts none that runs on XLA" in ddp


@pytest.mark.parametrize("target", TARGETS)
def test_a_slurm_branch_keeps_its_check_and_a_plain_run_that_reaches_the_start_is_no_error(
    tmp_path: Path, target: str
) -> None:
    """The SLURM check is no rank read of torch_xla's: it stays as written (its branch reads
    SLURM_PROCID), in both runs; a plain run that falls through to the start makes no XLA609."""
    folder = _project(tmp_path, SLURM_FALLS_THROUGH)
    found = _run(folder, ["train.py", "utils.py"], target, mode="check")
    assert not [f for f in found["train.py"] if f[0] == "XLA609"], found["train.py"]
    for name, helper in (("leaves", SLURM_BRANCH), ("falls", SLURM_FALLS_THROUGH)):
        (tmp_path / name).mkdir()
        folder = _project(tmp_path / name, helper)
        _run(folder, ["train.py", "utils.py"], target)
        converted = (folder / "utils.py").read_text()
        assert "    elif 'SLURM_PROCID' in environ:\n        args.rank = int(environ['SLURM_PROCID'])\n" in converted
        assert "if 'RANK' in environ and 'WORLD_SIZE' in environ:" in converted
        before = {name: (folder / name).read_text() for name in ("train.py", "utils.py")}
        _run(folder, ["train.py", "utils.py"], target)
        assert {name: (folder / name).read_text() for name in before} == before


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_this_run_does_not_convert_is_not_named_as_the_start(tmp_path: Path, target: str) -> None:
    """Run on the script alone, the helper keeps its nccl start: the script's DDP still needs an
    xla group (XLA003 names the helper's CUDA check)."""
    folder = _project(tmp_path, FALLS_THROUGH)
    found = _run(folder, ["train.py"], target, mode="check")
    (ddp,) = [message for rule, _, message in found["train.py"] if rule == "XLA604"]
    assert "this file starts none that runs on XLA" in ddp
    assert any(rule == "XLA003" and "init_distributed_mode" in message for rule, _, message in found["train.py"])
