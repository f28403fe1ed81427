"""XLA602's and XLA609's cases about a class that spawns its own method (ProDiff's ``Trainer``:
``mp.spawn(self.ddp_run, ...)`` with several devices, ``self.run()`` otherwise): a rank read in a method
that only the workers and the run that spawns nothing reach is ported (XLA602); one the launching
process also calls before the launch stays, reported (XLA609)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

# A class that spawns its own method, whose ``run`` reads the group rank: one input for the cases of both
# targets, whose outputs differ.
SPAWNING_CLASS = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


class Trainer:
    def __init__(self, gpus):
        self.gpus = gpus

    def fit(self):
        if self.gpus > 1:
            mp.spawn(self.ddp_run, nprocs=self.gpus)
        else:
            self.run()

    def ddp_run(self, index):
        dist.init_process_group("nccl", rank=index, world_size=self.gpus)
        self.run()

    def run(self):
        model = torch.nn.Linear(4, 2).cuda()
        if dist.is_initialized() and dist.get_rank() > 0:
            return
        print(model)


if __name__ == "__main__":
    Trainer(torch.cuda.device_count()).fit()
"""
# The same class, whose ``run`` the launching process also calls before ``fit`` spawns.
RUN_BEFORE_FIT = SPAWNING_CLASS.replace(
    "    Trainer(torch.cuda.device_count()).fit()\n",
    "    trainer = Trainer(torch.cuda.device_count())\n    trainer.run()\n    trainer.fit()\n",
)

_PORTED_29 = """
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.runtime as xr


class Trainer:
    def __init__(self, gpus):
        self.gpus = gpus

    def fit(self):
        if self.gpus > 1:
            torch_xla.launch(self.ddp_run)
        else:
            self.run()

    def ddp_run(self, index):
        dist.init_process_group("xla", init_method="xla://")
        self.run()

    def run(self):
        model = torch.nn.Linear(4, 2).to(torch_xla.device())
        if dist.is_initialized() and xr.global_ordinal() > 0:
            return
        print(model)


if __name__ == "__main__":
    Trainer(torch.cuda.device_count()).fit()
"""

_PORTED_SAGEMAKER = """
import torch
import torch.distributed as dist
import os
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp


class Trainer:
    def __init__(self, gpus):
        self.gpus = gpus

    def fit(self):
        if self.gpus > 1:
            xmp.spawn(self.ddp_run)
        else:
            self.run()

    def ddp_run(self, index):
        os.environ.setdefault("MASTER_ADDR", "localhost")
        os.environ.setdefault("MASTER_PORT", "12355")
        dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
        self.run()

    def run(self):
        model = torch.nn.Linear(4, 2).to(xm.xla_device())
        if dist.is_initialized() and xm.get_ordinal() > 0:
            return
        print(model)


if __name__ == "__main__":
    Trainer(torch.cuda.device_count()).fit()
"""


def spawning_class_invalid() -> tuple[Invalid, ...]:
    """XLA602: the read in ``run`` is a worker's (or the run's that spawns nothing)."""
    return (
        invalid(
            SPAWNING_CLASS,
            _PORTED_29,
            target="2.9",
            note="method-of-a-class-spawning-itself",
            findings=(
                Expected(24, 38, "dist.get_rank() -> xr.global_ordinal(): the global rank from the XLA runtime"),
            ),
        ),
        invalid(
            SPAWNING_CLASS,
            _PORTED_SAGEMAKER,
            target="sagemaker",
            note="method-of-a-class-spawning-itself-sagemaker",
            findings=(Expected(27, 38, "dist.get_rank() -> xm.get_ordinal(): the global rank from the XLA runtime"),),
        ),
    )


def parent_called_method_invalid() -> tuple[Invalid, ...]:
    """XLA609: ``run`` also runs in the launching process, before the launch."""
    message = "`dist.get_rank()` reads the global rank in the process that starts the others"
    return (
        invalid(
            RUN_BEFORE_FIT,
            _PORTED_29.replace("xr.global_ordinal() > 0", "dist.get_rank() > 0")
            .replace("import torch_xla.runtime as xr\n", "")
            .replace(
                "    Trainer(torch.cuda.device_count()).fit()\n",
                "    trainer = Trainer(torch.cuda.device_count())\n    trainer.run()\n    trainer.fit()\n",
            ),
            target="2.9",
            note="method-the-launching-process-calls-too",
            findings=(Expected(23, 38, message),),
        ),
        invalid(
            RUN_BEFORE_FIT,
            _PORTED_SAGEMAKER.replace("xm.get_ordinal() > 0", "dist.get_rank() > 0").replace(
                "    Trainer(torch.cuda.device_count()).fit()\n",
                "    trainer = Trainer(torch.cuda.device_count())\n    trainer.run()\n    trainer.fit()\n",
            ),
            target="sagemaker",
            note="method-the-launching-process-calls-too-sagemaker",
            findings=(Expected(27, 38, message),),
        ),
    )
