"""Executed: obligations across a project, on torch_xla 2.9 (CPU).

Obligation 2 (the optimizer holds the parameters as they are after the move): moving a
module to XLA replaces its Parameter objects, so an optimizer built before the move steps
CPU copies: the ported project must train the moved model, and the same project converted
without XLA203 must not (the negative control shows the shapes are what breaks training).

Obligation 3 (each batch reaches the XLA device before the forward): an ``engine.py`` whose
training and evaluation functions are handed the model and the loaders by ``main.py``, and
move only part of each batch: the ported project (loaders wrapped where they are handed,
XLA302) trains like the original, with no new graph after the warm-up; converted without
XLA302 its first forward fails on a CPU tensor.

A class that builds its own optimizer in its constructor and is moved by the caller, or by a
helper of another module that moves what it is handed (XLA203 reports it at the move, with no
port): the converted script runs on XLA and trains nothing.  A module the optimizer steps,
saved as a CPU module and moved back (XLA203 at the ``.cpu()``, with no port): in eager mode
it keeps training, converted it stops.  A module whose ``__init__`` moves itself after building
optimizers over the networks it registers (XLA203 at the ``self.to``, with no port): converted,
it trains nothing, and with the move first, as the finding says, it trains.  Optimizers kept in a
namespace and a dict, their steps ported (XLA201): both networks train on XLA.  An optimizer that
another module's class keeps on its instances (``gan.opt_g``), its step ported (XLA201): the
network trains on XLA, and with the ported step taken out it does not.  An optimizer built in
main.py and handed to another module's training function and trainer class (``opt.step()``,
``self.opt.step()`` there, XLA201 ported with the run's files seen): the losses match the eager
run, no graph is compiled after the warm-up, and with the ported steps taken out nothing trains.
The same for an optimizer of another module's class held an instance deeper (``self.gan.opt_g``)
and optimizers kept in a list filled by ``append``, stepped in a loop over it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from codemods import RuleSelection, convert_source
from codemods.training.rules.init_moves import CONTAINER_MOVED_IN_INIT
from tests.support.executed import (
    RUN_TIMEOUT,
    XLA_RUNNER,
    Executed,
    barrier_per_step_problems,
    convert_folder,
    loss_problems,
    optimizer_problems,
    parse_run,
    run_command,
    run_environment,
    steady_problems,
    xla_problems,
)
from tests.support.fixtures import output_bytes

pytestmark = pytest.mark.executed

MODELS = """\
import torch
import torch.nn as nn


class TwoPart(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.relu(self.vision(x)))
"""

# Shape 1: parameter groups of a model handed in, moved later in the same function
# (through DataParallel).  Shape 2: a class of another module moves ``kwargs["model"]``
# after the caller built the optimizer.
TRAINING = """\
import torch
import torch.nn as nn


def fit(model, batches, lr):
    optimizer = torch.optim.SGD(params=[{"params": model.vision.parameters(), "lr": lr},
                                        {"params": model.head.parameters(), "lr": 0.5 * lr}], momentum=0.9)
    model = nn.DataParallel(model)
    model.cuda()
    for step, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")
    return model


class Learner:
    def __init__(self, **kwargs):
        self.model = kwargs["model"].cuda()
        self.optimizer = kwargs["optimizer"]

    def train(self, batches):
        for step, (x, y) in enumerate(batches):
            self.optimizer.zero_grad()
            loss = ((self.model(x.cuda()) - y.cuda()) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            print(f"step {step} loss {loss.item()}")
"""

MAIN = """\
import torch
from models import TwoPart
from training import Learner, fit


def changed(before, module):
    after = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    return any(not torch.equal(before[k], after[k]) for k in before)


def main():
    torch.manual_seed(0)
    batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(6)]
    grouped = TwoPart()
    before = {k: v.detach().clone() for k, v in grouped.state_dict().items()}
    fit(grouped, batches, 0.05)
    print(f"grouped {next(grouped.parameters()).device.type} changed {changed(before, grouped)}")
    handed = TwoPart()
    before = {k: v.detach().clone() for k, v in handed.state_dict().items()}
    optimizer = torch.optim.Adam(handed.parameters(), 1e-2)
    learner = Learner(model=handed, optimizer=optimizer)
    learner.train(batches)
    print(f"handed {next(learner.model.parameters()).device.type} changed {changed(before, learner.model)}")


