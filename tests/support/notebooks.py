"""Notebooks written as Jupyter writes them (nbformat.writes: indent 1, sorted keys,
non-ASCII as is), with outputs and execution counts, and the cells of a small training."""

from __future__ import annotations

import json

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

DEVICE_CELL = (
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "print(device)"
)
MODEL_CELL = "model = nn.Linear(4, 1).to(device)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)"
LOOP_CELL = (
    "for step in range(10):\n"
    "    x = torch.randn(8, 4).to(device)\n"
    "    loss = model(x).pow(2).mean()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()"
)


def notebook(*cells: object, metadata: dict[str, object] | None = None) -> str:
    """A notebook of the given cells (a str: a code cell), with an output for each code
    cell and a markdown cell first, as Jupyter writes it."""
    nb = new_notebook()
    nb.cells = [new_markdown_cell("# Training *on* TPU")]
    for count, cell in enumerate(cells, 1):
        if isinstance(cell, str):
            cell = new_code_cell(
                cell, execution_count=count, outputs=[new_output("stream", name="stdout", text=f"out {count}\n")]
            )
        nb.cells.append(cell)
    nb.metadata.update(
        metadata or {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    text: str = nbformat.writes(nb)
    return text + "\n"


def sources(text: str) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(text)["cells"]]
