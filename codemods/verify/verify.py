"""``xla-codemod verify``: port a scratch copy of a training script's project, run the port
on XLA next to the original, and judge the checks of ``checks.py``.

One verification, top to bottom: the project is copied (``scratch.py``; nothing of the
user's tree is written) and converted with the library (unless ``--converted``: the
script is a port already); the port runs under ``probe.py`` on the XLA device the machine
has (``PJRT_DEVICE=CPU`` when nothing else is set), with the doctor's graph recording; the
original runs under the same probe as the reference, on CUDA when there is a GPU, else on
the CPU with ``CUDA_VISIBLE_DEVICES=""`` (so ``torch.cuda.is_available()`` is False and the
script's own device choice takes the CPU; an unconditional CUDA call cannot be mapped:
the reference then crashes on it and ``loss-match`` is skipped with that line).  With
``--converted`` the original is ``--original PATH`` (run in a copy of its own project), or
else, when the port was converted in place in a git work tree, the project with the files
changed since HEAD put back as HEAD has them.  The doctor's analysis of the graph file
names the line that recompiles.  Failures name the user's files: a line of the converted
copy is taken back to the line of the original it came from.

Exit codes: 0 every check passed (or was skipped), 1 a check failed, 2 the port could not
be run at all (the reason in one line).  The tool never imports torch: only the probes do.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from codemods.verify.checks import CHECKS, WARMUP_STEPS, Check, Locate, Place, Recorded
from codemods.verify.options import VerifyOptions

if TYPE_CHECKING:
    from codemods.verify.runs import VerifyRun

PASSED, FAILED, CANNOT_RUN = 0, 1, 2


@dataclass
class Verification:
    checks: list[Check]
    losses: dict[str, object]
    exit_code: int
    error: str | None = None  # why the port could not be run at all
    notes: list[str] = field(default_factory=list)  # how the runs went

    @property
    def verdict(self) -> str:
        return "pass" if self.exit_code == PASSED else "fail"


@dataclass
class _Copy:
    """A scratch copy of a project: ``root`` copied to ``scratch`` (and, for the reference of
    a port converted in place, the files changed since git's HEAD put back as they were)."""

    root: Path
    scratch: Path
    maps_lines: bool = False  # the copy was converted: its lines go back to the user's through a LineMap
    from_head: dict[Path, bytes] = field(default_factory=dict)  # files put back as git's HEAD has them
    _line_maps: dict[Path, object] = field(default_factory=dict)

    def script(self, script: Path) -> Path:
        return self.scratch / script.resolve().relative_to(self.root)

    def locate(self, file: str, line: int) -> Place | None:
        from codemods.verify.scratch import LineMap

        real = Path(os.path.realpath(file))
        try:
            relative = real.relative_to(self.scratch.resolve())
        except ValueError:
            return None
        user_file = self.root / relative
        if self.maps_lines and real not in self._line_maps:
            try:
                self._line_maps[real] = LineMap(
                    user_file.read_text(encoding="utf-8", errors="replace"),
                    real.read_text(encoding="utf-8", errors="replace"),
                )
            except OSError:
                self._line_maps[real] = None
        line_map = self._line_maps.get(real)
        return _shown(user_file), line_map(line) if isinstance(line_map, LineMap) else line


def verify(script: str, args: list[str] | tuple[str, ...] = (), options: VerifyOptions | None = None) -> Verification:
    from codemods.verify import scratch

    options = options or VerifyOptions()
    say = options.progress or (lambda message: None)
    path = Path(script)
    if not path.is_file():
        return _cannot_run(f"{script}: no such file")
    if options.original is not None and not Path(options.original).is_file():
        return _cannot_run(f"{options.original}: no such file")
    with tempfile.TemporaryDirectory(prefix="xla-codemod-verify-") as work:
        workdir = Path(work)
        root = scratch.project_root(path)
        say(f"copying {_shown(root)} to a scratch folder")
        port = _Copy(root, workdir / "port", maps_lines=not options.converted)
        scratch.copy_project(root, port.scratch)
        if not options.converted:
            conversion = scratch.convert_copy(port.script(path), options.target)
            say(
                f"converted {conversion.changed} files for torch_xla {options.target}"
                + (f"; {len(conversion.errors)} could not be converted" if conversion.errors else "")
            )
        reference, why_none = _reference_copy(path, root, options, workdir)
        if reference is not None:
            scratch.copy_project(reference.root, reference.scratch)
            for name, text in reference.from_head.items():
                (reference.scratch / name).write_bytes(text)
        copies = [c for c in (port, reference) if c is not None]

        def locate(where: object) -> Place | None:
            if not isinstance(where, (list, tuple)) or len(where) < 2:
                return None
            return next((p for c in copies if (p := c.locate(str(where[0]), int(where[1]))) is not None), None)

        from codemods.verify import runs

        say(f"running the port on XLA ({runs.xla_device_note()}) for {options.steps} optimizer steps")
        started = time.monotonic()
        port_run = runs.run(
            options, "xla", port.script(path), list(args), port.scratch, workdir / "xla", _cwd(root, port)
        )
        say(f"the port ran {_steps_of(port_run.recorded)} in {time.monotonic() - started:.0f} s")
        problem = port_run.cannot_run()
        if problem:
            return _cannot_run(problem)
        reference_run = None
        if reference is not None:
            device = _reference_device(options.reference)
            say(f"running the original on {_DEVICE_NAMES[device]} as the reference")
            started = time.monotonic()
            reference_run = runs.run(
                options,
                device,
                reference.script(Path(options.original or path)),
                list(args),
                reference.scratch,
                workdir / "reference",
                _cwd(reference.root, reference),
            )
            say(f"the original ran {_steps_of(reference_run.recorded)} in {time.monotonic() - started:.0f} s")
            if reference_run.recorded.finished is None:
                why_none = f"the original's run ended before it could report: {reference_run.tail()}"
                reference_run = None
        return _judge(port_run, reference_run, why_none, locate, port, path)


def _judge(
    port_run: VerifyRun, reference_run: VerifyRun | None, why_none: str, locate: Locate, port: _Copy, path: Path
) -> Verification:
    from codemods.verify import checks

    recorded = port_run.recorded
    judged = [
        checks.model_on_xla(recorded, locate),
        checks.optimizer_params_on_xla(recorded, locate),
        checks.inputs_on_xla(recorded, locate),
        checks.step_barrier(recorded, locate),
        checks.bounded_graphs(recorded, locate, port_run.recompiling(port.script(path))),
        checks.no_cuda_calls(recorded, locate),
    ]
    loss, losses = checks.loss_match(recorded, reference_run.recorded if reference_run else None, why_none, locate)
    judged.append(loss)
    assert [c.check for c in judged] == list(CHECKS)
    notes = []
    failed = any(c.status == "fail" for c in judged)
    if recorded.crashed:
        where = checks.crash_place(recorded, locate)
        text = f"the port crashed{f' at {where[0]}:{where[1]}' if where else ''}: {recorded.crash_text()}"
        limit = checks.host_limit(recorded)
        if limit:
            text = f"{text} ({limit})"
        if not failed:
            return _cannot_run(text)
        notes.append(text)
    if not recorded.steps and not failed:
        ending = (recorded.finished or {}).get("reason")
        return _cannot_run(
            f"the port made no optimizer step (it {_ENDINGS.get(str(ending), 'stopped')}): nothing to verify"
        )
    notes.append(
        f"warm-up: {WARMUP_STEPS} optimizer steps; steps run: port {len(recorded.steps)}"
        + (f", original {len(reference_run.recorded.steps)}" if reference_run else "")
    )
    return Verification(judged, losses, FAILED if failed else PASSED, notes=notes)


_DEVICE_NAMES = {"cuda": "CUDA", "cpu": 'the CPU (CUDA_VISIBLE_DEVICES="")'}
_ENDINGS = {"completed": "ended", "steps": "was stopped", "timeout": "ran out of time", "exit": "exited with an error"}


def _reference_copy(path: Path, root: Path, options: VerifyOptions, workdir: Path) -> tuple[_Copy | None, str]:
    from codemods.verify import scratch

    if options.reference == "none":
        return None, "no reference run (--reference none)"
    if options.reference == "cuda" and not _has_gpu():
        return None, "no reference run: --reference cuda, and this machine has no NVIDIA GPU"
    if options.converted:
        if options.original is not None:
            return _Copy(scratch.project_root(Path(options.original)), workdir / "reference"), ""
        from_head = scratch.changed_since_head(root)
        if path.resolve().relative_to(root) not in from_head:
            return None, (
                "no reference run: --converted without --original, and git's HEAD holds no other version of the script"
            )
        return _Copy(root, workdir / "reference", from_head=from_head), ""
    return _Copy(root, workdir / "reference"), ""


def _reference_device(choice: str) -> str:
    if choice == "auto":
        return "cuda" if _has_gpu() else "cpu"
    return choice


def _has_gpu() -> bool:
    """An NVIDIA GPU with its driver (without importing torch)."""
    gpus = Path("/proc/driver/nvidia/gpus")
    return gpus.is_dir() and any(gpus.iterdir())


def _cwd(root: Path, copy: _Copy) -> Path:
    """The copy of the current folder when it lies in the project, else the copy's root."""
    here = Path.cwd().resolve()
    try:
        return copy.scratch / here.relative_to(root)
    except ValueError:
        return copy.scratch


def _steps_of(recorded: Recorded) -> str:
    count = len(recorded.steps)
    return f"{count} optimizer step{'' if count == 1 else 's'}"


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def _cannot_run(message: str) -> Verification:
    return Verification([], {}, CANNOT_RUN, error=message)
