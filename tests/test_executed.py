"""Executed tests: converted fixtures run on torch_xla 2.9 (CPU, one device) and train
like the originals run in eager mode on the CPU.

For each fixture: the original runs with plain torch, the converted copy runs through
tests/xla_runner.py with PJRT_DEVICE=CPU; both print ``step N loss V`` per step.
  * losses: same number of steps, each within LOSS_RTOL (relative) + LOSS_ATOL.
    XLA's CPU backend fuses and reorders float32 arithmetic (other summation orders,
    fused multiply-adds), so results drift by a few ulps per op and the drift compounds
    over steps; measured worst case here is under 1e-4 relative after 20 steps, so 1e-3
    leaves room while catching any real change (a skipped optimizer step or a wrong
    device changes losses by far more).  The L-BFGS fixture works in float64: its
    curvature estimates amplify float32 rounding into different steps after a few
    iterations, which says nothing about the conversion.
  * it really ran on XLA: at least one graph was compiled, and at least one executed
    per step.
  * steady state: no new graph after the warm-up, and at least STEADY_STEPS steps after
    it.  A training loop without a step barrier compiles a new, bigger graph at every
    step.  The warm-up is WARMUP_STEPS steps (a step's graphs change while optimizer
    state is being created and while its inputs switch from host tensors to the
    previous step's results: every fixture settles by its third step), and for a fixture
    that runs epochs, one whole epoch before them: what happens once per epoch
    (evaluation, checkpoints, scheduler steps, a short last batch, batches of other
    shapes) compiles its graphs in the first epoch and must not compile again.
  * checkpoints the converted script wrote load with torch.load (no map_location) in a
    process that never imports torch_xla, and hold the eager run's trained weights:
    over each checkpoint, the L2 distance from the eager checkpoint is at most
    CHECKPOINT_SHARE of the training update, the distance between the eager checkpoint
    and the untrained one (the same script with every optimizer step undone, see
    tests/untrained_runner.py).  Untrained or stale weights are as far away as the
    update itself.  0.1: measured worst case 0.05 (the AMP fixture: a conv bias before
    BatchNorm has no true gradient, Adam turns its float-noise gradient into steps of
    size lr, and the running mean follows it); the others stay under 0.02.

Each check has a negative control below: a conversion with one rewrite switched off
fails it.  Two fixtures cannot run in eager mode here (one needs CUDA, one torch_xla
1.13): the original's failure is checked, and the converted script is compared with
itself with every optimizer step undone.

These need the [xla] extra (torch==2.9.0, torch-xla==2.9.0).  Without it they are
skipped locally, and the run fails when CI is set (tests/conftest.py).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from codemods import RuleSelection, convert_source
from codemods.project.resolver import Project, summarise_with
from codemods.targets import DEFAULT_TARGET
from tests.conftest import FIXTURES

pytestmark = pytest.mark.executed

LOSS_RTOL = 1e-3
LOSS_ATOL = 1e-5
WARMUP_STEPS = 3
STEADY_STEPS = 5
CHECKPOINT_SHARE = 0.1
# Without an eager twin: the mean loss after the warm-up is below this share of the
# untrained run's (the legacy fixture learns random labels: 3% lower after two epochs;
# without training both runs compute the same losses).
TRAINED_LOSS_SHARE = 0.99
RUN_TIMEOUT = 600
XLA_RUNNER = Path(__file__).with_name("xla_runner.py")
UNTRAINED_RUNNER = Path(__file__).with_name("untrained_runner.py")
TORCHRUN_ENV = (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_WORLD_SIZE", "1"),
                ("MASTER_ADDR", "localhost"), ("MASTER_PORT", "29517"))
STEP_LINE = re.compile(r"^step (\d+) loss (\S+)$", re.MULTILINE)
# Token ids a fixture sampled (exact: both runs draw from the same CPU generator sequence).
SAMPLED_LINE = re.compile(r"^sampled .*$", re.MULTILINE)
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".tar")


@dataclass(frozen=True)
class Executed:
    """A fixture to execute: ``script`` inside ``folder`` (copied whole), with ``args``."""

    script: str
    folder: str = "."
    args: tuple[str, ...] = ()
    # Training steps per epoch (None: one pass); the warm-up then includes one epoch.
    steps_per_epoch: int | None = None
    # Environment of the original's runs (torchrun's variables for a one-process run).
    env: tuple[tuple[str, str], ...] = ()
    # The converted script starts its processes with torch_xla.launch (world size 1 here).
    launched: bool = False

    @property
    def id(self) -> str:
        return str(Path(self.folder) / self.script)

    @property
    def warmup(self) -> int:
        return (self.steps_per_epoch or 0) + WARMUP_STEPS


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
    # starts _mp_fn with torch_xla.launch, run in the runner's process (tests/in_process.py).
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
    # Model moved and wrapped only under `device.type == 'cuda'` (torch.accelerator's device):
    # on one device, and under the launcher (its DDP branch), training then validation.
    Executed("accelerator_branches.py", steps_per_epoch=6),
    Executed("accelerator_branches.py", args=("--multiprocessing-distributed", "--world-size", "1", "--rank", "0"),
             steps_per_epoch=6, launched=True),
]


@dataclass
class Run:
    losses: list[float]
    compiles: list[int]
    executions: int
    folder: Path
    output: str
    stepped_devices: tuple[str, ...] = ()  # where the parameters the optimizers stepped live


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed in {cwd}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result.stdout


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PJRT_", "XLA_", "TPU_"))}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0", **extra)
    return env


def _copy(case: Executed, folder: Path, selection: RuleSelection | None = None, convert: bool = False) -> Path:
    shutil.copytree(FIXTURES / case.folder, folder)
    if convert:
        convert_folder(folder, selection)
    return folder


def convert_folder(folder: Path, selection: RuleSelection | None = None) -> None:
    """Every script of the folder, converted as one run (each sees the others' summaries)."""
    files = sorted(folder.rglob("*.py"))
    project = Project(folder, summarise_with(DEFAULT_TARGET, selection or RuleSelection(), None), in_run=files)
    converted = [convert_source(p.read_bytes(), selection=selection, imports=project.imports_of(p)) for p in files]
    for path, conversion in zip(files, converted):
        path.write_bytes(conversion.output)


def _parse(output: str, folder: Path) -> Run:
    losses = [float(v) for _, v in STEP_LINE.findall(output)]
    compiles = [int(c) for c in re.findall(r"^XLA_COMPILES (\d+)$", output, re.MULTILINE)]
    executions = re.search(r"^XLA_EXECUTIONS (\d+)$", output, re.MULTILINE)
    stepped = re.search(r"^XLA_STEPPED_DEVICES (.+)$", output, re.MULTILINE)
    return Run(
        losses, compiles, int(executions.group(1)) if executions else 0, folder, output,
        tuple(stepped.group(1).split()) if stepped else (),
    )


def run_eager(case: Executed, workdir: Path) -> Run:
    folder = _copy(case, workdir / "eager")
    return _parse(_run([sys.executable, case.script, *case.args], folder, _environment(**dict(case.env))), folder)


def run_xla(case: Executed, workdir: Path, selection: RuleSelection | None = None) -> Run:
    folder = _copy(case, workdir / "xla", selection, convert=True)
    command = [sys.executable, str(XLA_RUNNER), case.script, *case.args]
    return _parse(_run(command, folder, _environment(PJRT_DEVICE="CPU")), folder)


def run_untrained(case: Executed, workdir: Path, on_xla: bool = False) -> Run:
    """The script (converted, on XLA, with ``on_xla``) with every optimizer step undone."""
    folder = _copy(case, workdir / ("untrained-xla" if on_xla else "untrained"), convert=on_xla)
    env = _environment(PJRT_DEVICE="CPU") if on_xla else _environment(**dict(case.env))
    return _parse(_run([sys.executable, str(UNTRAINED_RUNNER), case.script, *case.args], folder, env), folder)


# -- the checks: each returns what is wrong (empty: nothing) -------------------------------


def loss_problems(got: Run, want: Run) -> list[str]:
    if len(got.losses) != len(want.losses):
        return [f"{len(got.losses)} steps, expected {len(want.losses)}"]
    return [
        f"step {step}: xla {g} vs eager {w}"
        for step, (g, w) in enumerate(zip(got.losses, want.losses))
        if not abs(g - w) <= LOSS_ATOL + LOSS_RTOL * abs(w)
    ]


def xla_problems(run: Run) -> list[str]:
    if run.compiles and run.compiles[-1] >= 1 and run.executions >= len(run.losses):
        return []
    return [f"did not run on XLA: {run.compiles[-1:] or 0} graphs compiled, {run.executions} executed"]


def optimizer_problems(run: Run) -> list[str]:
    """Every optimizer that stepped holds parameters on the XLA device (one built before
    its model moved would step CPU tensors that nothing uses).  A script without an
    optimizer (manual updates) has nothing to check."""
    if not run.stepped_devices or set(run.stepped_devices) == {"xla"}:
        return []
    return [f"the optimizers stepped parameters on {', '.join(run.stepped_devices)}, not only on xla"]


def steady_problems(run: Run, case: Executed) -> list[str]:
    warmup = case.warmup
    if case.steps_per_epoch and len(run.compiles) % case.steps_per_epoch:
        return [f"{len(run.compiles)} steps are not whole epochs of {case.steps_per_epoch}"]
    if len(run.compiles) < warmup + STEADY_STEPS:
        return [f"{len(run.compiles)} steps: too few after a {warmup}-step warm-up to see a per-step pattern"]
    new = run.compiles[-1] - run.compiles[warmup - 1]
    return [f"no steady state: {new} new graph(s) after the {warmup}-step warm-up, compiles {run.compiles}"] if new else []


_FLATTEN_CHECKPOINTS = """
import sys, torch
def flat(obj, prefix=""):
    if isinstance(obj, torch.Tensor):
        yield prefix, obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from flat(value, f"{prefix}/{key}")
    elif isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj):
            yield from flat(value, f"{prefix}/{index}")
out, *paths = sys.argv[1:]
tensors = {path: dict(flat(torch.load(path, weights_only=False))) for path in paths}
assert "torch_xla" not in sys.modules
assert all(t.device.type == "cpu" for each in tensors.values() for t in each.values())
torch.save(tensors, out)
"""


def checkpoint_tensors(paths: list[Path], out: Path) -> dict[Path, dict[str, object]]:
    """The tensors of each checkpoint, loaded as saved (no map_location) by a process that
    never imports torch_xla."""
    import torch

    _run([sys.executable, "-c", _FLATTEN_CHECKPOINTS, str(out), *map(str, paths)], out.parent, _environment())
    return {Path(k): v for k, v in torch.load(out).items()}


def checkpoints_in(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.suffix in CHECKPOINT_SUFFIXES)


def checkpoint_problems(got: Path, trained: Path, untrained: Path) -> list[str]:
    """Checkpoints in ``got`` against the eager run's, ``trained``, with the training
    update measured from the ``untrained`` run's."""
    import torch

    names = checkpoints_in(trained)
    if checkpoints_in(got) != names:
        return [f"checkpoints {checkpoints_in(got)}, expected {names}"]
    folders = (got, trained, untrained)
    loaded = checkpoint_tensors([f / n for f in folders for n in names], got.parent / f"{got.name}-checkpoints.flat")
    problems = []
    for name in names:
        mine, want, start = (loaded[f / name] for f in folders)
        if mine.keys() != want.keys():
            problems.append(f"{name}: keys {sorted(mine)} vs {sorted(want)}")
            continue
        drift = update = 0.0
        for key, want_tensor in want.items():
            got_tensor, start_tensor = mine[key], start[key]
            if not want_tensor.is_floating_point():  # step counters, num_batches_tracked
                if not torch.equal(got_tensor, want_tensor):
                    problems.append(f"{name}{key}: {got_tensor} vs {want_tensor}")
                continue
            drift += (got_tensor.double() - want_tensor.double()).pow(2).sum().item()
            update += (want_tensor.double() - start_tensor.double()).pow(2).sum().item()
        drift, update = math.sqrt(drift), math.sqrt(update)
        if update == 0 or drift > CHECKPOINT_SHARE * update:
            problems.append(
                f"{name}: stale or untrained weights: L2 distance {drift:.3e} from the eager checkpoint, "
                f"over {CHECKPOINT_SHARE} of the training update {update:.3e}"
            )
    return problems


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
    # Integer device attribute (`.to(self.gpu_id)`); the optimizer and its scheduler are
    # built in another function before the trainer moves the model.
    XlaOnly(Executed("ddp_integer_trainer.py", steps_per_epoch=8, env=TORCHRUN_ENV, launched=True), "NVIDIA driver|CUDA"),
]


