"""XLA401's cases of a file that names no device and trains nothing (checkpoint/rules/deviceless.py): a
checkpoint conversion script (load, rename the keys, save; its load gets XLA403's map location) and a
preprocessing script whose ``main(hp, args)`` the file calls with its parsed arguments keep
``torch.save``; the same scripts with a move, a helper handed what it saves, or a model of the file
become ``xm.save``.  Kept apart from the rule so that its module holds the rule and its hooks."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# AdelaiDet's tools/remove_optim_from_ckpt.py and rename_blendmask.py: a checkpoint's keys renamed.
CONVERSION = """
import argparse

import torch


def rename(state):
    return {key.replace("fpn_layer2", "fpn_output3"): value for key, value in state.items()}


if __name__ == "__main__":
    args = argparse.ArgumentParser().parse_args()
    ckpt = torch.load(args.model)
    model = rename(ckpt["model"])
    torch.save(model, args.output)
"""

# melgan's preprocess.py: a spectrogram of each wav file, computed by a class of the project.
PREPROCESS = """
import argparse
import glob

import numpy as np
import torch

from utils.hparams import HParam
from utils.stft import TacotronSTFT


def main(hp, args):
    stft = TacotronSTFT(filter_length=hp.filter_length)
    for wavpath in glob.glob(args.data_path + "/*.wav", recursive=True):
        wav = torch.from_numpy(np.load(wavpath)).unsqueeze(0)
        mel = stft.mel_spectrogram(wav)
        torch.save(mel, wavpath.replace(".wav", ".mel"))


if __name__ == "__main__":
    args = argparse.ArgumentParser().parse_args()
    hp = HParam(args.config)
    main(hp, args)
"""

# A model another module of the project trained (``trainer.train_model`` moves it to the GPU) and
# returned: the file names no device, but what it saves was not built here.
_IMPORTED_RESULT = """
import torch
from trainer import train_model

net = train_model()
torch.save(net.state_dict(), "out.pt")
"""

# The same through a function of the file that calls it (an import under an alias of torch).
_IMPORTED_THROUGH_LOCAL = """
import torch as th

import trainer as tr


def trained():
    return tr.train_model(steps=5)


th.save(trained().state_dict(), "out.pt")
"""

# A function of the file that only loads and averages checkpoints: built here, on the host.
_HOST_FUNCTION = """
import torch


def averaged(paths):
    states = [torch.load(p) for p in paths]
    return {k: sum(s[k] for s in states) / len(states) for k in states[0]}


torch.save(averaged(["a.pt", "b.pt"]), "avg.pt")
"""

_LOCATED = ("torch.load(args.model)", 'torch.load(args.model, map_location="cpu")')


def deviceless_valid() -> tuple[Valid, ...]:
    return tuple(
        case
        for target in ("2.9", "sagemaker")
        for case in (
            valid(
                CONVERSION,
                substituted(CONVERSION, _LOCATED),
                target=target,
                note=f"a-checkpoint-conversion-script-names-no-device-{target}",
            ),
            valid(PREPROCESS, target=target, note=f"a-preprocessing-script-names-no-device-{target}"),
            valid(
                _HOST_FUNCTION,
                substituted(_HOST_FUNCTION, ("torch.load(p)", 'torch.load(p, map_location="cpu")')),
                target=target,
                note=f"a-function-of-the-file-that-only-loads-builds-on-the-host-{target}",
            ),
        )
    )


_XM = "import torch\nimport torch_xla.core.xla_model as xm\n"


# A checkpointer of another module's models: ``out = {}`` is filled by subscript with their state.
_FILLED_FROM_HANDED = """
import torch


class CheckpointIO:
    def __init__(self, path, **modules):
        self.path, self.modules = path, modules

    def save(self):
        out = {}
        for name, module in self.modules.items():
            out[name] = module.state_dict()
        torch.save(out, self.path)
"""


def deviceless_invalid() -> tuple[Invalid, ...]:
    moved = substituted(PREPROCESS, ("mel = stft.mel_spectrogram(wav)", "mel = stft.mel_spectrogram(wav.cuda())"))
    handed = substituted(PREPROCESS, ("    main(hp, args)\n", ""))
    return (
        invalid(
            moved,
            substituted(
                moved,
                ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
                ("wav.cuda()", "wav.to(torch_xla.device())"),
                ("        torch.save(mel, wavpath", "        xm.save(mel, wavpath"),
                ('".mel"))\n', '".mel"))\n        torch_xla.sync()\n'),
            ),
            findings=(Expected(18, 9, "torch.save -> xm.save"),),
            note="a-preprocessing-script-that-moves-the-input",
        ),
        invalid(
            handed,
            substituted(handed, ("import torch\n", _XM), ("torch.save(mel,", "xm.save(mel,")),
            target="sagemaker",
            note="a-function-no-code-of-the-file-calls-is-handed-its-parameters-sagemaker",
            findings=(Expected(17, 9, "torch.save -> xm.save"),),
        ),
        invalid(
            handed,
            substituted(handed, ("import torch\n", _XM), ("torch.save(mel,", "xm.save(mel,")),
            note="a-function-no-code-of-the-file-calls-is-handed-its-parameters",
            findings=(Expected(17, 9, "torch.save -> xm.save"),),
        ),
        invalid(
            """
            import torch as th


            def save_checkpoint(state, path):
                th.save(state, path)
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm


            def save_checkpoint(state, path):
                xm.save(state, path)
            """,
            alias=True,
            note="a-helper-saves-what-it-is-handed-alias",
            findings=(Expected(6, 5, "th.save -> xm.save"),),
        ),
        *(
            invalid(
                _IMPORTED_RESULT,
                substituted(_IMPORTED_RESULT, ("import torch\n", _XM), ("torch.save(net", "xm.save(net")),
                target=target,
                note=f"what-a-function-of-another-module-returns-was-not-built-here-{target}",
                findings=(Expected(6, 1, "torch.save -> xm.save"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            _IMPORTED_THROUGH_LOCAL,
            substituted(
                _IMPORTED_THROUGH_LOCAL,
                ("import torch as th\n", "import torch as th\nimport torch_xla.core.xla_model as xm\n"),
                ("th.save(", "xm.save("),
            ),
            alias=True,
            note="a-function-of-the-file-returning-what-another-module-built-alias",
            findings=(Expected(11, 1, "th.save -> xm.save"),),
        ),
        *(
            invalid(
                _FILLED_FROM_HANDED,
                substituted(_FILLED_FROM_HANDED, ("import torch\n", _XM), ("torch.save(out,", "xm.save(out,")),
                target=target,
                note=f"a-dict-filled-with-the-state-of-modules-it-is-handed-{target}",
                findings=(Expected(13, 9, "torch.save -> xm.save"),),
            )
            for target in ("2.9", "sagemaker")
        ),
    )