if __name__ == "__main__":
    main()
"""

RESULT = re.compile(r"^(grouped|handed) (\w+) changed (True|False)$", re.MULTILINE)


STEPS = 6  # per training; main.py trains two models, one after the other
WARMUP = 3  # steps in which each training may still compile new graphs (tests/support/executed.py)


def _graphs_after_warm_up(compiles: list[int]) -> list[int]:
    """New graphs compiled in each training's steps after its warm-up (0: one graph per step
    shape, a barrier at every step; a loop without one compiles a bigger graph each step)."""
    assert len(compiles) == 2 * STEPS, compiles
    return [compiles[start + STEPS - 1] - compiles[start + WARMUP - 1] for start in (0, STEPS)]


def _converted_run(
    folder: Path, selection: RuleSelection | None = None
) -> tuple[dict[str, tuple[str, bool]], str, list[str], list[int]]:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'o2'\n")
    (folder / "models.py").write_text(MODELS)
    (folder / "training.py").write_text(TRAINING)
    (folder / "main.py").write_text(MAIN)
    convert_folder(folder, selection)
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    results = {name: (device, flag == "True") for name, device, flag in RESULT.findall(output)}
    run = parse_run(output, folder)
    return (
        results,
        (folder / "main.py").read_text() + (folder / "training.py").read_text(),
        optimizer_problems(run),
        run.compiles,
    )


def test_optimizers_built_before_their_models_move_train_the_moved_models_once_ported(tmp_path: Path) -> None:
    results, code, problems, compiles = _converted_run(tmp_path / "ported")
    assert "model.vision.to(torch_xla.device()).parameters()" in code
    assert "torch.optim.Adam(handed.to(torch_xla.device()).parameters(), 1e-2)" in code
    assert results == {"grouped": ("xla", True), "handed": ("xla", True)}
    assert not problems
    assert _graphs_after_warm_up(compiles) == [0, 0], compiles


def test_without_the_port_the_moved_models_keep_their_initial_weights(tmp_path: Path) -> None:
    """The negative control: the same project converted with XLA203 off runs on XLA, but its
    optimizers step the CPU copies the moves replaced, and the moved models never change."""
    results, code, problems, _ = _converted_run(tmp_path / "unported", RuleSelection(ignore=("XLA203",)))
    assert "torch.optim.Adam(handed.parameters(), 1e-2)" in code
    assert results == {"grouped": ("xla", False), "handed": ("xla", False)}
    assert problems == ["the optimizers stepped parameters on cpu, not only on xla"]


def test_without_the_step_barriers_each_step_compiles_new_graphs(tmp_path: Path) -> None:
    """The graph count's negative control: ported but with the step barriers off (XLA201,
    XLA301), the models train and every step after the warm-up compiles new graphs."""
    selection = RuleSelection(ignore=("XLA201", "XLA301"))
    results, _, problems, compiles = _converted_run(tmp_path / "no-barrier", selection)
    assert results == {"grouped": ("xla", True), "handed": ("xla", True)}
    assert not problems
    assert all(new > 0 for new in _graphs_after_warm_up(compiles)), compiles


ENGINE = """\
import torch


