"""XLA103's cases of a tensor's own device (``hidden_states.device``, device/own_devices.py): handed
to ``torch.cuda.set_device`` in a model-parallel branch, it is still wherever the tensor is (the XLA
device once the model is there), so moves to it and tensors made on it stay; an option's
``cfg.device`` handed to ``set_device`` is a CUDA index or device, and is ported."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A Hugging Face style branch forward (trlx's hydra heads): the device of the hidden states.
BRANCH = """
import torch


class Branch(torch.nn.Module):
    def forward(self, hidden_states, attention_mask):
        length = hidden_states.size(1)
        device = hidden_states.device
        positions = torch.arange(length, device=device)
        if self.model_parallel:
            torch.cuda.set_device(hidden_states.device)
            attention_mask = attention_mask.to(hidden_states.device)
        return positions, attention_mask
"""


def own_device_valid() -> tuple[Valid, ...]:
    dropped = BRANCH.replace("            torch.cuda.set_device(hidden_states.device)\n", "")
    annotated = BRANCH.replace("hidden_states, attention_mask):", "hidden_states: torch.Tensor, attention_mask):")
    annotated = annotated.replace("        length = hidden_states.size(1)\n", "        length = 4\n")
    return (
        valid(BRANCH, dropped, note="a-tensors-own-device-handed-to-set-device"),
        valid(
            annotated,
            annotated.replace("            torch.cuda.set_device(hidden_states.device)\n", ""),
            note="an-annotated-tensors-own-device-handed-to-set-device",
        ),
    )


def own_device_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch

            def run(cfg, batch):
                torch.cuda.set_device(cfg.device)
                return batch.view(-1).to(cfg.device)
            """,
            """
            import torch
            import torch_xla

            def run(cfg, batch):
                return batch.view(-1).to(torch_xla.device())
            """,
            note="an-options-device-handed-to-set-device",
            findings=(Expected(5, 30, "`cfg.device` names a CUDA device, an index or a device"),),
        ),
        invalid(
            """
            import torch

            def run(batch, rank):
                batch.device = rank
                torch.cuda.set_device(batch.device)
                return batch.view(-1).to(batch.device)
            """,
            """
            import torch
            import torch_xla

            def run(batch, rank):
                batch.device = rank
                return batch.view(-1).to(torch_xla.device())
            """,
            note="a-device-attribute-the-file-assigns",
            findings=(Expected(6, 30, "`batch.device` names a CUDA device, an index or a device"),),
        ),
    )
