"""XLA003: setup that lives in another file of the project."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

CROSS_FILE = Rule(
    "XLA003", "cross-file", "error", "Setup that comes from another file must be converted there", False,
    why="Each file is converted on its own terms: when the device or the optimizer comes from, or goes to, "
    "a function of another file of the project, the code there (device choice, training loop) still runs on "
    "CUDA terms until that file is converted too.",
    examples=(
        example(
            """
            import torch
            from helpers import train_one_epoch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_one_epoch(model, loader, optimizer)
            """
        ),
    ),
)

RULES = (CROSS_FILE,)
