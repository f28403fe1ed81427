"""XLA403's cases of a checkpoint this run writes under a name made fresh for it (GCNII's
``checkpt_file = 'pretrained/' + uuid.uuid4().hex + '.pt'``) and reads back: no CUDA run can
have written that file, so the load needs no map location; under a fixed name it may read a
CUDA run's file and stays reported."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

FRESH_NAME = """
import uuid

import torch

device = torch.device("cuda")
model = torch.nn.Linear(4, 2).to(device)
ckpt = "out/" + uuid.uuid4().hex + ".pt"
torch.save(model.state_dict(), ckpt)
model.load_state_dict(torch.load(ckpt))
"""


def _ported(program: str, target: str) -> str:
    imports, device = (
        ("import torch_xla\nimport torch_xla.core.xla_model as xm\n", "torch_xla.device()")
        if target == "2.9"
        else ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()")
    )
    return substituted(
        program,
        ("import torch\n", f"import torch\n{imports}"),
        ('torch.device("cuda")', device),
        ("torch.save(", "xm.save("),
    )


_FIXED_NAME = (('"out/" + uuid.uuid4().hex + ".pt"', '"out/best.pt"'),)


def fresh_file_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(FRESH_NAME, _ported(FRESH_NAME, target), target=target, note=f"a-file-this-run-names-fresh-{target}")
        for target in ("2.9", "sagemaker")
    )


def fresh_file_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            substituted(FRESH_NAME, *_FIXED_NAME),
            substituted(
                _ported(FRESH_NAME, target),
                *_FIXED_NAME,
                ("torch.load(ckpt)", 'torch.load(ckpt, map_location="cpu")'),
            ),
            target=target,
            note=f"a-file-this-run-saves-under-a-fixed-name-{target}",
            findings=(Expected(11 if target == "2.9" else 10, 40, 'torch.load(...) -> map_location="cpu"'),),
        )
        for target in ("2.9", "sagemaker")
    )
