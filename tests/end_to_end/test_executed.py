"""Executed tests: converted fixtures run on torch_xla 2.9 (CPU, one device) and train
like the originals run in eager mode on the CPU, by the checks of tests/support/executed.py:
same losses, ran on XLA, a steady state after the warm-up, and checkpoints that load
without torch_xla and hold the trained weights.

Each check has a negative control below: a conversion with one rewrite switched off
fails it.  Some fixtures cannot run in eager mode here (they need CUDA, or torch_xla
1.13): the original's failure is checked, and the converted script is compared with
itself with every optimizer step undone.

These need the [xla] extra (torch==2.9.0, torch-xla==2.9.0).  Without it they are
skipped locally, and the run fails when CI is set (tests/conftest.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from codemods import RuleSelection, convert_source
from tests.support.executed import (
    RUN_TIMEOUT,
    STEADY_STEPS,
    TORCHRUN_ENV,
    Executed,
    checkpoint_problems,
    checkpoint_tensors,
    checkpoints_in,
    copy_fixture,
    largest_graph,
    loss_problems,
    optimizer_problems,
    run_eager,
    run_environment,
    run_untrained,
    run_xla,
    steady_problems,
    xla_problems,
)
from tests.support.paths import FIXTURES

pytestmark = pytest.mark.executed

# Without an eager twin: the mean loss after the warm-up is below this share of the
# untrained run's (the legacy fixture learns random labels: 3% lower after two epochs;
# without training both runs compute the same losses).
TRAINED_LOSS_SHARE = 0.99
# Token ids a fixture sampled (exact: both runs draw from the same CPU generator sequence).
SAMPLED_LINE = re.compile(r"^sampled .*$", re.MULTILINE)


EXECUTED = [
    Executed("mnist_flags.py"),  # flag-selected device, barrier, xm.save
    Executed("cifar_string_device.py", steps_per_epoch=5),  # string device, MpDeviceLoader wrap
    Executed("class_trainer.py", steps_per_epoch=8),  # class-based trainer, integer device
    Executed("dcgan_two_optimizers.py", args=("--niter", "3"), steps_per_epoch=6),  # two optimizers
    Executed("grad_accumulation.py", args=("--epochs", "2"), steps_per_epoch=23),  # accumulation, MpDeviceLoader
    Executed("lbfgs_closure.py"),  # LBFGS closure, xm.optimizer_step
    Executed("cuda_variable_legacy.py", args=("--epochs", "3"), steps_per_epoch=5),  # .cuda() and Variable
    Executed("torch_as_th.py", steps_per_epoch=10),  # import torch as th
    Executed("bare_optim_imports.py", steps_per_epoch=5),  # from torch import optim; two optimizers
    Executed("manual_sgd.py"),  # no optimizer at all
    Executed("eval_accumulate.py", steps_per_epoch=8),  # evaluation loop barrier
    Executed("cuda_runtime_calls.py", args=("--epochs", "3"), steps_per_epoch=5),  # synchronize -> wait_device_ops
    Executed("nanogpt_style.py"),  # while loop, string device
    Executed("train.py", folder="helpers_split", steps_per_epoch=10),  # setup in a sibling module
    Executed("imagenet_style.py", steps_per_epoch=4),  # device per worker, CUDA-only branches
    # Distributed, world size 1: torchrun's environment for the original; the conversion
    # starts _mp_fn with torch_xla.launch, run in the runner's process (support/runners/in_process.py).
    Executed("dist_torchrun.py", steps_per_epoch=8, env=TORCHRUN_ENV, launched=True),  # env ranks, DDP, sampler
    Executed("dist_ddp_spawn.py", steps_per_epoch=8, launched=True),  # mp.spawn, DDP, CUDA count re-read
    # FSDP -> torch_xla's FSDP (the original: torch's FSDP on gloo); wrap policy; plain optimizer step.
    Executed("dist_fsdp.py", steps_per_epoch=8, env=TORCHRUN_ENV, launched=True),
    # DataParallel removed: the batches moved only `if args.gpu is not None` move always.
    Executed("dp_conditional_moves.py", args=("--epochs", "2"), steps_per_epoch=8),
    # Validation meters: host numbers and device tensors accumulated, shown every other batch.
    Executed("eval_meters.py", args=("--epochs", "3"), steps_per_epoch=10),
    # Sampling with a generator made for the device: a CPU generator on XLA, same samples.
    Executed("sample_generator.py"),
    # Module-level DDP under an environment check, run as plain `python`: one XLA device.
    Executed("module_ddp.py"),
    # The optimizer is built in main.py (through model.py) before trainer.py moves the model.
    Executed("main.py", folder="gpt_trainer_split", steps_per_epoch=8),
    # The optimizer step is in agent.py's Agent.update, driven by a loop in another function
    # of main.py: that loop gets the barrier (no barrier in update itself).
    Executed("main.py", folder="rl_agent_split"),
    # A helper of another module makes a tensor on the CPU and moves it only `if labels.is_cuda`.
    Executed("train.py", folder="tensor_guard_split", steps_per_epoch=4),
    # Model moved and wrapped only under `device.type == 'cuda'` (torch.accelerator's device):
    # on one device, and under the launcher (its DDP branch), training then validation.
    Executed("accelerator_branches.py", steps_per_epoch=6),
    Executed(
        "accelerator_branches.py",
        args=("--multiprocessing-distributed", "--world-size", "1", "--rank", "0"),
        steps_per_epoch=6,
        launched=True,
    ),
]


# -- the fixtures ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", EXECUTED, ids=lambda c: c.id)
def test_converted_fixture_trains_like_the_original(case: Executed, tmp_path: Path) -> None:
    eager = run_eager(case, tmp_path)
    xla = run_xla(case, tmp_path)
    assert len(eager.losses) >= 8, eager.output
    problems = [*loss_problems(xla, eager), *xla_problems(xla), *optimizer_problems(xla), *steady_problems(xla, case)]
    if SAMPLED_LINE.findall(xla.output) != SAMPLED_LINE.findall(eager.output):
        problems.append(f"sampled {SAMPLED_LINE.findall(xla.output)}, eager {SAMPLED_LINE.findall(eager.output)}")
    if case.launched and "LAUNCHED torch_xla.launch" not in xla.output:
        problems.append("the converted script did not start through torch_xla.launch")
    if checkpoints_in(eager.folder):
        problems += checkpoint_problems(xla.folder, eager.folder, run_untrained(case, tmp_path).folder)
    assert not problems, "\n".join(problems)


@dataclass(frozen=True)
class XlaOnly:
    """A fixture whose original cannot run here: its error matches ``fails_with``."""

    case: Executed
    fails_with: str
    # Checkpoints that cannot load without torch_xla, reported by this rule instead.
    checkpoint_reported: str | None = None


XLA_ONLY = [
    # Needs a GPU (torch.cuda.set_device); saves a whole module (XLA402).
    XlaOnly(Executed("unconditional_cuda.py", steps_per_epoch=10), "NVIDIA driver|CUDA", checkpoint_reported="XLA402"),
    # Written for torch_xla 1.13: xm.xrt_world_size is gone in 2.9.
    XlaOnly(Executed("legacy_xla_113.py", args=("--epochs", "2"), steps_per_epoch=8), "xrt_world_size"),
    # torch_xla 1.13's AMP: its torch_xla.amp.custom_fwd is gone in 2.9; upgraded, its autocast keeps
    # `enabled` and its scaler loses use_zero_grad (torch.amp.GradScaler raises on it).
    XlaOnly(Executed("legacy_xla_113_amp.py"), "has no attribute 'custom_fwd'"),
    # Integer device attribute (`.to(self.gpu_id)`); the optimizer and its scheduler are
    # built in another function before the trainer moves the model.
    XlaOnly(
        Executed("ddp_integer_trainer.py", steps_per_epoch=8, env=TORCHRUN_ENV, launched=True), "NVIDIA driver|CUDA"
    ),
]


@pytest.mark.parametrize("fixture", XLA_ONLY, ids=lambda f: f.case.id)
def test_converted_fixture_runs_where_the_original_cannot(fixture: XlaOnly, tmp_path: Path) -> None:
    """No eager twin: the converted script runs on XLA, steadily, and trains (its losses
    after the warm-up and its checkpoints differ from the same run with every optimizer
    step undone)."""
    case = fixture.case
    original = subprocess.run(
        [sys.executable, case.script, *case.args],
        cwd=FIXTURES / case.folder,
        env=run_environment(**dict(case.env)),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert original.returncode != 0 and re.search(fixture.fails_with, original.stderr), original.stderr[-2000:]

    xla = run_xla(case, tmp_path)
    untrained = run_untrained(case, tmp_path, on_xla=True)
    problems = [*xla_problems(xla), *optimizer_problems(xla), *steady_problems(xla, case)]
    assert len(xla.losses) == len(untrained.losses) >= case.warmup + STEADY_STEPS, xla.output
    trained_loss = sum(xla.losses[case.warmup :]) / len(xla.losses[case.warmup :])
    untrained_loss = sum(untrained.losses[case.warmup :]) / len(untrained.losses[case.warmup :])
    if not trained_loss < TRAINED_LOSS_SHARE * untrained_loss:
        problems.append(f"does not train: mean loss after warm-up {trained_loss:.4g}, untrained {untrained_loss:.4g}")
    if fixture.checkpoint_reported:
        findings = convert_source((FIXTURES / case.folder / case.script).read_bytes()).findings
        assert fixture.checkpoint_reported in {f.rule for f in findings}
    else:
        names = checkpoints_in(xla.folder)
        assert names and names == checkpoints_in(untrained.folder)
        paths = [xla.folder / n for n in names] + [untrained.folder / n for n in names]
        loaded = checkpoint_tensors(paths, tmp_path / "checkpoints.flat")
        for name in names:
            trained, start = loaded[xla.folder / name], loaded[untrained.folder / name]
            if all((trained[k] == start[k]).all() for k in trained):
                problems.append(f"{name}: the saved weights are the untrained ones")
    assert not problems, "\n".join(problems)


# -- negative controls: a conversion with one rewrite switched off fails the checks ---------


def _case(script: str, folder: str = ".") -> Executed:
    return next(c for c in EXECUTED if c.script == script and c.folder == folder)


def test_loss_and_checkpoint_checks_catch_an_optimizer_of_stale_parameters(tmp_path: Path) -> None:
    """Without XLA203 the trainer's optimizer holds the CPU parameters, which moving the
    model to XLA replaced: nothing trains, the checkpoint holds the initial weights."""
    case = _case("class_trainer.py")
    eager = run_eager(case, tmp_path)
    untrained = run_untrained(case, tmp_path)
    xla = run_xla(case, tmp_path, RuleSelection(ignore=("XLA203",)))
    assert "model.to(torch_xla.device()).parameters()" not in (xla.folder / case.script).read_text()
    assert not xla_problems(xla) and not steady_problems(xla, case)  # it ran, on XLA, steadily
    assert loss_problems(xla, eager)
    assert optimizer_problems(xla) == ["the optimizers stepped parameters on cpu, not only on xla"]
    problems = checkpoint_problems(xla.folder, eager.folder, untrained.folder)
    assert problems and all("stale or untrained weights" in p for p in problems), problems


def test_ran_on_xla_check_catches_a_script_left_on_the_cpu(tmp_path: Path) -> None:
    """Without the device rewrites the script runs on the CPU: same losses, no graphs."""
    case = _case("manual_sgd.py")
    eager = run_eager(case, tmp_path)
    xla = run_xla(case, tmp_path, RuleSelection(ignore=("XLA1",)))
    assert "torch_xla.sync()" in (xla.folder / case.script).read_text()
    assert not loss_problems(xla, eager)
    assert xla_problems(xla), xla.compiles


def test_an_evaluation_loop_that_accumulates_device_meters_keeps_its_graphs_small(tmp_path: Path) -> None:
    """Its `loss.item()` reads do not bound the accuracy meter's running sum: without the
    barrier (XLA303) each shown value is a graph over every batch so far.  At this size
    the growing graphs still repeat from epoch to epoch (no new compiles after the first),
    so the graph size tells them apart: measured 39 nodes with the barrier, 143 without."""
    case = _case("eval_meters.py")
    with_barrier = run_xla(case, tmp_path / "with")
    without = run_xla(case, tmp_path / "without", RuleSelection(ignore=("XLA303",)))
    assert "torch_xla.sync()" in (with_barrier.folder / case.script).read_text().split("def main")[0]
    assert "torch_xla.sync()" not in (without.folder / case.script).read_text().split("def main")[0]
    assert 2 * largest_graph(with_barrier) < largest_graph(without)


def test_steady_state_check_catches_a_missing_barrier(tmp_path: Path) -> None:
    """Converted without its step barrier, a training loop compiles a new graph every
    step: the steady-state check must see that."""
    case = _case("manual_sgd.py")
    run = run_xla(case, tmp_path, RuleSelection(ignore=("XLA301", "XLA302")))
    assert "torch_xla.sync()" not in (run.folder / case.script).read_text()
    (problem,) = steady_problems(run, case)
    new = int(re.match(r"no steady state: (\d+) new graph", problem).group(1))  # type: ignore[union-attr]
    assert new >= len(run.compiles) - case.warmup, problem  # one per step, at least


def test_a_step_driven_from_another_module_without_the_drivers_barrier_compiles_every_step(tmp_path: Path) -> None:
    """The negative control of rl_agent_split: converted without the barrier that main.py's
    loop gets for agent.py's step (and with its loss read left in the loop, as XLA701
    would not move it without a barrier), each step's graph holds every update so far."""
    case = _case("main.py", "rl_agent_split")
    run = run_xla(case, tmp_path, RuleSelection(ignore=("XLA301", "XLA701")))
    assert "torch_xla.sync()" not in (run.folder / "main.py").read_text() + (run.folder / "agent.py").read_text()
    (problem,) = steady_problems(run, case)
    assert problem.startswith("no steady state"), problem


