"""The loop that drives an ``update`` of another module (obligation 4, issue 32), where a call the
tool cannot tell built the receiver: a class looked up at run time (``algos.get_class(name)(...)``,
DomainBed's shape, its script in a package run as ``python -m pkg.scripts.train``) or an agent that a
function of the script makes with Hydra (``hydra.utils.instantiate(cfg)``, drqv2's shape) or that Hydra's
``instantiate`` builds itself (drq's shape; its class named only in the config).  ``update``
is a name Python's dicts define too: it is matched to the project's stepping ``update`` only on such
a receiver, not on a dict, a parameter (a meter handed in) or a class the tool knows.  The whole run
puts the barrier in the loop and reports no XLA306 in the module of the step; a single-file run puts
it there too, and says nothing of the module's plain step on the device the script hands in (on one
process it trains on XLA as it is: tests/project/test_single_file_reach.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.project.roots import find_root
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]

ALGOS = """\
import torch


class Algorithm(torch.nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = torch.nn.Linear(4, 2)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr)

    def update(self, x, y):
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return {"loss": loss.item()}


def get_class(name):
    return globals()[name]


def default_hparams(name):
    return {"lr": 1e-3}
"""

TRAIN = """\
import torch

from pkg import algos


def options():
    return dict(seed=0)


def main(name, loader):
    device = torch.device("cuda")
    hparams = algos.default_hparams(name)
    hparams.update(lr=1e-2)
    algorithm_class = algos.get_class(name)
    algorithm = algorithm_class(hparams["lr"])
    algorithm.to(device)
    for x, y in loader:
        opts = options()
        opts.update(step=1)
        vals = algorithm.update(x.to(device), y.to(device))
"""

# ``update`` on values whose class is known or that come in: a dict, a meter handed in (and, in
# TRAIN, on what a project function or a function of the file that returns a dict gives).
NOT_AGENTS = """\
import torch

from pkg import algos


def main(loader, meter, model):
    device = torch.device("cuda")
    model.to(device)
    stats = {}
    for x in loader:
        out = model(x.to(device))
        stats.update(last=out.sum())
        meter.update(out.mean())
"""

AGENT = """\
import torch


class Agent:
    def __init__(self, device, lr):
        self.device = device
        self.net = torch.nn.Linear(4, 1).to(device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr)

    def update_net(self, x):
        loss = self.net(x).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def update(self, replay_iter, step):
        x = torch.as_tensor(next(replay_iter), device=self.device)
        return {"loss": self.update_net(x)}
"""

WORKSPACE = """\
import hydra
import torch


def make_agent(cfg):
    return hydra.utils.instantiate(cfg)


class Workspace:
    def __init__(self, cfg):
        self.device = torch.device("cuda")
        self.agent = make_agent(cfg.agent)

    def train(self, replay_iter):
        step = 0
        while step < 100:
            metrics = self.agent.update(replay_iter, step)
            step += 1
"""


def _write(folder: Path, files: dict[str, str]) -> Path:
    """The files, with no project marker (no .git, no pyproject.toml)."""
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _findings(folder: Path, names: list[str], target: str) -> dict[str, list[Finding]]:
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).resolve().relative_to(folder.resolve()).as_posix(): r.findings for r in reports}


def _rules(findings: list[Finding]) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings if f.rule in ("XLA003", "XLA301", "XLA302", "XLA303", "XLA306"))


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    files = {"pkg/__init__.py": "", "pkg/scripts/__init__.py": "", "pkg/algos.py": ALGOS, "pkg/scripts/train.py": TRAIN}
    return _write(tmp_path, files)


def test_a_root_without_a_marker_is_the_outermost_package(package: Path) -> None:
    assert find_root(package / "pkg" / "scripts" / "train.py") == package / "pkg"
    assert find_root(package / "pkg" / "scripts" / "train.py", top=package / "pkg") == package / "pkg"
    assert find_root(package / "pkg" / "algos.py", top=package) == package


@pytest.mark.parametrize("target", TARGETS)
def test_a_package_scripts_loop_drives_the_update_of_a_class_looked_up_at_run_time(package: Path, target: str) -> None:
    """Every file of the run is under ``pkg/`` (the run's root): ``from pkg import algos`` is
    pkg/algos.py, found from the folder above the package."""
    names = ["pkg/__init__.py", "pkg/scripts/__init__.py", "pkg/algos.py", "pkg/scripts/train.py"]
    found = _findings(package, names, target)
    assert _rules(found["pkg/scripts/train.py"]) == [("XLA302", 17)]  # (the barrier of a device loader)
    assert _rules(found["pkg/algos.py"]) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_of_the_packages_script_drives_it(package: Path, target: str) -> None:
    found = _findings(package, ["pkg/scripts/train.py"], target)["pkg/scripts/train.py"]
    # ``Algorithm.update`` takes a plain step on the device the script moves it to: on one process, closed
    # by the loop's barrier, it trains on XLA as it is (no XLA003; none at ``hparams.update``, ``opts.update``).
    assert _rules(found) == [("XLA302", 17)]


@pytest.mark.parametrize("target", TARGETS)
def test_update_on_a_dict_or_a_value_handed_in_drives_nothing(package: Path, target: str) -> None:
    (package / "pkg" / "scripts" / "evaluate.py").write_text(NOT_AGENTS)
    names = ["pkg/__init__.py", "pkg/scripts/__init__.py", "pkg/algos.py", "pkg/scripts/evaluate.py"]
    found = _findings(package, names, target)
    # an evaluation loop (it reads nothing to the host): XLA303's barrier, no training loop's
    assert _rules(found["pkg/scripts/evaluate.py"]) == [("XLA303", 10)]
    (undriven,) = [f for f in found["pkg/algos.py"] if f.rule == "XLA306"]
    assert "no loop of this file calls `Algorithm.update`, nor any loop that the tool could follow" in undriven.message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["agent.py", "train.py"], ["train.py"]], ids=["whole", "single"])
def test_an_agent_that_hydra_instantiates_is_driven_by_the_loop_that_calls_its_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _write(tmp_path, {"agent.py": AGENT, "train.py": WORKSPACE})
    found = _findings(folder, names, target)
    # (a single-file run: the agent's plain step on the device handed in is right on one process, no XLA003)
    assert _rules(found["train.py"]) == [("XLA301", 16)]
    assert _rules(found.get("agent.py", [])) == []


# drq's shape: the agent is ``hydra.utils.instantiate(cfg.agent)`` itself (the class is named only in
# the config), bound to an attribute in one method and updated in another's loop; and the alias
# ``from hydra.utils import instantiate as build`` with a local name.
WORKSPACE_DIRECT = WORKSPACE.replace("\n\ndef make_agent(cfg):\n    return hydra.utils.instantiate(cfg)\n", "").replace(
    "make_agent(cfg.agent)", "hydra.utils.instantiate(cfg.agent)"
)
TRAIN_BUILD = """\
import torch
from hydra.utils import instantiate as build


def main(cfg, replay_iter):
    agent = build(cfg.agent)
    for step in range(100):
        metrics = agent.update(replay_iter, step)
"""
# The same ``update`` on a value handed in (a parameter): not tied to the agent; the agent's step
# stays undriven (XLA306), and its message says what counts for a container's method name.
TRAIN_HANDED = """\
import torch


def main(agent, replay_iter):
    for step in range(100):
        metrics = agent.update(replay_iter, step)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["agent.py", "train.py"], ["train.py"]], ids=["whole", "single"])