def train_one_epoch(model, data_loader, optimizer, device, epoch, steps_per_epoch):
    model.train()
    for data_iter_step, (examples, labels, weights) in enumerate(data_loader):
        weights = weights.to(device, non_blocking=True)
        loss = model(examples, labels, weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {epoch * steps_per_epoch + data_iter_step} loss {loss.item()}")


@torch.no_grad()
def evaluate(data_loader, model):
    model.eval()
    total = 0.0
    for examples, labels, weights in data_loader:
        total += model(examples, labels, weights).item()
    print(f"val {total / len(data_loader)}")
"""

ENGINE_MAIN = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from engine import evaluate, train_one_epoch


class WeightedRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)

    def forward(self, examples, labels, weights):
        return (((self.linear(examples) - labels) ** 2) * weights).mean()


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = WeightedRegression()
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = TensorDataset(torch.randn(48, 4), torch.randn(48, 1), torch.rand(48, 1))
    data_loader_train = DataLoader(data, batch_size=8)
    data_loader_val = DataLoader(data, batch_size=16)
    for epoch in range(3):
        train_one_epoch(model, data_loader_train, optimizer, device, epoch, len(data_loader_train))
        evaluate(data_loader_val, model)


if __name__ == "__main__":
    main()
"""

ENGINE_CASE = Executed("main.py", steps_per_epoch=6)


def _engine_project(folder: Path) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'o3'\n")
    (folder / "engine.py").write_text(ENGINE)
    (folder / "main.py").write_text(ENGINE_MAIN)
    return folder


def test_loaders_handed_to_another_modules_loops_are_wrapped_and_train_on_xla(tmp_path: Path) -> None:
    eager = _engine_project(tmp_path / "eager")
    want = parse_run(run_command([sys.executable, "main.py"], eager, run_environment()), eager)
    ported = _engine_project(tmp_path / "ported")
    convert_folder(ported)
    code = (ported / "main.py").read_text()
    assert "train_one_epoch(model, pl.MpDeviceLoader(data_loader_train, device), optimizer" in code
    assert "evaluate(pl.MpDeviceLoader(data_loader_val, device), model)" in code
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], ported, run_environment(PJRT_DEVICE="CPU"))
    got = parse_run(output, ported)
    assert len(got.losses) == 18
    assert not loss_problems(got, want)
    assert not xla_problems(got)
    assert not steady_problems(got, ENGINE_CASE)  # the loop's own barrier and the loader's: one graph per step
    assert not optimizer_problems(got)
    assert len(re.findall(r"^val ", output, re.MULTILINE)) == 3


def test_without_the_wrap_the_handed_batches_stay_on_the_cpu(tmp_path: Path) -> None:
    """The negative control: converted with XLA302 off, the engine's forward gets CPU tensors."""
    unported = _engine_project(tmp_path / "unported")
    convert_folder(unported, RuleSelection(ignore=("XLA302",)))
    assert "MpDeviceLoader" not in (unported / "main.py").read_text()
    result = subprocess.run(
        [sys.executable, str(XLA_RUNNER), "main.py"],
        cwd=unported,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode != 0
    assert "step 0 loss" not in result.stdout
    assert "Expected XLA tensor. Got: torch.FloatTensor" in result.stderr, result.stderr[-2000:]


OWN_NETS = """\
import torch.nn as nn
import torch.optim as optim


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optim = optim.SGD(params=self.parameters(), lr=0.1)

    def forward(self, x):
        return self.fc(x)
"""

OWN_MAIN = """\
import torch
import nets


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    G = nets.Generator().to(device)
    before = {k: v.detach().cpu().clone() for k, v in G.state_dict().items()}
    for step in range(4):
        G.optim.zero_grad()
        loss = (G(torch.randn(8, 4).to(device)) ** 2).mean()
        loss.backward()
        G.optim.step()
    after = {k: v.detach().cpu() for k, v in G.state_dict().items()}
    changed = any(not torch.equal(before[k], after[k]) for k in before)
    print(f"own {next(G.parameters()).device.type} changed {changed}")


if __name__ == "__main__":
    main()
"""


def test_a_class_that_builds_its_own_optimizer_and_moves_later_trains_nothing_as_xla203_says(tmp_path: Path) -> None:
    """BigGAN's shape, which XLA203 reports at the move and does not port: converted, the
    script runs on XLA, but ``G.optim`` steps the CPU parameters the move replaced, so the
    model never changes (the error says so)."""
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'own'\n")
    (folder / "nets.py").write_text(OWN_NETS)
    (folder / "main.py").write_text(OWN_MAIN)
    convert_folder(folder)
    assert "G = nets.Generator().to(device)" in (folder / "main.py").read_text()
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "own xla changed False" in output


OWN_HELPERS = """\
import torch


def to_gpu(x):
    if torch.cuda.is_available():
        return x.cuda()
    return x
"""


def test_a_class_with_its_own_optimizer_moved_by_a_helper_trains_nothing_as_xla203_says(tmp_path: Path) -> None:
    """The same class moved by a helper of another module that moves what it is handed
    (``G = to_gpu(nets.Generator())``): XLA203 reports the call, and converted, the model
    never changes."""
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'own'\n")
    (folder / "nets.py").write_text(OWN_NETS)
    (folder / "helpers.py").write_text(OWN_HELPERS)
    main = OWN_MAIN.replace("import nets\n", "import nets\nfrom helpers import to_gpu\n")
    (folder / "main.py").write_text(main.replace("G = nets.Generator().to(device)", "G = to_gpu(nets.Generator())"))
    convert_folder(folder)
    assert "return x.to(torch_xla.device())" in (folder / "helpers.py").read_text()
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "own xla changed False" in output


ROUND_TRIP = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, encoder, device):
        self.device = device
        self.encoder = encoder
        self.model = nn.Sequential(encoder, nn.Linear(8, 2)).to(device)
        self.optim = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train_epoch(self):
        for _ in range(3):
            loss = (self.model(torch.randn(4, 8).to(self.device)) ** 2).mean()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()

    def save(self, path):
        torch.save(self.encoder.cpu(), path)
        self.encoder.to(self.device)


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = Trainer(nn.Linear(8, 8), device)
    trainer.train_epoch()
    trainer.save("encoder.pt")
    before = {k: v.detach().cpu().clone() for k, v in trainer.encoder.state_dict().items()}
    trainer.train_epoch()
    after = {k: v.detach().cpu() for k, v in trainer.encoder.state_dict().items()}
    changed = any(not torch.equal(before[k], after[k]) for k in before)
    print(f"encoder {next(trainer.encoder.parameters()).device.type} trains after the save: {changed}")


