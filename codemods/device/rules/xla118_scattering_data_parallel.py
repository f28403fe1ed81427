"""XLA118 scattering-data-parallel: a construction of a DataParallel subclass with its own
``scatter`` (the distributed facts' ``scattering_wraps``) is reported, unless every call of it
gets inputs on the device (``fed_scattering_wraps``: XLA605's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

SCATTERING_DATA_PARALLEL = Rule(
    code="XLA118",
    name="scattering-data-parallel",
    severity="error",
    summary="A DataParallel subclass of the project with its own `scatter` moves the batches there, which never "
    "runs on XLA",
    fixable=False,
    why="Obligation (3): each batch reaches the XLA device before the model's forward. Some projects wrap the model "
    "in their own `nn.DataParallel` subclass whose `scatter` copies each part of the batch to its GPU "
    "(`v.cuda(device_id)`, `async_copy_to(batch, gpu_id)` on CUDA streams), with a loader whose `collate_fn` keeps "
    "one part per GPU. Without CUDA devices, DataParallel keeps no devices and calls the wrapped module directly "
    "with the inputs as they come (torch 2.9, `DataParallel.forward`), so that `scatter` never runs on XLA: the "
    "module gets the whole collated batch, on the CPU and not split per device, and the forward fails or trains "
    "on the CPU. The tool does not rewrite it: what the scatter hands each device is the project's own choice. To "
    "resolve it, remove the wrapper (on XLA one process drives one device; more devices mean more processes), "
    "and move each batch to the XLA device in the form the module takes (`.to(device)` on each tensor, or "
    "`pl.MpDeviceLoader`) before the forward. The finding is at each construction of the class, in this file or "
    "in a file that imports it from a module of the project. A DataParallel subclass that keeps DataParallel's "
    "own `scatter` (overriding `gather` only) is a pass-through on XLA like DataParallel itself, and is not "
    "reported; nor is a subclass whose every call in the file gets inputs already on the device (moved by hand, "
    "or batches of a device loader or of an iterable handed the device, `OrderedIterator(tokens, 8, "
    "device=device)`): its scatter had nothing to move there, and XLA605 says (info) that it changes nothing.",
    examples=lambda: (
        invalid(
            """
            import torch.nn as nn

            class ScatterDP(nn.DataParallel):
                def scatter(self, inputs, kwargs, device_ids):
                    parts = [[{k: v.cuda(d) for k, v in part.items()}] for part, d in zip(inputs[0], device_ids)]
                    return parts, [{} for _ in device_ids]

            model = ScatterDP(Net(), device_ids=[0, 1])
            """,
            """
            import torch.nn as nn
            import torch_xla

            class ScatterDP(nn.DataParallel):
                def scatter(self, inputs, kwargs, device_ids):
                    parts = [[{k: v.to(torch_xla.device()) for k, v in part.items()}] for part, d in zip(inputs[0], device_ids)]
                    return parts, [{} for _ in device_ids]

            model = ScatterDP(Net(), device_ids=[0, 1])
            """,
            findings=(
                Expected(
                    9,
                    9,
                    "`ScatterDP` (a DataParallel subclass of this file) moves the batches in its own `scatter`, which never runs on XLA",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.nn as nn
            from data import OrderedIterator

            class ScatterDP(nn.DataParallel):
                def scatter(self, inputs, kwargs, device_ids):
                    return [[i] for i in inputs[0]], [{} for _ in inputs[0]]

            para_model = ScatterDP(net, dim=1)
            for data, target in OrderedIterator(tokens, 8, device=device):
                logits = para_model(data)
            """,
            note="inputs-on-the-device",
        ),
        valid(
            """
            import torch.nn as nn

            class GatherDP(nn.DataParallel):
                def gather(self, outputs, output_device):
                    return outputs

            model = GatherDP(Net(), device_ids=[0, 1])
            """,
            note="own-gather-only",
        ),
        valid(
            """
            class Splitter:
                def scatter(self, inputs, device_ids):
                    return inputs

            splitter = Splitter()
            """,
            note="not-data-parallel",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from torch import nn

            class DictDP(nn.parallel.DataParallel):
                def gather(self, outputs, output_device):
                    return outputs

            class UserScattered(DictDP):
                def scatter(self, inputs, kwargs, device_ids):
                    return [[i] for i in inputs[0]], [{} for _ in inputs[0]]

            if len(gpus) > 1:
                module = UserScattered(module, device_ids=gpus)
            """,
            note="through-a-base-of-the-file",
            findings=(Expected(12, 14, "`UserScattered` (a DataParallel subclass of this file) moves the batches"),),
        ),
        invalid(
            """
            import torch as th

            class ScatterDP(th.nn.DataParallel):
                def scatter(self, inputs, kwargs, device_ids):
                    return [[i] for i in inputs[0]], [{} for _ in inputs[0]]

            model = ScatterDP(net)
            """,
            alias=True,
            findings=(Expected(7, 9, "remove the wrapper (one process drives one XLA device)"),),
        ),
        invalid(
            """
            import torch.nn as nn

            class ScatterDP(nn.DataParallel):
                def scatter(self, inputs, kwargs, device_ids):
                    return [[i] for i in inputs[0]], [{} for _ in inputs[0]]

            model = ScatterDP(net)
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(7, 9, "moves the batches in its own `scatter`, which never runs on XLA"),),
        ),
    ),
)


@reports_facts(
    SCATTERING_DATA_PARALLEL,
    nodes=lambda facts: [
        call for call in facts.distributed.scattering_wraps if call not in facts.distributed.fed_scattering_wraps
    ],
)
def _report(ctx: Context[Facts], original: cst.Call) -> str:
    wrapper, module = ctx.facts.distributed.scattering_wraps[original]
    return (
        f"`{wrapper}` (a DataParallel subclass of {module or 'this file'}) moves the batches in its own `scatter`, "
        "which never runs on XLA: without CUDA devices DataParallel calls the wrapped module directly, with the "
        "inputs as the loader gives them (on the CPU, not split per device); remove the wrapper (one process "
        "drives one XLA device) and move each batch to the XLA device, in the form the module takes, before "
        "the forward"
    )
