"""The checks of ``xla-codemod verify``, judged from what the probe recorded (see probe.py)
in the port's run on XLA and, when there is one, the original's reference run.

Each check passes, fails (with the file and line that caused it) or is skipped (with why).
The warm-up is WARMUP_STEPS optimizer steps: a step's graphs change while the optimizer
makes its state, so the step barrier and the graph count are judged on the steps after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CHECKS = (
    "model-on-xla",
    "optimizer-params-on-xla",
    "inputs-on-xla",
    "step-barrier",
    "bounded-graphs",
    "no-cuda-calls",
    "loss-match",
)
WARMUP_STEPS = 3
# Loss tolerances, |port - reference| <= ATOL + RTOL * |reference|.  float32 against
# float32: XLA's CPU backend fuses and reorders float32 arithmetic, a drift of a few ulps
# per operation that compounds over steps (under 1e-4 relative after 20 steps on the
# fixtures): 1e-3.  When either run computes in bfloat16 or float16 (autocast, or a
# low-precision loss), 8 bits of mantissa put each operation's error near 4e-3: 5e-2.
FP32_TOLERANCE = (1e-3, 1e-5)
LOW_PRECISION_TOLERANCE = (5e-2, 1e-3)
LOW_PRECISION = ("bfloat16", "float16", "half")
# What torch says when CUDA is reached without a GPU (or without a CUDA build).
_CUDA_ERROR = re.compile(
    r"NVIDIA driver|not compiled with CUDA|No CUDA GPUs|CUDA driver|CUDA error|CUDA_VISIBLE_DEVICES|"
    r"cudaGetDeviceCount|NCCL",
    re.IGNORECASE,
)

Place = tuple[str, int]  # (path as shown, line)
Locate = Callable[[object], "Place | None"]  # [file, line] as recorded -> the place to show


@dataclass(frozen=True)
class Check:
    check: str
    status: str  # pass, fail, skip
    message: str
    path: str | None = None
    line: int | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "check": self.check,
            "status": self.status,
            "path": self.path,
            "line": self.line,
            "message": self.message,
        }


@dataclass
class Recorded:
    """One probe run's events, by kind."""

    events: list[dict[str, Any]]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("kind") == kind]

    @property
    def finished(self) -> dict[str, Any] | None:
        return next(iter(self.of("finished")), None)

    @property
    def steps(self) -> list[dict[str, Any]]:
        return self.of("optimizer_step")

    @property
    def losses(self) -> list[list[float]]:
        found = self.of("losses")
        return [list(map(float, step)) for step in found[0].get("values", [])] if found else []

    @property
    def low_precision(self) -> bool:
        found = self.of("losses")
        dtypes = set(found[0].get("dtypes", [])) if found else set()
        dtypes |= {str(e.get("autocast")) for e in self.of("module_call") if e.get("autocast")}
        return bool(dtypes & set(LOW_PRECISION))

    @property
    def crashed(self) -> bool:
        finished = self.finished
        return finished is not None and finished.get("reason") in ("crashed", "exit")

    def crash_frames(self) -> list[object]:
        return list((self.finished or {}).get("frames", []))

    def crash_text(self) -> str:
        finished = self.finished or {}
        message = str(finished.get("message") or "").strip().splitlines()
        kind = finished.get("type") or f"exit status {finished.get('status')}"
        return f"{kind}: {message[0] if message else ''}".rstrip(": ")


@dataclass
class Judgement:
    checks: list[Check]
    losses: dict[str, object] = field(default_factory=dict)


def crash_place(run: Recorded, locate: Locate) -> Place | None:
    """The innermost frame of the user's code in the crash."""
    for frame in reversed(run.crash_frames()):
        place = locate(frame)
        if place is not None:
            return place
    return None


def is_cuda_crash(run: Recorded) -> bool:
    return run.crashed and bool(_CUDA_ERROR.search(run.crash_text()))


_LIGHTNING_XLA_REFUSED = re.compile(r"`XLAAccelerator` can not run on your system")


def host_limit(run: Recorded) -> str | None:
    """Why a crash comes from this machine, not from the port: Lightning's XLA accelerator
    counts TPU chips (``torch_xla._internal.tpu.num_available_devices``), so a torch_xla that
    has only the CPU has none for it."""
    if run.crashed and _LIGHTNING_XLA_REFUSED.search(run.crash_text()):
        return (
            "Lightning's XLA accelerator counts TPU chips and finds none on a CPU-only torch_xla: "
            "this machine cannot run a Lightning port; verify it on a TPU host"
        )
    return None


