"""XLA203's cases for a module built over the model (CenterNet's ``ModelWithLoss(model,
loss)``), whose move moves the model the optimizer was built over."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# CenterNet's shape: the trainer wraps the model it is handed (``ModelWithLoss(model, loss)``)
# and another method moves the wrapper, which moves the model the optimizer was built over.
MOVED_THROUGH_A_WRAPPER_BY_A_METHOD = """
import torch


class ModelWithLoss(torch.nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model = model
        self.loss = loss


class Trainer:
    def __init__(self, model, optimizer):
        self.optimizer = optimizer
        self.model_with_loss = ModelWithLoss(model, torch.nn.MSELoss())

    def set_device(self, device):
        self.model_with_loss = self.model_with_loss.to(device)


def main(device):
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters())
    Trainer(model, optimizer).set_device(device)
"""


def wrapped_model_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch
            from torch import nn

            class ModelWithLoss(nn.Module):
                def __init__(self, model, loss):
                    super().__init__()
                    self.model = model
                    self.loss = loss

            model = nn.Linear(4, 2)
            model_with_loss = ModelWithLoss(model, nn.MSELoss()).to("cuda")
            optimizer = torch.optim.Adam(model.parameters())
            other = nn.Linear(4, 2)
            other_optimizer = torch.optim.Adam(other.parameters())
            on_cpu = ModelWithLoss(other, nn.MSELoss())
            """,
            """
            import torch
            from torch import nn
            import torch_xla  # noqa: F401  (registers the "xla" device)

            class ModelWithLoss(nn.Module):
                def __init__(self, model, loss):
                    super().__init__()
                    self.model = model
                    self.loss = loss

            model = nn.Linear(4, 2)
            model_with_loss = ModelWithLoss(model, nn.MSELoss()).to("xla")
            optimizer = torch.optim.Adam(model.parameters())
            other = nn.Linear(4, 2)
            other_optimizer = torch.optim.Adam(other.parameters())
            on_cpu = ModelWithLoss(other, nn.MSELoss())
            """,
            note="a-module-built-over-the-model-moved-before-the-optimizer-or-never",
        ),
        valid(
            """
            import copy
            import torch
            from torch import nn

            class EMA(nn.Module):
                def __init__(self, model):
                    super().__init__()
                    self.shadow = copy.deepcopy(model)

            model = nn.Linear(4, 2)
            optimizer = torch.optim.Adam(model.parameters())
            ema = EMA(model).cuda()
            """,
            """
            import copy
            import torch
            from torch import nn
            import torch_xla

            class EMA(nn.Module):
                def __init__(self, model):
                    super().__init__()
                    self.shadow = copy.deepcopy(model)

            model = nn.Linear(4, 2)
            optimizer = torch.optim.Adam(model.parameters())
            ema = EMA(model).to(torch_xla.device())
            """,
            note="a-module-built-over-a-copy-of-the-model-moves-the-copy",
        ),
    )


def wrapped_model_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch
            from torch import nn

            class ModelWithLoss(nn.Module):
                def __init__(self, model, loss):
                    super().__init__()
                    self.model = model
                    self.loss = loss

            model = nn.Linear(4, 2)
            optimizer = torch.optim.Adam(model.parameters())
            model_with_loss = ModelWithLoss(model, nn.MSELoss())
            model_with_loss = model_with_loss.to("cuda")
            """,
            """
            import torch
            from torch import nn
            import torch_xla

            class ModelWithLoss(nn.Module):
                def __init__(self, model, loss):
                    super().__init__()
                    self.model = model
                    self.loss = loss

            model = nn.Linear(4, 2)
            optimizer = torch.optim.Adam(model.to(torch_xla.device()).parameters())
            model_with_loss = ModelWithLoss(model, nn.MSELoss())
            model_with_loss = model_with_loss.to("xla")
            """,
            note="moved-through-a-module-built-over-it",
            findings=(
                Expected(
                    12, 30, 'the optimizer is built while `model` is on the CPU and `model_with_loss.to("cuda")` moves'
                ),
            ),
        ),
        invalid(
            """
            from torch import nn, optim

            class WithLoss(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net

            net = nn.Linear(4, 2)
            opt = optim.Adam(net.parameters())
            trained = WithLoss(net).cuda()
            """,
            """
            from torch import nn, optim
            import torch_xla

            class WithLoss(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net

            net = nn.Linear(4, 2)
            opt = optim.Adam(net.to(torch_xla.device()).parameters())
            trained = WithLoss(net).to(torch_xla.device())
            """,
            alias=True,
            note="moved-through-a-module-built-over-it-at-creation",
            findings=(
                Expected(10, 18, "the optimizer is built while `net` is on the CPU and `WithLoss(net).cuda()` moves"),
            ),
        ),
        invalid(
            MOVED_THROUGH_A_WRAPPER_BY_A_METHOD,
            target="sagemaker",
            note="a-method-moves-a-module-init-built-over-what-it-was-handed-sagemaker",
            findings=(
                Expected(
                    22,
                    34,
                    "the optimizer is built while `model` is on the CPU, and `self.model_with_loss.to(device)` in",
                ),
            ),
        ),
    )
