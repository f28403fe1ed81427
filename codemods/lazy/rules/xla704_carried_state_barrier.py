"""XLA704 carried-state-barrier."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

CARRIED_STATE_BARRIER = Rule(
    code="XLA704",
    name="carried-state-barrier",
    severity="error",
    summary="An evaluation loop that carries device state across iterations ends every iteration with the step barrier",
    fixable=True,
    why="A host read materializes only the value it reads: the carried state (an RNN hidden state) keeps "
    "the whole history in its graph, which grows and is compiled again every iteration.",
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
            """
            import torch

            hidden = model.init_hidden(4)
            with torch.no_grad():
                for x in loader:
                    hidden = model.init_hidden(4)
                    output, hidden = model(x.to(device), hidden)
                    total += output.sum().item()
            """,
        ),
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
            """
            import torch

            hidden = model.init_hidden(4)
            with torch.no_grad():
                for x in loader:
                    output, hidden = model(x.to(device), hidden)
                    total += output.sum().item()
            """,
            """
            import torch
            import torch_xla

            hidden = model.init_hidden(4)
            with torch.no_grad():
                for x in loader:
                    output, hidden = model(x.to(device), hidden)
                    total += output.sum().item()
                    torch_xla.sync()
            """,
            findings=(Expected(9, 9, "evaluation loop carries `hidden` across iterations on the device"),),
        ),
    ),
)
