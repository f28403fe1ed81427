"""XLA501 cuda-synchronize: ``torch.cuda.synchronize()`` becomes ``xm.wait_device_ops()``;
right before a clock is read (the device facts' ``timing_syncs``), after a step barrier."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_calls, on_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# RTVC encoder/train.py: a profiling sync only for CUDA devices.
_GUARDED_SYNC = """
import torch


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
sync(device)
"""

CUDA_SYNCHRONIZE = Rule(
    code="XLA501",
    name="cuda-synchronize",
    severity="error",
    summary="`torch.cuda.synchronize()` becomes `xm.wait_device_ops()`",
    fixable=True,
    why="`torch.cuda.synchronize()` raises without CUDA; `xm.wait_device_ops()` waits for the work already sent to "
    "the XLA device (traced work is sent by a step barrier: before a clock is read the port writes both). A call with arguments under a test that is False on "
    'XLA as the port leaves it (`if device.type == "cuda":`, which XLA105 reports) never runs there and is not '
    "reported. One under `if torch.cuda.is_available():` and nothing else never ran on XLA either: the check goes "
    "and the wait is ported, as a note (XLA122).",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.cuda.synchronize()
            elapsed = time.time() - start
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            elapsed = time.time() - start
            """,
            findings=(Expected(4, 1, "torch.cuda.synchronize() -> xm.wait_device_ops()"),),
        ),
    ),
    valid=lambda: (
        valid(
            _GUARDED_SYNC,
            substituted(
                _GUARDED_SYNC,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
            ),
            note="under a CUDA device test that is False on XLA: never runs there",
        ),
        valid(
            substituted(_GUARDED_SYNC, ("import torch\n", "import torch as th\n"), ("torch.", "th.")),
            substituted(
                _GUARDED_SYNC,
                ("import torch\n", "import torch as th\nimport torch_xla.core.xla_model as xm\n"),
                ("torch.", "th."),
                ('th.device("cuda" if th.cuda.is_available() else "cpu")', "xm.xla_device()"),
            ),
            target="sagemaker",
            note="under a CUDA device test that is False on XLA, through an alias (sagemaker)",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            note="already-xla",
        ),
    ),
    invalid=lambda: (
        invalid(
            substituted(_GUARDED_SYNC, ('device.type == "cuda"', 'device.type != "cpu"')),
            substituted(
                _GUARDED_SYNC,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                ('device.type == "cuda"', 'device.type != "cpu"'),
                ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
            ),
            note="under a device test that is True on XLA: the call runs there",
            findings=(Expected(7, 9, "`torch.cuda.synchronize(device)`: use xm.wait_device_ops()"),),
        ),
        invalid(
            """
            import torch

            torch.cuda.synchronize()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            findings=(Expected(4, 1, "torch.cuda.synchronize() -> xm.wait_device_ops()"),),
        ),
        invalid(
            """
            import time
            import torch

            start = time.time()
            out = model(x)
            torch.cuda.synchronize()  # wait for the kernels
            print(f"forward took {time.time() - start:.3f}s")
            """,
            """
            import time
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            start = time.time()
            out = model(x)
            torch_xla.sync()
            xm.wait_device_ops()  # wait for the kernels
            print(f"forward took {time.time() - start:.3f}s")
            """,
            note="timing-needs-the-barrier-first",
            findings=(
                Expected(9, 1, "torch.cuda.synchronize() before reading a clock -> xm.wait_device_ops() (after"),
            ),
        ),
        invalid(
            """
            import torch

            torch.cuda.synchronize(device)
            """,
            note="with-argument-reported",
            findings=(Expected(3, 1, "`torch.cuda.synchronize(device)`"),),
        ),
    ),
)


@on_calls(CUDA_SYNCHRONIZE, names="torch.cuda.synchronize")
def _wait(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    """Waits for the work already sent to the device; a timing line is the line hook's (``_timing``); a call
    with arguments that never runs on XLA (under ``if device.type == "cuda":``) is not reported."""
    guarded = ctx.facts.cuda_only.guarded_cuda
    if original.args:
        if original.func in guarded and guarded[original.func] is None:
            return updated  # never runs on XLA: nothing to decide
        ctx.report(CUDA_SYNCHRONIZE, original, f"`{ctx.code(original)}`: use xm.wait_device_ops() (all devices)")
        return updated
    if len(ctx.ancestors) >= 3 and ctx.ancestors[-3] in ctx.facts.device.timing_syncs:
        return updated
    wait_ifs = ctx.facts.device.wait_ifs
    check = next((a for a in reversed(ctx.ancestors) if a in wait_ifs), None)
    if check is not None:
        from codemods.device.rules.xla122_cuda_wait_check import CUDA_WAIT_CHECK

        return ctx.fix_or_keep(
            updated,
            CUDA_WAIT_CHECK,
            original,
            f"{ctx.code(original)} -> {{new}}: under `{ctx.code(check.test)}`, False on an XLA host, it never ran "  # type: ignore[attr-defined]  # an If of wait_ifs
            "there; now it waits for the work already sent to the XLA device",
            lambda: ctx.replace_callee(original, updated, "wait_device_ops"),
        )
    return ctx.fix_or_keep(
        updated,
        CUDA_SYNCHRONIZE,
        original,
        f"{ctx.code(original)} -> {{new}}: waits for the work already sent to the device",
        lambda: ctx.replace_callee(original, updated, "wait_device_ops"),
    )


@on_facts(CUDA_SYNCHRONIZE, nodes=lambda facts: facts.device.timing_syncs)
def _timing(
    ctx: Context[Facts], original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
    """Before a clock is read: the step barrier sends the pending graph to the device,
    then waiting for it measures its run (waiting alone measures nothing in lazy mode,
    where the work has not started yet)."""
    import libcst as cst

    from codemods.engine.nodes import lone_call

    call, wait_line = lone_call(original), updated.body[0]
    if call is None or type(wait_line) is not cst.Expr or type(wait_line.value) is not cst.Call:
        return updated
    synchronize = wait_line.value

    def build() -> cst.FlattenSentinel[cst.SimpleStatementLine] | None:
        barrier = ctx.call("sync")
        wait = ctx.replace_callee(call, synchronize, "wait_device_ops")
        if barrier is None or wait is None:
            return None
        barrier_line = cst.SimpleStatementLine(body=[cst.Expr(barrier)], leading_lines=updated.leading_lines)
        line = updated.with_changes(body=[wait_line.with_changes(value=wait)], leading_lines=[])
        return cst.FlattenSentinel([barrier_line, line])

    return ctx.fix_or_keep(
        updated,
        CUDA_SYNCHRONIZE,
        call,
        f"{ctx.code(call)} before reading a clock -> {{new}} (after a step barrier: in lazy mode the "
        "pending work only starts at the barrier, so waiting alone would time nothing)",
        build,
        result=lambda lines: cst.ensure_type(lines.nodes[1].body[0], cst.Expr).value,
    )
