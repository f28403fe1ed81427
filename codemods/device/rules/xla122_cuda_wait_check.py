"""XLA122 cuda-wait-check: an availability check around nothing but a CUDA wait
(``if torch.cuda.is_available(): torch.cuda.synchronize()``, also ``torch.cuda.synchronize() if
torch.cuda.is_available() else None``: the device facts' ``wait_ifs``).
XLA104's hook drops the check and XLA501's ports the wait; both report under this note."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

_TIMED = """
import time

import torch


def timed(step, batches):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    for batch in batches:
        step(batch)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start
"""

_TIMED_PORTED = """
import time

import torch
import torch_xla.core.xla_model as xm


def timed(step, batches):
    xm.wait_device_ops()
    start = time.perf_counter()
    for batch in batches:
        step(batch)
    xm.wait_device_ops()
    return time.perf_counter() - start
"""

# YOLOP's timing helper: the wait in a conditional expression, no device picked.
_WAIT_EXPRESSION = """
import time

import torch


def time_synchronized():
    torch.cuda.synchronize() if torch.cuda.is_available() else None
    return time.time()
"""

_WAIT_EXPRESSION_PORTED = """
import time

import torch
import torch_xla.core.xla_model as xm


def time_synchronized():
    xm.wait_device_ops()
    return time.time()
"""

WAIT_MESSAGE = (
    "is False on an XLA host, so the wait under it never ran there and the code ran as it is (a timing around it "
    "measured work not yet done)"
)

CUDA_WAIT_CHECK = Rule(
    code="XLA122",
    name="cuda-wait-check",
    severity="info",
    summary="`if torch.cuda.is_available(): torch.cuda.synchronize()`: the check goes, the wait waits for the XLA device",
    fixable=True,
    why="`torch.cuda.is_available()` is False on an XLA host, so a wait guarded by it (timing code's "
    "`if torch.cuda.is_available(): torch.cuda.synchronize()`) is skipped there: the script runs as it is, only a "
    "time measured around the wait covers work not yet done. The port drops the check and makes the wait "
    "`xm.wait_device_ops()`, which waits for the work already sent to the XLA device (XLA501 says so for a wait that no check "
    "guards, which raises without CUDA: an error). So does a wait in a conditional expression (YOLOP's "
    "`torch.cuda.synchronize() if torch.cuda.is_available() else None`), which picks no device. A check that also picks the device or guards other device code "
    "is XLA104's.",
    examples=lambda: (
        invalid(
            _TIMED,
            _TIMED_PORTED,
            findings=(
                Expected(8, 5, "torch.cuda.synchronize() -> xm.wait_device_ops(): under `torch.cuda.is_available()`"),
                Expected(8, 8, f"`torch.cuda.is_available()` {WAIT_MESSAGE}: check dropped"),
                Expected(12, 5, "waits for the work already sent to the XLA device"),
                Expected(12, 8, "check dropped, so that the wait holds for the XLA device"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import time

            import torch
            import torch_xla.core.xla_model as xm


            def timed(step, batch):
                xm.wait_device_ops()
                start = time.perf_counter()
                step(batch)
                return time.perf_counter() - start
            """,
            note="already-ported",
        ),
        valid(
            """
            import torch

            if torch.cuda.is_available():
                torch.cuda.synchronize()
                device = "cuda"
            else:
                device = "cpu"
            model.to(device)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            device = "xla"
            model.to(device)
            """,
            target="sagemaker",
            note="a-check-that-also-picks-the-device-is-xla104s",
        ),
        # Another ``else`` than None does something of its own: not just a wait (XLA104 folds it).
        *(
            valid(
                _WAIT_EXPRESSION.replace("else None", "else time.sleep(0)"),
                _WAIT_EXPRESSION_PORTED,
                target=target,
                note=f"an-else-that-does-something-is-not-a-wait{suffix}",
            )
            for target, suffix in (("2.9", ""), ("sagemaker", "-sagemaker"))
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                torch.cuda.synchronize()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            note="a-wait-at-module-level",
            findings=(
                Expected(4, 4, "`torch.cuda.is_available()` is False on an XLA host"),
                Expected(4, 1, "under `torch.cuda.is_available()`"),
            ),
        ),
        invalid(
            _TIMED.replace("import torch\n", "import torch as th\n").replace("torch.cuda", "th.cuda"),
            _TIMED_PORTED.replace("import torch\n", "import torch as th\n"),
            target="sagemaker",
            alias=True,
            findings=(
                Expected(8, 5, "th.cuda.synchronize() -> xm.wait_device_ops(): under `th.cuda.is_available()`"),
                Expected(8, 8, f"`th.cuda.is_available()` {WAIT_MESSAGE}"),
                Expected(12, 5, "waits for the work already sent to the XLA device"),
                Expected(12, 8, "check dropped"),
            ),
        ),
        invalid(
            _WAIT_EXPRESSION,
            _WAIT_EXPRESSION_PORTED,
            note="a-wait-in-a-conditional-expression",
            findings=(
                Expected(8, 5, f"`torch.cuda.is_available()` {WAIT_MESSAGE}: check dropped -> xm.wait_device_ops()"),
            ),
        ),
        invalid(
            _WAIT_EXPRESSION,
            _WAIT_EXPRESSION_PORTED,
            target="sagemaker",
            note="a-wait-in-a-conditional-expression-sagemaker",
            findings=(Expected(8, 5, f"`torch.cuda.is_available()` {WAIT_MESSAGE}: check dropped"),),
        ),
        invalid(
            _WAIT_EXPRESSION.replace("import torch\n", "import torch as th\n").replace("torch.cuda", "th.cuda"),
            _WAIT_EXPRESSION_PORTED.replace("import torch\n", "import torch as th\n"),
            alias=True,
            note="a-wait-in-a-conditional-expression-aliased",
            findings=(Expected(8, 5, f"`th.cuda.is_available()` {WAIT_MESSAGE}"),),
        ),
    ),
)
