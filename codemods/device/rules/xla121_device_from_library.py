"""XLA121 device-from-library."""

from __future__ import annotations

from codemods.device.rules.broken_proofs import broken_proof, reports_broken_proofs, stepped_model
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

# A stepped model that mmengine's registry builds and nothing moves, while the batches move; and its port.
_NEVER_MOVED = """
import torch
from mmengine.registry import MODELS

device = torch.device("cuda")
model = MODELS.build(cfg.model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in loader:
    optimizer.zero_grad()
    model(x.to(device)).sum().backward()
    optimizer.step()
"""
_NEVER_MOVED_PORTED = """
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from mmengine.registry import MODELS

device = torch_xla.device()
model = MODELS.build(cfg.model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in pl.MpDeviceLoader(loader, device):
    optimizer.zero_grad()
    model(x.to(device)).sum().backward()
    xm.optimizer_step(optimizer)
"""
# The same build handed the device: the library places the model there.
_HANDED = ("MODELS.build(cfg.model)", "MODELS.build(cfg.model, device=device)")

DEVICE_FROM_LIBRARY = Rule(
    code="XLA121",
    name="device-from-library",
    severity="error",
    summary="The device of the model the optimizer steps comes from a package the tool does not follow (a library's "
    "device helper, an object it built), or that package builds the model and nothing moves it",
    fixable=False,
    why="Obligation (1), proven or reported: the tool follows a device value through the file, the project's "
    "modules and the packages it knows (torch, torch_xla, Transformers, Accelerate, Lightning, and the library "
    "helpers of its tables, XLA113). A device that comes from any other package (`device = get_device()` from "
    "`mmengine.device`, `runner.device` of an object a library built, a helper's result handed to the training "
    "function, `main(get_device())`) is not proven: libraries pick CUDA when `torch.cuda.is_available()` and "
    "else the CPU, so on an XLA host the model most often trains on the CPU, and nothing in the converted "
    "script says so. Likewise a model that such a package builds (`model = build_model(cfg)` from a library) "
    "while nothing in the file moves it, although the file moves its batches: on CUDA the library placed it. "
    "The finding is at the library's call (or the name read from it) and names the package. To resolve it, "
    "use `torch_xla.device()` there (or hand the library that device, when it takes one), or move the model "
    "with `.to(torch_xla.device())` after it is built; where the library does return the XLA device, say so "
    "with `# xla-codemod: ignore[XLA121]` on that line.",
    examples=lambda: (
        invalid(
            """
            import torch
            from mmengine.device import get_device

            device = get_device()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(Expected(4, 10, "`get_device()` (mmengine, a package the tool does not follow)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            model = torch.nn.Linear(4, 2).to(accelerator.device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-device-of-a-package-the-tool-follows",
        ),
        valid(
            substituted(_NEVER_MOVED, _HANDED),
            substituted(_NEVER_MOVED_PORTED, _HANDED),
            note="a-library-model-handed-the-device",
        ),
        valid(
            """
            import torch
            from mmengine.device import get_device

            device = get_device()
            tensor = torch.zeros(2).to(device)
            """,
            note="a-library-device-that-no-stepped-model-takes",
        ),
        valid(
            """
            import torch
            from mmengine.registry import MODELS

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = MODELS.build(dict(type="Head"))
                    self.optimizer = torch.optim.SGD(self.head.parameters(), lr=0.1)

            net = Net().to("cuda")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from mmengine.registry import MODELS

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = MODELS.build(dict(type="Head"))
                    self.optimizer = torch.optim.SGD(self.head.parameters(), lr=0.1)

            net = Net().to("xla")
            """,
            note="a-library-submodule-moves-with-its-module",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import mmengine.device as mdev

            device = mdev.get_device()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            alias=True,
            findings=(Expected(4, 10, "`mdev.get_device()` (mmengine, a package the tool does not follow)"),),
            note="an-aliased-module",
        ),
        invalid(
            """
            import torch
            from colossalai.accelerator import get_accelerator

            accelerator = get_accelerator()
            model = torch.nn.Linear(4, 2).to(accelerator.get_current_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(
                Expected(5, 34, "`accelerator.get_current_device()` (colossalai, a package the tool does not follow)"),
            ),
            note="a-method-of-an-object-a-library-built",
        ),
        invalid(
            """
            import torch
            from colossalai.accelerator import get_accelerator

            model = torch.nn.Linear(4, 2).to(get_accelerator().get_current_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(
                Expected(
                    4, 34, "`get_accelerator().get_current_device()` (colossalai, a package the tool does not follow)"
                ),
            ),
            note="a-method-of-a-library-call",
        ),
        invalid(
            """
            import torch
            from mmengine.device import get_device

            def main(device):
                model = torch.nn.Linear(4, 2).to(device)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

            if __name__ == "__main__":
                main(get_device())
            """,
            findings=(Expected(9, 10, "`get_device()` (mmengine, a package the tool does not follow)"),),
            note="a-library-device-handed-to-the-training-function",
        ),
        invalid(
            _NEVER_MOVED,
            _NEVER_MOVED_PORTED,
            findings=(
                Expected(
                    8,
                    9,
                    "`MODELS.build(cfg.model)` (mmengine, a package the tool does not follow) and nothing in this file moves it",
                ),
            ),
            note="a-library-model-never-moved",
        ),
        invalid(
            """
            import torch
            from mmengine.device import get_device

            device = get_device()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            findings=(Expected(4, 10, "`get_device()` (mmengine, a package the tool does not follow)"),),
            note="sagemaker",
        ),
    ),
)

# What the device obligations (device/obligations.py) say where a proof breaks with this rule.


def from_library(code: str, package: str) -> str:
    """How the findings name code of a package the tool does not follow: the device it gives (read
    by device/values.py into ``Where.why``), the call that builds the model."""
    return f"`{code}` ({package}, a package the tool does not follow)"


def stepped_model_device_from_library(model: str, optimizer: str, device: str, why: str) -> str:
    """The stepped model moves to a device that a package the tool does not follow chooses."""
    return broken_proof(
        f"{stepped_model(model, optimizer)} moves to `{device}`",
        f"comes from {why}",
        "the tool cannot prove it is the XLA device (libraries pick CUDA or else the CPU); use torch_xla.device() "
        "there, or say the library returns it with `# xla-codemod: ignore[XLA121]`",
    )


def stepped_model_built_by_library(model: str, optimizer: str, call: str, package: str) -> str:
    """The stepped model is built by a package the tool does not follow and nothing moves it."""
    return broken_proof(
        f"{stepped_model(model, optimizer)} is built by {from_library(call, package)} and nothing in this file moves it",
        "it stays where that library puts it (on CUDA, the library placed it)",
        "move it with .to(torch_xla.device()) after it is built",
        which=False,
    )


# Where a proof of the obligations broke with this rule (device/obligations.py), as the module is left.
reports_broken_proofs(DEVICE_FROM_LIBRARY)