if __name__ == "__main__":
    main()
"""


def test_a_module_saved_on_the_cpu_and_moved_back_stops_training_as_xla203_says(tmp_path: Path) -> None:
    """A submodule the optimizer steps, saved as a CPU module and moved back: it keeps
    training in eager mode on the CPU; converted (XLA203 reports the ``.cpu()``, with no
    port), it runs on XLA and the optimizer steps the Parameter objects the moves replaced."""
    folder = tmp_path / "trip"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'trip'\n")
    (folder / "main.py").write_text(ROUND_TRIP)
    eager = run_command([sys.executable, "main.py"], folder, run_environment())
    assert "encoder cpu trains after the save: True" in eager
    convert_folder(folder)
    assert "torch.save(self.encoder.cpu(), path)" in (folder / "main.py").read_text()
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "encoder xla trains after the save: False" in output


# XLA203's case of a solver that moves itself after building its optimizers, run as a script.
INIT_MOVE = (
    CONTAINER_MOVED_IN_INIT.lstrip("\n")
    + """

if __name__ == "__main__":
    torch.manual_seed(0)
    solver = Solver()
    before = solver.gen.weight.detach().cpu().clone()
    solver.train_loop(3)
    changed = not torch.equal(before, solver.gen.weight.detach().cpu())
    print(f"solver {solver.gen.weight.device.type} changed {changed}")
"""
)


def test_a_module_that_moves_itself_after_building_its_optimizers_trains_nothing_as_xla203_says(
    tmp_path: Path,
) -> None:
    """A solver whose ``__init__`` builds an optimizer per registered network, then runs
    ``self.to(self.device)`` (XLA203 reports the move, with no port): it trains in eager mode
    on the CPU; converted, it runs on XLA and the optimizers step the Parameter objects the
    move replaced.  The fix the finding names (the move before the optimizers) trains on XLA."""
    folder = tmp_path / "solver"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'solver'\n")
    (folder / "main.py").write_text(INIT_MOVE)
    eager = run_command([sys.executable, "main.py"], folder, run_environment())
    assert "solver cpu changed True" in eager
    convert_folder(folder)
    converted = (folder / "main.py").read_text()
    assert "        self.to(self.device)\n\n" in converted
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "solver xla changed False" in output
    move = "        self.to(self.device)\n"
    fixed = converted.replace(move, "").replace("        self.optims = {", move + "        self.optims = {")
    (folder / "main.py").write_text(fixed)
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "solver xla changed True" in output


KEPT_IN_CONTAINERS = """\
from types import SimpleNamespace

