"""Cases of training loops already ported the XLA way, and of a DeepSpeed engine's step: a loop over a
name bound to ``pl.ParallelLoader(...).per_device_loader(...)`` (``epoch_iterator = parallel_loader``,
transformers 4.11's Trainer loop) ends each step at its loader and steps with ``xm.optimizer_step``
(XLA301 adds nothing); ``self.deepspeed.step()`` steps a DeepSpeed engine, no torch optimizer
(XLA201 says nothing of it: XLA004 reports DeepSpeed where it is started)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

PORTED_LOOPS_WHY = (
    " A loop over a name bound to a device loader (`batches = parallel_loader`, itself "
    "`pl.ParallelLoader(loader, [device]).per_device_loader(device)`) feeds from it as one over the loader itself."
)
ENGINE_STEPS_WHY = (
    " `self.deepspeed.step()` (a receiver named for DeepSpeed) steps a DeepSpeed engine, which is no torch "
    "optimizer and does not run on XLA (XLA004 reports DeepSpeed where it is started): no finding."
)

_ALIASED_LOADER = """
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def train(model, optimizer, loader, device, on_xla):
    if on_xla:
        parallel_loader = pl.ParallelLoader(loader, [device]).per_device_loader(device)
        batches = parallel_loader
    else:
        batches = loader
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        xm.optimizer_step(optimizer)
"""

_ENGINE = """
import torch


class Trainer:
    def train(self, model, loader):
        for x, y in loader:
            loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
            self.deepspeed.backward(loss)
            self.deepspeed.step()
"""


def ported_loop_valid() -> tuple[Valid, ...]:
    return (
        valid(_ALIASED_LOADER, note="a-loop-over-a-name-bound-to-a-device-loader"),
        valid(
            _ALIASED_LOADER.replace(
                "pl.ParallelLoader(loader, [device]).per_device_loader(device)", "pl.MpDeviceLoader(loader, device)"
            ),
            target="sagemaker",
            note="the-same-with-mpdeviceloader-sagemaker",
        ),
    )


def engine_step_valid() -> tuple[Valid, ...]:
    return (
        valid(
            _ENGINE,
            """
            import torch
            import torch_xla


            class Trainer:
                def train(self, model, loader):
                    for x, y in loader:
                        loss = (model(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean()
                        self.deepspeed.backward(loss)
                        self.deepspeed.step()
                        torch_xla.sync()
            """,
            note="a-deepspeed-engines-step-is-no-optimizer-step",
            target_only=True,
        ),
        valid(
            _ENGINE,
            """
            import torch
            import torch_xla.core.xla_model as xm


            class Trainer:
                def train(self, model, loader):
                    for x, y in loader:
                        loss = (model(x.to(xm.xla_device())) - y.to(xm.xla_device())).pow(2).mean()
                        self.deepspeed.backward(loss)
                        self.deepspeed.step()
                        xm.mark_step()
            """,
            target="sagemaker",
            note="the-same-sagemaker",
        ),
    )


def engine_loop_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _ENGINE,
            """
            import torch
            import torch_xla


            class Trainer:
                def train(self, model, loader):
                    for x, y in loader:
                        loss = (model(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean()
                        self.deepspeed.backward(loss)
                        self.deepspeed.step()
                        torch_xla.sync()
            """,
            note="a-loop-over-a-plain-loader-still-gets-its-barrier",
            target_only=True,
            findings=(Expected(11, 13, "training loop: torch_xla.sync() ends every iteration"),),
        ),
    )
