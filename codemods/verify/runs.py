"""One run of the verify probe (``probe.py``) in a scratch copy, started the way the
doctor starts its probe (``codemods.doctor.launch``), and what the doctor's graph analysis
says of the port's run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codemods.doctor import launch
from codemods.verify import probe
from codemods.verify.checks import Recorded, judged_steps

if TYPE_CHECKING:
    from codemods.verify.options import VerifyOptions

PROBE = Path(probe.__file__)
_TAIL_LINES = 3


@dataclass
class VerifyRun:
    mode: str  # xla, cpu, cuda
    recorded: Recorded
    graphs: str
    output: str
    returncode: int
    killed: bool
    python: str

    def tail(self, count: int = _TAIL_LINES) -> str:
        lines = [line.strip() for line in self.output.strip().splitlines() if line.strip()]
        return " | ".join(lines[-count:]) or f"status {self.returncode}"

    def cannot_run(self) -> str:
        """Why the run says nothing at all, or ''."""
        unavailable = next(iter(self.recorded.of("unavailable")), None)
        if unavailable is not None or self.returncode == launch.UNAVAILABLE:
            why = unavailable.get("error") if unavailable else self.tail()
            what = "torch_xla" if self.mode == "xla" else "torch"
            return f"{self.python} cannot import {what} ({why}); install it there or pass --python"
        if self.recorded.finished is None:
            how = "was killed after the time limit" if self.killed else f"ended with status {self.returncode}"
            return f"the {'port' if self.mode == 'xla' else 'original'}'s process {how} before it could report: {self.tail()}"
        return ""

    def recompiling(self, script: Path) -> list[tuple[object, str]]:
        """The doctor's recompilation findings on this run ([file, line], message), where a
        change starts first; the warm-up is the step barriers that ran up to the first
        optimizer step after warm-up (a step's barrier may come after its optimizer step)."""
        from codemods.doctor.findings import Places, judge
        from codemods.doctor.observe import observe
        from codemods.doctor.probe import UserCode
        from codemods.doctor.rules import CHANGING_OPERATION, RECOMPILING_SYNC_SITE, SHORT_LAST_BATCH

        judged = judged_steps(self.recorded)
        observation = observe(self.recorded.events, self.graphs)
        if observation is None or not judged:
            return []
        warmup = int(judged[0].get("barriers", 0))
        shown = str(script.resolve())
        verdict = judge(observation, Places(script, shown), UserCode(str(script)), warmup, "")
        order = (CHANGING_OPERATION.code, SHORT_LAST_BATCH.code, RECOMPILING_SYNC_SITE.code)
        found = [
            (order.index(f.rule), [str(Path(path).resolve()), f.line], f.message)
            for path, findings in verdict.findings.items()
            for f in findings
            if f.rule in order
        ]
        return [(where, message) for _, where, message in sorted(found, key=lambda item: item[0])]


def xla_device_note() -> str:
    return f"PJRT_DEVICE={os.environ.get('PJRT_DEVICE', 'CPU')}"


def run(
    options: VerifyOptions, mode: str, script: Path, args: list[str], user_root: Path, workdir: Path, cwd: Path
) -> VerifyRun:
    workdir.mkdir(parents=True, exist_ok=True)
    events_path = workdir / "events.jsonl"
    graphs_prefix = str(workdir / "graphs")
    command = [
        options.python,
        str(PROBE),
        "--mode",
        "xla" if mode == "xla" else "reference",
        "--events",
        str(events_path),
        "--steps",
        str(options.steps),
        "--user-root",
        str(user_root),
        "--timeout",
        str(options.timeout),
        *(["--graphs", graphs_prefix] if mode == "xla" else []),
        "--",
        str(script),
        *args,
    ]
    cwd.mkdir(parents=True, exist_ok=True)
    returncode, killed, output = launch.run_child(
        command,
        _environment(mode, graphs_prefix),
        cwd,
        workdir / "output.log",
        timeout=options.timeout,
        show_output=False,
    )
    return VerifyRun(
        mode,
        Recorded(launch.read_events(events_path)),
        launch.read_graphs(graphs_prefix) if mode == "xla" else "",
        output,
        returncode,
        killed,
        options.python,
    )


def _environment(mode: str, graphs_prefix: str) -> dict[str, str]:
    """The port: the doctor's environment (PJRT_DEVICE defaulting to CPU, the graph file).
    The original: no torch_xla settings, torch not loading torch_xla by itself, transformers
    and accelerate not using it (USE_TORCH_XLA=0: they would pick the XLA device whenever
    torch_xla is installed), and on the CPU no CUDA device to see."""
    if mode == "xla":
        return launch.environment(graphs_prefix)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PJRT_", "XLA_", "TPU_"))}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    env["USE_TORCH_XLA"] = "0"
    if mode == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env
