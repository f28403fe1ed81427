"""From what a run saw to findings (XLD rules) and a verdict.

* the steady state is judged on the steps after warm-up: no graph compiled there;
* each sync site (the barrier, loader or host read that ran a graph) that compiled new
  graphs after warm-up is named (XLD101), and each new graph is compared with the
  previous graph of the same site: the operations where they start to differ are named
  at the innermost line of the user's code in their Python stack (XLD102);
* host reads that happen in most steps are named with how often (XLD103);
* a DataLoader whose short last batch showed up as a new input shape is named (XLD106);
* a crash names the last frame of the user's code (XLD104); too few steps say so (XLD105);
* a summary of the run goes on the script's first line (XLD100).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codemods.doctor import graphs
from codemods.doctor.graphs import Change, Frame, Graph
from codemods.doctor.observe import GraphRun, HostRead, Loader, Observation
from codemods.doctor.probe import UserCode
from codemods.doctor.rules import (
    CHANGING_OPERATION,
    DOCTOR_SUMMARY,
    HOST_READ,
    RECOMPILING_SYNC_SITE,
    SCRIPT_CRASHED,
    SHORT_LAST_BATCH,
    TOO_FEW_STEPS,
)
from codemods.engine.report import Finding
from codemods.engine.rule import Rule

CANNOT_RUN, NOT_STEADY, STEADY = 2, 1, 0
_MESSAGE_LIMIT = 500  # a crash message can quote a long exception


@dataclass
class Places:
    """Turns a frame's file into the path the report shows, and a line into its column."""

    script: Path
    shown_script: str
    _lines: dict[str, list[str]] = field(default_factory=dict)

    def path(self, filename: str) -> str:
        real = os.path.realpath(filename)
        if real == os.path.realpath(self.script):
            return self.shown_script
        relative = os.path.relpath(real)
        return real if relative.startswith("..") else relative

    def column(self, filename: str, line: int) -> int:
        """Where the line's code starts (1-based)."""
        if filename not in self._lines:
            try:
                self._lines[filename] = Path(filename).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._lines[filename] = []
        lines = self._lines[filename]
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(text) - len(text.lstrip()) + 1


@dataclass
class Verdict:
    findings: dict[str, list[Finding]]  # by the path the report shows, the script first
    exit_code: int


def judge(observation: Observation, places: Places, user_code: UserCode, warmup: int, limits: str) -> Verdict:
    """``limits`` says how the run was bounded (for the summary): "--steps 20, --timeout 600 s"."""
    findings: dict[str, list[Finding]] = {places.shown_script: []}

    def add(frame: Frame | None, rule: Rule, message: str) -> None:
        path = places.path(frame[0]) if frame else places.shown_script
        line = frame[1] if frame else 1
        column = places.column(frame[0], line) if frame else 1
        findings.setdefault(path, []).append(Finding(rule.code, line, column, _clip(message), False))

    judged = _judged_steps(observation, warmup)
    crashed = observation.outcome.get("reason") in ("crashed", "exit")
    new_after_warmup = [r for r in observation.runs if r.new and judged and r.step in judged]

    changes: dict[tuple[Frame | None, str, str], list[tuple[GraphRun, Change]]] = defaultdict(list)
    for site, runs in _by_site(observation.runs, user_code).items():
        late = [r for r in runs if r in new_after_warmup]
        if late:
            add(site, RECOMPILING_SYNC_SITE, _site_message(runs, late))
            for key, seen in _changes(runs, late, user_code).items():
                changes[key].extend(seen)
    for (frame, label, kind), seen in changes.items():
        add(frame, CHANGING_OPERATION, _change_message(label, kind, seen, len(new_after_warmup)))
    inputs = [pair for seen in changes.values() for pair in seen if pair[1].operation.op == "argument"]
    for loader in observation.loaders:
        message = _short_batch_message(loader, inputs)
        if message:
            add((loader.file, loader.line, ""), SHORT_LAST_BATCH, message)
    for (frame, _label), message in _host_reads(observation, judged, user_code).items():
        add(frame, HOST_READ, message)

    if crashed:
        add(_last_user_frame(observation.outcome, user_code), SCRIPT_CRASHED, _crash_message(observation))
    elif not judged:
        add(None, TOO_FEW_STEPS, _too_few_steps_message(observation, warmup))
    compiled_after = _compiles_after_warmup(observation, warmup)
    findings[places.shown_script].insert(
        0, Finding(DOCTOR_SUMMARY.code, 1, 1, _summary(observation, warmup, limits, compiled_after, crashed), False)
    )
    for path in findings:
        findings[path].sort(key=lambda f: (f.line, f.rule) if f.rule != DOCTOR_SUMMARY.code else (0, ""))
    if crashed:
        code = CANNOT_RUN
    elif not judged or compiled_after:
        code = NOT_STEADY
    else:
        code = STEADY
    return Verdict(findings, code)


