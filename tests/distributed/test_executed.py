"""Executed: a distributed fixture under its own launcher, on torch_xla 2.9 (CPU, world
size 1), with the checks of tests/support/executed.py.  The distributed fixtures' plain runs
(torchrun's environment, mp.spawn, DDP, samplers) are in tests/end_to_end/test_executed.py.

A project whose ``nn.DataParallel`` models leave the module that wraps them (returned by a
builder), and a checkpoint class of another module told ``data_parallel=True`` that saves
``module.module.state_dict()``: the port keeps the wrappers (XLA605 reports them), and the
converted project trains and saves on XLA; the same project with the wrappers removed (what
the port used to write) fails at the first save.

A DataParallel subclass of another module with its own `scatter`, fed by an iterator handed
the device (tests/support/data_parallel_projects.py): no error (XLA605 says it changes
nothing), and the converted project trains on XLA like the original (same losses, one graph
run per step, each graph one step's); without its barrier its graphs grow with the steps, and
with the iterator not handed the device (XLA118 stands), its first forward fails on a CPU tensor.

A trainer class that keeps its model wrapped on `self.model`, read as `trainer.model.module`
by the driver of another module: the port keeps the wrapper (XLA605), and the converted
project trains on XLA like the original (same losses, two graph runs per step, no new graph
after the warm-up) and saves; without its barrier it compiles a new graph at every step, and
with the wrapper removed (what the port used to write), the driver's `.module` fails after
training.

Both programs call CUDA unconditionally (the static tests of tests/distributed read them as
the held-out shapes wrote them): their eager runs take the CPU through a substitution of the
device line, or of the `.cuda()` moves, that each test asserts happened.

A script that loads a checkpoint saved through `nn.DataParallel` (`module.` keys) into its
wrapped model and trains from it: the port keeps the wrapper (XLA605), and the converted script
loads it and trains on XLA like the original (same losses, one graph run per step, no new graph
after the warm-up); without its barrier it compiles a new graph at every step, and with the
wrapper removed (what the port used to write), the load fails on the keys.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.data_parallel_projects import (
    DP_TRAINER,
    DP_TRAINER_MAIN,
    ORDERED_DATA,
    UNEVEN_PARALLEL,
    UNEVEN_TRAIN,
)
from tests.support.executed import (
    RUN_TIMEOUT,
    TORCHRUN_ENV,
    XLA_RUNNER,
    Executed,
    Run,
    barrier_per_step_problems,
    convert_folder,
    copy_fixture,
    largest_graph,
    loss_problems,
    optimizer_problems,
    parse_run,
    run_command,
    run_eager,
    run_environment,
    step_ends,
    unbarriered_problems,
    xla_problems,
)
from tests.support.training_programs import linear_steps

pytestmark = pytest.mark.executed


def test_module_level_ddp_runs_under_torchrun_too(tmp_path: Path) -> None:
    """The launcher check of a module-level script stays: as plain `python` it trains on
    one XLA device (tests/end_to_end/test_executed.py), under torchrun it takes its DDP
    branch on the xla:// process group (one process here) and trains the same way."""
    case = Executed("module_ddp.py")
    eager = run_eager(case, tmp_path)
    folder = copy_fixture(case, tmp_path / "torchrun", convert=True)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=1", case.script]
    torchrun = parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)
    assert "using device: xla" in torchrun.output
    assert 'int(os.environ.get("RANK", -1)) != -1' in (folder / case.script).read_text()
    assert not loss_problems(torchrun, eager)


DP_MODELS = """\
import torch.nn as nn


def build_model():
    gen = nn.DataParallel(nn.Linear(4, 4))
    disc = nn.DataParallel(nn.Linear(4, 1))
    return {"gen": gen, "disc": disc}
"""

DP_CHECKPOINT = """\
import torch


class CheckpointIO:
    def __init__(self, path, data_parallel=False, **modules):
        self.path, self.data_parallel, self.modules = path, data_parallel, modules

    def save(self):
        out = {}
        for name, module in self.modules.items():
            if self.data_parallel:
                out[name] = module.module.state_dict()
            else:
                out[name] = module.state_dict()
        torch.save(out, self.path)
        print(f"saved {sorted(out)}")
"""

DP_STEPS = 9

