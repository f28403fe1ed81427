"""XLA7: lazy mode.  Host reads that run an extra graph every step (XLA70x) and
recompilation sources that make every step a new graph (XLA71x).  Findings point at
the line of the operation itself (``xla-codemod doctor`` matches them with what it
measures at run time)."""

from __future__ import annotations

from codemods.engine.rule import Example, Rule

_LOOP = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
model = torch.nn.Linear(4, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(8, 4).to(device)
    loss = model(x).pow(2).mean()
    loss.backward()
    xm.optimizer_step(optimizer)
{body}    torch_xla.sync()
"""


def _loop(body: str) -> str:
    return _LOOP.format(body="".join(f"    {line}\n" for line in body.splitlines()))


HOST_READ_LOGGING = Rule(
    "XLA701", "host-read-logging", "warning",
    "A host read that only logs runs in xm.add_step_closure, with the iteration's values bound", True,
    why="`loss.item()` or `print(loss)` in a training loop runs the pending graph at once, an extra "
    "execution every step; in a step closure it runs after the step's graph, reading values already computed.",
    examples=(Example(
        _loop('print(f"step {step} loss {loss.item():.4f}")'),
        _loop('xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.4f}"), args=(step, loss))'),
    ),),
)

HOST_READ_VALUE = Rule(
    "XLA702", "host-read-value", "warning",
    "A host read whose value the loop keeps (accumulation, a variable) syncs every step", False,
    why="Each read runs the pending graph before the step ends.  Keep running sums on the device "
    "(`total += loss.detach()`) and read them once per log interval, or read inside xm.add_step_closure.",
    examples=(Example(_loop("total += loss.item()")),),
)

DEVICE_CONTROL_FLOW = Rule(
    "XLA703", "device-control-flow", "warning",
    "Control flow on a device value (`if loss.item() > x`, `while t.sum() > 0`) syncs every step", False,
    why="Python needs the value to choose a branch, so the graph runs there; a branch that changes "
    "which operations run also changes the graph.  Use torch.where, or decide once per log interval.",
    examples=(Example(_loop("if loss.item() > 10:\n    break")),),
)

CARRIED_STATE_BARRIER = Rule(
    "XLA704", "carried-state-barrier", "error",
    "An evaluation loop that carries device state across iterations ends every iteration with the step barrier", True,
    why="A host read materializes only the value it reads: the carried state (an RNN hidden state) keeps "
    "the whole history in its graph, which grows and is compiled again every iteration.",
    examples=(Example(
        "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nrnn = torch.nn.RNNCell(4, 4).to(device)\n"
        "h = torch.zeros(1, 4, device=device)\nwith torch.no_grad():\n    for x in torch.randn(10, 1, 4):\n"
        "        h = rnn(x.to(device), h)\n        print(h.sum().item())\n",
        "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nrnn = torch.nn.RNNCell(4, 4).to(device)\n"
        "h = torch.zeros(1, 4, device=device)\nwith torch.no_grad():\n    for x in torch.randn(10, 1, 4):\n"
        "        h = rnn(x.to(device), h)\n        print(h.sum().item())\n        torch_xla.sync()\n",
    ),),
)

SLICED_DEVICE_DATA = Rule(
    "XLA711", "sliced-device-data", "warning",
    "A device tensor sliced with a per-step Python integer: the data stays on the host and each slice moves", True,
    why="The offset of a slice is compiled into the graph, so `source[i:i+n]` on a device tensor is a new "
    "graph for every `i`.  A slice taken on the host and moved to the device is fresh input data: one graph.",
    examples=(Example(
        "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nsource = torch.arange(100.0).to(device)\n"
        "w = torch.ones(10, device=device, requires_grad=True)\nfor i in range(0, 90, 10):\n"
        "    loss = (source[i:i + 10] * w).sum()\n    loss.backward()\n    torch_xla.sync()\n",
        "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nsource = torch.arange(100.0)\n"
        "w = torch.ones(10, device=device, requires_grad=True)\nfor i in range(0, 90, 10):\n"
        "    loss = (source[i:i + 10].to(device) * w).sum()\n    loss.backward()\n    torch_xla.sync()\n",
    ),),
)

STEP_VARYING_SHAPE = Rule(
    "XLA712", "step-varying-shape", "warning",
    "A per-step Python integer used as a shape or static argument (view, arange, topk, ** ...) recompiles every step", False,
    why="Shapes, offsets, counts and exponents are compiled into the graph.  Plain arithmetic with Python "
    "numbers is not (torch_xla passes those as device data), so keep shapes fixed and vary values instead.",
    examples=(Example(_loop("y = x.repeat(step + 1, 1)")),),
)

DYNAMIC_SHAPE = Rule(
    "XLA713", "dynamic-shape", "warning",
    "An operation whose output shape depends on the data (nonzero, masked_select, boolean masks, unique)", False,
    why="XLA compiles for fixed shapes: the size is read to the host and each new size is a new graph.  "
    "Keep the shape: multiply by the mask (`(x * mask).sum() / mask.sum()`) or use torch.where(mask, x, 0).",
    examples=(Example(_loop("positive = x[x > 0]")),),
)

SHORT_LAST_BATCH = Rule(
    "XLA714", "short-last-batch", "warning",
    "A training DataLoader without drop_last=True: its short last batch compiles a second graph", False,
    why="When the dataset size is not a multiple of the batch size the last batch has another shape, "
    "and every distinct shape is compiled.  Pass drop_last=True where dropping a few samples per epoch is fine.",
    examples=(Example(
        "import torch\nimport torch_xla\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
        "device = torch_xla.device()\nmodel = torch.nn.Linear(4, 1).to(device)\n"
        "loader = DataLoader(TensorDataset(torch.randn(100, 4)), batch_size=16)\nfor (x,) in loader:\n"
        "    model(x.to(device)).sum().backward()\n    torch_xla.sync()\n"
    ),),
)

RULES = (HOST_READ_LOGGING, HOST_READ_VALUE, DEVICE_CONTROL_FLOW, CARRIED_STATE_BARRIER, SLICED_DEVICE_DATA, STEP_VARYING_SHAPE, DYNAMIC_SHAPE, SHORT_LAST_BATCH)
