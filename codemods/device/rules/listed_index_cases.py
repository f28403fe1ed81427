"""XLA103's cases of a move to an element of a list of CUDA indices (``net.to(gpu_ids[0])``,
device/listed_indices.py): ported where the file marks the list (an element handed to ``.cuda()``,
the list to ``device_ids=``) or the function asserts CUDA around the move; reported where only the
list's name says it holds GPU numbers; left alone for a list named for no GPU."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# pix2pix/CUT's init_net: `--gpu_ids 0` parsed to [0]; `.to(0)` is cuda:0.
INIT_NET = """
import torch


def init_net(net, gpu_ids=[]):
    if len(gpu_ids) > 0:
        assert(torch.cuda.is_available())
        net.to(gpu_ids[0])
    return net
"""

# The list marked by `device_ids=`, its element a tensor's device by keyword.
MARKED = """
import torch


class Model:
    def __init__(self, net, gpu_ids):
        self.gpu_ids = gpu_ids
        self.net = torch.nn.parallel.DistributedDataParallel(net, device_ids=gpu_ids)

    def noise(self, n):
        return torch.randn(n, device=self.gpu_ids[0])
"""

_DEVICES = {
    "2.9": ("import torch_xla\n", "torch_xla.device()"),
    "sagemaker": ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()"),
}
_ASSERTED = "an element of `gpu_ids`, a list of GPU numbers (the function asserts `torch.cuda.is_available()`"


def listed_index_invalid() -> tuple[Invalid, ...]:
    aliased = substituted(INIT_NET, ("import torch\n", "import torch as th\n"), ("(torch.cuda", "(th.cuda"))
    cases: list[Invalid] = []
    for target, (imports, device) in _DEVICES.items():
        for program, torch, header in ((INIT_NET, "torch", "import torch\n"), (aliased, "th", "import torch as th\n")):
            cases.append(
                invalid(
                    program,
                    substituted(
                        program,
                        (header, f"{header}{imports}"),
                        (f"        assert({torch}.cuda.is_available())\n", ""),
                        ("net.to(gpu_ids[0])", f"net.to({device})"),
                    ),
                    target=target,
                    alias=program is aliased,
                    note=f"an-element-of-gpu-ids-under-a-cuda-assert{'-alias' if program is aliased else ''}-{target}",
                    findings=(Expected(7, 16, f"gpu_ids[0] -> {device}: {_ASSERTED}"),),
                )
            )
        cases.append(
            invalid(
                MARKED,
                substituted(
                    MARKED,
                    ("import torch\n", f"import torch\n{imports}"),
                    (", device_ids=gpu_ids)", ")"),
                    ("device=self.gpu_ids[0]", f"device={device}"),
                ),
                target=target,
                note=f"an-element-of-a-list-handed-as-device-ids-{target}",
                findings=(
                    Expected(
                        11,
                        38,
                        f"self.gpu_ids[0] -> {device}: an element of `self.gpu_ids`, a list this file hands to "
                        "`.cuda()`, `set_device()` or `device_ids=`, is a CUDA index (cuda:N)",
                    ),
                ),
            )
        )
        cases.append(
            invalid(
                substituted(INIT_NET, ("        assert(torch.cuda.is_available())\n", "")),
                target=target,
                note=f"an-element-of-gpu-ids-that-nothing-marks-is-reported-{target}",
                findings=(
                    Expected(6, 9, "`gpu_ids[0]` looks like a CUDA device number, but nothing here says it is one"),
                ),
            )
        )
    return tuple(cases)


def listed_index_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch

            def place(net, devices):
                assert torch.cuda.is_available()
                return net.to(devices[0])
            """,
            """
            import torch

            def place(net, devices):
                return net.to(devices[0])
            """,
            note="an-element-of-a-list-named-for-no-gpu",
        ),
    )
