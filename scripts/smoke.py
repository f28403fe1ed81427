"""Smoke harness: the tool over whole folders of real code, as a new user would run it.

For each folder and target, in a scratch copy: ``convert`` every file (as one run, so
the whole-repository analysis is used), check that what it wrote parses, ``convert
--check`` the result (a second run must change nothing), and ``lint`` the original.
Prints, per file, internal errors, exceptions, recursion failures, output that does
not parse, non-idempotent output and CUDA left in converted code without a finding on
its line; then figures per folder and the slowest files.  Exit 1 on any internal error,
recursion failure, unparsable output or non-idempotent file.

    python scripts/smoke.py FOLDER... [--target 2.9 --target sagemaker] [--json results.json]

Each folder runs in a child process (``-j N``: N at once) with a watchdog: a file that takes longer than
``--file-timeout`` seconds is reported as not terminating, and the run goes on.

Executed mode: a training script of a folder, run before and after conversion.

    python scripts/smoke.py --execute FOLDER SCRIPT [--setup FILE.py] [--replace FILE::OLD::NEW]
        [--env NAME=VALUE] [--torchrun | --torchrun-env] [--loss-regex RE] [--compare N | --no-compare WHY]
        [--run-timeout S] [--keep DIR] [--json out.json] [-- ARGS...]
    python scripts/smoke.py --known NAME... [--corpus /work/corpus]   (scripts/smoke_scripts.py)

In a scratch copy of FOLDER (``--replace`` edits applied, to shrink a script's sizes; then
``--setup`` run with SCRIPT's folder as its working directory, to make fake data), the
original SCRIPT runs in eager mode on the CPU, and a second copy converted by the tool
(the whole folder, default target) runs on torch_xla with PJRT_DEVICE=CPU, each through
scripts/smoke_runner.py with a time bound.  Reported per run: how it ended, the losses
printed (numbers after "loss" on a line), optimizer steps, the graphs XLA compiled (in
all, and so far at each loss line), the devices of the parameters the optimizers stepped
and of the tensors backward() ran on.  Exit 1 when the converted run does not get as far
as the original or trains off the XLA device (unless the tool left the script on the CPU
with XLA005), when the first losses differ (unless --no-compare), or when a new graph is
compiled at each of the last loss lines.  Not run in CI: for public scripts, by hand.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codemods.engine.report import FileReport
from codemods.verify.checks import FP32_TOLERANCE

_CUDA_STRINGS = ("cuda", "nccl")


@dataclass
class FileResult:
    path: str
    seconds: float = 0.0
    error: str | None = None  # the first run's error, as the tool reported it
    lint_error: str | None = None
    unparsable: str | None = None
    not_idempotent: str | None = None  # the second run's diff (first lines)
    cuda_leftovers: list[int] = field(default_factory=list)  # output lines without a finding
    findings: int = 0
    changed: bool = False


@dataclass
class FolderResult:
    folder: str
    target: str
    files: list[FileResult]
    seconds: float

    def count(self, what: str) -> int:
        return sum(1 for f in self.files if getattr(f, what))

    @property
    def internal(self) -> list[FileResult]:
        return [f for f in self.files if _internal(f.error) or _internal(f.lint_error)]

    @property
    def recursion(self) -> list[FileResult]:
        return [f for f in self.files if "too deeply nested" in (f.error or "") + (f.lint_error or "")]

    @property
    def failures(self) -> int:
        return len(self.internal) + len(self.recursion) + self.count("unparsable") + self.count("not_idempotent")


def _internal(error: str | None) -> bool:
    return error is not None and error.startswith("internal error")


def _copy(folder: Path, into: Path) -> None:
    """The scratch copy `xla-codemod verify` makes: no .git, virtual environments or caches;
    files of 16 MiB or more linked."""
    from codemods.verify.scratch import copy_project

    copy_project(folder, into)


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def _cuda_lines(text: str) -> set[int]:
    """Lines whose code (not comments) names CUDA: ``torch.cuda``, ``.cuda()``, "cuda" strings."""
    lines: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and token.string == "cuda":
                lines.add(token.start[0])
            elif token.type == tokenize.STRING:
                try:
                    value = ast.literal_eval(token.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str) and value.split(":")[0].lower() in _CUDA_STRINGS:
                    lines.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


def _run(
    paths: list[str], mode: str, target: str, timeout: float, times: dict[str, float] | None = None
) -> list[FileReport]:
    """The tool's own run over ``paths`` (as the CLI makes it, in one process), each file
    timed and watched: one that takes over ``timeout`` seconds fails with TimeoutError,
    which the tool reports as an internal error of that file, and the run goes on."""
    from codemods import runner
    from codemods.engine.rule import RuleSelection
    from codemods.files import FileProblem, discover
    from codemods.pipeline import load_parser

    work = []
    for item in discover(paths):
        if not isinstance(item, FileProblem):
            work.append((item, runner.Job(mode, target, RuleSelection(select=("ALL",)))))  # type: ignore[arg-type]  # mode is one of the Job modes (from the command line, typed str)
    load_parser()  # not counted as the first file's time
    process_path = runner.process_path

    def timed(path: str, *args: object, **kwargs: object) -> object:
        signal.alarm(int(timeout))
        started = time.perf_counter()
        try:
            return process_path(path, *args, **kwargs)  # type: ignore[arg-type]  # passes runner.process_path's arguments through unchanged
        finally:
            signal.alarm(0)
            if times is not None:
                times[path] = time.perf_counter() - started

    def overtime(signum: int, frame: object) -> None:
        raise TimeoutError(f"no result after {timeout:.0f} s: the analysis does not terminate")

    signal.signal(signal.SIGALRM, overtime)
    runner.process_path = timed  # type: ignore[assignment]  # replaces runner.process_path with a wrapper that passes its arguments through
    try:
        return runner.run(work, 1)
    finally:
        runner.process_path = process_path


def check_folder(folder: Path, target: str, timeout: float) -> FolderResult:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # as the CLI does
    started = time.perf_counter()
    results: dict[str, FileResult] = {}
    with tempfile.TemporaryDirectory(prefix="xla-smoke-") as scratch:
        copy = Path(scratch) / folder.name
        _copy(folder, copy)
        times: dict[str, float] = {}
        for report in _run([str(copy)], "write", target, timeout, times):
            rel = _relative(report.path, copy)
            result = results[rel] = FileResult(rel, seconds=times.get(report.path, 0.0), error=report.error)
            result.findings = len(report.findings)
            result.changed = report.changed
            if report.error is not None or not rel.endswith(".py"):
                continue
            data = Path(report.path).read_bytes()
            text = data.decode("utf-8-sig", errors="replace")
            if report.changed:
                try:
                    ast.parse(data)  # as CPython reads the file (BOM, encoding cookie)
                except SyntaxError as error:
                    result.unparsable = f"line {error.lineno}: {error.msg}"
            flagged = {f.line for f in report.findings}
            result.cuda_leftovers = sorted(_cuda_lines(text) - flagged) if "torch" in text else []
        for report in _run([str(copy)], "diff", target, timeout):
            rel = _relative(report.path, copy)
            if report.changed and rel in results:
                results[rel].not_idempotent = "\n".join(report.diff.splitlines()[:40])
    for report in _run([str(folder)], "lint", target, timeout):
        rel = _relative(report.path, folder)
        if rel in results:
            results[rel].lint_error = report.error
    return FolderResult(
        str(folder), target, sorted(results.values(), key=lambda r: r.path), time.perf_counter() - started
    )


def _child(folder: str, target: str, timeout: float, queue: multiprocessing.Queue[str]) -> None:
    result = check_folder(Path(folder), target, timeout)
    queue.put(json.dumps(asdict(result)))


def _in_child(folder: Path, target: str, timeout: float) -> FolderResult:
    """A fresh process per folder and target: the tool keeps per-run state, and a
    crash of the harness itself must not hide the other folders."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_child, args=(str(folder), target, timeout, queue))
    process.start()
    data = queue.get()
    process.join()
    raw = json.loads(data)
    return FolderResult(raw["folder"], raw["target"], [FileResult(**f) for f in raw["files"]], raw["seconds"])