@pytest.mark.parametrize(
    ("train", "line"), [(WORKSPACE_DIRECT, 12), (TRAIN_BUILD, 7)], ids=["instantiate-attribute", "alias-local"]
)
def test_an_agent_built_by_hydra_instantiate_itself_is_driven_by_the_loop_that_calls_its_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str], train: str, line: int
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _write(tmp_path, {"agent.py": AGENT, "train.py": train})
    found = _findings(folder, names, target)
    assert _rules(found["train.py"]) == [("XLA301", line)]
    assert _rules(found.get("agent.py", [])) == []  # (no XLA306: the loop is found)


@pytest.mark.parametrize("target", TARGETS)
def test_update_on_a_parameter_leaves_the_agents_step_undriven_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _write(tmp_path, {"agent.py": AGENT, "train.py": TRAIN_HANDED})
    found = _findings(folder, ["agent.py", "train.py"], target)
    assert _rules(found["train.py"]) == []
    (undriven,) = [f for f in found["agent.py"] if f.rule == "XLA306"]
    assert undriven.line == 19  # (`self.update_net(x)`, which steps)
    barrier = "torch_xla.sync()" if target == "2.9" else "xm.mark_step()"
    assert (
        "`update` is a method of Python's containers too: only a value that a call the tool cannot tell the class "
        "of built counts, `agent = hydra.utils.instantiate(cfg.agent)` or `agent = make_agent(cfg)`, not a "
        "parameter, and only where its name says it may be that class: not `metrics`, `stats`)" in undriven.message
    ), undriven.message
    assert undriven.message.endswith(
        "if the script whose loop calls it is not in this run, convert it with this file (the barrier goes there); "
        f"else call {barrier} after each call of `update` in that loop"
    ), undriven.message


# Review 22, item 5: ``hydra.utils.instantiate`` builds meters and metrics as often as agents.  A loop
# calling ``update`` on an instantiated value whose name says nothing of the stepping class (``metrics``,
# ``stats``) drives nothing: no barrier, no XLA301; the agent's loop keeps its barrier.
TRAIN_METRICS = """\
import hydra
import torch


def main(cfg, replay_iter):
    agent = hydra.utils.instantiate(cfg.agent)
    metrics = hydra.utils.instantiate(cfg.metrics)
    for step in range(100):
        agent.update(replay_iter, step)
    for step in range(10):
        metrics.update(replay_iter, step)
    stats = hydra.utils.instantiate(cfg.stats)
    for k in range(3):
        stats.update({"k": k})
"""
ONLY_METRICS = TRAIN_METRICS.replace("        agent.update(replay_iter, step)\n", "        pass\n")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["agent.py", "train.py"], ["train.py"]], ids=["whole", "single"])
def test_update_on_instantiated_metrics_or_stats_drives_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _write(tmp_path, {"agent.py": AGENT, "train.py": TRAIN_METRICS})
    found = _findings(folder, names, target)
    (loop,) = [f for f in found["train.py"] if f.rule == "XLA301"]
    assert (loop.line, loop.col) == (8, 5)
    assert "training loop" in loop.message
    assert _rules(found.get("agent.py", [])) == []


@pytest.mark.parametrize("target", TARGETS)
def test_with_only_metrics_loops_the_agents_step_stays_undriven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _write(tmp_path, {"agent.py": AGENT, "train.py": ONLY_METRICS})
    found = _findings(folder, ["agent.py", "train.py"], target)
    assert _rules(found["train.py"]) == []
    (undriven,) = [f for f in found["agent.py"] if f.rule == "XLA306"]
    assert (undriven.line, undriven.col) == (19, 25)
    assert undriven.message.startswith(
        "`self.update_net(x)` in `Agent.update` has no step barrier: no loop of this file"
    )
    assert "only where its name says it may be that class: not `metrics`, `stats`)" in undriven.message
