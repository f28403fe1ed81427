"""Fixtures run for the executed tests: the original in eager mode on the CPU, the
converted copy through runners/xla_runner.py on torch_xla 2.9 with PJRT_DEVICE=CPU; both
print ``step N loss V`` per step.  The checks on those runs each return what is wrong
(empty: nothing):
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
    runners/untrained_runner.py).  Untrained or stale weights are as far away as the
    update itself.  0.1: measured worst case 0.05 (the AMP fixture: a conv bias before
    BatchNorm has no true gradient, Adam turns its float-noise gradient into steps of
    size lr, and the running mean follows it); the others stay under 0.02.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from codemods import RuleSelection, convert_source
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from codemods.targets import DEFAULT_TARGET
from tests.support.fixtures import output_bytes
from tests.support.paths import FIXTURES
from tests.support.projects import write_project

if TYPE_CHECKING:
    import torch

LOSS_RTOL = 1e-3
LOSS_ATOL = 1e-5
WARMUP_STEPS = 3
STEADY_STEPS = 5
CHECKPOINT_SHARE = 0.1
RUN_TIMEOUT = 600
# Scripts the runs start by path (they import each other as siblings, not as a package).
RUNNERS = Path(__file__).with_name("runners")
XLA_RUNNER = RUNNERS / "xla_runner.py"
UNTRAINED_RUNNER = RUNNERS / "untrained_runner.py"
TORCHRUN_ENV = (
    ("RANK", "0"),
    ("LOCAL_RANK", "0"),
    ("WORLD_SIZE", "1"),
    ("LOCAL_WORLD_SIZE", "1"),
    ("MASTER_ADDR", "localhost"),
)
# On the CPU, torch_xla.launch runs the devices (CPU_NUM_DEVICES) as threads of one process
# (torch_xla 2.9, _internal/pjrt.py: one process for a CPU device type, a thread per device), so
# each thread's init_process_group shares one default group: when one thread has finished its start
# before the other begins (a loaded machine), the second raises this.  The race is the CPU launcher's,
# not the script's (on a TPU each device is a process): such a run is started again.
LAUNCH_RACE = "trying to initialize the default process group twice"
LAUNCH_RACE_TRIES = 3
STEP_LINE = re.compile(r"^step (\d+) loss (\S+)$", re.MULTILINE)
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".tar")
# The end of an executed evaluation script: its ``evaluate(model, batches)`` run over six batches,
# three times (eighteen steps).
EVALUATION_MAIN = """

def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 6).to(device)
    batches = [(torch.randn(3, 4), torch.randint(0, 6, (3,))) for _ in range(6)]
    for epoch in range(3):
        evaluate(model, batches)


if __name__ == "__main__":
    main()
"""


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


@dataclass
class Run:
    losses: list[float]
    compiles: list[int]
    executions: int
    folder: Path
    output: str
    stepped_devices: tuple[str, ...] = ()  # where the parameters the optimizers stepped live
    stderr: str = ""
    returncode: int = 0


def run_command(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed in {cwd}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result.stdout


def run_environment(**extra: str) -> dict[str, str]:
    """The environment of a run: no accelerator, and a process-group port of its own (runs of
    other pytest-xdist workers start process groups at the same time; torch_xla's xla://
    and torch's env:// meet at MASTER_PORT)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PJRT_", "XLA_", "TPU_"))}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0", MASTER_PORT=str(free_port()), **extra)
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])


def copy_fixture(case: Executed, folder: Path, selection: RuleSelection | None = None, convert: bool = False) -> Path:
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
        path.write_bytes(output_bytes(conversion))


