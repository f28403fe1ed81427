"""XLA401's cases of a save whose tensors cannot be on a device (checkpoint/host_saves.py): a
preprocessing script's features (``feat.detach().cpu()``, a DataLoader's batch) and the state of an
embedding built on the CPU and never moved stay ``torch.save``; the same shapes with a move before the
save, or a module handed in as a parameter, are checkpoints of device tensors and become ``xm.save``."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

HOST_FEATURES = """
import torch
from torch.utils.data import DataLoader


def preprocess(dataset, encoder, out):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(dataset, batch_size=1, num_workers=4)
    encoder = encoder.to(device)
    for i, (wav, mel) in enumerate(loader):
        with torch.no_grad():
            feat = encoder(wav.to(device))[0]
            feat = feat.detach().cpu().squeeze(0)
            mel = mel.squeeze(0)
        torch.save({"feat": feat, "mel": mel}, f"{out}/{i}.pt")


def random_embeddings(vocab, dim, path, model=None):
    if model is None:
        if dim == 1:
            model = torch.nn.Embedding(len(vocab), 1)
        else:
            model = torch.nn.Embedding(len(vocab), dim)
        torch.nn.init.normal_(model.weight)
        torch.save(model.state_dict(), path)
    return model
"""

# The same saves where the tensors can be on the device: the batch moved, the module moved, a module
# handed in.
DEVICE_FEATURES = substituted(
    HOST_FEATURES,
    ("            feat = feat.detach().cpu().squeeze(0)\n", ""),
    ("mel = mel.squeeze(0)", "mel = mel.to(device).squeeze(0)"),
    (
        "        if dim == 1:\n            model = torch.nn.Embedding(len(vocab), 1)\n        else:\n"
        "            model = torch.nn.Embedding(len(vocab), dim)\n        torch.nn.init.normal_(model.weight)\n",
        "        model = torch.nn.Embedding(len(vocab), dim)\n        model.cuda()\n",
    ),
    (
        "        torch.save(model.state_dict(), path)\n    return",
        "        torch.save(model.state_dict(), path)\n    torch.save(model.state_dict(), path)\n    return",
    ),
)

_TARGETS = (
    ("2.9", "import torch_xla\nimport torch_xla.core.xla_model as xm\n", "torch_xla.device()", "torch_xla.sync()"),
    ("sagemaker", "import torch_xla.core.xla_model as xm\n", "xm.xla_device()", "xm.mark_step()"),
)
_DEVICE_CHOICE = 'torch.device("cuda" if torch.cuda.is_available() else "cpu")'


# A script's arguments (an argparse Namespace, an argument dataclass: ``self.args``, ``training_args``)
# and a Lightning module loaded from its checkpoint with no map location (on the CPU) hold no device
# tensor: their saves stay (held-out list 23: flair run_ner.py, Firefly's trainer, schnetpack's cli).
ARGUMENT_SAVES = """
import argparse
import os

import torch


class Trainer:
    def __init__(self, args, model):
        self.args = args
        self.model = model.cuda()

    def save_args(self, output_dir):
        torch.save(self.args, os.path.join(output_dir, "training_args.bin"))


def best_model(task, trainer, best_path, out):
    trainer.fit(task)
    best_task = type(task).load_from_checkpoint(best_path)
    torch.save(best_task, out)


model_args, training_args = parser.parse_args_into_dataclasses()
torch.save(model_args, os.path.join(training_args.output_dir, "model_args.bin"))
torch.save(training_args, os.path.join(training_args.output_dir, "training_args.bin"))
"""
# The same shapes where the saved tensors can be on the device: the module's state, a loaded module
# moved, ``def main(*tensors)`` (a tuple of what the caller hands), a parameter named like arguments
# (``example_args``: whatever the caller hands, tensors too; a review's probe).
ARGUMENT_AND_DEVICE_SAVES = """
import os

import torch


class Trainer:
    def __init__(self, args, model):
        self.args = args
        self.model = model.cuda()

    def save(self, output_dir):
        torch.save(self.args, os.path.join(output_dir, "training_args.bin"))
        torch.save(self.model.state_dict(), os.path.join(output_dir, "model.pt"))


def best_model(task, trainer, best_path, out):
    trainer.fit(task)
    best_task = type(task).load_from_checkpoint(best_path)
    best_task.cuda()
    torch.save(best_task, out)


def main(*tensors):
    args = parser.parse_args()
    torch.save(args, "args.bin")
    torch.save(tensors, "tensors.pt")


def export(example_args):
    torch.save(example_args, "inputs.pt")
"""

_VALID_IMPORTS = {"2.9": "import torch_xla\n", "sagemaker": "import torch_xla.core.xla_model as xm\n"}


def host_save_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(
            HOST_FEATURES,
            substituted(
                HOST_FEATURES,
                (
                    "from torch.utils.data import DataLoader\n",
                    f"from torch.utils.data import DataLoader\n{_VALID_IMPORTS[target]}",
                ),
                (_DEVICE_CHOICE, device),
            ),
            target=target,
            note=f"host-tensors-saved-by-a-preprocessing-script-{target}",
        )
        for target, _, device, _ in _TARGETS
    )


def host_save_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            DEVICE_FEATURES,
            substituted(
                DEVICE_FEATURES,
                ("from torch.utils.data import DataLoader\n", f"from torch.utils.data import DataLoader\n{imports}"),
                (_DEVICE_CHOICE, device),
                ("model.cuda()", f"model.to({device})"),
                (
                    '        torch.save({"feat": feat, "mel": mel}, f"{out}/{i}.pt")\n',
                    f'        xm.save({{"feat": feat, "mel": mel}}, f"{{out}}/{{i}}.pt")\n        {sync}\n',
                ),
                ("torch.save(model", "xm.save(model"),
            ),
            target=target,
            note=f"device-tensors-saved-by-the-same-shapes-{target}",
            findings=tuple(
                Expected(line + shift, column, "torch.save -> xm.save: moves device tensors to the CPU before saving")
                for line, column in ((14, 9), (22, 9), (23, 5))
                for shift in ((1,) if target == "2.9" else (0,))
            ),
        )
        for target, imports, device, sync in _TARGETS
    )


def argument_save_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(
            ARGUMENT_SAVES,
            substituted(
                ARGUMENT_SAVES,
                ("import torch\n", f"import torch\n{_VALID_IMPORTS[target]}"),
                ("model.cuda()", f"model.to({device})"),
            ),
            target=target,
            note=f"arguments-and-a-module-loaded-on-the-cpu-are-no-device-tensors-{target}",
        )
        for target, _, device, _ in _TARGETS
    )


def argument_save_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            ARGUMENT_AND_DEVICE_SAVES,
            substituted(
                ARGUMENT_AND_DEVICE_SAVES,
                ("import torch\n", f"import torch\n{imports}"),
                ("model.cuda()", f"model.to({device})"),
                ("best_task.cuda()", f"best_task.to({device})"),
                ("torch.save(self.model", "xm.save(self.model"),
                ("torch.save(best_task", "xm.save(best_task"),
                ("torch.save(tensors", "xm.save(tensors"),
                ("torch.save(example_args", "xm.save(example_args"),
            ),
            target=target,
            note=f"device-tensors-saved-beside-the-arguments-{target}",
            findings=tuple(
                Expected(line + shift, column, "torch.save -> xm.save: moves device tensors to the CPU before saving")
                for line, column in ((13, 9), (20, 5), (26, 5), (30, 5))
                for shift in ((2,) if target == "2.9" else (1,))
            ),
        )
        for target, imports, device, _ in _TARGETS
    )