def _fails_before_a_step(case: Executed, folder: Path) -> subprocess.CompletedProcess[str]:
    """Run a converted copy of the case on XLA and check that it stops before its first step."""
    run = subprocess.run(
        [sys.executable, case.script],
        cwd=folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert run.returncode != 0 and "step 0 loss" not in run.stdout, run.stdout[-2000:]
    return run


def test_a_helper_that_follows_is_cuda_leaves_its_tensor_on_the_cpu_without_xla117(tmp_path: Path) -> None:
    """The negative control of tensor_guard_split: converted without XLA117, `labels.is_cuda`
    is False for the labels on the XLA device, the one-hot rows stay on the CPU and the
    model's torch.cat of them with the XLA features fails."""
    case = _case("train.py", "tensor_guard_split")
    folder = copy_fixture(case, tmp_path / "without", RuleSelection(ignore=("XLA117",)), convert=True)
    assert "labels.is_cuda" in (folder / "label_utils.py").read_text()
    run = _fails_before_a_step(case, folder)
    assert re.search(r"XLA tensor|device", run.stderr), run.stderr[-2000:]


def test_a_chosen_cuda_string_left_beside_the_ported_check_fails_on_xla(tmp_path: Path) -> None:
    """The negative control of the string XLA117 ports with its check: the converted helper with
    `'cuda' if labels.device.type == "xla"` (the check ported, its string not) asks for CUDA."""
    case = _case("train.py", "tensor_guard_split")
    folder = copy_fixture(case, tmp_path / "kept", RuleSelection(), convert=True)
    helper = folder / "label_utils.py"
    ported = helper.read_text()
    assert 'dv = "xla" if labels.device.type == "xla"' in ported
    helper.write_text(ported.replace('dv = "xla" if', "dv = 'cuda' if"))
    run = _fails_before_a_step(case, folder)
    assert re.search(r"CUDA|cuda", run.stderr), run.stderr[-2000:]
