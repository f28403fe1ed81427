"""XLA203's cases for an optimizer stranded by a move the tool did not follow before: one built
over an attribute ``__init__`` bound to a model it was handed, in a method that moves the model
afterwards (DIG's ``TrainModel.train``), and ``accelerator.prepare`` of a model apart from the
optimizers built over its parameters (alone before, not at all, or held by an ``nn.Module`` that
prepares it on its own: audiolm-pytorch's ``OptimizerWithWarmupSchedule``), which Accelerate does
not re-point at the moved parameters.  A callable handed both a model and the optimizer its caller
built, which moves the model itself (torchdrug's ``Engine``), is reported with a finding held until
the run's files are seen: tests/project/test_handed_optimizer_moves.py."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_A_INV = """
import torch
from torch.optim import Adam


class Trainer:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def train(self, loader):
        self.optimizer = Adam(self.model.parameters(), lr=0.1)
        self.model.to(self.device)
        for batch in loader:
            loss = self.model(batch.to(self.device)).sum()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""

_A_INV_29 = """
import torch
from torch.optim import Adam
import torch_xla
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def train(self, loader):
        self.optimizer = Adam(self.model.parameters(), lr=0.1)
        self.model.to(self.device)
        for batch in loader:
            loss = self.model(batch.to(self.device)).sum()
            self.optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            torch_xla.sync()
"""

_A_INV_SAGEMAKER = """
import torch
from torch.optim import Adam
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def train(self, loader):
        self.optimizer = Adam(self.model.parameters(), lr=0.1)
        self.model.to(self.device)
        for batch in loader:
            loss = self.model(batch.to(self.device)).sum()
            self.optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            xm.mark_step()
"""

_A_VAL_AFTER = """
import torch
from torch.optim import Adam


class Trainer:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def train(self, loader):
        self.model.to(self.device)
        self.optimizer = Adam(self.model.parameters(), lr=0.1)
        for batch in loader:
            loss = self.model(batch.to(self.device)).sum()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""

_A_VAL_AFTER_29 = """
import torch
from torch.optim import Adam
import torch_xla
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def train(self, loader):
        self.model.to(self.device)
        self.optimizer = Adam(self.model.parameters(), lr=0.1)
        for batch in loader:
            loss = self.model(batch.to(self.device)).sum()
            self.optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            torch_xla.sync()
"""


_A_VAL_INIT = """
import torch
from torch.optim import Adam


class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device

    def train(self, loader):
        self.optimizer = Adam(self.model.parameters(), lr=0.1)
        self.model.to(self.device)
        for batch in loader:
            loss = self.model(batch.to(self.device)).sum()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""

_A_VAL_INIT_29 = """
import torch
from torch.optim import Adam
import torch_xla
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device

    def train(self, loader):
        self.optimizer = Adam(self.model.parameters(), lr=0.1)
        self.model.to(self.device)
        for batch in loader:
            loss = self.model(batch.to(self.device)).sum()
            self.optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            torch_xla.sync()
"""


_C_INV = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = accelerator.prepare(optimizer)
model = accelerator.prepare(model)
"""

_C_INV_UNPREPARED = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = accelerator.prepare(model)
"""

_C_INV_WRAP = """
import torch
from torch import nn
from accelerate import Accelerator


class OptimizerWithSchedule(nn.Module):
    def __init__(self, accelerator, optimizer):
        super().__init__()
        self.optimizer = accelerator.prepare(optimizer)


accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
optim = OptimizerWithSchedule(accelerator, torch.optim.SGD(model.parameters(), lr=0.1))
model, optim = accelerator.prepare(model, optim)
"""

_C_VAL_TOGETHER = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = accelerator.prepare(model, optimizer)
"""

_C_VAL_AFTER = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
model = accelerator.prepare(model)
optimizer = accelerator.prepare(torch.optim.SGD(model.parameters(), lr=0.1))
"""

