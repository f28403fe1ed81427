"""``xla-codemod doctor``: run a converted script for a few steps on XLA and name the lines
that make it compile new graphs or read the device.

One run, top to bottom: ``launch`` starts ``probe.py`` in an interpreter that has
torch_xla (the tool itself never imports torch); torch_xla writes every graph it runs
with the Python stack of each operation, the probe writes steps, metrics and host reads;
``observe`` puts them in order, ``graphs`` compares successive graphs of each sync site,
``findings`` turns that into XLD findings and a verdict, ``static`` adds the lint rules
that flag the same lines.

Exit codes: 0 steady state (no graph compiled after warm-up), 1 no steady state (or too
few steps to tell), 2 the script cannot run (no torch_xla, a crash, an error exit).
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from codemods.doctor.static import DEFAULT_FAMILIES, cross_reference
from codemods.engine.report import FileReport, Report

__all__ = ["DEFAULT_FAMILIES", "Diagnosis", "DoctorOptions", "diagnose"]

_OUTPUT_TAIL_LINES = 5


@dataclass(frozen=True)
class DoctorOptions:
    steps: int = 20  # stop after this many step barriers that ran a graph
    warmup: int = 3  # steps allowed to compile before a steady state is expected
    timeout: float = 600.0  # seconds
    python: str = field(default_factory=lambda: sys.executable)
    cross_reference: tuple[str, ...] = DEFAULT_FAMILIES  # static rule families cited on the same lines
    show_output: bool = False  # the script's output to standard error (else kept for error messages)


@dataclass
class Diagnosis:
    report: Report
    exit_code: int


def diagnose(script: str, args: list[str] | tuple[str, ...] = (), options: DoctorOptions | None = None) -> Diagnosis:
    """Run ``script args`` under the probe and judge what it did."""
    # Loaded here: every command line loads this package (for the option defaults).
    from codemods.doctor import launch
    from codemods.doctor.findings import Places, judge
    from codemods.doctor.observe import observe
    from codemods.doctor.probe import UserCode

    options = options or DoctorOptions()
    path = Path(script)
    if not path.is_file():
        return _cannot_run(script, "no such file")
    with tempfile.TemporaryDirectory(prefix="xla-codemod-doctor-") as workdir:
        try:
            run = launch.run_probe(
                options.python,
                path,
                list(args),
                steps=options.steps,
                timeout=options.timeout,
                workdir=Path(workdir),
                show_output=options.show_output,
            )
        except launch.LaunchError as error:
            return _cannot_run(script, str(error))
        unavailable = next((e for e in run.events if e.get("kind") == "unavailable"), None)
        if unavailable is not None or run.returncode == launch.UNAVAILABLE:
            why = unavailable.get("error") if unavailable else _tail(run.output)
            return _cannot_run(
                script, f"{options.python} cannot import torch_xla ({why}); install torch-xla there or pass --python"
            )
        observation = observe(run.events, run.graphs)
    if observation is None:
        how = "was killed after the time limit" if run.killed else f"ended with status {run.returncode}"
        tail = _tail(run.output)
        return _cannot_run(
            script, f"the script's process {how} before the doctor could report" + (f": {tail}" if tail else "")
        )
    if observation.outcome.get("reason") == "exit" and not observation.outcome.get("message"):
        observation.outcome["message"] = _tail(run.output, 1)  # argparse and friends print why, then exit
    limits = f"--steps {options.steps}, --timeout {options.timeout:g} s"
    verdict = judge(observation, Places(path, script), UserCode(str(path)), options.warmup, limits)
    findings = cross_reference(verdict.findings, options.cross_reference)
    return Diagnosis(Report([FileReport(p, findings=f) for p, f in findings.items()], "lint"), verdict.exit_code)


def _cannot_run(script: str, message: str) -> Diagnosis:
    from codemods.doctor.findings import CANNOT_RUN

    return Diagnosis(Report([FileReport(script, error=message)], "lint"), CANNOT_RUN)


def _tail(output: str, count: int = _OUTPUT_TAIL_LINES) -> str:
    """The last lines the script printed, on one line."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return " | ".join(lines[-count:])
