"""XLA203's cases of a device the port folds to XLA (an availability chain that also names MPS or
the CPU) and of a name bound to a new model before the move (the first model's optimizer gets no
finding): the first run's output is final (a second run found the fold's plain XLA device)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# autovc's solver_encoder.py: the device is picked on a flag that holds an availability check
# (XLA104 switches it on), and the optimizer is built before the move in the same method.
FLAG_PICKED_DEVICE = """
import torch
from torch import nn


class Solver:
    def __init__(self, loader):
        self.loader = loader
        self.use_cuda = torch.cuda.is_available()
        self.device = torch.device("cuda:0" if self.use_cuda else "cpu")
        self.build_model()

    def build_model(self):
        self.G = nn.Linear(4, 4)
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-4)
        self.G.to(self.device)

    def train(self):
        for x in self.loader:
            self.opt.zero_grad()
            self.G(x.to(self.device)).sum().backward()
            self.opt.step()
"""


def _flag_picked_ported(target: str) -> str:
    device, barrier, imports = (
        ("torch_xla.device()", "torch_xla.sync()", "import torch_xla\nimport torch_xla.core.xla_model as xm\n")
        if target == "2.9"
        else ("xm.xla_device()", "xm.mark_step()", "import torch_xla.core.xla_model as xm\n")
    )
    return substituted(
        FLAG_PICKED_DEVICE,
        ("from torch import nn\n", f"from torch import nn\n{imports}"),
        ("self.use_cuda = torch.cuda.is_available()", "self.use_cuda = True"),
        ('"cuda:0" if', '"xla" if'),
        ("self.G.parameters()", f"self.G.to({device}).parameters()"),
        ("            self.opt.step()\n", f"            xm.optimizer_step(self.opt)\n            {barrier}\n"),
    )


# The flag also guards code that fails without CUDA: XLA104 leaves it, the device stays the CPU.
_BLOCKED_FLAG = (
    (
        "        self.build_model()\n",
        "        self.Tensor = torch.cuda.FloatTensor if self.use_cuda else torch.FloatTensor\n        self.build_model()\n",
    ),
)


def folded_device_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch

            device = torch.device("cuda")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model = torch.nn.Linear(3, 1)
            model.to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model = torch.nn.Linear(3, 1)
            model.to(device)
            """,
            note="the-name-is-built-anew-before-the-move",
        ),
    )


def folded_device_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                device = torch.device("cuda")
            elif torch.backends.mps.is_available():
                device = torch.device("mps")
            else:
                device = torch.device("cpu")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=0.1)
            model.to(device)
            """,
            note="a-device-picked-by-an-availability-chain-the-port-folds",
            findings=(Expected(6, 29, "the optimizer is built while `model` is on the CPU and `model.to(device)`"),),
        ),
        invalid(
            """
            from torch import cuda, nn, optim
            import torch

            if cuda.is_available():
                dev = torch.device("cuda")
            else:
                dev = torch.device("cpu")
            net = nn.Linear(3, 1)
            opt = optim.Adam(net.parameters())
            net = net.to(dev)
            """,
            """
            from torch import nn, optim
            import torch
            import torch_xla.core.xla_model as xm

            dev = xm.xla_device()
            net = nn.Linear(3, 1)
            opt = optim.Adam(net.to(xm.xla_device()).parameters())
            net = net.to(dev)
            """,
            target="sagemaker",
            alias=True,
            note="a-device-picked-by-an-availability-check-the-port-folds-aliased",
            findings=(Expected(7, 18, "the optimizer is built while `net` is on the CPU and `net.to(dev)` moves"),),
        ),
        *(
            invalid(
                FLAG_PICKED_DEVICE,
                _flag_picked_ported(target),
                target=target,
                note=f"a-device-picked-on-a-flag-the-port-switches-on-{target}",
                findings=(
                    Expected(
                        16 if target == "2.9" else 15,
                        37,
                        "the optimizer is built while `self.G` is on the CPU and `self.G.to(self.device)` in "
                        "`Solver.build_model` moves the model later; moving a module to XLA replaces its parameters, "
                        "so move it first",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            substituted(FLAG_PICKED_DEVICE, *_BLOCKED_FLAG),
            substituted(
                FLAG_PICKED_DEVICE,
                *_BLOCKED_FLAG,
                (
                    "from torch import nn\n",
                    "from torch import nn\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n",
                ),
                ('"cuda:0" if', '"xla" if'),
                (
                    "            self.opt.step()\n",
                    "            xm.optimizer_step(self.opt)\n            torch_xla.sync()\n",
                ),
            ),
            note="a-device-picked-on-a-flag-that-also-guards-cuda-only-code",
            findings=(
                Expected(
                    17,
                    37,
                    "`self.G.to(self.device)` in `Solver.build_model` moves the model later to a device that may be "
                    "the CPU",
                ),
            ),
        ),
    )
