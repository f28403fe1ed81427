"""XLA203's cases for an instance of a class the tool cannot tell, looked up by its name
(``algorithm_class = get_algorithm_class(name)`` returning ``globals()[name]``): the classes
of the module it may be that build their optimizer over their own parameters in
``__init__`` (also by running their base's: ``class Mixup(ERM)``) are stranded by the move."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_IMPORTS = "import torch\nfrom torch import nn\n"
_XLA_IMPORTS = "import torch_xla\nimport torch_xla.core.xla_model as xm\n"

# A candidate's training step.
_UPDATE = """
    def update(self, x):
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        self.optimizer.step()
"""

# The candidate classes, then their lookup by name in the module's globals and the move of the
# instance after it is built.
_LOOKED_UP = """
{imports}
{classes}

def get_algorithm_class(name):
    return globals()[name]


algorithm_class = get_algorithm_class(args.algorithm)
algorithm = algorithm_class(1e-3)
algorithm.to("cuda")
for x in batches:
    algorithm.update(x.to("cuda"))
"""


def _looked_up(classes: str) -> str:
    """The program of ``_LOOKED_UP`` whose candidates are ``classes``."""
    return _LOOKED_UP.format(imports=_IMPORTS, classes=classes)


def _ported(program: str) -> str:
    """A program of ``_LOOKED_UP`` as the port writes it."""
    return substituted(
        program,
        (_IMPORTS, _IMPORTS + _XLA_IMPORTS),
        ('"cuda"', '"xla"'),
        ("self.optimizer.step()", "xm.optimizer_step(self.optimizer)"),
        ('    algorithm.update(x.to("xla"))\n', '    algorithm.update(x.to("xla"))\n    torch_xla.sync()\n'),
    )


# The candidates build their optimizer in ``__init__`` (ERM) or inherit that ``__init__`` (Mixup).
LOOKED_UP_AND_MOVED = _looked_up(f"""
class ERM(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)
{_UPDATE}

class Mixup(ERM):
    pass
""")


# The classes it may be build their optimizer lazily, after moving themselves, or take it
# from outside: the move strands nothing.
LOOKED_UP_NOTHING_STRANDED = _looked_up(f"""
class Lazy(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.lr = lr
        self.optimizer = None

    def update(self, x):
        if self.optimizer is None:
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        self.optimizer.step()


class MovedFirst(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.to("cuda")
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)
{_UPDATE}

class Handed(nn.Module):
    def __init__(self, net, optimizer):
        super().__init__()
        self.net = net
        self.optimizer = optimizer
{_UPDATE}""")


# Aliased imports, ``globals().get(name)``, ``super(Base, self).__init__()`` and a subclass
# whose ``__init__`` runs its base's.
LOOKED_UP_ALIASED = """
import torch.nn as tnn
from torch import optim as o


class Base(tnn.Module):
    def __init__(self):
        super(Base, self).__init__()
        self.net = tnn.Linear(4, 2)
        self.opt = o.SGD(self.parameters(), lr=0.1)

    def learn(self, x):
        self.opt.zero_grad()
        self.net(x).sum().backward()
        self.opt.step()


class Child(Base):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", None)


def algorithm(name):
    return globals().get(name)


cls = algorithm(config["name"])
model = cls()
model.cuda()
for x in batches:
    model.learn(x.cuda())
"""


LOOKED_UP_ALIASED_PORTED = substituted(
    LOOKED_UP_ALIASED,
    ("from torch import optim as o\n", "from torch import optim as o\n" + _XLA_IMPORTS),
    ("self.opt.step()", "xm.optimizer_step(self.opt)"),
    (".cuda()", ".to(torch_xla.device())"),
    (
        "    model.learn(x.to(torch_xla.device()))\n",
        "    model.learn(x.to(torch_xla.device()))\n    torch_xla.sync()\n",
    ),
)


def looked_up_valid() -> tuple[Valid, ...]:
    return (
        valid(
            LOOKED_UP_NOTHING_STRANDED,
            _ported(LOOKED_UP_NOTHING_STRANDED),
            note="looked-up-classes-build-lazily-after-moving-or-take-the-optimizer",
        ),
    )


def looked_up_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            LOOKED_UP_AND_MOVED,
            _ported(LOOKED_UP_AND_MOVED),
            note="looked-up-by-name-in-globals-moved-after-init-built-the-optimizer",
            findings=(
                Expected(
                    29,
                    1,
                    '`algorithm.to("cuda")` moves `algorithm` to the XLA device after the `__init__` of `ERM` or '
                    "`Mixup`, classes that `algorithm_class` may be (looked up by name), built `self.optimizer`",
                ),
            ),
        ),
        invalid(
            LOOKED_UP_ALIASED,
            LOOKED_UP_ALIASED_PORTED,
            alias=True,
            note="looked-up-by-name-aliased-base-init-run-by-the-subclass",
            findings=(
                Expected(
                    31,
                    1,
                    "`model.cuda()` moves `model` to the XLA device after the `__init__` of `Base` or `Child`, "
                    "classes that `cls` may be (looked up by name), built `self.opt`",
                ),
            ),
        ),
    )