_C_VAL_REBUILT = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = accelerator.prepare(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = accelerator.prepare(optimizer)
"""

_C_VAL_MOVED_FIRST = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(4, 1)
model.to(accelerator.device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = accelerator.prepare(model)
optimizer = accelerator.prepare(optimizer)
"""

_C_VAL_BUILT_ON_DEVICE = """
from torch import nn, optim
from accelerate import Accelerator as Acc


def main():
    acc = Acc()
    net = nn.Linear(4, 1).to(acc.device)
    opt = optim.SGD(net.parameters(), lr=0.1)
    opt = acc.prepare(opt)
    net = acc.prepare(net)
"""

_C_VAL_NOACC = """
import torch

preparer = make_preparer()
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = preparer.prepare(optimizer)
model = preparer.prepare(model)
"""

# ``model = model.module`` then ``net = model``: an alias of a name to its own old value expanded
# without end (list 23, Open-Sora: the run never finished).
_C_VAL_OWN_ATTRIBUTE = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = build_model()
model = model.module
net = model
model = accelerator.prepare(model.module)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
optimizer = accelerator.prepare(optimizer)
"""


def split_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _A_INV,
            _A_INV_29,
            note="a-method-builds-the-optimizer-over-an-attribute-init-was-handed-then-moves-it",
            findings=(Expected(13, 31, "the optimizer is built while `self.model`, handed in, may be on the CPU"),),
        ),
        invalid(
            _A_INV,
            _A_INV_SAGEMAKER,
            target="sagemaker",
            note="a-method-builds-the-optimizer-over-an-attribute-init-was-handed-then-moves-it-sagemaker",
            findings=(Expected(12, 31, "`self.model.to(self.device)` in `Trainer.train` moves the model later"),),
        ),
        invalid(
            _C_INV,
            note="accelerate-prepares-the-optimizer-alone-before-the-model",
            findings=(
                Expected(
                    8,
                    9,
                    "`accelerator.prepare` moves `model` to the XLA device, but the optimizer `optimizer`, built over "
                    "its parameters before (`torch.optim.SGD(model.parameters(), lr=0.1)`), is not prepared in this call",
                ),
            ),
        ),
        invalid(
            _C_INV,
            target="sagemaker",
            note="accelerate-prepares-the-optimizer-alone-before-the-model-sagemaker",
            findings=(Expected(8, 9, "Accelerate re-points only the optimizers prepared in the same call"),),
        ),
        invalid(
            _C_INV_UNPREPARED,
            note="accelerate-prepares-the-model-and-never-the-optimizer-built-before",
            findings=(Expected(7, 9, "the optimizer `optimizer`, built over its parameters before"),),
        ),
        invalid(
            _C_INV_WRAP,
            note="accelerate-prepares-the-model-with-a-module-holding-an-optimizer-it-prepared-alone",
            findings=(
                Expected(
                    15,
                    16,
                    "the optimizer `optim` (an instance of `OptimizerWithSchedule`, which prepares its optimizer on its "
                    "own)",
                ),
            ),
        ),
    )


def split_optimizer_valid() -> tuple[Valid, ...]:
    return (
        valid(_A_VAL_AFTER, _A_VAL_AFTER_29, note="a-method-builds-the-optimizer-after-moving-the-attribute"),
        valid(_A_VAL_INIT, _A_VAL_INIT_29, note="init-moved-what-it-was-handed-before-the-method-s-optimizer"),
        valid(_C_VAL_TOGETHER, note="accelerate-prepares-the-model-and-its-optimizer-in-one-call"),
        valid(
            _C_VAL_TOGETHER,
            target="sagemaker",
            note="accelerate-prepares-the-model-and-its-optimizer-in-one-call-sagemaker",
        ),
        valid(_C_VAL_AFTER, note="accelerate-optimizer-built-over-the-prepared-model"),
        valid(_C_VAL_REBUILT, note="accelerate-optimizer-built-again-after-the-model-is-prepared"),
        valid(_C_VAL_NOACC, note="prepare-of-a-receiver-that-is-no-accelerator"),
        valid(_C_VAL_MOVED_FIRST, note="accelerate-model-moved-to-its-device-before-the-optimizer"),
        valid(
            _C_VAL_MOVED_FIRST,
            target="sagemaker",
            note="accelerate-model-moved-to-its-device-before-the-optimizer-sagemaker",
        ),
        valid(_C_VAL_OWN_ATTRIBUTE, note="accelerate-model-rebound-to-its-own-attribute-then-aliased"),
        valid(
            _C_VAL_OWN_ATTRIBUTE,
            target="sagemaker",
            note="accelerate-model-rebound-to-its-own-attribute-then-aliased-sagemaker",
        ),
        valid(_C_VAL_BUILT_ON_DEVICE, note="accelerate-model-built-on-its-device-before-the-optimizer-aliased"),
        valid(
            _C_VAL_BUILT_ON_DEVICE,
            target="sagemaker",
            note="accelerate-model-built-on-its-device-before-the-optimizer-aliased-sagemaker",
        ),
    )