DP_TRAIN = f"""\
import torch

from checkpoint import CheckpointIO
from models import build_model

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
nets = build_model()
for net in nets.values():
    net.to(device)
optims = {{name: torch.optim.Adam(net.parameters(), lr=1e-3) for name, net in nets.items()}}
ckpt = CheckpointIO("nets.ckpt", data_parallel=True, **nets)
for step in range({DP_STEPS}):
    x = torch.randn(8, 4).to(device)
    loss = nets["disc"](nets["gen"](x)).pow(2).mean()
    for opt in optims.values():
        opt.zero_grad()
    loss.backward()
    for opt in optims.values():
        opt.step()
    print(f"step {{step}} loss {{loss.item()}}")
    if step % 3 == 2:
        ckpt.save()
print(f"device {{next(nets['gen'].parameters()).device.type}}")
"""


def _run_on_xla(folder: Path, script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run in ``folder`` on torch_xla (CPU), its outcome kept whatever it is."""
    return subprocess.run(
        [sys.executable, script],
        cwd=folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def _dp_checkpoint_project(folder: Path, convert: bool = True) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'dp'\n")
    (folder / "models.py").write_text(DP_MODELS)
    (folder / "checkpoint.py").write_text(DP_CHECKPOINT)
    (folder / "train.py").write_text(DP_TRAIN)
    if convert:
        convert_folder(folder)
    return folder


def test_data_parallel_models_that_leave_their_module_are_kept_and_the_project_saves(tmp_path: Path) -> None:
    """Converted, the project trains on XLA like the original in eager mode (same losses, no new
    graph after the warm-up) and saves its three checkpoints: one graph run per step (its
    barrier) and one per save (``xm.save`` brings the weights of the step under way to the host)."""
    eager_folder = _dp_checkpoint_project(tmp_path / "eager", convert=False)
    eager = parse_run(run_command([sys.executable, "train.py"], eager_folder, run_environment()), eager_folder)
    folder = _dp_checkpoint_project(tmp_path / "ported")
    assert "nn.DataParallel(nn.Linear(4, 4))" in (folder / "models.py").read_text()
    run = parse_run(
        run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU")), folder
    )
    assert len(eager.losses) == DP_STEPS
    assert run.output.count("saved ['disc', 'gen']") == 3
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), DP_STEPS + 3)
    assert not problems, problems
    assert "device xla" in run.output
    assert (folder / "nets.ckpt").exists()


def test_with_the_wrappers_removed_the_first_save_fails(tmp_path: Path) -> None:
    """The negative control: the converted project with the wrappers removed, as the port
    used to write it, fails on `module.module` at the first save."""
    folder = _dp_checkpoint_project(tmp_path / "removed")
    models = folder / "models.py"
    removed = models.read_text().replace("nn.DataParallel(nn.Linear(4, 4))", "nn.Linear(4, 4)")
    models.write_text(removed.replace("nn.DataParallel(nn.Linear(4, 1))", "nn.Linear(4, 1)"))
    result = _run_on_xla(folder, "train.py")
    assert result.returncode != 0
    assert "AttributeError: 'Linear' object has no attribute 'module'" in result.stderr
    assert "saved" not in result.stdout


# The shared programs call CUDA unconditionally; their eager runs on the CPU take this device
# instead (what the static tests read stays as the held-out shapes wrote it).
CUDA_OR_CPU = '"cuda" if torch.cuda.is_available() else "cpu"'
UNEVEN_STEPS = 24  # the 800-token stream in rows of 8, 4 tokens per batch
UNEVEN_HANDED = ", device=device"
# A step's graph (forward, backward and Adam's update of the embedding) is 54 nodes on torch_xla
# 2.9; a loop without a barrier holds every step's update in its last graph (over 1000 nodes).
UNEVEN_STEP_GRAPH_NODES = 100
# The end of a step as the converted project writes it, and the same without the barrier.
UNEVEN_PORTED_STEP_END, UNEVEN_UNBARRIERED_STEP_END = step_ends(" " * 4)


def _uneven_files(folder: Path, train: str) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'uneven'\n")
    (folder / "parallel.py").write_text(UNEVEN_PARALLEL)
    (folder / "data.py").write_text(ORDERED_DATA)
    (folder / "train.py").write_text(train)
    return folder


def _uneven_project(folder: Path, handed: str) -> subprocess.CompletedProcess[str]:
    convert_folder(_uneven_files(folder, UNEVEN_TRAIN.format(handed=handed)))
    return _run_on_xla(folder, "train.py")


def _uneven_eager(tmp_path: Path) -> Run:
    """The original, its device line taking the CPU when there is no CUDA."""
    train = UNEVEN_TRAIN.format(handed=UNEVEN_HANDED)
    cuda_device = 'device = torch.device("cuda")\n'
    assert train.count(cuda_device) == 1
    folder = _uneven_files(tmp_path / "eager", train.replace(cuda_device, f"device = torch.device({CUDA_OR_CPU})\n"))
    return parse_run(run_command([sys.executable, "train.py"], folder, run_environment()), folder)


def _uneven_on_xla(folder: Path, barrier: bool = True) -> Run:
    """The converted project (with ``barrier=False``: its step barrier taken out) run on XLA."""
    convert_folder(_uneven_files(folder, UNEVEN_TRAIN.format(handed=UNEVEN_HANDED)))
    train = folder / "train.py"
    ported = train.read_text()
    assert UNEVEN_PORTED_STEP_END in ported
    if not barrier:
        train.write_text(ported.replace(UNEVEN_PORTED_STEP_END, UNEVEN_UNBARRIERED_STEP_END))
    command = [sys.executable, str(XLA_RUNNER), "train.py"]
    return parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)


def _uneven_problems(run: Run, eager: Run) -> list[str]:
    """The checks of barrier_per_step_problems but steady state: each batch is a slice of the
    on-device stream at another offset, a constant of its graph, so every step compiles a graph
    of its own, with a barrier or without.  One barrier per step shows in the graphs' size
    instead: each holds one step, where a loop without a barrier piles every step's update
    into the graph its next ``loss.item()`` runs."""
    problems = loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run)
    if run.executions != len(eager.losses):
        problems.append(f"{run.executions} graphs run, expected {len(eager.losses)}")
    if largest_graph(run) > UNEVEN_STEP_GRAPH_NODES:
        problems.append(f"a graph of {largest_graph(run)} nodes: more than one step's")
    return problems


def test_a_scattering_data_parallel_fed_batches_on_the_device_trains_on_xla(tmp_path: Path) -> None:
    """Converted, the project trains on XLA like the original in eager mode (same losses), one
    graph run per step, each graph one step's."""
    eager = _uneven_eager(tmp_path)
    run = _uneven_on_xla(tmp_path / "handed")
    assert len(eager.losses) == UNEVEN_STEPS
    problems = _uneven_problems(run, eager)
    assert not problems, problems
    assert run.compiles == list(range(1, UNEVEN_STEPS + 1))  # a graph per offset, see _uneven_problems
    assert "trained on xla" in run.output


def test_without_the_barrier_the_scattering_data_parallel_piles_steps_into_one_graph(tmp_path: Path) -> None:
    """The graph checks' negative control: the converted project without its barrier trains on
    XLA with the same losses and as many graph runs, but its graphs grow with the steps."""
    run = _uneven_on_xla(tmp_path / "no-barrier", barrier=False)
    assert _uneven_problems(run, _uneven_eager(tmp_path)) == [
        f"a graph of {largest_graph(run)} nodes: more than one step's"
    ]


def test_a_scattering_data_parallel_fed_cpu_batches_fails_as_xla118_says(tmp_path: Path) -> None:
    """The negative control: the iterator keeps the stream on the CPU, the scatter that moved
    it never runs on XLA, and the first forward fails."""
    result = _uneven_project(tmp_path / "not-handed", "")
    assert result.returncode != 0
    assert "Expected XLA tensor. Got: torch.LongTensor" in result.stderr
    assert "trained on" not in result.stdout


TRAINER_STEPS = 10
# The end of a step of the converted driver (`fit` returned the loss as a float), and the same
# without the barrier.
TRAINER_PORTED_STEP_END = '    print(f"step {step} loss {loss}")\n    torch_xla.sync()\n'
TRAINER_UNBARRIERED_STEP_END = '    print(f"step {step} loss {loss}")\n'


def _trainer_files(folder: Path, trainer: str) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'dp'\n")
    (folder / "trainer.py").write_text(trainer)
    (folder / "main.py").write_text(DP_TRAINER_MAIN.format(read="trainer.model.module"))
    return folder


def _trainer_project(folder: Path) -> Path:
    convert_folder(_trainer_files(folder, DP_TRAINER))
    return folder


def _trainer_eager(tmp_path: Path) -> Run:
    """The original, its three `.cuda()` moves taking the CPU when there is no CUDA."""
    assert DP_TRAINER.count(".cuda()") == 3
    folder = _trainer_files(tmp_path / "eager", DP_TRAINER.replace(".cuda()", f".to({CUDA_OR_CPU})"))
    return parse_run(run_command([sys.executable, "main.py"], folder, run_environment()), folder)


def _trainer_on_xla(folder: Path) -> Run:
    command = [sys.executable, str(XLA_RUNNER), "main.py"]
    return parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)