@pytest.mark.parametrize("fixture", XLA_ONLY, ids=lambda f: f.case.id)
def test_converted_fixture_runs_where_the_original_cannot(fixture: XlaOnly, tmp_path: Path) -> None:
    """No eager twin: the converted script runs on XLA, steadily, and trains (its losses
    after the warm-up and its checkpoints differ from the same run with every optimizer
    step undone)."""
    case = fixture.case
    original = subprocess.run(
        [sys.executable, case.script, *case.args], cwd=FIXTURES / case.folder, env=_environment(**dict(case.env)),
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
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


def test_module_level_ddp_runs_under_torchrun_too(tmp_path: Path) -> None:
    """The launcher check of a module-level script stays: as plain `python` it trains on
    one XLA device (EXECUTED), under torchrun it takes its DDP branch on the xla://
    process group (one process here) and trains the same way."""
    case = _case("module_ddp.py")
    eager = run_eager(case, tmp_path)
    folder = _copy(case, tmp_path / "torchrun", convert=True)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=1", case.script]
    torchrun = _parse(_run(command, folder, _environment(PJRT_DEVICE="CPU")), folder)
    assert "using device: xla" in torchrun.output
    assert "int(os.environ.get(\"RANK\", -1)) != -1" in (folder / case.script).read_text()
    assert not loss_problems(torchrun, eager)


def test_a_script_without_a_device_is_left_on_the_cpu_as_its_finding_says(tmp_path: Path) -> None:
    """No half port: the device-less L-BFGS script comes back unchanged with one finding
    (XLA005), and run through the XLA runner it still trains like the original, on the
    CPU: no graph is compiled."""
    case = Executed("lbfgs_no_device.py")
    conversion = convert_source((FIXTURES / case.script).read_bytes())
    assert not conversion.changed
    assert [f.rule for f in conversion.findings] == ["XLA005"]
    eager = run_eager(case, tmp_path)
    xla = run_xla(case, tmp_path)
    assert len(eager.losses) == 10 and not loss_problems(xla, eager)
    assert xla.compiles[-1] == 0, xla.compiles


# -- negative controls: a conversion with one rewrite switched off fails the checks ---------


def _case(script: str) -> Executed:
    return next(c for c in EXECUTED if c.script == script)


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


def _largest_graph(run: Run) -> int:
    found = re.search(r"^XLA_LARGEST_GRAPH (\d+)$", run.output, re.MULTILINE)
    assert found, run.output[-2000:]
    return int(found.group(1))


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
    assert 2 * _largest_graph(with_barrier) < _largest_graph(without)


def test_steady_state_check_catches_a_missing_barrier(tmp_path: Path) -> None:
    """Converted without its step barrier, a training loop compiles a new graph every
    step: the steady-state check must see that."""
    case = _case("manual_sgd.py")
    run = run_xla(case, tmp_path, RuleSelection(ignore=("XLA301", "XLA302")))
    assert "torch_xla.sync()" not in (run.folder / case.script).read_text()
    (problem,) = steady_problems(run, case)
    new = int(re.match(r"no steady state: (\d+) new graph", problem).group(1))  # type: ignore[union-attr]
    assert new >= len(run.compiles) - case.warmup, problem  # one per step, at least


def test_fsdp_port_is_torch_xlas_wrapper_with_a_plain_step(tmp_path: Path) -> None:
    """The FSDP fixture trains like the original (above) through torch_xla's wrapper,
    stepping its optimizer plainly (XlaFullyShardedDataParallel reduce-scatters the
    gradients; xm.optimizer_step would all-reduce them again); with its bfloat16 policy
    (compute and buffer dtypes) it runs steadily too.  Without the FSDP port, torch's
    wrapper fails under the xla process group."""
    case = _case("dist_fsdp.py")
    source = convert_source((FIXTURES / case.script).read_bytes()).output.decode()
    assert "xla_fsdp.XlaFullyShardedDataParallel(" in source and "optimizer.step()" in source
    assert "xm.optimizer_step" not in source and "compute_dtype=torch.bfloat16 if args.bf16 else None" in source

    bf16 = Executed(case.script, args=("--bf16",), steps_per_epoch=case.steps_per_epoch, launched=True)
    run = run_xla(bf16, tmp_path / "bf16")
    assert not xla_problems(run) and not steady_problems(run, bf16), run.compiles
    assert all(math.isfinite(loss) for loss in run.losses) and len(run.losses) == 16

    unported = _copy(case, tmp_path / "unported", RuleSelection(ignore=("XLA611",)), convert=True)
    assert "FSDP(" in (unported / case.script).read_text()
    result = subprocess.run(
        [sys.executable, str(XLA_RUNNER), case.script], cwd=unported, env=_environment(PJRT_DEVICE="CPU"),
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )
    assert result.returncode != 0 and "does not have a corresponding backend" in result.stderr, result.stderr[-2000:]
