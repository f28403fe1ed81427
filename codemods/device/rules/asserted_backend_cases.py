"""XLA114's cases for an assertion on the process group's backend read at run time
(detectron2's ``comm.py``): the port starts the group with "xla" (XLA601), so
``dist.get_backend()`` returns it, and the assertion gains it."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# The backend read at run time and asserted, in a module that starts no group itself; the
# branch that asks for "nccl" to build a gloo side group stays (on XLA the world group serves).
ASSERTED_BACKEND = """
import pickle

import torch
import torch.distributed as dist


def _serialize_to_tensor(data, group):
    backend = dist.get_backend(group)
    assert backend in ["gloo", "nccl"]
    device = torch.device("cpu" if backend == "gloo" else "cuda")
    return torch.ByteTensor(list(pickle.dumps(data))).to(device)


def _gloo_group():
    if dist.get_backend() == "nccl":
        return dist.new_group(backend="gloo")
    return dist.group.WORLD
"""

ASSERTED_BACKEND_PORTED = substituted(
    ASSERTED_BACKEND,
    (
        "import torch.distributed as dist\n",
        'import torch.distributed as dist\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n',
    ),
    ('["gloo", "nccl"]', '["gloo", "nccl", "xla"]'),
    ('else "cuda")', 'else "xla")'),
)

# Through aliases: the function imported under another name, torch's constants, the literal first.
ASSERTED_ALIASED = """
from torch.distributed import Backend
from torch.distributed import get_backend as backend_of


def check(group=None):
    assert backend_of(group) in (Backend.GLOO, Backend.NCCL), "unsupported backend"
    assert "nccl" == backend_of(group)
"""

# A tuple of the backend asked inline, and "nccl" asked alone.
ASSERTED_INLINE = """
import torch.distributed as dist


def check():
    assert dist.get_backend() in ("gloo", "nccl")
    assert dist.get_backend() == "nccl", "NCCL only"
"""

# Nothing the port's group fails: choices without the CUDA backend, a backend that is not read
# from the group (a parameter), a name bound to something else too, an assertion that "nccl" is not used.
NOT_ASSERTED = """
import torch.distributed as dist


def check(group, backend):
    assert dist.get_backend(group) in ["gloo", "mpi"]
    assert backend in ["gloo", "nccl"]
    assert dist.get_backend(group) != "nccl"
    kind = dist.get_backend(group)
    kind = "nccl"
    assert kind in ["gloo", "nccl"]
"""

# Already ported (a second run changes nothing).
ALREADY_XLA = substituted(ASSERTED_INLINE, ('"nccl")', '"nccl", "xla")'), ('== "nccl"', '== "xla"'))


def asserted_backend_valid() -> tuple[Valid, ...]:
    return (
        valid(NOT_ASSERTED, note="assertions the xla group passes or the port does not decide"),
        valid(ALREADY_XLA, note="backend assertions already listing xla"),
        valid(ALREADY_XLA, target="sagemaker", note="backend assertions already listing xla (sagemaker)"),
    )


def asserted_backend_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            ASSERTED_BACKEND,
            ASSERTED_BACKEND_PORTED,
            note="a backend read at run time asserted among gloo and nccl",
            findings=(
                Expected(
                    10,
                    23,
                    '`backend in ["gloo", "nccl"]` would fail: the process group\'s backend is \'xla\' after the '
                    'port (XLA601) -> ["gloo", "nccl", "xla"]',
                ),
            ),
        ),
        invalid(
            ASSERTED_BACKEND,
            ASSERTED_BACKEND_PORTED,
            target="sagemaker",
            note="a backend read at run time asserted among gloo and nccl (sagemaker)",
            findings=(Expected(10, 23, '`backend in ["gloo", "nccl"]` would fail'),),
        ),
        invalid(
            ASSERTED_INLINE,
            ALREADY_XLA,
            note="the backend asked inline, in a tuple and alone",
            findings=(
                Expected(5, 35, '-> ("gloo", "nccl", "xla")'),
                Expected(6, 34, "`dist.get_backend() == \"nccl\"` would fail: the process group's backend is 'xla'"),
            ),
        ),
        invalid(
            ASSERTED_ALIASED,
            substituted(
                ASSERTED_ALIASED,
                ("Backend.NCCL)", 'Backend.NCCL, "xla")'),
                ('"nccl" == backend_of', '"xla" == backend_of'),
            ),
            alias=True,
            note="the backend asked through aliases and torch's constants",
            findings=(
                Expected(6, 34, '-> (Backend.GLOO, Backend.NCCL, "xla")'),
                Expected(7, 12, '`"nccl" == backend_of(group)` would fail'),
            ),
        ),
    )