# -- the device checks ----------------------------------------------------------------------


def _first_steps(port: Recorded) -> list[dict[str, Any]]:
    """Each optimizer's description at its first step (the last one given)."""
    return list({e.get("optimizer"): e for e in port.of("optimizer_first_step")}.values())


def _stepped_module_keys(port: Recorded) -> set[object]:
    """The top-level modules whose parameters a stepped optimizer holds; if none does (an
    optimizer over copies), the modules that were called."""
    keys: set[object] = set()
    for first in _first_steps(port):
        keys.update(first.get("stepped_modules") or first.get("called_modules") or [])
    if not keys:
        keys = {e.get("module") for e in port.of("module_call")}
    return keys


def model_on_xla(port: Recorded, locate: Locate) -> Check:
    name = "model-on-xla"
    keys = _stepped_module_keys(port)
    calls = [e for e in port.of("module_call") if e.get("module") in keys and e.get("call") == 1]
    for first in _first_steps(port):
        devices = first.get("param_devices") or {}
        off = sum(n for device, n in devices.items() if device != "xla")
        if off and first.get("in_called_modules"):
            place = locate(first.get("made"))
            model = next((c for c in calls if set(c.get("param_devices") or {}) - {"xla"}), None)
            if model is not None:
                place = locate(model.get("made")) or locate(model.get("called")) or place
            return _fail(
                name,
                place,
                (
                    f"{off} of the {first.get('params')} parameters the optimizer steps are on "
                    f"{_device_list(devices)} at its first step{_model_named(model)}: move the model to the XLA device "
                    "(model.to(device)) before the optimizer is made"
                ),
            )
    for call in calls:
        devices = call.get("param_devices") or {}
        if any(device != "xla" for device in devices):
            return _fail(
                name,
                locate(call.get("made")) or locate(call.get("called")),
                (
                    f"the model{_model_named(call)} has its parameters on {_device_list(devices)} when it is first "
                    "called: move it to the XLA device (model.to(device))"
                ),
            )
    if not calls and not _first_steps(port):
        return Check(name, "skip", "no model was called and no optimizer stepped")
    count = sum(int(first.get("params", 0)) for first in _first_steps(port) if first.get("in_called_modules"))
    return Check(
        name,
        "pass",
        f"the stepped parameters are on the XLA device ({_plural(count, 'parameter')})"
        if count
        else "the model is on the XLA device when it is called",
    )


def optimizer_params_on_xla(port: Recorded, locate: Locate) -> Check:
    name = "optimizer-params-on-xla"
    firsts = _first_steps(port)
    if not firsts:
        return Check(name, "skip", "no optimizer stepped")
    for first in firsts:
        if first.get("params") and first.get("called_modules") and not first.get("in_called_modules"):
            devices = first.get("param_devices") or {}
            return _fail(
                name,
                locate(first.get("made")),
                (
                    f"the optimizer holds {first.get('params')} parameters ({_device_list(devices)}) that no module "
                    "called by the script holds: copies made before the model moved to the XLA device (on XLA, "
                    "module.to(device) makes new parameters); make the optimizer after model.to(device)"
                ),
            )
    return Check(name, "pass", f"every stepped optimizer ({len(firsts)}) holds the parameters of the modules called")


def inputs_on_xla(port: Recorded, locate: Locate) -> Check:
    name = "inputs-on-xla"
    keys = _stepped_module_keys(port)
    calls = [e for e in port.of("module_call") if e.get("module") in keys]
    if not calls:
        return Check(name, "skip", "the stepped model was never called")
    for call in calls:
        devices = call.get("input_devices") or {}
        off = sum(n for device, n in devices.items() if device != "xla")
        if off:
            total = sum(devices.values())
            return _fail(
                name,
                locate(call.get("called")),
                (
                    f"the forward of{_model_named(call)} gets {off} of its {total} tensor inputs on "
                    f"{_device_list({d: n for d, n in devices.items() if d != 'xla'})} (call {call.get('call')}): "
                    "move each batch to the device (x.to(device)), or iterate pl.MpDeviceLoader(loader, device)"
                ),
            )
    return Check(
        name, "pass", f"the forward's tensor inputs are on the XLA device ({_plural(len(calls), 'call')} seen)"
    )


