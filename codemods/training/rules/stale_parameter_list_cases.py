"""XLA203's cases for parameter lists a module class collects in ``__init__`` (GCNII's
``self.params1 = list(self.convs.parameters())``): the caller moves the instance, then builds
the optimizer's groups over those lists, which still hold the CPU parameters."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# GCNII (train.py + model.py): parameter groups collected in ``__init__``, the model moved by the caller.
COLLECTED_IN_INIT = """
import torch
from torch import nn, optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])
        self.fcs = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 3)])
        self.params1 = list(self.convs.parameters())
        self.params2 = list(self.fcs.parameters())

    def forward(self, x):
        return self.fcs[1](self.fcs[0](self.convs[1](self.convs[0](x))))


def main(loader, dev):
    device = torch.device("cuda:" + str(dev))
    model = Net().to(device)
    optimizer = optim.Adam(
        [{"params": model.params1, "weight_decay": 0.01}, {"params": model.params2, "weight_decay": 0.0}], lr=0.01
    )
    for x in loader:
        optimizer.zero_grad()
        model(x.to(device)).sum().backward()
        optimizer.step()
"""

_PORTED = (
    ("from torch import nn, optim\n", "from torch import nn, optim\nIMPORTS"),
    ('torch.device("cuda:" + str(dev))', "DEVICE"),
    ("for x in loader:", "for x in pl.MpDeviceLoader(loader, device):"),
    ("optimizer.step()", "xm.optimizer_step(optimizer)"),
)


def _ported(program: str, target: str) -> str:
    imports, device = (
        ("import torch_xla\nimport torch_xla.core.xla_model as xm\n", "torch_xla.device()")
        if target == "2.9"
        else ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()")
    )
    return substituted(
        substituted(program, *_PORTED),
        ("IMPORTS", imports + "import torch_xla.distributed.parallel_loader as pl\n"),
        ("DEVICE", device),
    )


# Near variants that train: the attributes hold the submodules, or the caller collects the lists again.
_SUBMODULES = (
    ("self.params1 = list(self.convs.parameters())", "self.part = self.convs"),
    ("self.params2 = list(self.fcs.parameters())", "self.head = self.fcs"),
    ('"params": model.params1', '"params": model.part.parameters()'),
    ('"params": model.params2', '"params": model.head.parameters()'),
)
_COLLECTED_AGAIN = (
    (
        "    optimizer = optim.Adam(\n",
        "    model.params1 = list(model.convs.parameters())\n"
        "    model.params2 = list(model.fcs.parameters())\n"
        "    optimizer = optim.Adam(\n",
    ),
)


def stale_parameter_list_invalid() -> tuple[Invalid, ...]:
    message = (
        "the optimizer is built over `model.params1` and `model.params2`, which `Net.__init__` collected "
        "(`self.params1 = list(self.convs.parameters())`; `self.params2 = list(self.fcs.parameters())`) before "
        "`model` moved to the XLA device: moving a module to XLA replaces its Parameter objects, so they hold the "
        "stale CPU copies and training changes nothing; collect them again after the move (`model.params1 = "
        "list(model.convs.parameters())`), or build the optimizer's groups from the moved model "
        "(`model.convs.parameters()` and `model.fcs.parameters()`)"
    )
    return tuple(
        invalid(
            COLLECTED_IN_INIT,
            _ported(COLLECTED_IN_INIT, target),
            target=target,
            findings=(Expected(23 if target == "2.9" else 22, 17, message),),
            note=f"parameter-lists-collected-in-init-then-moved-{target}",
        )
        for target in ("2.9", "sagemaker")
    ) + (
        invalid(
            substituted(COLLECTED_IN_INIT, ("model = Net().to(device)", "model = Net()\n    model.cuda()")),
            substituted(
                _ported(COLLECTED_IN_INIT, "2.9"),
                ("model = Net().to(device)", "model = Net()\n    model.to(torch_xla.device())"),
            ),
            findings=(Expected(24, 17, "which `Net.__init__` collected (`self.params1 = list("),),
            note="parameter-lists-collected-in-init-then-moved-by-cuda",
        ),
    )


def stale_parameter_list_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(
            substituted(COLLECTED_IN_INIT, *changes),
            substituted(_ported(COLLECTED_IN_INIT, target), *changes),
            target=target,
            note=f"{name}-{target}",
        )
        for name, changes in (
            ("attributes-hold-submodules-read-after-the-move", _SUBMODULES),
            ("parameter-lists-collected-again-after-the-move", _COLLECTED_AGAIN),
        )
        for target in ("2.9", "sagemaker")
    ) + (
        valid(
            substituted(COLLECTED_IN_INIT, ("    model = Net().to(device)\n", "    model = Net()\n")),
            substituted(
                _ported(COLLECTED_IN_INIT, "2.9"),
                ("    model = Net().to(device)\n", "    model = Net()\n"),
            ),
            note="parameter-lists-of-a-model-never-moved",
        ),
    )
