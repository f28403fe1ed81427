"""XLA102's and XLA103's cases of a class with its own device API (TorchDrug's ``Graph``, with its
own ``cuda`` and ``to``, held-out list 21): ``self.cuda(device)`` in ``Graph.to`` runs the class's
own ``cuda`` and stays (as ``self.to(...)`` it called ``Graph.to`` itself, without end); in the own
``to`` of a class with no ``cuda`` of its own it is reported, not rewritten; and a function's own
device value (``device = edge_list.device`` or ``"cpu"``) is no CUDA index, whatever other
functions hand ``.cuda()`` under the same name."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_XLA_IMPORT = {"2.9": "import torch_xla\n", "sagemaker": "import torch_xla.core.xla_model as xm\n"}
_XLA_DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}

GRAPH = """\
import torch


class Graph:
    def __init__(self, edge_list):
        self.edge_list = edge_list

    def cuda(self, *args, **kwargs):
        return type(self)(self.edge_list.cuda(*args, **kwargs))

    def to(self, device):
        if torch.device(device).type == "cpu":
            return type(self)(self.edge_list.cpu())
        return self.cuda(device)
"""

OWN_TO = """\
import torch


class Net(torch.nn.Module):
    def to(self, device):
        if torch.device(device).type == "cpu":
            return super().to(device)
        return self.cuda()

    def gpu(self):
        return self.cuda()
"""

EDGES = """\
import torch


def edges(edge_list=None):
    if isinstance(edge_list, torch.Tensor):
        device = edge_list.device
    else:
        device = "cpu"
    return torch.zeros(0, 2, dtype=torch.long, device=device)


def move(x, device):
    return x.cuda(device)


def build(n, device):
    return torch.ones(n, device=device)
"""

_UNPROVEN = (
    ": `self.edge_list` is what the caller hands `Graph(edge_list=...)`, and the run's files are not seen to hand "
    "it only instances of project classes with their own `cuda()` (moved as a module or tensor); if it is one "
    "(no `.to`: AttributeError), keep `.cuda()`"
)


def _ported(program: str, target: str, *moves: str, device: str | None = None) -> str:
    """``program`` with ``import torch`` followed by the target's import and each of ``moves``
    (``old``, written with ``{device}``) made with the target's device (or ``device``)."""
    spelled = device or _XLA_DEVICE[target]
    imported = [] if device else [("import torch\n", "import torch\n" + _XLA_IMPORT[target])]
    return substituted(program, *imported, *((old, new.format(device=spelled)) for old, new in _pairs(moves)))


def _pairs(moves: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(moves[i], moves[i + 1]) for i in range(0, len(moves), 2)]


def own_device_api_dot_cuda_invalid() -> tuple[Invalid, ...]:
    cases: list[Invalid] = []
    for target in ("2.9", "sagemaker"):
        device = _XLA_DEVICE[target]
        suffix = "" if target == "2.9" else "-sagemaker"
        cases.append(
            invalid(
                GRAPH,
                _ported(GRAPH, target, "self.edge_list.cuda(*args, **kwargs)", "self.edge_list.to({device})"),
                target=target,
                note=f"self-cuda-of-a-class-with-its-own-cuda-stays-in-its-own-to{suffix}",
                findings=(
                    Expected(10, 27, f"self.edge_list.cuda(*args, **kwargs) -> self.edge_list.to({device}){_UNPROVEN}"),
                ),
            )
        )
        cases.append(
            invalid(
                OWN_TO,
                _ported(
                    OWN_TO,
                    target,
                    "    def gpu(self):\n        return self.cuda()",
                    "    def gpu(self):\n        return self.to({device})",
                ),
                target=target,
                note=f"self-cuda-in-the-classs-own-to-is-reported-not-made-a-recursion{suffix}",
                findings=(
                    Expected(
                        9,
                        16,
                        "`self.cuda()` is in `Net.to`, the class's own `to`: as `self.to(<XLA device>)` it would call "
                        "this method itself (unbounded recursion), and as it is it moves to CUDA, which fails without "
                        "it; move to the XLA device here otherwise (`super().to(device)`, or the class's tensors one "
                        "by one)",
                    ),
                    Expected(12, 16, f"self.cuda() -> self.to({device})"),
                ),
            )
        )
    aliased = GRAPH.replace("import torch\n", "import torch\nimport torch_xla as tx\n")
    cases.append(
        invalid(
            aliased,
            _ported(
                aliased,
                "2.9",
                "self.edge_list.cuda(*args, **kwargs)",
                "self.edge_list.to({device})",
                device="tx.device()",
            ),
            note="self-cuda-of-a-class-with-its-own-cuda-stays-existing-torch_xla-alias",
            alias=True,
            findings=(
                Expected(10, 27, f"self.edge_list.cuda(*args, **kwargs) -> self.edge_list.to(tx.device()){_UNPROVEN}"),
            ),
        )
    )
    return tuple(cases)


def own_device_api_index_invalid() -> tuple[Invalid, ...]:
    cases: list[Invalid] = []
    message = (
        "`device` names a CUDA device, an index or a device (this file gives it to `.cuda()`, `set_device()` or "
        "`device_ids=`): use the XLA device"
    )
    for target in ("2.9", "sagemaker"):
        cases.append(
            invalid(
                EDGES,
                _ported(
                    EDGES,
                    target,
                    "x.cuda(device)",
                    "x.to({device})",
                    "torch.ones(n, device=device)",
                    "torch.ones(n, device={device})",
                ),
                target=target,
                note="a-functions-own-device-value-is-no-index-of-another-functions-cuda"
                + ("" if target == "2.9" else "-sagemaker"),
                findings=(Expected(18, 33, message),),
            )
        )
    aliased = EDGES.replace("import torch\n", "import torch\nimport torch_xla as tx\n")
    cases.append(
        invalid(
            aliased,
            _ported(
                aliased,
                "2.9",
                "x.cuda(device)",
                "x.to({device})",
                "torch.ones(n, device=device)",
                "torch.ones(n, device={device})",
                device="tx.device()",
            ),
            note="a-functions-own-device-value-is-no-index-existing-torch_xla-alias",
            alias=True,
            findings=(Expected(18, 33, message),),
        )
    )
    return tuple(cases)


INHERITED = """\
import torch


class Base:
    def __init__(self, x):
        self.x = x

    def cuda(self):
        return self


class Graph(Base):
    def to(self, device):
        if torch.device(device).type == "cpu":
            return self
        return self.cuda()

    def gpu(self):
        return self.cuda()
"""


def own_device_api_dot_cuda_valid() -> tuple[Valid, ...]:
    """``self.cuda()`` of a class whose base of the file has its own ``cuda``: that method runs, whatever
    the class's own ``to``; nothing to say."""
    return tuple(
        valid(INHERITED, target=target, note="self-cuda-of-a-base-with-its-own-cuda" + suffix)
        for target, suffix in (("2.9", ""), ("sagemaker", "-sagemaker"))
    )
