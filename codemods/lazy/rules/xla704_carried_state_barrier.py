"""XLA704 carried-state-barrier: an evaluation loop that carries device state across iterations
(``total = total + loss``, read on the host only after the loop) ends every iteration with the
step barrier: a host read materializes only what it reads; the carried graph keeps growing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# An evaluation loop whose hidden state carries over each iteration (its near variant resets it in the loop).
_HIDDEN = """
import torch

hidden = model.init_hidden(4)
with torch.no_grad():
    for x in loader:
        output, hidden = model(x.to(device), hidden)
        total += output.sum().item()
"""
# An evaluation loop that binds ``x`` anew from a field of each batch (``x = data.x``) before reading it.
_BATCH_FIELD = """
import torch

device = torch.device("cuda")
model = Net().to(device)
out = []
with torch.no_grad():
    for data in loader:
        x = data.x
        x, _ = model(x.to(device))
        out.append(x.cpu().numpy())
"""
# The same with the names unpacked from the batch's fields, through an alias of torch.
_UNPACKED_FIELDS = """
import torch as th

device = th.device("cuda")
ret = []
with th.no_grad():
    for data in loader:
        data.to(device)
        x, edge_index = data.x, data.edge_index
        x, _ = encoder(x, edge_index)
        ret.append(x.cpu().numpy())
"""
# Its near variant: ``x``, read as a variable beside the field ``data.x``, is carried.
_STATE_BESIDE_FIELD = substituted(
    _BATCH_FIELD,
    ("model = Net().to(device)\nout = []\n", "out = []\nx = torch.zeros(4, device=device)\n"),
    ("        x = data.x\n        x, _ = model(x.to(device))\n", "        x, _ = model(data.x.to(device), x)\n"),
)


def _ported(program: str, *more: tuple[str, str], torch: str = "torch") -> str:
    """``program`` as the port leaves it: the XLA device chosen, and what ``more`` changes."""
    return substituted(
        program,
        ("\n\ndevice = ", "\nimport torch_xla\n\ndevice = "),
        (f'{torch}.device("cuda")', "torch_xla.device()"),
        *more,
    )


CARRIED_STATE_BARRIER = Rule(
    code="XLA704",
    name="carried-state-barrier",
    severity="error",
    summary="An evaluation loop that carries device state across iterations ends every iteration with the step barrier",
    fixable=True,
    why="A host read materializes only the value it reads: the carried state (an RNN hidden state) keeps "
    "the whole history in its graph, which grows and is compiled again every iteration. A name bound anew "
    "each iteration before it is read (`x = data.x`, a field of the batch, not the name `x`) carries nothing.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nrnn = torch.nn.RNNCell(4, 4).to(device)\n"
            "h = torch.zeros(1, 4, device=device)\nwith torch.no_grad():\n    for x in torch.randn(10, 1, 4):\n"
            "        h = rnn(x.to(device), h)\n        print(h.sum().item())\n",
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nrnn = torch.nn.RNNCell(4, 4).to(device)\n"
            "h = torch.zeros(1, 4, device=device)\nwith torch.no_grad():\n    for x in torch.randn(10, 1, 4):\n"
            "        h = rnn(x.to(device), h)\n        print(h.sum().item())\n        torch_xla.sync()\n",
            findings=(Expected(11, 9, "evaluation loop carries `h` across iterations on the device"),),
        ),
    ),
    valid=lambda: (
        valid(
            substituted(
                _HIDDEN, ("    for x in loader:\n", "    for x in loader:\n        hidden = model.init_hidden(4)\n")
            )
        ),
        valid(
            """
            import torch

            class Recurrent(torch.nn.Module):
                def forward(self, steps, hidden):
                    for x in steps:
                        hidden = self.cell(x.to(self.device), hidden)
                        self.norms.append(hidden.norm().item())
                    return hidden
            """,
            target="sagemaker",
            note="loop-of-a-module-forward",
        ),
        # ``x`` bound anew from a field of the batch each iteration (``data.x``): nothing carried.
        valid(_BATCH_FIELD, _ported(_BATCH_FIELD), note="name-bound-from-a-batch-field"),
        valid(_UNPACKED_FIELDS, _ported(_UNPACKED_FIELDS, torch="th"), note="names-unpacked-from-batch-fields-aliased"),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla as tx

            state = th.zeros(2, 4, device=tx.device())
            with th.no_grad():
                while steps < 10:
                    state = cell(th.randn(2, 4).to(tx.device()), state)
                    print(state.norm().item())
                    steps += 1
            """,
            """
            import torch as th
            import torch_xla as tx

            state = th.zeros(2, 4, device=tx.device())
            with th.no_grad():
                while steps < 10:
                    state = cell(th.randn(2, 4).to(tx.device()), state)
                    print(state.norm().item())
                    steps += 1
                    tx.sync()
            """,
            alias=True,
            findings=(Expected(10, 9, "evaluation loop carries `state` across iterations on the device"),),
        ),
        invalid(
            _HIDDEN,
            substituted(
                _HIDDEN,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                (
                    "        total += output.sum().item()\n",
                    "        total += output.sum().item()\n        torch_xla.sync()\n",
                ),
            ),
            findings=(Expected(9, 9, "evaluation loop carries `hidden` across iterations on the device"),),
        ),
        # Near the batch-field shape: ``x`` read as a variable beside the field ``data.x`` is carried.
        invalid(
            _STATE_BESIDE_FIELD,
            _ported(
                _STATE_BESIDE_FIELD,
                (
                    "        out.append(x.cpu().numpy())\n",
                    "        out.append(x.cpu().numpy())\n        torch_xla.sync()\n",
                ),
            ),
            note="state-read-beside-a-batch-field",
            findings=(Expected(11, 9, "evaluation loop carries `x` across iterations on the device"),),
        ),
    ),
)


@on_facts(CARRIED_STATE_BARRIER, nodes=lambda facts: facts.host_reads.carried_state)
def _carried(ctx: Context[Facts], original: cst.For | cst.While, updated: cst.For | cst.While) -> cst.For | cst.While:
    from codemods.engine.barriers import with_barriers

    carried = ", ".join(f"`{n}`" for n in ctx.facts.host_reads.carried_state[original])
    return with_barriers(
        ctx,
        CARRIED_STATE_BARRIER,
        original,
        updated,
        f"evaluation loop carries {carried} across iterations on the device: {{new}} ends every iteration "
        "(a host read materializes only what it reads; the carried graph keeps growing)",
    )
