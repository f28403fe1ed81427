"""SM107 smp-set-device."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.launcher.rules.programs import _PINNED, _SMP_SCRIPT, _fixed

SMP_SET_DEVICE = Rule(
    code="SM107",
    name="smp-set-device",
    severity="error",
    summary="A PyTorch training script under smdistributed model parallel pins its GPU with "
    "`torch.cuda.set_device(smp.local_rank())`",
    fixable=True,
    why="Without it every process of a host starts on GPU 0 and the partitions do not fit or collide; the call "
    "is added right after `smp.init()`.",
    examples=lambda: (
        _fixed(
            _SMP_SCRIPT,
            *_PINNED,
            filename="train.py",
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
    ),
    valid=lambda: (
        valid(
            _SMP_SCRIPT + "local_rank = smp.local_rank()\ntorch.cuda.set_device(local_rank)\n", note="through-a-name"
        ),
        valid(
            """
            import tensorflow as tf
            import smdistributed.modelparallel.tensorflow as smp

            smp.init()
            """,
            note="tensorflow",
        ),
    ),
    invalid=lambda: (
        _fixed(
            _SMP_SCRIPT + 'device = torch.device("cuda")\n',
            *_PINNED,
            filename="train.py",
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
        invalid(
            _SMP_SCRIPT + "torch.cuda.set_device(args.local_rank)\n",
            note="another-device",
            findings=(Expected(5, 1, "`torch.cuda.set_device(args.local_rank)`"),),
        ),
        _fixed(
            """
            import torch as th
            from smdistributed.modelparallel import torch as smp_torch


            def main():
                smp_torch.init()
                model = build()
            """,
            "smp_torch.init()\n",
            "smp_torch.init()\n    th.cuda.set_device(smp_torch.local_rank())\n",
            filename="train.py",
            alias=True,
            findings=(Expected(7, 5, "smp.init() -> th.cuda.set_device(smp_torch.local_rank())"),),
        ),
    ),
)
