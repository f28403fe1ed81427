"""A single-file run and ``from utils import *`` (XLA003, held-out list 16, caser_pytorch): the star
import binds every public name of ``utils.py``, but only what the script names runs.  A ``gpu()``
helper that holds ``tensor.cuda()`` is on the script's path when the script calls it or reads it
(``map(gpu, xs)``, ``to_gpu = gpu``), not when the script never names it (``out.cpu()`` and
``dict(gpu=True)`` name an attribute and a keyword, not the helper).  The module's own top-level code
runs on the import whatever the script names, and a script that looks names up at run time
(``eval``, ``globals()``) may run any of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import invoke
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

UTILS = """\
import torch


def gpu(tensor, on=False):
    return tensor.cuda() if on else tensor


def cpu(tensor):
    return tensor.cpu() if tensor.is_cuda else tensor


def shuffle(items):
    return list(items)
"""

# The script calls ``shuffle`` only; ``out.cpu()`` and ``dict(gpu=True)`` name no helper.
TRAIN = """\
import torch
from utils import *

model = torch.nn.Linear(3, 3).to("xla")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in shuffle([torch.randn(2, 3)]):
    opt.zero_grad()
    out = model(x.to("xla"))
    out.sum().backward()
    opt.step()
    print(out.cpu(), dict(gpu=True))
"""

CALLED = TRAIN.replace("for x in shuffle([torch.randn(2, 3)]):", "for x in shuffle([gpu(torch.randn(2, 3))]):")
# Read, not called where it is named: the helper runs all the same.
MAPPED = TRAIN.replace("for x in shuffle([torch.randn(2, 3)]):", "for x in map(gpu, [torch.randn(2, 3)]):")
ALIASED = TRAIN.replace("model = torch.nn", "to_gpu = gpu\nmodel = torch.nn")

# A name looked up at run time (ReChorus: ``eval('{0}'.format(args.runner))``) may be any of them.
EVALUATED = TRAIN.replace("model = torch.nn", 'pick = eval("{0}".format("shuffle"))\nmodel = torch.nn')

# The module's top-level code holds the CUDA choice: it runs on the import.
SETS_DEVICE = UTILS + "torch.cuda.set_device(0)\n"

MESSAGE = "what this file uses of utils.py, which this run does not convert, holds a CUDA device choice"


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _xla003(folder: Path, files: dict[str, str], target: str) -> list[tuple[int, str]]:
    write_project(folder, "proj", files)
    found = unfixed_findings(folder, ["train.py"], target)["train.py"]
    return [(line, message) for rule, line, message in found if rule == "XLA003"]


@pytest.mark.parametrize("target", TARGETS)
def test_helpers_the_script_never_names_are_off_its_path(tmp_path: Path, target: str) -> None:
    assert _xla003(tmp_path, {"utils.py": UTILS, "train.py": TRAIN}, target) == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("train", [CALLED, MAPPED, ALIASED], ids=["called", "mapped", "aliased"])
def test_a_helper_the_script_calls_or_reads_is_an_error_at_the_star_import(
    tmp_path: Path, target: str, train: str
) -> None:
    found = _xla003(tmp_path, {"utils.py": UTILS, "train.py": train}, target)
    assert [line for line, _ in found] == [2], found
    assert found[0][1].startswith(MESSAGE), found
    assert "`gpu` has `tensor.cuda()` (line 5)" in found[0][1], found
    assert "`cpu`" not in found[0][1], found  # (never named: not listed)


@pytest.mark.parametrize("target", TARGETS)
def test_a_name_looked_up_at_run_time_may_be_any_helper(tmp_path: Path, target: str) -> None:
    found = _xla003(tmp_path, {"utils.py": UTILS, "train.py": EVALUATED}, target)
    assert [line for line, _ in found] == [2], found
    assert "`gpu` has `tensor.cuda()` (line 5)" in found[0][1], found


@pytest.mark.parametrize("target", TARGETS)
def test_the_modules_own_top_level_code_runs_on_the_star_import(tmp_path: Path, target: str) -> None:
    found = _xla003(tmp_path, {"utils.py": SETS_DEVICE, "train.py": TRAIN}, target)
    assert [line for line, _ in found] == [2], found
    assert found[0][1].startswith(MESSAGE), found
    assert "torch.cuda.set_device(0)" in found[0][1] and "`gpu`" not in found[0][1], found


@pytest.mark.parametrize("target", TARGETS)
def test_a_second_single_file_run_says_the_same(tmp_path: Path, target: str) -> None:
    write_project(tmp_path, "proj", {"utils.py": UTILS, "train.py": CALLED})
    invoke("convert", "train.py", "--target", target, cwd=tmp_path)
    converted = (tmp_path / "train.py").read_text()
    again = invoke("convert", "train.py", "--target", target, "--diff", cwd=tmp_path)
    assert "+++ " not in again.output, again.output
    assert (tmp_path / "train.py").read_text() == converted
    assert (tmp_path / "utils.py").read_text() == UTILS  # (a single-file run leaves it)
    found = unfixed_findings(tmp_path, ["train.py"], target)["train.py"]
    star = converted.splitlines().index("from utils import *") + 1  # (below the port's imports now)
    assert [line for rule, line, _ in found if rule == "XLA003"] == [star], found