def test_a_wrapper_kept_on_a_trainer_attribute_trains_and_saves_on_xla(tmp_path: Path) -> None:
    """Converted, the project trains on XLA like the original in eager mode (same losses, no new
    graph after the warm-up) and saves: two graph runs per step, `fit`'s `loss.item()` (the
    forward, before the barrier) and the driver's barrier (the backward and the update); the
    save after the last barrier has nothing left to run."""
    eager = _trainer_eager(tmp_path)
    folder = _trainer_project(tmp_path / "ported")
    assert "self.model = nn.DataParallel(net)" in (folder / "trainer.py").read_text()
    assert TRAINER_PORTED_STEP_END in (folder / "main.py").read_text()
    run = _trainer_on_xla(folder)
    assert len(eager.losses) == TRAINER_STEPS
    problems = barrier_per_step_problems(run, eager, Executed("main.py"), 2 * TRAINER_STEPS)
    assert not problems, problems
    assert "saved on xla" in run.output
    assert (folder / "model.pt").exists()


def test_without_the_barrier_the_trainer_compiles_a_bigger_graph_each_step(tmp_path: Path) -> None:
    """The graph count's negative control: the converted driver without its barrier trains on
    XLA with the same losses, but each `fit`'s `loss.item()` runs a graph holding every update
    before it, a new graph at every step."""
    folder = _trainer_project(tmp_path / "no-barrier")
    main = folder / "main.py"
    main.write_text(main.read_text().replace(TRAINER_PORTED_STEP_END, TRAINER_UNBARRIERED_STEP_END))
    run = _trainer_on_xla(folder)
    assert not unbarriered_problems(run, _trainer_eager(tmp_path), Executed("main.py"))


