"""XLA116's cases of the launcher's process index handed on as the device of a class that moves
tensors to it (ZoeDepth's shape): both targets, the launcher through an alias, and the
near variants that give nothing."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# The launch index handed on as the device of a class that moves tensors to it (ZoeDepth).
_LAUNCHED: str = """
import torch
import torch.multiprocessing as mp


class Trainer:
    def __init__(self, model, device=None):
        self.model = model
        self.device = device

    def fit(self, x):
        return self.model(x.to(self.device))


def main_worker(gpu, config):
    config.gpu = gpu
    trainer = Trainer(torch.nn.Linear(4, 2).cuda(), device=config.gpu)


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=torch.cuda.device_count(), args=(object(),))
"""
_LAUNCHED_29: str = substituted(
    _LAUNCHED,
    ("import torch.multiprocessing as mp", "import torch_xla"),
    (".cuda()", ".to(torch_xla.device())"),
    ("mp.spawn(main_worker, nprocs=torch.cuda.device_count(), ", "torch_xla.launch(main_worker, "),
)
_LAUNCHED_SAGEMAKER: str = substituted(
    _LAUNCHED,
    (
        "import torch.multiprocessing as mp",
        "import torch_xla.core.xla_model as xm\nimport torch_xla.distributed.xla_multiprocessing as xmp",
    ),
    (".cuda()", ".to(xm.xla_device())"),
    (
        'if __name__ == "__main__":\n    mp.spawn(main_worker, nprocs=torch.cuda.device_count(), args=(object(),))',
        'def _mp_fn(index):\n    main_worker(index, object())\n\n\nif __name__ == "__main__":\n    xmp.spawn(_mp_fn, args=())',
    ),
)


def launch_index_invalid() -> tuple[Invalid, ...]:
    """The launch index handed as the device: both targets, and the launcher reached through an alias."""
    message = (
        "`config.gpu` is `gpu`, the process index the launcher hands `main_worker` (an int), and `Trainer` moves "
        "tensors to the device it is handed (`x.to(self.device)`)"
    )
    aliased = (("torch.multiprocessing as mp", "torch.multiprocessing as tmp"), ("mp.spawn", "tmp.spawn"))
    return (
        invalid(
            _LAUNCHED, _LAUNCHED_29, note="launch-index-handed-as-the-device", findings=(Expected(16, 60, message),)
        ),
        invalid(
            _LAUNCHED,
            _LAUNCHED_SAGEMAKER,
            target="sagemaker",
            note="launch-index-handed-as-the-device-sagemaker",
            findings=(Expected(17, 60, message),),
        ),
        invalid(
            substituted(_LAUNCHED, *aliased),
            _LAUNCHED_29,
            alias=True,
            note="launch-index-handed-as-the-device-alias",
            findings=(Expected(16, 60, message),),
        ),
    )


def launch_index_valid() -> tuple[Valid, ...]:
    """A device handed in place of the index, and the index handed as a rank."""
    return (
        valid(
            substituted(_LAUNCHED, ("device=config.gpu", 'device=torch.device("cuda")')),
            substituted(_LAUNCHED_29, ("device=config.gpu", "device=torch_xla.device()")),
            note="the-worker-hands-a-device-not-its-index",
        ),
        valid(
            substituted(
                _LAUNCHED,
                ("device=None", "rank=0"),
                ("device = device", "rank = rank"),
                ("device=config.gpu", "rank=config.gpu"),
            ),
            substituted(
                _LAUNCHED_29,
                ("device=None", "rank=0"),
                ("device = device", "rank = rank"),
                ("device=config.gpu", "rank=config.gpu"),
            ),
            note="the-launch-index-handed-as-a-rank",
        ),
    )