def run_unported(case: Executed, folder: Path, rule: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The fixture converted with ``rule`` off, run on torch_xla (CPU): what a script the
    rule would have ported does on XLA (the negative control of an executed test)."""
    converted = copy_fixture(case, folder, RuleSelection(ignore=(rule,)), convert=True)
    result = subprocess.run(
        [sys.executable, str(XLA_RUNNER), case.script],
        cwd=converted,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    return converted, result


def converted_project(folder: Path, name: str, files: dict[str, str], selection: RuleSelection | None = None) -> Path:
    """A project written in the test (``write_project``: a marker named ``name`` and ``files``)
    and converted as one run, with ``selection``: what the executed tests that write their
    own program run on XLA (the original: ``write_project`` alone)."""
    convert_folder(write_project(folder, name, files), selection)
    return folder


def eager_project_run(workdir: Path, name: str, files: dict[str, str], env: Mapping[str, str] | None = None) -> Run:
    """A project written in the test (``write_project``: a marker named ``name`` and ``files``, in
    ``workdir/eager``) whose ``train.py`` runs eagerly on the CPU, with ``env`` in its environment."""
    return run_script(write_project(workdir / "eager", name, files), "train.py", on_xla=False, env=env)


def eager_and_converted_project(
    workdir: Path, name: str, files: dict[str, str], selection: RuleSelection | None = None
) -> tuple[Run, str, Run]:
    """A project written in the test (``write_project``: a marker named ``name`` and ``files``) whose
    ``train.py`` runs eagerly on the CPU (in ``workdir/eager``), then converted as one run with
    ``selection`` and run on XLA (in ``workdir/xla``): the eager run, the converted script's text, and
    its run on XLA."""
    eager = eager_project_run(workdir, name, files)
    script = converted_project(workdir / "xla", name, files, selection) / "train.py"
    return eager, script.read_text(), run_script(script.parent, "train.py")


def eager_and_converted_runs(
    workdir: Path,
    name: str,
    files: dict[str, str],
    ported: str,
    changed_to: str | None = None,
    eager_env: Mapping[str, str] | None = None,
) -> tuple[Run, Run]:
    """A project written in the test (``write_project``: a marker named ``name`` and ``files``) whose
    ``train.py`` runs eagerly on the CPU (with ``eager_env``), then converted and run on XLA: the
    converted script must hold ``ported``, which ``changed_to`` replaces before it runs (a negative
    control: the port as it used to be written, or its fix undone)."""
    eager = eager_project_run(workdir, name, files, eager_env)
    script = converted_project(workdir / "xla", name, files) / "train.py"
    converted = script.read_text()
    assert ported in converted, converted
    if changed_to is not None:
        script.write_text(converted.replace(ported, changed_to))
    return eager, run_script(script.parent, "train.py")


def eager_and_converted_script(
    workdir: Path, script: str, source: str, selection: RuleSelection | None = None
) -> tuple[str, Run, Run]:
    """``source``, one script written in the test as ``script`` (no project marker), run eagerly on the
    CPU (in ``workdir/eager``) and converted with ``selection`` and run on XLA (in ``workdir/ported``):
    the converted script's text, its run on XLA, and the eager run."""
    eager, ported = workdir / "eager", workdir / "ported"
    for folder in (eager, ported):
        folder.mkdir(parents=True)
        (folder / script).write_text(source)
    convert_folder(ported, selection)
    return (ported / script).read_text(), run_script(ported, script), run_script(eager, script, on_xla=False)


def run_script(
    folder: Path,
    script: str,
    *args: str,
    on_xla: bool = True,
    runner: bool = True,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> Run:
    """``script`` (with ``args``) run in ``folder``: on torch_xla (PJRT_DEVICE=CPU) through
    XLA_RUNNER, which counts the graphs, or as it is with ``runner`` False (a script that starts
    processes of its own); with ``on_xla`` False, eagerly on the CPU.  ``env``: more of the run's
    environment (TORCHRUN_ENV for an original that joins a process group).  A run that fails
    fails the test, unless ``check`` is False (a negative control: its ``returncode`` and
    ``stderr`` say how it failed)."""
    command = [sys.executable, *([str(XLA_RUNNER)] if on_xla and runner else []), script, *args]
    device = {"PJRT_DEVICE": "CPU"} if on_xla else {}
    for _ in range(LAUNCH_RACE_TRIES):
        result = subprocess.run(
            command,
            cwd=folder,
            env=run_environment(**device, **(env or {})),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
        if LAUNCH_RACE not in result.stdout + result.stderr:
            break
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed in {folder}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return replace(parse_run(result.stdout, folder), stderr=result.stderr, returncode=result.returncode)


def parse_run(output: str, folder: Path) -> Run:
    losses = [float(v) for _, v in STEP_LINE.findall(output)]
    compiles = [int(c) for c in re.findall(r"^XLA_COMPILES (\d+)$", output, re.MULTILINE)]
    executions = re.search(r"^XLA_EXECUTIONS (\d+)$", output, re.MULTILINE)
    stepped = re.search(r"^XLA_STEPPED_DEVICES (.+)$", output, re.MULTILINE)
    return Run(
        losses,
        compiles,
        int(executions.group(1)) if executions else 0,
        folder,
        output,
        tuple(stepped.group(1).split()) if stepped else (),
    )


def run_eager(case: Executed, workdir: Path) -> Run:
    folder = copy_fixture(case, workdir / "eager")
    return parse_run(
        run_command([sys.executable, case.script, *case.args], folder, run_environment(**dict(case.env))), folder
    )


def run_xla(case: Executed, workdir: Path, selection: RuleSelection | None = None) -> Run:
    folder = copy_fixture(case, workdir / "xla", selection, convert=True)
    command = [sys.executable, str(XLA_RUNNER), case.script, *case.args]
    return parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)


def run_untrained(case: Executed, workdir: Path, on_xla: bool = False) -> Run:
    """The script (converted, on XLA, with ``on_xla``) with every optimizer step undone."""
    folder = copy_fixture(case, workdir / ("untrained-xla" if on_xla else "untrained"), convert=on_xla)
    env = run_environment(PJRT_DEVICE="CPU") if on_xla else run_environment(**dict(case.env))
    return parse_run(run_command([sys.executable, str(UNTRAINED_RUNNER), case.script, *case.args], folder, env), folder)


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


def largest_graph(run: Run) -> int:
    """The nodes of the largest graph the run synced (XLA_LARGEST_GRAPH)."""
    found = re.search(r"^XLA_LARGEST_GRAPH (\d+)$", run.output, re.MULTILINE)
    assert found, run.output[-2000:]
    return int(found.group(1))


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
    return (
        [f"no steady state: {new} new graph(s) after the {warmup}-step warm-up, compiles {run.compiles}"] if new else []
    )


def evaluation_problems(workdir: Path, source: str, kept: str) -> list[str]:
    """``source``, an evaluation script ending in EVALUATION_MAIN (eighteen steps, six to an epoch)
    that reads to the host in every iteration: converted, it gets no step barrier, gives the eager
    losses and reaches a steady state.  The negative control ``kept``, its variant that keeps its
    values on the device, converted with XLA303 off, gets none either and makes one graph of every
    iteration, many times the largest graph of the first."""
    code, got, want = eager_and_converted_script(workdir, "evaluate.py", source)
    kept_code, kept_run, _ = eager_and_converted_script(
        workdir / "kept", "evaluate.py", kept, RuleSelection(ignore=("XLA303",))
    )
    problems = [
        f"a barrier in {name}"
        for name, text in (("the port", code), ("the control", kept_code))
        if "torch_xla.sync()" in text
    ]
    if len(want.losses) != 18:
        problems.append(f"{len(want.losses)} eager steps, expected 18")
    problems += loss_problems(got, want) + steady_problems(got, Executed("evaluate.py", steps_per_epoch=6))
    if not largest_graph(kept_run) > 3 * largest_graph(got):
        problems.append(f"the control's largest graph {largest_graph(kept_run)} vs {largest_graph(got)}")
    return problems


def training_problems(run: Run, eager: Run, case: Executed) -> list[str]:
    """A converted run against the original's eager run: the same losses, on XLA, its optimizers
    stepping XLA parameters, no new graph after the warm-up."""
    return loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) + steady_problems(run, case)


def barrier_per_step_problems(run: Run, eager: Run, case: Executed, executions: int) -> list[str]:
    """A converted run with one barrier per step against the original's eager run: its
    ``training_problems``, and ``executions`` graphs run: one per step, and one for each time
    the script brings device values to the host between barriers (a checkpoint save)."""
    problems = training_problems(run, eager, case)
    if run.executions != executions:
        problems.append(f"{run.executions} graphs run, expected {executions}")
    return problems


def step_ends(indent: str) -> tuple[str, str]:
    """The end of a converted training step that prints ``step N loss V`` at ``indent``: as the
    port writes it (the print in a step closure, then the barrier), and without the barrier,
    the print as the original wrote it (a step closure runs only at a barrier)."""
    printed = 'print(f"step {step} loss {loss.item()}")'
    return (
        f"{indent}xm.add_step_closure(lambda step, loss: {printed}, args=(step, loss))\n{indent}torch_xla.sync()\n",
        f"{indent}{printed}\n",
    )


def unbarriered_problems(run: Run, eager: Run, case: Executed) -> list[str]:
    """The graph count's negative control, a converted script whose step barrier was taken
    out: it trains like the original (same losses), but each step's ``loss.item()`` runs a
    graph holding every step before it, a new graph at every step, which the steady-state
    check must see."""
    growing = list(range(1, len(eager.losses) + 1))
    problems = loss_problems(run, eager)
    if run.compiles != growing:
        problems.append(f"compiles {run.compiles}, not one new graph per step")
    if not steady_problems(run, case):
        problems.append("the steady-state check sees no new graphs")
    return problems


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


def checkpoint_tensors(paths: list[Path], out: Path) -> dict[Path, dict[str, torch.Tensor]]:
    """The tensors of each checkpoint, loaded as saved (no map_location) by a process that
    never imports torch_xla."""
    import torch

    run_command([sys.executable, "-c", _FLATTEN_CHECKPOINTS, str(out), *map(str, paths)], out.parent, run_environment())
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
