"""XLA4: checkpoints."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

XLA_SAVE = Rule(
    "XLA401", "xla-save", "error", "`torch.save` becomes `xm.save` (moves tensors to the CPU first)", True,
    why="`torch.save` of XLA tensors writes a checkpoint that loads only where torch_xla is installed, and in a "
    "multi-process run every process writes the same file at once; `xm.save` moves the tensors to the CPU and "
    "writes from the master process only.",
    examples=(
        example(
            """
            import torch

            torch.save({"model": model.state_dict(), "epoch": epoch}, path)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save({"model": model.state_dict(), "epoch": epoch}, path)
            """,
        ),
    ),
)

SAVE_WHOLE_MODULE = Rule(
    "XLA402", "save-whole-module", "warning", "Saving a whole module pickles its device tensors: save its state_dict()", False,
    why="Pickling a whole module stores its class by reference and its tensors as they are: the checkpoint "
    "loads only with the same code and torch_xla at hand. A `state_dict()` saved with `xm.save` holds CPU "
    "tensors that load anywhere.",
    examples=(
        example(
            """
            import torch

            class Net(torch.nn.Module):
                pass

            model = Net()
            torch.save(model, "model.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            class Net(torch.nn.Module):
                pass

            model = Net()
            xm.save(model, "model.pt")
            """,
        ),
    ),
)

LOAD_MAP_LOCATION = Rule(
    "XLA403", "load-map-location", "error", "`torch.load(map_location=<CUDA or XLA device>)` loads on the CPU instead", True,
    why="Loading onto a CUDA device raises without CUDA, and XLA cannot restore storages straight onto its "
    "device; loaded on the CPU, `load_state_dict` copies the tensors to wherever the model is.",
    examples=(
        example(
            """
            import torch

            state = torch.load("model.pt", map_location="cuda:0")
            """,
            """
            import torch

            state = torch.load("model.pt", map_location="cpu")
            """,
        ),
    ),
)

RULES = (XLA_SAVE, SAVE_WHOLE_MODULE, LOAD_MAP_LOCATION)