# -- steps and sites -------------------------------------------------------------------


def _judged_steps(observation: Observation, warmup: int) -> range:
    """The steps after warm-up (1-based), empty if there are none."""
    return range(warmup + 1, observation.step_count + 1)


def _compiles_after_warmup(observation: Observation, warmup: int) -> int:
    if observation.step_count <= warmup:
        return 0
    before = observation.steps[warmup - 1].compiles if warmup else 0
    return observation.steps[-1].compiles - before


def _by_site(runs: list[GraphRun], user_code: UserCode) -> dict[Frame | None, list[GraphRun]]:
    sites: dict[Frame | None, list[GraphRun]] = defaultdict(list)
    for run in runs:
        sites[graphs.user_frame(run.stack, user_code)].append(run)
    return sites


def _site_kind(stack: list[Frame]) -> str:
    files = [f.replace(os.sep, "/") for f, _, _ in stack]
    if any(f.endswith("torch_xla/distributed/parallel_loader.py") for f in files):
        return "device loader step"
    if any(f.endswith("torch_xla/torch_xla.py") and function == "sync" for (f, _, function) in stack):
        return "step barrier"
    return "host read"


def _site_message(runs: list[GraphRun], late: list[GraphRun]) -> str:
    kind = _site_kind(runs[0].stack)
    distinct = len({r.graph_hash for r in runs})
    steps = sorted({r.step for r in runs})
    late_steps = sorted({r.step for r in late})
    return (
        f"{kind}: ran {_plural(distinct, 'different graph')} in {_plural(len(steps), 'step')}; "
        f"{_plural(len(late), 'was', 'were')} compiled after warm-up "
        f"({_plural(len(late_steps), 'step', number=False)} {_ranges(late_steps)})"
    )


def _changes(
    runs: list[GraphRun], late: list[GraphRun], user_code: UserCode
) -> dict[tuple[Frame | None, str, str], list[tuple[GraphRun, Change]]]:
    """Each late graph against the graph the same site ran before it, grouped by where
    the change starts (a user line, torch_xla's name of the operation, the kind)."""
    grouped: dict[tuple[Frame | None, str, str], list[tuple[GraphRun, Change]]] = defaultdict(list)
    for run in late:
        index = runs.index(run)
        if index == 0:
            continue  # the site's first graph: nothing to compare with
        after = run.graph
        placed = [
            (c, graphs.user_frame(c.operation.frames, user_code)) for c in graphs.changes(runs[index - 1].graph, after)
        ]
        located = {c.difference() for c, frame in placed if frame is not None}
        for change, frame in placed:
            if frame is None:
                if change.difference() in located:
                    continue  # the same tensor again (a copy the backward pass reads): named where it was made
                frame = _first_user_reader(after, change, user_code)
            place = (frame[0], frame[1], "") if frame else None
            grouped[(place, _label(after, change), change.kind)].append((run, change))
    return grouped


def _first_user_reader(graph: Graph, change: Change, user_code: UserCode) -> Frame | None:
    """Made outside the user's code (a loader thread, the backward pass): the first user
    line that reads it."""
    readers = (graphs.user_frame(op.frames, user_code) for op in graphs.consumers(graph, change.operation))
    return next((frame for frame in readers if frame is not None), None)


def _label(graph: Graph, change: Change) -> str:
    """torch_xla's name of the operation; a bare constant is named by what reads it (aten__pow)."""
    operation = change.operation
    if not operation.operands and operation.op != "argument" and operation.label in ("", "prim__Constant"):
        reader = next((op.label for op in graphs.consumers(graph, operation) if op.label), "")
        return reader or operation.label or operation.op
    return operation.label or operation.op


