"""XLA203's cases for a model handed in (to a trainer's constructor, to a function) whose
optimizer is built over parameter groups of its submodules before the model moves."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid


def handed_in_model_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
        import torch


        class Trainer:
            def __init__(self, model, lr):
                self.device = torch.device("cuda")
                self.model = model
                self.optimizer = torch.optim.AdamW([*self.model.vision.parameters(), *self.model.head.parameters()], lr=lr)
                self.model.to(self.device)
        """,
            """
        import torch
        import torch_xla


        class Trainer:
            def __init__(self, model, lr):
                self.device = torch_xla.device()
                self.model = model
                self.optimizer = torch.optim.AdamW([*self.model.vision.to(torch_xla.device()).parameters(), *self.model.head.to(torch_xla.device()).parameters()], lr=lr)
                self.model.to(self.device)
        """,
            note="a-handed-in-model-moved-later-through-a-name-bound-to-it",
            findings=(
                Expected(
                    9,
                    46,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in",
                ),
                Expected(
                    9,
                    102,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in",
                ),
            ),
        ),
        invalid(
            """
        import torch
        from torch import nn


        def fit(model, lr):
            optimizer = torch.optim.SGD(params=[{"params": model.backbone.parameters(), "lr": 0.1 * lr},
                                                {"params": model.classifier.parameters(), "lr": lr}], momentum=0.9)
            model = nn.DataParallel(model)
            model.cuda()
            return optimizer
        """,
            """
        import torch
        import torch_xla.core.xla_model as xm


        def fit(model, lr):
            optimizer = torch.optim.SGD(params=[{"params": model.backbone.to(xm.xla_device()).parameters(), "lr": 0.1 * lr},
                                                {"params": model.classifier.to(xm.xla_device()).parameters(), "lr": lr}], momentum=0.9)
            model.to(xm.xla_device())
            return optimizer
        """,
            target="sagemaker",
            note="parameter-groups-of-a-handed-in-model-sagemaker",
            findings=(
                Expected(
                    6,
                    52,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `model.cuda()` in `fit` moves",
                ),
                Expected(
                    7,
                    52,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `model.cuda()` in `fit` moves",
                ),
            ),
        ),
    )