def _print(result: FolderResult, verbose: bool) -> None:
    name = Path(result.folder).name
    print(
        f"{name} [{result.target}]: {len(result.files)} files, {result.count('changed')} changed, "
        f"{sum(f.findings for f in result.files)} findings, {len(result.internal)} internal errors, "
        f"{len(result.recursion)} recursion failures, {result.count('unparsable')} unparsable outputs, "
        f"{result.count('not_idempotent')} not idempotent, "
        f"{sum(1 for f in result.files if f.error and not _internal(f.error))} input errors, "
        f"{sum(len(f.cuda_leftovers) for f in result.files)} CUDA lines without a finding, {result.seconds:.1f} s"
    )
    for f in result.files:
        where = f"  {name}/{f.path}"
        if _internal(f.error) or "too deeply nested" in (f.error or ""):
            print(f"{where}: convert: {f.error}")
        elif f.error and verbose:
            print(f"{where}: input error: {f.error}")
        if _internal(f.lint_error) or "too deeply nested" in (f.lint_error or ""):
            print(f"{where}: lint: {f.lint_error}")
        if f.unparsable:
            print(f"{where}: output does not parse: {f.unparsable}")
        if f.not_idempotent:
            print(
                f"{where}: a second run changes it:\n"
                + "\n".join("    " + line for line in f.not_idempotent.splitlines())
            )
        if f.cuda_leftovers and verbose:
            print(f"{where}: CUDA without a finding on lines {', '.join(map(str, f.cuda_leftovers[:20]))}")