import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
nets = SimpleNamespace(gen=nn.Linear(4, 4).to(device), disc=nn.Linear(4, 1).to(device))
optims = SimpleNamespace(disc=torch.optim.Adam(nets.disc.parameters(), lr=1e-2))
keyed = {"gen": torch.optim.Adam(nets.gen.parameters(), lr=1e-2)}
before = [p.detach().cpu().clone() for p in (nets.gen.weight, nets.disc.weight)]
for step in range(3):
    x = torch.randn(8, 4, device=device)
    d_loss = nets.disc(nets.gen(x).detach()).mean()
    optims.disc.zero_grad()
    d_loss.backward()
    optims.disc.step()
    g_loss = -nets.disc(nets.gen(x)).mean()
    keyed["gen"].zero_grad()
    g_loss.backward()
    keyed["gen"].step()
after = [p.detach().cpu() for p in (nets.gen.weight, nets.disc.weight)]
changed = [not torch.equal(b, a) for b, a in zip(before, after)]
print(f"nets {nets.gen.weight.device.type} changed {changed}")
"""


def test_optimizers_kept_in_containers_are_stepped_by_xm_optimizer_step_on_xla(tmp_path: Path) -> None:
    """Optimizers kept in a namespace and a dict (XLA201 ports their steps): converted, each
    step is ``xm.optimizer_step`` on the container's member and both networks train on XLA;
    with the ported steps taken out, neither changes (the ported calls are what step them)."""
    conversion = convert_source(KEPT_IN_CONTAINERS)
    assert "XLA201" in {f.rule for f in conversion.findings if f.fixed}
    ported = conversion.output
    assert isinstance(ported, str)
    assert "    xm.optimizer_step(optims.disc)\n" in ported
    assert '    xm.optimizer_step(keyed["gen"])\n' in ported
    script = tmp_path / "train.py"
    script.write_text(ported)
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], tmp_path, run_environment(PJRT_DEVICE="CPU"))
    assert "nets xla changed [True, True]" in output
    unstepped = "".join(line for line in ported.splitlines(keepends=True) if "xm.optimizer_step(" not in line)
    script.write_text(unstepped)
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], tmp_path, run_environment(PJRT_DEVICE="CPU"))
    assert "nets xla changed [False, False]" in output


STAR_NET = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)
"""

# ``torch`` and ``nn`` come from net.py's imports, through the star import only.
STAR_STEPS = 10

STAR_TRAIN = f"""\
import argparse

from net import *


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-cuda", action="store_true", default=False)
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(0)
    model = Net()
    if args.cuda:
        model = model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = {{k: v.detach().cpu().clone() for k, v in model.state_dict().items()}}
    for step in range({STAR_STEPS}):
        x, y = torch.randn(8, 4), torch.randn(8, 2)
        if args.cuda:
            x, y = x.cuda(), y.cuda()
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")
    after = {{k: v.detach().cpu() for k, v in model.state_dict().items()}}
    changed = any(not torch.equal(before[k], after[k]) for k in before)
    print(f"star {{next(model.parameters()).device.type}} changed {{changed}}")


if __name__ == "__main__":
    main()
"""


def _star_project(folder: Path) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'star'\n")
    (folder / "net.py").write_text(STAR_NET)
    (folder / "train.py").write_text(STAR_TRAIN)
    return folder