def test_with_the_trainer_attribute_unwrapped_the_driver_fails(tmp_path: Path) -> None:
    """The negative control: the converted project with the wrapper removed, as the port
    used to write it, fails on the driver's `trainer.model.module`."""
    folder = _trainer_project(tmp_path / "removed")
    trainer = folder / "trainer.py"
    trainer.write_text(trainer.read_text().replace("nn.DataParallel(net)", "net"))
    result = _run_on_xla(folder, "main.py")
    assert result.returncode != 0
    assert "AttributeError: 'Linear' object has no attribute 'module'" in result.stderr
    assert "saved" not in result.stdout


RESUME_STEPS = 10

DP_RESUME = f"""\
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range({RESUME_STEPS})]
model = nn.Linear(4, 2).to(device)
model = nn.DataParallel(model)
model.load_state_dict(torch.load("dp.pt"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(batches):
    loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {{step}} loss {{loss.item()}}")
print("trained on", next(model.parameters()).device.type)
"""

# The checkpoint the original code saved: a DataParallel model's state dict (CPU run), from
# other weights than the script's own initial ones (a load that did not happen shows in the losses).
SAVE_DP_CHECKPOINT = (
    "import torch, torch.nn as nn; torch.manual_seed(1); "
    "torch.save(nn.DataParallel(nn.Linear(4, 2)).state_dict(), 'dp.pt')"
)
# The end of a step as the converted script writes it, and the same without the barrier.
RESUME_PORTED_STEP_END, RESUME_UNBARRIERED_STEP_END = step_ends(" " * 4)


def _resume_script(folder: Path, convert: bool = True) -> Path:
    folder.mkdir()
    (folder / "resume.py").write_text(DP_RESUME)
    run_command([sys.executable, "-c", SAVE_DP_CHECKPOINT], folder, run_environment())
    if convert:
        convert_folder(folder)
    return folder


def _resume_eager(tmp_path: Path) -> Run:
    folder = _resume_script(tmp_path / "eager", convert=False)
    return parse_run(run_command([sys.executable, "resume.py"], folder, run_environment()), folder)


def _resume_on_xla(folder: Path) -> Run:
    command = [sys.executable, str(XLA_RUNNER), "resume.py"]
    return parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)


def test_a_checkpoint_saved_through_data_parallel_loads_into_the_kept_wrapper(tmp_path: Path) -> None:
    """Converted, the script loads the checkpoint into the kept wrapper and trains from it on
    XLA like the original in eager mode (same losses), one graph run per step (one barrier per
    step) and no new graph after the warm-up."""
    eager = _resume_eager(tmp_path)
    folder = _resume_script(tmp_path / "ported")
    ported = (folder / "resume.py").read_text()
    assert "model = nn.DataParallel(model)" in ported and RESUME_PORTED_STEP_END in ported
    run = _resume_on_xla(folder)
    assert len(eager.losses) == RESUME_STEPS
    problems = barrier_per_step_problems(run, eager, Executed("resume.py"), RESUME_STEPS)
    assert not problems, problems
    assert "trained on xla" in run.output


