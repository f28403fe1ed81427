"""XLA005 no-device."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, run, substituted, valid

# A training script that builds its model from a class of another project module (model.py).
_PROJECT_TRAIN = """
import torch
from model import Net

model = Net()
optimizer = torch.optim.Adam(model.parameters())
for x, y in batches:
    optimizer.zero_grad()
    ((model(x) - y) ** 2).mean().backward()
    optimizer.step()
"""

# The same script importing that module whole, with a module of constants (``import args``), the
# class looked up by a name the constants hold (vgae_pytorch's train.py).
_WHOLE_MODULE_TRAIN = _PROJECT_TRAIN.replace("from model import Net", "import model, args").replace(
    "model = Net()", "model = getattr(model, args.arch)()"
)
_CONSTANTS = """
arch = "Net"
learning_rate = 0.01
"""
_PLAIN_NET = """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
"""

# A training script whose model a call of a package the tool does not follow builds.
_LIBRARY_TRAIN = """
import torch
import somelib

model = somelib.build_model(cfg)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in batches:
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
"""

# A model whose forward makes its state where its input is (``.to(x.device)``): a device that
# follows a tensor handed in names none (device/followed_devices.py).
_FOLLOWING_TRAIN = """
import torch

class Cell(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = torch.nn.Linear(n, n)

    def forward(self, x, h=None):
        if h is None:
            h = torch.zeros(x.shape[0], x.shape[1]).to(x.device)
        return self.lin(x) + h

model = Cell(4)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(10):
    x = torch.randn(8, 4)
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""

_NO_DEVICE = "this script trains but picks no device: it runs on the CPU"

NO_DEVICE = Rule(
    code="XLA005",
    name="no-device",
    severity="error",
    summary="A training script that names no device runs on the CPU: it is left unchanged",
    fixable=False,
    why="A script that never moves its model or data (no `.to()`, `.cuda()`, `device=`; pytorch/examples' "
    "time_sequence_prediction, an RL agent class that builds its optimizer over `self.parameters()`, a model "
    "class imported from a project module with no device code: `from model import GCNModelVAE`, or that "
    "module imported whole beside a module of constants, the class looked up by its name: `import model, args`, "
    "`getattr(model, args.model)(adj)`) trains on the CPU. A model built by a call of a package the tool does not follow, never handed a device "
    "(`timm.create_model(name)`, `somelib.build_model(cfg)`), counts too, and the finding names that call: it "
    "may place the model itself (on the CPU, or a GPU), but nothing tells it of XLA. Either way "
    "obligation (1) of every training step, the stepped model on the XLA device, is broken, so this is "
    "an error (the converted script would train on the wrong device). Porting only its loop (a barrier, "
    "`xm.optimizer_step`, step closures) would leave it on the CPU with XLA calls that do nothing; where its "
    "tensors should live is a choice the tool cannot make (numpy data, float64 models), so the file is left as "
    "it is and this one finding says so. To resolve it, move the model and its tensors to `torch_xla.device()`; "
    "a second conversion ports the rest. A device that follows a tensor handed to a function (`torch.zeros(n)."
    "to(x.device)`, `device=x.device` in a `forward`, or where `x` is read as a tensor: `x.shape[0]`; "
    "pytorch_geometric_temporal's recurrent cells) names none: it puts the new tensor where the input already is, "
    "so a script whose only device code is of that kind, in its own model or one of a project module, still "
    "picks no device. A setting (`args.device`, `self.device`) still names one.",
    examples=lambda: (
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for x, y in data:\n    model(x).sum().backward()\n    opt.step()\n",
            findings=(Expected(4, 1, "this script trains but picks no device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            def train(model, optimizer, batches):
                for x, y in batches:
                    optimizer.zero_grad()
                    model(x).sum().backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def train(model, optimizer, batches):
                for x, y in batches:
                    optimizer.zero_grad()
                    model(x).sum().backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="a-training-function-handed-its-model",
        ),
        run(
            (
                "train.py",
                _PROJECT_TRAIN,
            ),
            (
                "model.py",
                """
            import torch.nn as nn

            DEVICE = "cuda"

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                    self.to(DEVICE)
            """,
            ),
        ),
        # The library is told where to put the model, or the file names a device: not device-less.
        run(("train.py", substituted(_LIBRARY_TRAIN, ("(cfg)", "(cfg, device=somelib.get_device())")))),
        run(("train.py", substituted(_LIBRARY_TRAIN, ("(cfg)", "(cfg, gpu_ids=[0])")))),
        run(("train.py", substituted(_LIBRARY_TRAIN, ("model = ", 'cfg.device = "cuda"\nmodel = ')))),
        # The script moves the model and its batches: the forward's ``.to(x.device)`` follows them there.
        valid(
            substituted(
                _FOLLOWING_TRAIN,
                ("model = Cell(4)", 'model = Cell(4).to("cuda")'),
                ("x = torch.randn(8, 4)", 'x = torch.randn(8, 4).to("cuda")'),
            ),
            substituted(
                _FOLLOWING_TRAIN,
                ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
                ("model = Cell(4)", 'model = Cell(4).to("xla")'),
                ("x = torch.randn(8, 4)", 'x = torch.randn(8, 4).to("xla")'),
                (
                    "    optimizer.step()\n    optimizer.zero_grad()\n",
                    "    xm.optimizer_step(optimizer)\n    optimizer.zero_grad()\n    torch_xla.sync()\n",
                ),
            ),
            note="model-moved-its-forward-follows-the-input",
        ),
        # A project module that makes its state on a device a setting names (``cfg.device``, no
        # tensor: no shape) may place what the script builds.
        run(
            ("train.py", _PROJECT_TRAIN),
            (
                "model.py",
                """
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)

                def state(self, cfg):
                    return torch.zeros(2, device=cfg.device)
            """,
            ),
        ),
        # A module imported whole that names a device (a constant of it, or a module its package
        # re-exports the model class from) may place what the script builds.
        run(
            ("train.py", _WHOLE_MODULE_TRAIN), ("model.py", _PLAIN_NET), ("args.py", 'arch = "Net"\ndevice = "cuda"\n')
        ),
        run(
            ("train.py", _WHOLE_MODULE_TRAIN.replace("import model, args", "import nets as model, args")),
            ("nets/__init__.py", "from .net import Net\n"),
            ("nets/net.py", _PLAIN_NET.replace("nn.Linear(4, 2)", "nn.Linear(4, 2).cuda()")),
            ("args.py", _CONSTANTS),
        ),
        # Lightning Fabric places the model it sets up.
        run(
            (
                "train.py",
                substituted(
                    _LIBRARY_TRAIN,
                    ("import somelib\n", "import somelib\nimport lightning as L\n\nfabric = L.Fabric()\n"),
                    ("\nfor x", "\nmodel, optimizer = fabric.setup(model, optimizer)\nfor x"),
                    ("torch.nn.functional.mse_loss(model(x), y).backward()", "fabric.backward(model(x).sum())"),
                ),
            )
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in data:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
            """,
            note="left-unchanged",
            findings=(Expected(5, 1, "this script trains but picks no device"),),
        ),
        invalid(
            """
            from torch import nn, optim as O

            class Net(nn.Module):
                pass

            net = Net()
            opt = O.LBFGS(net.parameters())
            for step in range(5):
                def closure():
                    opt.zero_grad()
                    loss = net(x).sum()
                    loss.backward()
                    return loss
                opt.step(closure)
            """,
            note="lbfgs",
            alias=True,
            findings=(Expected(8, 1, "this script trains but picks no device"),),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn
            import torch.optim as optim

            def main():
                q, q_target = nn.Linear(3, 1), nn.Linear(3, 1)
                q_optimizer = optim.Adam(q.parameters(), lr=0.001)
                for n_epi in range(100):
                    loss = (q(torch.randn(8, 3)) - q_target(torch.randn(8, 3)).detach()).pow(2).mean()
                    q_optimizer.zero_grad()
                    loss.backward()
                    q_optimizer.step()
            """,
            note="models-built-in-one-tuple-assignment",
            findings=(Expected(8, 5, "this script trains but picks no device"),),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn
            import torch.optim as optim

            class PPO(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                    self.optimizer = optim.Adam(self.parameters(), lr=0.0005)

                def train_net(self, batches):
                    for s in batches:
                        loss = self.fc(s).sum()
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()

            def main():
                model = PPO()
                for n_epi in range(100):
                    model.train_net([torch.randn(8, 4)])
            """,
            note="agent-class-steps-its-own-parameters",
            findings=(Expected(12, 9, "this script trains but picks no device"),),
        ),
        invalid(
            """
            from torch import nn
            from torch.optim import Adam as A

            class Agent(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                    self.opt = A(self.parameters())

                def update(self, batches):
                    for s in batches:
                        self.opt.zero_grad()
                        self.fc(s).sum().backward()
                        self.opt.step()

            agent = Agent()
            for episode in range(10):
                agent.update(data)
            """,
            note="agent-class-aliases-sagemaker",
            target="sagemaker",
            alias=True,
            findings=(Expected(11, 9, "this script trains but picks no device"),),
        ),
        run(
            (
                "train.py",
                _PROJECT_TRAIN,
            ),
            (
                "model.py",
                """
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
            """,
            ),
        ),
        run(
            (
                "train.py",
                _PROJECT_TRAIN.replace("Net", "build_model"),
            ),
            (
                "model.py",
                """
            import torch.nn as nn

            def build_model():
                return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            """,
            ),
        ),
        # Project modules imported whole, none of which names a device: a module of constants, and
        # the model class looked up by its name in its module (or reached as its attribute, through a
        # package that re-exports it).
        run(("train.py", _WHOLE_MODULE_TRAIN), ("model.py", _PLAIN_NET), ("args.py", _CONSTANTS)),
        run(
            (
                "train.py",
                _PROJECT_TRAIN.replace("from model import Net", "import nets as zoo, args").replace(
                    "model = Net()", "model = zoo.Net()"
                ),
            ),
            ("nets/__init__.py", "from .net import Net\n"),
            ("nets/net.py", _PLAIN_NET),
            ("args.py", _CONSTANTS),
            alias=True,
        ),
        # A model built by a package the tool does not follow (a run: alone, ``import somelib``
        # may be a module of the project that it cannot read).
        run(("train.py", _LIBRARY_TRAIN)),
        run(
            (
                "train.py",
                substituted(
                    _LIBRARY_TRAIN,
                    ("import somelib", "from somelib import build_model as make"),
                    ("somelib.build_model", "make"),
                ),
            ),
            alias=True,
        ),
        run(
            (
                "train.py",
                substituted(
                    _LIBRARY_TRAIN,
                    ("import somelib", "import timm"),
                    ("somelib.build_model(cfg)", 'timm.create_model("resnet18")'),
                ),
            )
        ),
        invalid(_FOLLOWING_TRAIN, note="device-follows-the-input", findings=(Expected(15, 1, _NO_DEVICE),)),
        invalid(
            substituted(
                _FOLLOWING_TRAIN,
                (
                    "    def forward(self, x, h=None):\n",
                    "    def _hidden(self, X, H):\n        if H is None:\n            H = torch.zeros(X.shape[0], 4, device=X.device)\n        return H\n\n    def forward(self, x, h=None):\n",
                ),
            ),
            note="device-keyword-follows-a-helper-parameter",
            target="sagemaker",
            findings=(Expected(20, 1, _NO_DEVICE),),
        ),
        # The same model class in a project module the script imports.
        run(
            ("train.py", _PROJECT_TRAIN.replace("from model import Net", "from cell import Cell as Net")),
            ("cell.py", _FOLLOWING_TRAIN.split("model = Cell(4)")[0]),
        ),
        invalid(
            substituted(
                _LIBRARY_TRAIN,
                ("import somelib", "import torchvision"),
                ("somelib.build_model(cfg)", "torchvision.models.resnet18()"),
            ),
            note="torchvision-model",
            findings=(Expected(6, 1, "this script trains but picks no device: it runs on the CPU"),),
        ),
    ),
)