def test_torch_from_a_star_import_is_ported_and_trains_on_xla(tmp_path: Path) -> None:
    """``torch`` bound by ``from net import *`` is torch: the CUDA check becomes the flag alone,
    so the moves it guards run and the model trains on the XLA device like the original in
    eager mode (same losses), one graph run per step (its barrier), no new graph after the warm-up."""
    eager_folder = _star_project(tmp_path / "eager")
    eager = parse_run(run_command([sys.executable, "train.py"], eager_folder, run_environment()), eager_folder)
    folder = _star_project(tmp_path / "ported")
    convert_folder(folder)
    assert "args.cuda = not args.no_cuda\n" in (folder / "train.py").read_text()
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    run = parse_run(output, folder)
    assert "star xla changed True" in output
    assert len(eager.losses) == STAR_STEPS
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STAR_STEPS)
    assert not problems, problems


def test_without_the_star_import_followed_the_model_trains_on_the_cpu(tmp_path: Path) -> None:
    """The negative control: train.py converted without its project (net.py unread), the CUDA
    check stays (XLA003 says so), it is False on an XLA host, and the model trains on the CPU:
    no graph is compiled, and the check that it ran on XLA fails."""
    folder = _star_project(tmp_path / "alone")
    conversion = convert_source((folder / "train.py").read_bytes())
    assert [f.rule for f in conversion.findings if f.severity == "error" and not f.fixed] == ["XLA003"]
    (folder / "train.py").write_bytes(output_bytes(conversion))
    assert "args.cuda = not args.no_cuda and torch.cuda.is_available()" in (folder / "train.py").read_text()
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "star cpu changed True" in output
    assert xla_problems(parse_run(output, folder))


GAN_MODULE = """\
import torch
import torch.nn as nn


class GAN:
    def __init__(self, device):
        self.g = nn.Linear(4, 4).to(device)
        self.opt_g = torch.optim.Adam(self.g.parameters(), lr=1e-2)
        self.decay = torch.optim.lr_scheduler.StepLR(self.opt_g, 10)
"""

GAN_TRAIN = """\
import torch

from gan import GAN

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
gan = GAN(device)
before = gan.g.weight.detach().cpu().clone()
for step in range(3):
    loss = gan.g(torch.randn(8, 4, device=device)).pow(2).mean()
    gan.opt_g.zero_grad()
    loss.backward()
    gan.opt_g.step()
    gan.decay.step()
print(f"gan {gan.g.weight.device.type} changed {not torch.equal(before, gan.g.weight.detach().cpu())}")
"""


def test_an_optimizer_another_modules_class_keeps_on_its_instance_is_stepped_on_xla(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'gan'\n")
    (tmp_path / "gan.py").write_text(GAN_MODULE)
    (tmp_path / "train.py").write_text(GAN_TRAIN)
    convert_folder(tmp_path)
    ported = (tmp_path / "train.py").read_text()
    assert "    xm.optimizer_step(gan.opt_g)\n" in ported
    assert "    gan.decay.step()\n" in ported
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], tmp_path, run_environment(PJRT_DEVICE="CPU"))
    assert "gan xla changed True" in output
    unstepped = "".join(line for line in ported.splitlines(keepends=True) if "xm.optimizer_step(" not in line)
    (tmp_path / "train.py").write_text(unstepped)
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], tmp_path, run_environment(PJRT_DEVICE="CPU"))
    assert "gan xla changed False" in output


HANDED_BASE = """\
import torch


def train(model, opt, cfg):
    for step in range(cfg["steps"]):
        loss = model(torch.ones(8, 4, device=cfg["device"])).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item()}")


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt

    def fit(self, device, steps):
        for _ in range(steps):
            loss = self.model(torch.ones(8, 4, device=device)).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
"""

HANDED_MAIN = """\
import torch
import torch.nn as nn

from optim.base import Trainer, train


def main():
    torch.manual_seed(0)
    cfg = {"device": "cuda:0" if torch.cuda.is_available() else "cpu", "steps": 10}
    model = nn.Linear(4, 2).to(cfg["device"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    before = model.weight.detach().cpu().clone()
    train(model, opt, cfg)
    Trainer(model, opt).fit(cfg["device"], 3)
    print(f"handed {model.weight.device.type} changed {not torch.equal(before, model.weight.detach().cpu())}")


if __name__ == "__main__":
    main()
"""