def test_without_the_barrier_the_resumed_training_compiles_a_bigger_graph_each_step(tmp_path: Path) -> None:
    """The graph count's negative control: the converted script without its barrier trains on
    XLA with the same losses, but each step's ``loss.item()`` runs a graph holding every step
    before it: a new graph at every step, and the steady-state check sees it."""
    folder = _resume_script(tmp_path / "no-barrier")
    script = folder / "resume.py"
    script.write_text(script.read_text().replace(RESUME_PORTED_STEP_END, RESUME_UNBARRIERED_STEP_END))
    run = _resume_on_xla(folder)
    assert not unbarriered_problems(run, _resume_eager(tmp_path), Executed("resume.py"))


def test_with_the_data_parallel_wrapper_removed_the_checkpoint_does_not_load(tmp_path: Path) -> None:
    """The negative control: the converted script without the wrapper, as the port used to
    write it, refuses the checkpoint's `module.` keys."""
    folder = _resume_script(tmp_path / "removed")
    script = folder / "resume.py"
    script.write_text(script.read_text().replace("model = nn.DataParallel(model)\n", ""))
    result = _run_on_xla(folder, "resume.py")
    assert result.returncode != 0
    assert 'Unexpected key(s) in state_dict: "module.weight"' in result.stderr
    assert "step 0 loss" not in result.stdout


IMPORT_GROUP_STEPS = 10

IMPORT_TIME_GROUP = f"""\
import torch
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group(backend="gloo")


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{linear_steps(IMPORT_GROUP_STEPS)}    print("world size", dist.get_world_size())


if __name__ == "__main__":
    main()
"""
# What the port writes at module level and in _mp_fn for the group (XLA601, XLA603).
IMPORT_TIME_GROUP_PORTED = 'dist.init_process_group("xla", init_method="xla://")\n'
IMPORT_TIME_GROUP_MOVED = f"def _mp_fn(index):\n    {IMPORT_TIME_GROUP_PORTED}    main()\n"


def _import_time_group_script(folder: Path, convert: bool = True) -> Path:
    folder.mkdir()
    (folder / "train.py").write_text(IMPORT_TIME_GROUP)
    if convert:
        convert_folder(folder)
    return folder


def test_a_process_group_started_at_import_moves_into_mp_fn_and_the_launched_script_trains(tmp_path: Path) -> None:
    """A process group the module starts as it is imported moves into `_mp_fn` (XLA603): the
    converted script, started as `python train.py` (torch_xla.launch, one process on the CPU),
    trains like the original under torchrun (same losses, world size 1); under the executed
    tests' runner it runs one graph per step and no new graph after the warm-up."""
    folder = tmp_path / "eager"
    folder.mkdir()
    (folder / "train.py").write_text(IMPORT_TIME_GROUP)
    eager = parse_run(run_command([sys.executable, "train.py"], folder, run_environment(**dict(TORCHRUN_ENV))), folder)
    ported = _import_time_group_script(tmp_path / "ported")
    text = (ported / "train.py").read_text()
    assert IMPORT_TIME_GROUP_MOVED in text and text.count("init_process_group") == 1
    launched = _run_on_xla(ported, "train.py")
    assert launched.returncode == 0, launched.stderr[-3000:]
    run = parse_run(launched.stdout, ported)
    assert len(eager.losses) == IMPORT_GROUP_STEPS
    assert not loss_problems(run, eager)
    assert "world size 1" in run.output
    counted = parse_run(
        run_command([sys.executable, str(XLA_RUNNER), "train.py"], ported, run_environment(PJRT_DEVICE="CPU")), ported
    )
    problems = barrier_per_step_problems(counted, eager, Executed("train.py"), IMPORT_GROUP_STEPS)
    assert not problems, problems


def test_with_the_process_group_left_at_import_the_launch_fails(tmp_path: Path) -> None:
    """The negative control: the converted script with its group started at module level again,
    as the port used to write it, fails in torch_xla.launch before any step."""
    folder = _import_time_group_script(tmp_path / "at-import")
    script = folder / "train.py"
    text = script.read_text()
    assert IMPORT_TIME_GROUP_MOVED in text
    text = text.replace(IMPORT_TIME_GROUP_MOVED, "def _mp_fn(index):\n    main()\n")
    script.write_text(text.replace("\n\ndef main():", f"{IMPORT_TIME_GROUP_PORTED}\n\ndef main():", 1))
    result = _run_on_xla(folder, "train.py")
    assert result.returncode != 0
    assert "Runtime is already initialized" in result.stderr
    assert "step 0 loss" not in result.stdout