def _change_message(label: str, kind: str, seen: list[tuple[GraphRun, Change]], late: int) -> str:
    name = _operation_name(label)
    difference = next((d for d in (c.difference() for _, c in seen) if d), "")
    shown = f" ({difference})" if difference else ""
    count = f"in {len({id(run) for run, _ in seen})} of the {_plural(late, 'graph')} compiled after warm-up"
    if seen[0][1].operation.op == "argument":
        return (
            f"{name}: a tensor of another shape enters the graph{shown}, {count}: a data-dependent shape "
            "(nonzero, masked_select, a boolean mask, unique) or a short last batch; keep shapes fixed "
            "(pad, mask instead of select, drop_last=True)"
        )
    if kind == "constant" and label == "xla__select":
        return (
            f"{name}: its bounds change between successive graphs{shown}, {count}: a slice taken with a Python "
            "index that changes every step is compiled into each graph; slice on the host and move the slice "
            "to the device"
        )
    if kind == "constant":
        return (
            f"{name}: a constant changes between successive graphs{shown}, {count}: a Python number that changes "
            "every step is compiled into the graph; pass it as a device tensor, or keep it fixed"
        )
    if kind == "shape":
        return f"{name}: its shape changes between successive graphs{shown}, {count}: keep the sizes fixed"
    return (
        f"{name}: an operation the previous graph did not have, {count}: Python control flow on values that "
        "change between steps takes another path"
    )


def _operation_name(label: str) -> str:
    """torch_xla's IR names: aten__pow -> aten::pow, xla__device_data -> device data."""
    if label == "xla__device_data":
        return "device data"
    if label == "xla__select":
        return "slice (xla::select)"
    return label.replace("__", "::", 1)


def _short_batch_message(loader: Loader, inputs: list[tuple[GraphRun, Change]]) -> str:
    """Said when an input of the loader's batch size shrank to its last batch's size."""
    if loader.drop_last or not loader.samples or loader.samples % loader.batch_size == 0:
        return ""
    last = loader.samples % loader.batch_size
    steps = sorted(
        {
            run.step
            for run, change in inputs
            if _leading_size(change.operation.text) == last and _leading_size(change.before or "") == loader.batch_size
        }
    )
    if not steps:
        return ""
    return (
        f"DataLoader: {loader.samples} samples in batches of {loader.batch_size} leave a last batch of {last}, "
        f"which compiled graphs of its own ({_plural(len(steps), 'step', number=False)} {_ranges(steps)}): "
        f"pass drop_last=True, or pad the last batch to {loader.batch_size}"
    )


def _leading_size(text: str) -> int | None:
    """The first dimension of the first tensor type: ``tensor<4x8xf32>`` -> 4."""
    found = re.search(r"tensor<(\d+)x", text)
    return int(found.group(1)) if found else None


# -- host reads --------------------------------------------------------------------------


def _host_reads(observation: Observation, judged: range, user_code: UserCode) -> dict[tuple[Frame, str], str]:
    """Host reads in at least half of the judged steps (or of all steps, if too few)."""
    steps = judged or range(1, observation.step_count + 1)
    if not steps:
        return {}
    reads: dict[tuple[Frame, str], list[HostRead]] = defaultdict(list)
    for read in observation.reads:
        if read.step in steps:
            reads[((read.file, read.line, ""), read.label)].append(read)
    graph_runs: Counter[Frame] = Counter()
    for run in observation.runs:
        if run.step in steps and _site_kind(run.stack) == "host read":
            site = graphs.user_frame(run.stack, user_code)
            if site is not None:
                graph_runs[(site[0], site[1], "")] += 1
    messages = {}
    for (frame, label), found in reads.items():
        if len({r.step for r in found}) * 2 < len(steps):
            continue
        per_step = sum(r.count for r in found) / len(steps)
        runs = graph_runs.pop(frame, 0) / len(steps)
        messages[(frame, label)] = _read_message(label, per_step, runs)
    fallbacks = [op for op in observation.fallback_ops if op != "aten::_local_scalar_dense"]
    for frame, count in graph_runs.items():
        if count * 2 >= len(steps):
            what = f"an operation torch_xla runs on the CPU ({', '.join(fallbacks)})" if fallbacks else "a host read"
            messages[(frame, "")] = _read_message(
                what, count / len(steps), count / len(steps), fallback=bool(fallbacks)
            )
    return messages


def _read_message(label: str, per_step: float, runs_per_step: float, fallback: bool = False) -> str:
    what = label if fallback or " " in label else f"`{label}`"
    text = f"{what} reads a device value on the host {_plural(per_step, 'time')} per step"
    if runs_per_step:
        text += (
            f" and runs the pending graph before the step barrier "
            f"({_plural(runs_per_step, 'extra graph run')} per step)"
        )
    if fallback:
        return text + ": keep the shapes static (multiply by a mask instead of selecting)"
    return text + ": read it every N steps, or in a step closure (xm.add_step_closure)"