def markdown_table(results: list[FolderResult]) -> str:
    rows = [
        "| folder | target | files | changed | findings | internal errors | recursion | unparsable | not idempotent "
        "| input errors | CUDA lines without a finding | seconds |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        rows.append(
            f"| {Path(r.folder).name} | {r.target} | {len(r.files)} | {r.count('changed')} | "
            f"{sum(f.findings for f in r.files)} | {len(r.internal)} | {len(r.recursion)} | {r.count('unparsable')} | "
            f"{r.count('not_idempotent')} | {sum(1 for f in r.files if f.error and not _internal(f.error))} | "
            f"{sum(len(f.cuda_leftovers) for f in r.files)} | {r.seconds:.0f} |"
        )
    return "\n".join(rows) + "\n"


# --- executed mode -------------------------------------------------------------------

RUNNER = Path(__file__).resolve().with_name("smoke_runner.py")
DEFAULT_LOSS_REGEX = r"(?i)\bloss\b[^0-9\n-]{0,12}(-?\d+\.\d*(?:e[-+]?\d+)?|nan|inf)"
TORCHRUN = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node=1"]
TORCHRUN_ENV = {
    "RANK": "0",
    "LOCAL_RANK": "0",
    "WORLD_SIZE": "1",
    "LOCAL_WORLD_SIZE": "1",
    "MASTER_ADDR": "localhost",
    "MASTER_PORT": "29531",
}
# float32 against float32, as `xla-codemod verify` and the executed tests: XLA's CPU backend
# reorders float32 arithmetic.
LOSS_RTOL, LOSS_ATOL = FP32_TOLERANCE
WARMUP_LOSS_LINES = 3  # graphs change while optimizer state is made, as in tests/support/executed.py


@dataclass
class ExecSpec:
    """One script to run before and after conversion (see the module's docstring)."""

    folder: Path
    script: str  # relative to folder
    args: list[str] = field(default_factory=list)
    converted_args: list[str] = field(default_factory=list)  # appended for the converted run only
    env: dict[str, str] = field(default_factory=dict)
    replace: list[tuple[str, str, str]] = field(default_factory=list)  # (file in folder, old, new)
    setup: Callable[[Path], None] | None = None  # called with SCRIPT's folder in the scratch copy
    setup_name: str = ""
    loss_regex: str = DEFAULT_LOSS_REGEX
    compare: int = 5  # first losses compared
    rtol: float = LOSS_RTOL  # relative tolerance of that comparison
    no_compare: str = ""  # why the losses are not compared
    timeout: float = 900.0  # per run
    name: str = ""
    only: list[str] = field(default_factory=list)  # files of the folder copied (default: all)
    torchrun: bool = False  # both runs started by torchrun, one process (the runner is its script)


@dataclass
class RunResult:
    command: str
    exit: int | None = None  # None: timed out
    error: str | None = None
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    compiles_at_losses: list[int] = field(default_factory=list)
    compiles: int = 0
    executions: int = 0
    optimizer_steps: int = 0
    stepped_devices: list[str] = field(default_factory=list)
    loss_devices: list[str] = field(default_factory=list)
    tail: str = ""  # the output's last lines


@dataclass
class ExecResult:
    name: str
    script: str
    command: str
    findings: list[str]  # the converted script's findings, "line: CODE severity message"
    eager: RunResult
    xla: RunResult
    compared: str  # what the loss comparison found
    problems: list[str]
    left_on_cpu: bool = False  # XLA005: the tool left the script unchanged


