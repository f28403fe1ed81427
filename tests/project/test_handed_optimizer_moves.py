"""XLA203 at a move of a model a callable is handed next to the optimizer its caller built
(torchdrug's ``core.Engine(task, ..., optimizer, gpus=[0])`` doing ``task = task.cuda(self.device)``):
on XLA the move replaces the Parameter objects, so the optimizer handed in steps stale CPU copies.
The finding is held until the run's files are seen: a run of the module alone (a library whose
callers are outside it) reports it at the move; a run with a file that calls the class with an
optimizer reports that caller's optimizer instead (moved first there, which makes the callee's
move keep the parameters), not the move.  A class that builds the optimizer again after the move,
or sets its groups, gets no finding; ``load_state_dict`` repairs nothing (it keeps the optimizer's
own Parameter objects)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

_ENGINE = """import torch


class Engine:
    def __init__(self, task, train_set, optimizer, gpus=None):
        self.device = torch.device(gpus[0]) if gpus else torch.device("cpu")
        if self.device.type == "cuda":
            task = task.cuda(self.device)
        self.model = task
        self.train_set = train_set
        self.optimizer = optimizer

    def train(self):
        for batch in self.train_set:
            loss = self.model(batch.to(self.device)).sum()
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
"""
_RUN = """import torch

from pkg.engine import Engine

task = torch.nn.Linear(4, 1)
optimizer = torch.optim.Adam(task.parameters(), lr=1e-3)
solver = Engine(task, [torch.ones(2, 4)], optimizer, gpus=[0])
solver.train()
"""
_MOVE = "`task.cuda(self.device)` moves `task` to the XLA device, and is handed an optimizer as `optimizer`"


def _convert(folder: Path, files: dict[str, str], converted: list[str], target: str) -> dict[str, list[str]]:
    """Each converted file's XLA203 findings (``*`` first when fixed)."""
    (folder / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    job = Job("write", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in converted], workers=1)
    return {
        Path(report.path).resolve().relative_to(folder.resolve()).as_posix(): [
            ("* " if f.fixed else "") + f"{f.line}: {f.message}" for f in report.findings if f.rule == "XLA203"
        ]
        for report in reports
    }


def _files(engine: str = _ENGINE) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/engine.py": engine, "run.py": _RUN}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_module_alone_reports_the_move_of_the_handed_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _convert(tmp_path, _files(), ["pkg/engine.py"], target)
    converted = (tmp_path / "pkg/engine.py").read_text().splitlines()
    line = next(n for n, text in enumerate(converted, 1) if "task = task.to(" in text)  # the ported move
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    assert len(found["pkg/engine.py"]) == 1
    message = found["pkg/engine.py"][0]
    assert message.startswith(f"{line}: {_MOVE}"), message
    assert "no file of this run calls `Engine` with one" in message
    assert "so `optimizer` steps the stale CPU copies" in message
    # Converted again: nothing more changes, and the finding stands at the ported move.
    again = _convert(tmp_path, {}, ["pkg/engine.py"], target)
    assert (tmp_path / "pkg/engine.py").read_text().splitlines() == converted
    assert [m.split(" moves `task`")[0] for m in again["pkg/engine.py"]] == [f"{line}: `task.to({device})`"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_caller_of_the_run_is_reported_at_its_optimizer_not_the_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    files = _files()
    found = _convert(tmp_path, files, list(files), target)
    assert found["pkg/engine.py"] == []
    assert len(found["run.py"]) == 1
    assert "the optimizer is built while `task` is on the CPU and `Engine` (pkg/engine.py) moves" in found["run.py"][0]


@pytest.mark.parametrize(
    ("change", "reported"),
    [
        # Built again over the moved model: the handed one is not kept.
        (
            (
                "        self.optimizer = optimizer\n",
                "        self.optimizer = type(optimizer)(task.parameters(), **optimizer.defaults)\n",
            ),
            False,
        ),
        # Its groups set to the moved parameters.
        (
            (
                "        self.model = task\n",
                '        self.model = task\n        optimizer.param_groups[0]["params"] = list(task.parameters())\n',
            ),
            False,
        ),
        # Handed to a call together with the model (which may re-point it).
        (("        self.model = task\n", "        self.model = task\n        rebind(task, optimizer)\n"), False),
        # Built again by another method of the class.
        (
            (
                "    def train(self):\n",
                "    def setup(self):\n        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)\n\n    def train(self):\n",
            ),
            False,
        ),
        # load_state_dict keeps the optimizer's own (CPU) Parameter objects.
        (
            (
                "        self.optimizer = optimizer\n",
                "        self.optimizer = optimizer\n        self.optimizer.load_state_dict(optimizer.state_dict())\n",
            ),
            True,
        ),
        # A checkpoint of both in another method reads them, it builds nothing.
        (
            (
                "    def train(self):\n",
                '    def save(self, path):\n        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}\n'
                "        torch.save(state, path)\n\n    def train(self):\n",
            ),
            True,
        ),
        # A function handed both (not a class placing what it is handed) is left to its callers.
        (("class Engine:\n    def __init__(self, task,", "class Engine:\n    def setup(self, task,"), False),
        # The move goes to the CPU: nothing is replaced by XLA.
        (("task = task.cuda(self.device)", "task = task.cpu()"), False),
    ],
)
def test_a_repaired_optimizer_gets_no_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: tuple[str, str], reported: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    old, new = change
    assert old in _ENGINE
    found = _convert(tmp_path, _files(_ENGINE.replace(old, new)), ["pkg/engine.py"], "2.9")
    assert bool(found["pkg/engine.py"]) is reported, found
