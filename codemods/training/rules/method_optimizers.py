"""XLA203's cases for a module class whose ``__init__`` takes its optimizer from a method of
a module it holds, which builds it over that module's own parameters (simple-faster-rcnn's
``self.optimizer = self.faster_rcnn.get_optimizer()``), moved by the caller afterwards."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A trainer module whose ``__init__`` takes its optimizer from a method of the module it
# holds (simple-faster-rcnn's ``self.optimizer = self.faster_rcnn.get_optimizer()``), moved
# by the caller afterwards.
OPTIMIZER_FROM_A_CHILD_METHOD = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def get_optimizer(self):
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        return self.optimizer


class Trainer(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.optimizer = self.net.get_optimizer()

    def train_step(self, x):
        self.optimizer.zero_grad()
        self.net(x).pow(2).mean().backward()
        self.optimizer.step()


trainer = Trainer(Net()).cuda()
for x in batches:
    trainer.train_step(x.cuda())
"""


OPTIMIZER_FROM_A_CHILD_METHOD_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def get_optimizer(self):
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        return self.optimizer


class Trainer(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.optimizer = self.net.get_optimizer()

    def train_step(self, x):
        self.optimizer.zero_grad()
        self.net(x).pow(2).mean().backward()
        xm.optimizer_step(self.optimizer)


trainer = Trainer(Net()).to(torch_xla.device())
for x in batches:
    trainer.train_step(x.to(torch_xla.device()))
    torch_xla.sync()
"""


def method_optimizer_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch
            import torch.nn as nn


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)

                def get_optimizer(self):
                    return torch.optim.SGD(self.parameters(), lr=0.1)

                def optimizer_over(self, params):
                    return torch.optim.SGD(params, lr=0.1)


            class Trainer(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net
                    self.net.cuda()
                    self.optimizer = self.net.get_optimizer()


            class Other(nn.Module):
                def __init__(self, net, params):
                    super().__init__()
                    self.net = net
                    self.optimizer = self.net.optimizer_over(params)


            net = Net()
            trainer = Trainer(net).cuda()
            other = Other(net, [torch.zeros(2, requires_grad=True)]).cuda()
            kept = Trainer(Net())
            for x in batches:
                trainer.optimizer.zero_grad()
                trainer.net(x.cuda()).sum().backward()
                trainer.optimizer.step()
            """,
            """
            import torch
            import torch.nn as nn
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)

                def get_optimizer(self):
                    return torch.optim.SGD(self.parameters(), lr=0.1)

                def optimizer_over(self, params):
                    return torch.optim.SGD(params, lr=0.1)


            class Trainer(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net
                    self.net.to(torch_xla.device())
                    self.optimizer = self.net.get_optimizer()


            class Other(nn.Module):
                def __init__(self, net, params):
                    super().__init__()
                    self.net = net
                    self.optimizer = self.net.optimizer_over(params)


            net = Net()
            trainer = Trainer(net).to(torch_xla.device())
            other = Other(net, [torch.zeros(2, requires_grad=True)]).to(torch_xla.device())
            kept = Trainer(Net())
            for x in batches:
                trainer.optimizer.zero_grad()
                trainer.net(x.to(torch_xla.device())).sum().backward()
                xm.optimizer_step(trainer.optimizer)
                torch_xla.sync()
            """,
            note="optimizer-method-of-a-child-moved-first-or-over-other-parameters",
        ),
        # The model handed to the trainer was moved first: the optimizer holds the moved parameters,
        # which moving the trainer keeps (tests/project/test_executed_children_moved_first.py).
        valid(
            """
            import torch
            import torch.nn as nn


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)

                def get_optimizer(self):
                    return torch.optim.SGD(self.parameters(), lr=0.1)


            class Trainer(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net
                    self.optimizer = self.net.get_optimizer()


            class Direct(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)


            net = Net().cuda()
            trainer = Trainer(net).cuda()
            other = Net()
            other.cuda()
            direct = Direct(net=other).cuda()
            for x in batches:
                trainer.optimizer.zero_grad()
                trainer.net(x.cuda()).sum().backward()
                trainer.optimizer.step()
                direct.optimizer.step()
            """,
            """
                import torch
                import torch.nn as nn
                import torch_xla
                import torch_xla.core.xla_model as xm


                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 2)

                    def get_optimizer(self):
                        return torch.optim.SGD(self.parameters(), lr=0.1)


                class Trainer(nn.Module):
                    def __init__(self, net):
                        super().__init__()
                        self.net = net
                        self.optimizer = self.net.get_optimizer()


                class Direct(nn.Module):
                    def __init__(self, net):
                        super().__init__()
                        self.net = net
                        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)


                net = Net().to(torch_xla.device())
                trainer = Trainer(net).to(torch_xla.device())
                other = Net()
                other.to(torch_xla.device())
                direct = Direct(net=other).to(torch_xla.device())
                for x in batches:
                    trainer.optimizer.zero_grad()
                    trainer.net(x.to(torch_xla.device())).sum().backward()
                    xm.optimizer_step(trainer.optimizer)
                    xm.optimizer_step(direct.optimizer)
                    torch_xla.sync()
                """,
            note="optimizer-over-a-handed-model-moved-before-the-trainer",
        ),
    )


def method_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            OPTIMIZER_FROM_A_CHILD_METHOD,
            OPTIMIZER_FROM_A_CHILD_METHOD_PORTED,
            note="own-optimizer-built-by-a-method-of-a-held-module",
            findings=(
                Expected(
                    32, 11, "`Trainer(Net()).cuda()` moves `trainer` to the XLA device after `Trainer.__init__` built"
                ),
            ),
        ),
        invalid(
            """
            import torch.nn as tnn
            import torch.optim as o


            class Detector(tnn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = tnn.Linear(4, 2)

                def make_optimizer(self, lr):
                    groups = []
                    for key, value in dict(self.named_parameters()).items():
                        groups += [{"params": [value], "lr": lr * 2 if "bias" in key else lr}]
                    return o.SGD(groups, momentum=0.9)


            class DetTrainer(tnn.Module):
                def __init__(self, detector):
                    super().__init__()
                    self.detector = detector
                    self.opt = self.detector.make_optimizer(0.1)


            trainer = DetTrainer(Detector())
            trainer.to("cuda:0")
            for batch in batches:
                trainer.opt.zero_grad()
                trainer.detector.head(batch.to("cuda:0")).sum().backward()
                trainer.opt.step()
            """,
            """
            import torch.nn as tnn
            import torch.optim as o
            import torch_xla


            class Detector(tnn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = tnn.Linear(4, 2)

                def make_optimizer(self, lr):
                    groups = []
                    for key, value in dict(self.named_parameters()).items():
                        groups += [{"params": [value], "lr": lr * 2 if "bias" in key else lr}]
                    return o.SGD(groups, momentum=0.9)


            class DetTrainer(tnn.Module):
                def __init__(self, detector):
                    super().__init__()
                    self.detector = detector
                    self.opt = self.detector.make_optimizer(0.1)


            trainer = DetTrainer(Detector())
            trainer.to("xla")
            for batch in batches:
                trainer.opt.zero_grad()
                trainer.detector.head(batch.to("xla")).sum().backward()
                trainer.opt.step()
                torch_xla.sync()
            """,
            alias=True,
            note="own-optimizer-built-over-named-parameter-groups-by-a-method-through-aliases",
            findings=(Expected(26, 1, '`trainer.to("cuda:0")` moves `trainer` to the XLA device after `DetTrainer'),),
        ),
    )
