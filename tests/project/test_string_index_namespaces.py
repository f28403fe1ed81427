"""A CUDA index carried in a namespace to another module (deep_gcns_torch's ogbn_proteins, held-out
list 20): ``--device`` is ``type=int, default=0``; train.py builds ``torch.device("cuda:" +
str(args.device))`` and hands ``args`` to ``Net(args)``, whose ``__init__`` in model.py does
``.to(args.device)``: ``.to(0)`` is cuda:0, which raises without CUDA.  Converted as a project,
model.py's move becomes the XLA device (XLA103, naming train.py); with train.py converted alone,
XLA103 reports the call with model.py's line.  Nothing where train.py binds ``args.device`` to the
device before handing it on (it is a device then, no index)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]
DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}

ARGS = """\
import argparse


def get_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--use_gpu", action="store_true")
    p.add_argument("--device", type=int, default=0, help="which gpu to use if any")
    return p.parse_args(argv)
"""
MODEL = """\
import torch


class Net(torch.nn.Module):
    def __init__(self, args):
        super().__init__()
        self.lin = torch.nn.Linear(8, 1)
        self.table = torch.linspace(-1.0, 1.0, 800).reshape(100, 8).to(args.device)

    def forward(self, idx):
        return self.lin(self.table[idx])
"""
TRAIN = """\
import torch

from args import get_args
from model import Net


def main():
    args = get_args()
    if args.use_gpu:
        device = torch.device("cuda:" + str(args.device))
    else:
        device = torch.device("cpu"){rebind}
    torch.manual_seed(0)
    model = Net({handed}).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        idx = torch.arange(step, step + 8).to(device)
        loss = (model(idx) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {{step}} loss {{loss.item():.6f}}")


main()
"""
STEPS = 10  # enough for the executed test's steady-state check (warm-up, then five steps)


def files(rebind: str = "", handed: str = "args") -> dict[str, str]:
    train = TRAIN.format(rebind=rebind, handed=handed).replace("STEPS", str(STEPS))
    return {"args.py": ARGS, "model.py": MODEL, "train.py": train}


def _reports(tmp_path: Path, target: str, names: list[str], **fields: str) -> dict[str, list[tuple[int, str, bool]]]:
    write_project(tmp_path, "strindex", files(**fields))
    job = Job("check", target, RuleSelection())
    reports = run([(str(tmp_path / name), job) for name in names], workers=1)
    return {
        Path(r.path).name: [(f.line, f.message, f.fixed) for f in r.findings if f.rule == "XLA103"] for r in reports
    }


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("handed", ["args", "args=args"], ids=["positional", "keyword"])
def test_converted_as_a_project_the_move_in_the_other_module_becomes_the_xla_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, handed: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _reports(tmp_path, target, ["args.py", "model.py", "train.py"], handed=handed)
    assert found["train.py"] == [] and found["args.py"] == []
    ((line, message, fixed),) = found["model.py"]
    assert (line, fixed) == (8, True)
    assert message == (
        f"args.device -> {DEVICE[target]}: train.py hands `Net` its `args`, whose `device` is a CUDA index there "
        "(a `cuda:` device string is built from it): an integer device is cuda:N, which fails without CUDA"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_train_py_converted_alone_reports_the_call_with_the_other_modules_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    ((line, message, fixed),) = _reports(tmp_path, target, ["train.py"])["train.py"]
    assert (line, fixed) == (14, False)
    assert message.startswith(
        "`Net` (model.py, which this run does not convert) moves to `args.device` (`torch.linspace(-1.0, 1.0, "
        '800).reshape(100, 8).to(args.device)`, line 8), and `args.device` is a CUDA index here (`"cuda:" + '
        "str(args.device)`): an integer device is cuda:N"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_nothing_where_the_attribute_is_bound_to_the_device_before_it_is_handed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    rebind = "\n    args.device = device"
    assert _reports(tmp_path, target, ["args.py", "model.py", "train.py"], rebind=rebind) == {
        "args.py": [],
        "model.py": [],
        "train.py": [],
    }
    assert _reports(tmp_path / "alone", target, ["train.py"], rebind=rebind) == {"train.py": []}


OTHER = """\
import argparse

import torch

from model import Net


@torch.no_grad()
def evaluate():
    cfg = argparse.Namespace(device="cpu")
    return Net(cfg)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_caller_handing_a_namespace_without_the_index_leaves_the_move_and_reports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    # evaluate.py hands `Net` a namespace whose `device` is "cpu": the XLA device would move its
    # table too, so the move stays, reported with both calls.
    monkeypatch.chdir(tmp_path)
    write_project(tmp_path, "strindex", {**files(), "evaluate.py": OTHER})
    job = Job("check", target, RuleSelection())
    names = ["args.py", "model.py", "train.py", "evaluate.py"]
    reports = run([(str(tmp_path / name), job) for name in names], workers=1)
    found = {
        Path(r.path).name: [(f.line, f.message, f.fixed) for f in r.findings if f.rule == "XLA103"] for r in reports
    }
    assert found["train.py"] == found["args.py"] == found["evaluate.py"] == []
    ((line, message, fixed),) = found["model.py"]
    assert (line, fixed) == (8, False)
    assert message == (
        "train.py hands `Net` its `args`, whose `device` is a CUDA index there (a `cuda:` device string is built "
        "from it), but evaluate.py, line 11 hands it something whose `device` is not one: left as it is; where it "
        "is an index, move to the XLA device instead (an integer device is cuda:N, which fails without CUDA)"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_string_only_printed_hands_no_index_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    project = files()
    project["train.py"] = project["train.py"].replace(
        '        device = torch.device("cuda:" + str(args.device))',
        '        print("cuda:" + str(args.device))\n        device = torch.device("cuda")',
    )
    write_project(tmp_path, "strindex", project)
    job = Job("check", target, RuleSelection())
    reports = run([(str(tmp_path / name), job) for name in ["args.py", "model.py", "train.py"]], workers=1)
    assert [(Path(r.path).name, f.line) for r in reports for f in r.findings if f.rule == "XLA103"] == []


# A caller in a file that names no torch (the run does not parse it: its summary is unread): what it
# hands `Net` is not known, so the move stays, reported.
SERVE = """\
import argparse

from model import Net


def build(table_size):
    cfg = argparse.Namespace(size=table_size)
    return Net(cfg)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_caller_in_a_file_without_torch_leaves_the_move_and_reports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write_project(tmp_path, "strindex", {**files(), "serve.py": SERVE})
    job = Job("check", target, RuleSelection())
    names = ["args.py", "model.py", "train.py", "serve.py"]
    reports = run([(str(tmp_path / name), job) for name in names], workers=1)
    found = {
        Path(r.path).name: [(f.line, f.message, f.fixed) for f in r.findings if f.rule == "XLA103"] for r in reports
    }
    assert found["train.py"] == found["args.py"] == found["serve.py"] == []
    ((line, message, fixed),) = found["model.py"]
    assert (line, fixed) == (8, False)
    assert message == (
        "train.py hands `Net` its `args`, whose `device` is a CUDA index there (a `cuda:` device string is built "
        "from it), but serve.py may call it too, where the tool does not read (it names no torch): left as it is; "
        "where it is an index, move to the XLA device instead (an integer device is cuda:N, which fails without CUDA)"
    )
