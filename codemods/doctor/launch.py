"""Start the probe in the script's interpreter and collect what it and torch_xla wrote.

The tool's own process never imports torch: everything torch_xla-side happens in the
child, started as ``PYTHON probe.py ... -- SCRIPT ARGS`` with torch_xla's debug switches
in its environment.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from codemods.doctor import probe

PROBE = Path(probe.__file__)
UNAVAILABLE = probe.UNAVAILABLE  # the probe's exit status when its interpreter has no torch_xla
# Beyond --timeout (which the probe enforces itself, once torch_xla is imported): time to
# start the interpreter and import torch_xla, then to write the last report and exit.
START_AND_EXIT_SECONDS = 120.0
KILL_WAIT_SECONDS = 10.0
STDERR = 2


class LaunchError(Exception):
    """The script could not be started at all."""


@dataclass
class ProbeRun:
    events: list[dict[str, Any]]  # JSON lines (json.loads): what reads them converts each value
    graphs: str  # torch_xla's graph file (stablehlo entries)
    output: str  # what the script printed (empty when it went to the terminal)
    returncode: int
    killed: bool  # it outlived its time and was killed


def environment(graphs_prefix: str) -> dict[str, str]:
    """The child's environment: the caller's, PJRT_DEVICE defaulting to CPU, and the
    switches that make torch_xla write every graph with the Python stacks of its operations."""
    env = dict(os.environ)
    env.setdefault("PJRT_DEVICE", "CPU")
    env.update(
        XLA_IR_DEBUG="1",
        XLA_HLO_DEBUG="1",
        XLA_SAVE_TENSORS_FILE=graphs_prefix,
        XLA_SAVE_TENSORS_FMT="stablehlo",
    )
    return env


def run_probe(
    python: str, script: Path, args: list[str], *, steps: int, timeout: float, workdir: Path, show_output: bool
) -> ProbeRun:
    events_path = workdir / "events.jsonl"
    graphs_prefix = str(workdir / "graphs")
    command = [
        python,
        str(PROBE),
        "--events",
        str(events_path),
        "--graphs",
        graphs_prefix,
        "--steps",
        str(steps),
        "--timeout",
        str(timeout),
        "--",
        str(script.resolve()),
        *args,
    ]
    returncode, killed, output = run_child(
        command, environment(graphs_prefix), None, workdir / "output.log", timeout=timeout, show_output=show_output
    )
    return ProbeRun(
        events=read_events(events_path),
        graphs=read_graphs(graphs_prefix),
        output=output,
        returncode=returncode,
        killed=killed,
    )


def run_child(
    command: list[str], env: dict[str, str], cwd: Path | None, log_path: Path, *, timeout: float, show_output: bool
) -> tuple[int, bool, str]:
    """Run a probe's command in a process group of its own: (exit status, killed after
    ``timeout`` + START_AND_EXIT_SECONDS, what it printed: empty when shown on our standard
    error).  (``xla-codemod verify`` starts its probe through this too.)"""
    with contextlib.ExitStack() as stack:
        stdout: int | IO[bytes]
        stderr: int | None
        if show_output:
            stdout, stderr = STDERR, None  # the script's output goes to our standard error
        else:
            stdout = stack.enter_context(log_path.open("wb"))
            stderr = subprocess.STDOUT
        try:
            child = subprocess.Popen(
                command,
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
        except OSError as error:
            raise LaunchError(f"cannot start {command[0]}: {error.strerror or error}") from None
        killed = False
        try:
            child.wait(timeout=timeout + START_AND_EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            killed = True
            _stop(child)
        except KeyboardInterrupt:
            _stop(child)
            raise
    output = "" if show_output else log_path.read_text(encoding="utf-8", errors="replace")
    return child.returncode, killed, output


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the probe stops the script cleanly), then SIGKILL: the whole process group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, sig)
        try:
            child.wait(timeout=KILL_WAIT_SECONDS)
            return
        except subprocess.TimeoutExpired:
            continue


def read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a line cut short by a kill
            events.append(json.loads(line))
    return events


def read_graphs(prefix: str) -> str:
    """torch_xla names the file PREFIX.<device ordinal>; one device here."""
    found = sorted(glob.glob(glob.escape(prefix) + "*"))
    return Path(found[0]).read_text(encoding="utf-8", errors="surrogateescape") if found else ""