# -- crash, too few steps, summary --------------------------------------------------------


def _last_user_frame(outcome: dict[str, Any], user_code: UserCode) -> Frame | None:
    frames = [(str(f), int(line), str(function)) for f, line, function in outcome.get("frames", [])]
    return next((f for f in reversed(frames) if user_code(f[0])), None)


def _crash_message(observation: Observation) -> str:
    outcome = observation.outcome
    steps = f"after {_plural(observation.step_count, 'step')}"
    if outcome.get("reason") == "exit":
        return f"the script exited with status {outcome.get('status')} {steps}: {outcome.get('message') or ''}".rstrip(
            ": "
        )
    message = str(outcome.get("message") or "").strip().splitlines()
    return f"the script crashed {steps}: {outcome.get('type')}: {message[0] if message else ''}".rstrip(": ")


def _too_few_steps_message(observation: Observation, warmup: int) -> str:
    count = observation.step_count
    text = (
        f"only {_plural(count, 'step barrier')} ran a graph ({_ending(observation)}): a steady state shows after "
        f"{_plural(warmup, 'warm-up step')}, so at least {warmup + 1} are needed"
    )
    if count == 0:
        text += (
            "; a training loop needs torch_xla.sync(), xm.mark_step() or an MpDeviceLoader at each step "
            "(xla-codemod convert adds them)"
        )
    return text


def _ending(observation: Observation) -> str:
    return {
        "steps": "stopped at the step limit",
        "timeout": "stopped by the time limit",
        "interrupted": "interrupted",
        "completed": "the script ended",
        "crashed": "the script crashed",
        "exit": "the script exited with an error",
    }.get(str(observation.outcome.get("reason")), "stopped")


def _summary(observation: Observation, warmup: int, limits: str, compiled_after: int, crashed: bool) -> str:
    final = observation.final
    text = (
        f"{_plural(observation.step_count, 'step')} ({_ending(observation)}; {limits}, warm-up {warmup}): "
        f"{_plural(final.compiles, 'graph')} compiled, {_plural(final.executions, 'graph run')}; "
        f"compiling took {final.compile_ns / 1e9:.1f} s, running {final.execute_ns / 1e9:.2f} s"
    )
    judged = _judged_steps(observation, warmup)
    if judged:
        after = observation.steps[-1] - observation.steps[warmup - 1] if warmup else observation.steps[-1]
        steps = len(judged)
        runs = sum(1 for run in observation.runs if run.step in judged)
        seconds = (observation.step_times[-1] - observation.step_times[warmup - 1]) / steps if warmup else None
        duration = "" if seconds is None else (f"{seconds:.1f} s, " if seconds >= 1 else f"{seconds * 1000:.0f} ms, ")
        text += (
            f"; after warm-up, per step: {duration}{_plural(after.compiles / steps, 'compile')}, "
            f"{_plural(runs / steps, 'graph run')}, "
            f"{_plural(after.from_device / steps, 'transfer')} to the host"
        )
    if crashed:
        return text
    if not judged:
        return text + "; too few steps to judge"
    if compiled_after:
        return text + f"; no steady state: {_plural(compiled_after, 'graph')} compiled after warm-up"
    compiles = [0] + [m.compiles for m in observation.steps]
    last_compiling_step = max(
        step for step in range(1, len(compiles)) if compiles[step] > compiles[step - 1] or step == 1
    )
    return text + f"; steady state from step {last_compiling_step + 1}"


def _ranges(numbers: list[int]) -> str:
    """[4, 5, 6, 9] -> '4-6, 9'."""
    groups: list[list[int]] = []
    for n in numbers:
        if groups and groups[-1][1] == n - 1:
            groups[-1][1] = n
        else:
            groups.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in groups)


def _plural(count: float, word: str, plural: str | None = None, *, number: bool = True) -> str:
    """``_plural(2, "step")`` -> "2 steps"; ``_plural(1.5, "time")`` -> "1.5 times"."""
    shown = f"{count:.1f}".rstrip("0").rstrip(".") if isinstance(count, float) else str(count)
    words = word if count == 1 else (plural or word + "s")
    return f"{shown} {words}" if number else words


def _clip(message: str) -> str:
    return message if len(message) <= _MESSAGE_LIMIT else message[: _MESSAGE_LIMIT - 3] + "..."
