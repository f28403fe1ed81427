"""XLD: what ``xla-codemod doctor`` saw while the script ran on XLA (runtime findings).

These are not found in the source: the doctor runs the script for a few steps and reads
the graphs torch_xla compiled.  Their examples show the script line a finding points at
(``filename="doctor"``: observed at run time, nothing is rewritten).
"""

from __future__ import annotations

from collections.abc import Callable

from codemods.engine.rule import Example, Rule

PREFIX = "XLD"
RUNTIME = "doctor"  # Example.filename of a runtime example


def _seen_at(line: str) -> Callable[[], tuple[Example, ...]]:
    """A runtime rule's examples: the script ``line`` its finding points at."""
    return lambda: (Example(line, filename=RUNTIME),)


DOCTOR_SUMMARY = Rule(
    code="XLD100",
    name="doctor-summary",
    severity="info",
    summary="What the run did: steps, graphs compiled and run, compile and execution time, host transfers",
    fixable=False,
    why="Compiling is what makes a lazy-mode step slow; a steady state compiles nothing after the first steps.",
    instead="Nothing: this finding is the run's summary. Change what the run's other XLD findings name; a script that "
    'needs nothing more reaches a steady state (the summary ends "steady state from step N") and `xla-codemod '
    "doctor` exits 0.",
    examples=_seen_at("for step, (data, target) in enumerate(loader):"),
)

RECOMPILING_SYNC_SITE = Rule(
    code="XLD101",
    name="recompiling-sync-site",
    severity="warning",
    summary="A step barrier, loader or host read that keeps compiling new graphs after warm-up",
    fixable=False,
    why="Every new graph is compiled before it runs (seconds to minutes); a step that makes a new graph "
    "each time never reaches the compiled-graph cache.",
    instead="A step whose graph is the same every step: change what the XLD102 findings under this site name (a shape or "
    "a Python number that changes each step), what XLD106 says of a short last batch, and the host reads XLD103 "
    "names; the site stops compiling once its graphs repeat.",
    examples=_seen_at("    torch_xla.sync()"),
)

CHANGING_OPERATION = Rule(
    code="XLD102",
    name="changing-operation",
    severity="warning",
    summary="An operation whose shape or constant changes between successive graphs",
    fixable=False,
    why="XLA compiles shapes and Python numbers into the graph: a slice bound, exponent or size that "
    "changes each step makes each step's graph new.",
    instead="Shapes and numbers that stay the same from step to step: a Python number that changes each step as a device "
    "tensor (or fixed), a slice whose bound changes taken on the host before it moves to the device, a "
    "data-dependent shape (`nonzero`, `masked_select`, a boolean mask) as a multiplication by a mask, and a short "
    "last batch padded or dropped (`drop_last=True`).",
    examples=_seen_at("    data = source[i:i + seq_len]"),
)

HOST_READ = Rule(
    code="XLD103",
    name="host-read",
    severity="warning",
    summary="A device value read on the host every step (`.item()`, `print(t)`, a CPU fallback)",
    fixable=False,
    why="A host read waits for the device; one before the step barrier also runs the pending graph "
    "early, as a graph of its own.",
    instead="The read after the step's graph has run, in a step closure: `xm.add_step_closure(lambda loss: "
    "print(loss.item()), args=(loss,))` (`xla-codemod convert` does this for reads that only feed logging: "
    "XLA701), or the read only every N steps. A CPU fallback goes with static shapes (multiply by a mask instead "
    "of selecting).",
    examples=_seen_at("    total_loss += loss.item()"),
)

SCRIPT_CRASHED = Rule(
    code="XLD104",
    name="script-crashed",
    severity="error",
    summary="The script crashed or exited with an error status under the doctor",
    fixable=False,
    why="A converted script that crashes on XLA cannot be judged; the line is the last frame of your code "
    "in its traceback.",
    instead="The error fixed where the finding points (the last frame of your code in the traceback, whose exception it "
    "quotes), then `xla-codemod doctor` run again. CUDA code the conversion did not reach (`hidden = "
    "hidden.cuda()`) becomes `hidden.to(torch_xla.device())` with `xla-codemod convert` (XLA102); `--show-output` "
    "shows what the script printed.",
    examples=_seen_at("    hidden = hidden.cuda()"),
)

TOO_FEW_STEPS = Rule(
    code="XLD105",
    name="too-few-steps",
    severity="warning",
    summary="Too few step barriers ran to tell whether the script reaches a steady state",
    fixable=False,
    why="Without a step barrier (torch_xla.sync(), xm.mark_step(), MpDeviceLoader) a training loop grows "
    "one graph until memory runs out; with too few steps the first compiles hide the steady state.",
    instead="More step barriers than warm-up steps: a training loop with one at each iteration (`torch_xla.sync()`, which "
    "`xla-codemod convert` adds: XLA301; `xm.mark_step()`; or iteration over an `MpDeviceLoader`), and "
    "`xla-codemod doctor --steps N` with N above `--warmup` (defaults 20 and 3), with a `--timeout` long enough "
    "for them.",
    examples=_seen_at("for epoch in range(epochs):"),
)

SHORT_LAST_BATCH = Rule(
    code="XLD106",
    name="short-last-batch",
    severity="warning",
    summary="A DataLoader whose short last batch compiled graphs of its own",
    fixable=False,
    why="A batch of another size is another graph: the last batch of each epoch (and of each evaluation) "
    "is compiled again unless drop_last=True or it is padded.",
    instead="`DataLoader(..., drop_last=True)` for training; where every sample counts (evaluation), the last batch "
    "padded to the batch size, the padding left out of the metric.",
    examples=_seen_at("loader = DataLoader(dataset, batch_size=8, shuffle=True)"),
)

RULES = (
    DOCTOR_SUMMARY,
    RECOMPILING_SYNC_SITE,
    CHANGING_OPERATION,
    HOST_READ,
    SCRIPT_CRASHED,
    TOO_FEW_STEPS,
    SHORT_LAST_BATCH,
)
