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