def no_cuda_calls(port: Recorded, locate: Locate) -> Check:
    name = "no-cuda-calls"
    if is_cuda_crash(port):
        return _fail(name, crash_place(port, locate), f"the port crashed on CUDA: {port.crash_text()}")
    calls = port.of("cuda_call")
    if calls:
        first = calls[0]
        others = f" (and {len(calls) - 1} more)" if len(calls) > 1 else ""
        return _fail(
            name,
            locate([first.get("file"), first.get("line")]),
            (
                f"{first.get('api')} is reached on the XLA run{others}: it needs a CUDA device; remove it or use "
                "the torch_xla counterpart"
            ),
        )
    return Check(name, "pass", "no CUDA API was reached")


# -- the graph checks -------------------------------------------------------------------------


def judged_steps(port: Recorded, warmup: int = WARMUP_STEPS) -> list[dict[str, Any]]:
    """The optimizer steps after warm-up: those after every optimizer that stepped has made
    ``warmup`` steps of its own (a GAN steps two optimizers per iteration)."""
    steps = port.steps
    seen: dict[object, int] = {}
    end = 0
    for position, step in enumerate(steps):
        seen[step.get("optimizer")] = seen.get(step.get("optimizer"), 0) + 1
        if seen[step.get("optimizer")] == warmup:
            end = position + 1
    if any(count < warmup for count in seen.values()):
        return []
    return steps[end:]


def step_barrier(port: Recorded, locate: Locate, warmup: int = WARMUP_STEPS) -> Check:
    name = "step-barrier"
    judged = judged_steps(port, warmup)
    if len(judged) < 1:
        return Check(name, "skip", f"too few optimizer steps ({len(port.steps)}) to judge after {warmup} of warm-up")
    by_optimizer: dict[object, list[dict[str, Any]]] = {}
    for step in port.steps:
        by_optimizer.setdefault(step.get("optimizer"), []).append(step)
    barriers_after: list[int] = []
    for steps in by_optimizer.values():
        for previous, step in zip(steps, steps[1:]):
            if step not in judged:
                continue
            ran = int(step.get("barriers", 0)) - int(previous.get("barriers", 0))
            barriers_after.append(ran)
            if ran == 0:
                sizes = [int(s.get("pending_graph", 0)) for s in steps]
                growth = (
                    f"; the pending graph grows from {sizes[0]} to {sizes[-1]} IR lines" if sizes[-1] > sizes[0] else ""
                )
                return _fail(
                    name,
                    locate(step.get("place")),
                    (
                        f"no graph ran between optimizer steps {previous.get('index')} and {step.get('index')}{growth}: "
                        "the loop has no step barrier; end each step with torch_xla.sync() (or xm.mark_step()), or "
                        "feed the loop from pl.MpDeviceLoader"
                    ),
                )
        sizes = [int(s.get("pending_graph", 0)) for s in steps if s in judged]
        if len(sizes) > 1 and all(b > a for a, b in zip(sizes, sizes[1:])):
            return _fail(
                name,
                locate(steps[-1].get("place")),
                (
                    f"the pending graph grows at every step ({sizes[0]} to {sizes[-1]} IR lines) although graphs run: "
                    "a tensor carried across steps is never cut by a barrier"
                ),
            )
    per_step = sum(barriers_after) / len(barriers_after) if barriers_after else 0
    return Check(
        name,
        "pass",
        f"{per_step:g} step barrier{'' if per_step == 1 else 's'} ran a graph between an "
        "optimizer's steps after warm-up",
    )