def _fail_if_missing(spec: ExecSpec) -> None:
    if not (spec.folder / spec.script).is_file():
        raise SystemExit(f"smoke.py: no script {spec.script} in {spec.folder}")


def _scratch_copy(spec: ExecSpec, into: Path) -> None:
    if spec.only:
        for name in spec.only:
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(spec.folder / name, target)
    else:
        _copy(spec.folder, into)
    for name, old, new in spec.replace:
        path = into / name
        text = path.read_text()
        if old not in text:
            raise SystemExit(f"smoke.py: --replace: {old!r} is not in {name}")
        path.write_text(text.replace(old, new))
    if spec.setup is not None:
        spec.setup((into / spec.script).parent)


def _convert(folder: Path, script: str) -> tuple[list[str], bool]:
    """Converts the folder in place as a user would (the CLI, default target); the
    script's findings, and whether the tool left it unchanged with XLA005."""
    command = [
        sys.executable,
        "-m",
        "codemods",
        "convert",
        str(folder),
        "--format",
        "json",
        "--fail-on",
        "error",
        "--report",
        "-",
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder, env=_tool_env(), check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(
            f"smoke.py: the conversion printed no report:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        ) from None
    lines: list[str] = []
    left = False
    for file in report.get("files", []):
        if _relative(file["path"], folder) != script and Path(file["path"]).resolve() != (folder / script).resolve():
            if file.get("error"):
                lines.append(f"{_relative(file['path'], folder)}: {file['error']}")
            continue
        if file.get("error"):
            lines.append(f"error: {file['error']}")
        for f in file.get("findings", []):
            lines.append(f"{f.get('line')}: {f.get('rule')} {f.get('severity')} {f.get('message')}")
            left = left or (f.get("rule") == "XLA005" and not file.get("changed"))
    return lines, left


def _tool_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run_env(spec: ExecSpec, on_xla: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PJRT_", "XLA_", "TPU_"))}
    env.pop("PYTHONPATH", None)  # the script's own imports only (the runner puts its folder first)
    env.update(spec.env)
    env["PYTHONUNBUFFERED"] = "1"
    if on_xla:
        env["PJRT_DEVICE"] = "CPU"
    else:
        env["CUDA_VISIBLE_DEVICES"] = ""
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # torch would import torch_xla (its entry point) itself
    return env


def run_script(spec: ExecSpec, folder: Path, on_xla: bool) -> RunResult:
    """The script of ``folder`` through smoke_runner.py, in a process group of its own
    that is ended when its time is up."""
    script = folder / spec.script
    mode = "xla" if on_xla else "eager"
    args = [*spec.args, *spec.converted_args] if on_xla else spec.args
    command = [
        sys.executable,
        *(TORCHRUN if spec.torchrun else []),
        str(RUNNER),
        mode,
        spec.loss_regex,
        script.name,
        *args,
    ]
    launcher = "torchrun --standalone --nproc-per-node=1" if spec.torchrun else "python"
    shown = " ".join(
        [*(f"{k}={v}" for k, v in spec.env.items()), "PJRT_DEVICE=CPU" if on_xla else "", launcher, spec.script, *args]
    ).strip()
    result = RunResult(command=shown)
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=script.parent,
        env=_run_env(spec, on_xla),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=spec.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        result.error = f"timed out after {spec.timeout:.0f} s"
    result.seconds = time.perf_counter() - started
    parse_run(output or "", spec.loss_regex, result)
    if result.error is not None and result.error.startswith("timed out"):
        result.exit = None
    return result


def parse_run(output: str, loss_regex: str, result: RunResult) -> RunResult:
    loss_line = re.compile(loss_regex)
    lines = output.splitlines()
    for line in lines:
        if line.startswith("SMOKE_COMPILES "):
            result.compiles_at_losses.append(int(line.split()[1]))
        elif line.startswith("SMOKE_RESULT "):
            data = json.loads(line[len("SMOKE_RESULT ") :])
            result.exit = data["exit"]
            result.error = data.get("error")
            for key in ("compiles", "executions", "optimizer_steps", "stepped_devices", "loss_devices"):
                setattr(result, key, data[key])
        else:
            found = loss_line.search(line)
            if found:
                try:
                    result.losses.append(float(found.group(1)))
                except (ValueError, IndexError):
                    pass
    result.tail = "\n".join(line for line in lines if not line.startswith("SMOKE_"))[-3000:]
    return result


def compare_losses(eager: list[float], xla: list[float], count: int, rtol: float = LOSS_RTOL) -> tuple[bool, str]:
    n = min(count, len(eager), len(xla))
    if n == 0:
        return False, "no losses to compare"
    for i in range(n):
        if abs(eager[i] - xla[i]) > LOSS_ATOL + rtol * abs(eager[i]):
            return False, f"loss {i + 1} differs: eager {eager[i]:.6g}, XLA {xla[i]:.6g}"
    worst = max(abs(e - x) / max(abs(e), 1e-12) for e, x in zip(eager[:n], xla[:n]))
    return True, f"first {n} losses within {rtol:g} relative (largest difference {worst:.1e})"


def judge(spec: ExecSpec, eager: RunResult, xla: RunResult, left_on_cpu: bool) -> tuple[str, list[str]]:
    """What the comparison found and the problems of the converted run."""
    problems: list[str] = []
    if xla.exit is None:
        if eager.exit is not None:
            problems.append(f"the converted run timed out (the original ended with exit {eager.exit})")
    elif xla.exit != 0 and eager.exit == 0:
        problems.append(f"the converted run failed: {xla.error or f'exit {xla.exit}'}")
    elif xla.exit != 0 and eager.exit is None:
        problems.append(f"the converted run failed where the original timed out: {xla.error or f'exit {xla.exit}'}")
    elif xla.exit != 0 and xla.error != eager.error:
        # The original fails here too (a CUDA-only branch, say): the port must not fail otherwise.
        problems.append(
            f"the converted run failed: {xla.error or f'exit {xla.exit}'} (the original failed "
            f"with: {eager.error or f'exit {eager.exit}'})"
        )
    if eager.exit == 0 and xla.exit == 0 and len(xla.losses) < len(eager.losses):
        problems.append(f"the converted run printed {len(xla.losses)} losses, the original {len(eager.losses)}")
    if eager.exit == 0 and xla.exit == 0 and xla.optimizer_steps < eager.optimizer_steps:
        problems.append(
            f"the converted run took {xla.optimizer_steps} optimizer steps, the original {eager.optimizer_steps}"
        )
    expected = "cpu" if left_on_cpu else "xla"
    if xla.stepped_devices and xla.stepped_devices != [expected]:
        problems.append(f"the optimizers stepped parameters on {', '.join(xla.stepped_devices)}")
    if xla.loss_devices and xla.loss_devices != [expected]:
        problems.append(f"backward() ran on tensors on {', '.join(xla.loss_devices)}")
    if not left_on_cpu and xla.exit == 0 and xla.compiles == 0:
        problems.append("the converted run compiled no XLA graph")
    at = xla.compiles_at_losses[WARMUP_LOSS_LINES:]
    if len(at) >= 4 and all(b > a for a, b in zip(at[-4:], at[-3:])):
        problems.append(f"a new graph at each of the last loss lines ({', '.join(map(str, at[-4:]))} graphs)")
    if spec.no_compare:
        compared = f"not compared: {spec.no_compare}"
    elif not eager.losses:
        compared = "not compared: the original printed no loss"
    else:
        same, compared = compare_losses(eager.losses, xla.losses, spec.compare, spec.rtol)
        if not same and eager.losses:
            problems.append(compared)
    return compared, problems


def execute(spec: ExecSpec, keep: Path | None = None) -> ExecResult:
    _fail_if_missing(spec)
    with tempfile.TemporaryDirectory(prefix="xla-smoke-run-") as temporary:
        scratch = keep / re.sub(r"[^A-Za-z0-9_.-]+", "-", spec.name or spec.script) if keep else Path(temporary)
        original, converted = scratch / "original", scratch / "converted"
        for folder in (original, converted):
            if folder.exists():
                shutil.rmtree(folder)
        _scratch_copy(spec, original)
        _scratch_copy(spec, converted)
        findings, left_on_cpu = _convert(converted, spec.script)
        eager = run_script(spec, original, on_xla=False)
        xla = run_script(spec, converted, on_xla=True)
    compared, problems = judge(spec, eager, xla, left_on_cpu)
    return ExecResult(
        spec.name or spec.script, spec.script, xla.command, findings, eager, xla, compared, problems, left_on_cpu
    )


def _describe(run: RunResult) -> str:
    if run.exit is None:
        end = run.error or "timed out"
    elif run.exit == 0:
        end = "ran to the end"
    else:
        end = f"failed (exit {run.exit}): {run.error}" if run.error else f"exit {run.exit}"
    losses = ", ".join(f"{v:.4f}" for v in run.losses[:6]) + (" ..." if len(run.losses) > 6 else "")
    last = f"{run.losses[-1]:.4f}" if run.losses else "-"
    return (
        f"{end} in {run.seconds:.0f} s; {run.optimizer_steps} optimizer steps; {len(run.losses)} losses "
        f"[{losses}] last {last}; parameters stepped on {', '.join(run.stepped_devices) or '-'}; "
        f"backward on {', '.join(run.loss_devices) or '-'}"
    )


def print_execution(result: ExecResult, verbose: bool = False) -> None:
    print(f"== {result.name}: {result.command}")
    errors = [f for f in result.findings if " error " in f]
    print(
        f"  conversion: {len(result.findings)} findings ({len(errors)} errors)"
        + ("; left unchanged on the CPU (XLA005)" if result.left_on_cpu else "")
    )
    for line in result.findings if verbose else errors:
        print(f"    {line}")
    print(f"  eager: {_describe(result.eager)}")
    print(f"  XLA:   {_describe(result.xla)}")
    at = result.xla.compiles_at_losses
    print(
        f"  XLA graphs: {result.xla.compiles} compiled, {result.xla.executions} executed; at the loss lines: "
        + (", ".join(map(str, at[:12])) + (" ..." if len(at) > 12 else "") if at else "-")
    )
    print(f"  losses: {result.compared}")
    for problem in result.problems:
        print(f"  PROBLEM: {problem}")
    for name, run in (("eager", result.eager), ("XLA", result.xla)):
        if run.exit != 0 and run.tail:
            print(f"  {name} output, last lines:\n" + "\n".join("    " + line for line in run.tail.splitlines()[-15:]))
    print("  OK" if not result.problems else f"  {len(result.problems)} problem(s)")


def _split_replacement(text: str) -> tuple[str, str, str]:
    parts = text.split("::")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"--replace takes FILE::OLD::NEW, not {text!r}")
    return parts[0], parts[1].encode().decode("unicode_escape"), parts[2].encode().decode("unicode_escape")


def _split_env(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"--env takes NAME=VALUE, not {text!r}")
    return name, value


def _setup_file(path: Path) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        subprocess.run([sys.executable, str(path.resolve())], cwd=folder, check=True)

    return setup


def execution_spec(args: argparse.Namespace, script_args: list[str]) -> ExecSpec:
    """The --execute options as a spec."""
    folder, script = args.execute
    env = dict(args.env or [])
    if args.torchrun_env:
        env = {**TORCHRUN_ENV, **env}
    return ExecSpec(
        folder=Path(folder),
        script=script,
        args=script_args,
        converted_args=list(args.converted_arg or []),
        env=env,
        replace=list(args.replace or []),
        setup=_setup_file(args.setup) if args.setup else None,
        setup_name=str(args.setup or ""),
        loss_regex=args.loss_regex,
        compare=args.compare,
        rtol=args.rtol,
        no_compare=args.no_compare or "",
        timeout=args.run_timeout,
        torchrun=args.torchrun,
        name=script + (" (torchrun)" if args.torchrun else " (torchrun environment)" if args.torchrun_env else ""),
    )


def _execute_main(args: argparse.Namespace, script_args: list[str]) -> int:
    if args.execute:
        specs = [execution_spec(args, script_args)]
    else:
        from smoke_scripts import known  # scripts/ is on sys.path when run as a script

        specs = [spec for name in args.known for spec in known(name, args.corpus)]
    results = []
    for spec in specs:
        result = execute(spec, args.keep)
        results.append(result)
        print_execution(result, args.verbose)
        sys.stdout.flush()
        if args.json is not None:
            args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    bad = [r.name for r in results if r.problems]
    print(
        f"\n{len(results)} script(s) run: {len(results) - len(bad)} as far as their originals on XLA"
        + (f"; problems: {', '.join(bad)}" if bad else "")
    )
    return 1 if bad else 0


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The options, and the script's arguments (after ``--``, for --execute)."""
    script_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--target", action="append", choices=("2.9", "sagemaker"))
    parser.add_argument("--file-timeout", type=float, default=180.0)
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument("-j", "--jobs", type=int, default=1, help="folders checked at once (one process each)")
    parser.add_argument("--json", type=Path, help="write every result here")
    parser.add_argument("--markdown", type=Path, help="write the figures per folder as a Markdown table here")
    parser.add_argument("-v", "--verbose", action="store_true", help="also input errors and CUDA leftovers")
    run = parser.add_argument_group("executed mode (a script before and after conversion; arguments after --)")
    run.add_argument("--execute", nargs=2, metavar=("FOLDER", "SCRIPT"), help="run SCRIPT of FOLDER, eager and on XLA")
    run.add_argument("--known", nargs="+", metavar="NAME", help="scripts of scripts/smoke_scripts.py (or 'all')")
    run.add_argument("--corpus", type=Path, default=Path("/work/corpus"), help="where --known finds its folders")
    run.add_argument("--setup", type=Path, help="a Python file run in SCRIPT's folder of the copy: fake data")
    run.add_argument(
        "--replace",
        action="append",
        type=_split_replacement,
        metavar="FILE::OLD::NEW",
        help="edit the copy before converting (smaller sizes, fewer steps)",
    )
    run.add_argument(
        "--converted-arg",
        action="append",
        metavar="ARG",
        help="an argument for the converted run only (--converted-arg=--accel: a device flag)",
    )
    run.add_argument("--env", action="append", type=_split_env, metavar="NAME=VALUE", help="for both runs")
    run.add_argument("--torchrun", action="store_true", help="both runs started by torchrun, one process")
    run.add_argument(
        "--torchrun-env",
        action="store_true",
        help="both runs in torchrun's environment (RANK, WORLD_SIZE...: world size 1), without torchrun",
    )
    run.add_argument("--loss-regex", default=DEFAULT_LOSS_REGEX, help="a printed loss: group 1 is its value")
    run.add_argument("--compare", type=int, default=5, help="first losses compared between eager and XLA")
    run.add_argument("--rtol", type=float, default=LOSS_RTOL, help="relative tolerance of the loss comparison")
    run.add_argument("--no-compare", metavar="WHY", help="do not compare losses (the script is not deterministic)")
    run.add_argument("--run-timeout", type=float, default=900.0, help="seconds per run")
    run.add_argument("--keep", type=Path, help="make the scratch copies here and keep them")
    args = parser.parse_args(argv)
    if args.execute and args.known:
        parser.error("--execute and --known are not taken together")
    if (args.execute or args.known) and args.folders:
        parser.error("folders are not taken with --execute/--known")
    if script_args and not args.execute:
        parser.error("arguments after -- are only for --execute")
    if not (args.folders or args.execute or args.known):
        parser.error("give folders to check, or --execute / --known")
    return args, script_args


def main(argv: list[str] | None = None) -> int:
    args, script_args = parse(list(sys.argv[1:] if argv is None else argv))
    if args.execute or args.known:
        return _execute_main(args, script_args)
    targets = args.target or ["2.9", "sagemaker"]
    results = []
    work = [(folder, target) for folder in args.folders for target in targets]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each task waits on its own child process
        for result in pool.map(lambda task: _in_child(task[0], task[1], args.file_timeout), work):
            results.append(result)
            _print(result, args.verbose)
            sys.stdout.flush()
            if args.json is not None:  # as the results come: a long run stopped early keeps them
                args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    timed = sorted(((f.seconds, Path(r.folder).name, r.target, f.path) for r in results for f in r.files), reverse=True)
    print("\nslowest files (convert, one process):")
    for seconds, name, target, path in timed[: args.slowest]:
        print(f"  {seconds * 1000:8.0f} ms  {name}/{path} [{target}]")
    files = {(r.folder, f.path) for r in results for f in r.files}
    failures = sum(r.failures for r in results)
    print(
        f"\n{len(args.folders)} folders, {len(files)} files, {len(targets)} target(s): "
        f"{sum(len(r.internal) for r in results)} internal errors, {sum(len(r.recursion) for r in results)} recursion "
        f"failures, {sum(r.count('unparsable') for r in results)} unparsable outputs, "
        f"{sum(r.count('not_idempotent') for r in results)} not idempotent"
    )
    if args.markdown is not None:
        args.markdown.write_text(markdown_table(results))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
