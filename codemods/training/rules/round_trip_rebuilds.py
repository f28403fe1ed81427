"""XLA203's cases for an optimizer rebuilt in a loop that moves its module to the CPU and back
(a rebuild runs after every round trip only in the same block as the move back, or in one
around it), and for ``torch.jit.script`` / ``torch.compile``, which return a module over the
same parameters, where the module they are handed is."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# Saved every ten steps through a move to the CPU and back; the optimizer is built again once,
# at step 50, under another ``if``: the round trips after it leave it with the old parameters.
REBUILT_ONCE = """
import torch
from torch import nn

device = torch.device("cuda")
model = nn.Linear(3, 3).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(100):
    loss = model(torch.randn(2, 3).to(device)).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 10 == 0:
        model.cpu()
        torch.save(model.state_dict(), "model.pt")
        model.to(device)
    if step == 50:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
"""


def _ported(program: str) -> str:
    """A loop of these cases as the port to 2.9 leaves it (the step barrier after its last line)."""
    return (
        substituted(
            program,
            (
                '\n\ndevice = torch.device("cuda")\n',
                "\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n\ndevice = torch_xla.device()\n",
            ),
            ("optimizer.step()", "xm.optimizer_step(optimizer)"),
            ("torch.save(", "xm.save("),
        )
        + "    torch_xla.sync()\n"
    )


REBUILT_ONCE_PORTED = _ported(REBUILT_ONCE)

# The negative control: built again right after each move back, in the same block.
REBUILT_AFTER_EVERY_TRIP = substituted(
    REBUILT_ONCE,
    ("        model.to(device)\n    if step == 50:\n", "        model.to(device)\n"),
    ("lr=1e-5", "lr=1e-4"),
)
REBUILT_AFTER_EVERY_TRIP_PORTED = _ported(REBUILT_AFTER_EVERY_TRIP)

# The same loop over a scripted module: ``torch.jit.script`` keeps the parameters (and the
# device) of the module it is handed, so the model is on the device before the optimizer.
SCRIPTED = substituted(
    REBUILT_ONCE,
    ("model = nn.Linear(3, 3).to(device)\n", "model = nn.Linear(3, 3).to(device)\nmodel = torch.jit.script(model)\n"),
    ("    if step == 50:\n        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\n", ""),
)
SCRIPTED_PORTED = _ported(SCRIPTED)

# Scripted over a module moved first, and saved without a move: nothing to report.
SCRIPTED_MOVED = substituted(
    REBUILT_ONCE,
    ("from torch import nn\n", "from torch import jit, nn\n"),
    ("model = nn.Linear(3, 3).to(device)\n", "model = jit.script(nn.Linear(3, 3).to(device))\n"),
    ("        model.cpu()\n", ""),
    (
        "        model.to(device)\n    if step == 50:\n        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\n",
        "",
    ),
)
SCRIPTED_MOVED_PORTED = _ported(SCRIPTED_MOVED)

# A scripted module built on the CPU is on the CPU: the optimizer over it is built before the move.
SCRIPTED_ON_THE_CPU = """
import torch as th
from torch import nn

model = th.jit.script(nn.Linear(3, 3))
optimizer = th.optim.AdamW(model.parameters(), lr=1e-4)
model.cuda()
for step in range(100):
    loss = model(th.randn(2, 3).cuda()).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""

SCRIPTED_ON_THE_CPU_PORTED = """
import torch as th
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm

model = th.jit.script(nn.Linear(3, 3))
optimizer = th.optim.AdamW(model.to(torch_xla.device()).parameters(), lr=1e-4)
model.to(torch_xla.device())
for step in range(100):
    loss = model(th.randn(2, 3).to(torch_xla.device())).sum()
    loss.backward()
    xm.optimizer_step(optimizer)
    optimizer.zero_grad()
    torch_xla.sync()
"""

# The same with torch.compile, for sagemaker (PyTorch 1.13 has no torch.compile: XLA721 removes it;
# the 2.9 target keeps it with the openxla backend, and the 2.9 cases are derived for sagemaker).
COMPILED_ON_THE_CPU = substituted(SCRIPTED_ON_THE_CPU, ("th.jit.script(", "th.compile("))
COMPILED_ON_THE_CPU_PORTED = substituted(
    SCRIPTED_ON_THE_CPU_PORTED,
    ("import torch_xla\n", ""),
    ("th.jit.script(nn.Linear(3, 3))", "nn.Linear(3, 3)"),
    ("torch_xla.device()", "xm.xla_device()"),
    ("torch_xla.sync()", "xm.mark_step()"),
)

_ROUND_TRIP = (
    "`model.cpu()` moves `model`, whose parameters `optimizer` steps, off the XLA device, and "
    "`model.to(device)` moves it back"
)
_EARLY = "the optimizer is built while `model` is on the CPU and `model.cuda()` moves the model later"


def round_trip_rebuild_valid() -> tuple[Valid, ...]:
    """(Each 2.9 case is derived for sagemaker too: tests/support/derived_cases.py.)"""
    return (
        valid(
            REBUILT_AFTER_EVERY_TRIP,
            REBUILT_AFTER_EVERY_TRIP_PORTED,
            note="an-optimizer-rebuilt-after-every-round-trip",
        ),
        valid(SCRIPTED_MOVED, SCRIPTED_MOVED_PORTED, note="a-module-scripted-after-its-move"),
    )


def round_trip_rebuild_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            REBUILT_ONCE,
            REBUILT_ONCE_PORTED,
            note="an-optimizer-rebuilt-once-beside-the-round-trips",
            findings=(Expected(15, 9, _ROUND_TRIP),),
        ),
        invalid(
            SCRIPTED,
            SCRIPTED_PORTED,
            note="a-scripted-module-keeps-its-place",
            findings=(Expected(16, 9, _ROUND_TRIP),),
        ),
        invalid(
            SCRIPTED_ON_THE_CPU,
            SCRIPTED_ON_THE_CPU_PORTED,
            alias=True,
            note="a-module-scripted-on-the-cpu",
            findings=(Expected(7, 28, _EARLY),),
        ),
        invalid(
            COMPILED_ON_THE_CPU,
            COMPILED_ON_THE_CPU_PORTED,
            target="sagemaker",
            alias=True,
            note="a-module-compiled-on-the-cpu",
            findings=(Expected(6, 28, _EARLY),),
        ),
    )