def bounded_graphs(
    port: Recorded, locate: Locate, recompiling: list[tuple[object, str]], warmup: int = WARMUP_STEPS
) -> Check:
    """``recompiling``: the doctor's recompilation findings on the run, ([file, line], message),
    the causes first.  A graph compiled at one step after warm-up is a one-off (the first
    evaluation, an epoch's last batch); compiling at two steps or more, the graphs grow."""
    name = "bounded-graphs"
    judged = judged_steps(port, warmup)
    if len(judged) < 2:
        return Check(name, "skip", f"too few optimizer steps ({len(port.steps)}) to judge after {warmup} of warm-up")
    if judged[-1].get("barriers") == port.steps[port.steps.index(judged[0]) - 1].get("barriers"):
        return Check(name, "skip", "no step barrier ran a graph after warm-up (see step-barrier)")
    counts = [int(port.steps[port.steps.index(judged[0]) - 1].get("compiles", 0))]
    counts += [int(step.get("compiles", 0)) for step in judged]
    compiling = [step for step, before, after in zip(judged, counts, counts[1:]) if after > before]
    compiled = counts[-1] - counts[0]
    if len(compiling) >= 2:
        if recompiling:
            where, message = recompiling[0]
            return _fail(name, locate(where), message)
        return _fail(
            name,
            locate(compiling[-1].get("place")),
            (
                f"{_plural(compiled, 'graph')} compiled at {len(compiling)} of the {len(judged)} optimizer steps after "
                "warm-up: the graphs are not bounded (xla-codemod doctor on the port names the line)"
            ),
        )
    if compiling:
        return Check(
            name,
            "pass",
            f"{_plural(compiled, 'graph')} compiled once after warm-up (optimizer step "
            f"{compiling[0].get('index')}), none after",
        )
    return Check(name, "pass", f"no graph compiled after {warmup} warm-up steps")


# -- the losses --------------------------------------------------------------------------------


def loss_match(
    port: Recorded, reference: Recorded | None, why_none: str, locate: Locate
) -> tuple[Check, dict[str, object]]:
    name = "loss-match"
    port_losses = port.losses
    summary: dict[str, object] = {"port": port_losses}
    if reference is None:
        return Check(name, "skip", why_none), summary
    reference_losses = reference.losses
    summary["reference"] = reference_losses
    low = port.low_precision or reference.low_precision
    rtol, atol = LOW_PRECISION_TOLERANCE if low else FP32_TOLERANCE
    summary.update(rtol=rtol, atol=atol, precision="bfloat16/float16" if low else "float32", first_mismatch=None)
    if not reference_losses:
        if reference.crashed:
            where = crash_place(reference, locate)
            shown = f" at {where[0]}:{where[1]}" if where else ""
            if is_cuda_crash(reference):
                return Check(
                    name,
                    "skip",
                    (
                        f"the original reaches CUDA unconditionally{shown}, which a reference run without a GPU cannot "
                        f"map to the CPU: {reference.crash_text()}"
                    ),
                ), summary
            return Check(name, "skip", f"the original crashed{shown}: {reference.crash_text()}"), summary
        return Check(name, "skip", "the original made no optimizer step with a loss"), summary
    if not port_losses:
        return Check(name, "skip", "the port made no optimizer step with a loss"), summary
    place = locate(port.of("losses")[0].get("place"))
    count = min(len(port_losses), len(reference_losses))
    worst = 0.0
    for index in range(count):
        mine, theirs = port_losses[index], reference_losses[index]
        if len(mine) != len(theirs):
            summary["first_mismatch"] = index + 1
            return _fail(
                name,
                place,
                (
                    f"at optimizer step {index + 1} backward() ran on {len(mine)} losses in the port, "
                    f"{len(theirs)} in the original"
                ),
            ), summary
        for got, want in zip(mine, theirs):
            if not abs(got - want) <= atol + rtol * abs(want):
                summary["first_mismatch"] = index + 1
                return _fail(
                    name,
                    place,
                    (
                        f"the losses part at optimizer step {index + 1}: original {want:.6g}, port {got:.6g} "
                        f"(tolerance {rtol:g} relative + {atol:g}, {summary['precision']})"
                    ),
                ), summary
            worst = max(worst, abs(got - want) / max(abs(want), 1e-12))
    return Check(
        name,
        "pass",
        (
            f"{count} optimizer steps' losses match the original within {rtol:g} relative "
            f"({summary['precision']}; largest difference {worst:.1e})"
        ),
    ), summary


# -- helpers -------------------------------------------------------------------------------------


def _fail(name: str, place: Place | None, message: str) -> Check:
    return Check(name, "fail", message, place[0] if place else None, place[1] if place else None)


def _device_list(devices: object) -> str:
    names = sorted(devices) if isinstance(devices, dict) else []
    return ", ".join(names) or "no device"


def _model_named(call: dict[str, Any] | None) -> str:
    return f" `{call.get('name')}`" if call and call.get("name") else ""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