def test_an_optimizer_handed_to_another_modules_loop_is_stepped_on_xla(tmp_path: Path) -> None:
    def project(folder: Path) -> Path:
        (folder / "optim").mkdir(parents=True)
        (folder / "pyproject.toml").write_text("[project]\nname = 'handed'\n")
        (folder / "optim" / "__init__.py").write_text("")
        (folder / "optim" / "base.py").write_text(HANDED_BASE)
        (folder / "main.py").write_text(HANDED_MAIN)
        return folder

    eager_folder = project(tmp_path / "eager")
    eager = parse_run(run_command([sys.executable, "main.py"], eager_folder, run_environment()), eager_folder)
    folder = project(tmp_path / "xla")
    convert_folder(folder)
    ported = (folder / "optim" / "base.py").read_text()
    assert "        xm.optimizer_step(opt)\n" in ported and "            xm.optimizer_step(self.opt)\n" in ported
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    run = parse_run(output, folder)
    assert "handed xla changed True" in output
    problems = loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run)
    assert not problems + steady_problems(run, Executed("main.py")), problems
    unstepped = "".join(line for line in ported.splitlines(keepends=True) if "xm.optimizer_step(" not in line)
    (folder / "optim" / "base.py").write_text(unstepped)
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "handed xla changed False" in output


HELD_RUNNER = """\
import torch
import torch.nn as nn

from gan import GAN


class Runner:
    def __init__(self, device):
        self.device = device
        self.gan = GAN(device)
        self.nets = [nn.Linear(4, 4).to(device), nn.Linear(4, 4).to(device)]
        self.optims = []
        for net in self.nets:
            self.optims.append(torch.optim.SGD(net.parameters(), lr=0.01))

    def run(self, steps):
        for step in range(steps):
            x = torch.ones(8, 4, device=self.device)
            loss = self.gan.g(x).pow(2).mean() + sum(net(x).pow(2).mean() for net in self.nets)
            self.gan.opt_g.zero_grad()
            for opt in self.optims:
                opt.zero_grad()
            loss.backward()
            self.gan.opt_g.step()
            for opt in self.optims:
                opt.step()
            print(f"step {step} loss {loss.item()}")


def main():
    torch.manual_seed(0)
    runner = Runner(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    before = [m.weight.detach().cpu().clone() for m in [runner.gan.g, *runner.nets]]
    runner.run(10)
    after = [m.weight.detach().cpu() for m in [runner.gan.g, *runner.nets]]
    changed = [not torch.equal(b, a) for b, a in zip(before, after)]
    print(f"held {runner.gan.g.weight.device.type} changed {changed}")


if __name__ == "__main__":
    main()
"""


def test_optimizers_held_an_instance_deeper_and_in_a_list_are_stepped_on_xla(tmp_path: Path) -> None:
    def project(folder: Path) -> Path:
        folder.mkdir()
        (folder / "pyproject.toml").write_text("[project]\nname = 'held'\n")
        (folder / "gan.py").write_text(GAN_MODULE)
        (folder / "train.py").write_text(HELD_RUNNER)
        return folder

    eager_folder = project(tmp_path / "eager")
    eager = parse_run(run_command([sys.executable, "train.py"], eager_folder, run_environment()), eager_folder)
    folder = project(tmp_path / "xla")
    convert_folder(folder)
    ported = (folder / "train.py").read_text()
    assert "xm.optimizer_step(self.gan.opt_g)\n" in ported and "xm.optimizer_step(opt)\n" in ported
    assert ported.count("torch_xla.sync()") == 1
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    run = parse_run(output, folder)
    assert "held xla changed [True, True, True]" in output
    problems = loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run)
    assert not problems + steady_problems(run, Executed("train.py")), problems
    (folder / "train.py").write_text(re.sub(r"xm\.optimizer_step\([\w.]+\)", "pass", ported))
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "held xla changed [False, False, False]" in output
