"""SM108 own-xla-path: a module with SageMaker model parallel and XLA both as options of its own
(a copy of transformers' Trainer) is left as it is, and says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    from codemods.launcher.facts import SmpScript
    from codemods.launcher.rules.job import Findings

_TRAINER_COPY = """
import torch
from transformers.utils import is_sagemaker_mp_enabled, is_torch_tpu_available

if is_torch_tpu_available(check_device=False):
    import torch_xla.core.xla_model as xm

if is_sagemaker_mp_enabled():
    import smdistributed.modelparallel.torch as smp


def world_size():
    if is_torch_tpu_available():
        return xm.xrt_world_size()
    if is_sagemaker_mp_enabled():
        return smp.dp_size()
    return torch.cuda.device_count()
"""

OWN_XLA_PATH = Rule(
    code="SM108",
    name="own-xla-path",
    severity="info",
    summary="A module with SageMaker model parallel and XLA as options of its own (a copy of a framework's Trainer) "
    "is left as it is",
    fixable=False,
    instead="Nothing to change for the port: the module's own XLA path runs on an XLA host. Where it uses torch_xla "
    "names of another release than the target's (`xm.xrt_world_size()` on torch_xla 2.9), use the target's "
    "(`torch_xla.runtime.world_size()`), or the framework's release that supports the target.",
    why="A module that imports smdistributed model parallel only under an `if` or a `try`, never calls `smp.init()`, "
    "and imports torch_xla under a check of its own (`if is_torch_tpu_available(): import "
    "torch_xla.core.xla_model as xm`: a copy of transformers' Trainer) chooses its backend itself: on an XLA host "
    "its own XLA path runs (the device, the device loader, `xm.optimizer_step`), its model-parallel path only where "
    "the job enables SageMaker model parallel, which a job on XLA devices does not. The tool leaves it as it is, as "
    "it leaves any module whose XLA path is its own, and says so here, not with an error per CUDA path it keeps. "
    "Its XLA path is written for the torch_xla of its time: check its names against the target's (`xm.xrt_world_size()` "
    "and `xm.get_ordinal()` are torch_xla 1.13's, gone in 2.9: `torch_xla.runtime.world_size()` and "
    "`global_ordinal()`), or use the framework's release that the target supports. A module with model parallel as "
    "an option and no XLA path of its own is converted as any other (SM107's page).",
    examples=lambda: (
        invalid(
            _TRAINER_COPY,
            filename="trainer.py",
            findings=(Expected(8, 5, "model parallel and XLA are options of this module's own"),),
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th

            try:
                import torch_xla.core.xla_model as xla_model
            except ImportError:
                xla_model = None
            try:
                from smdistributed.modelparallel import torch as smp_torch
            except ImportError:
                smp_torch = None


            def rank():
                return xla_model.get_ordinal() if xla_model is not None else 0
            """,
            filename="trainer.py",
            alias=True,
            findings=(Expected(8, 5, "model parallel and XLA are options of this module's own"),),
        ),
    ),
    valid=lambda: (
        valid(
            _TRAINER_COPY.replace(
                "if is_torch_tpu_available(check_device=False):\n    import torch_xla.core.xla_model as xm\n", ""
            ).replace("        return xm.xrt_world_size()\n", "        return 1\n"),
            filename="trainer.py",
            note="model parallel as an option, no XLA path of its own: converted as any other module",
        ),
        valid(
            _TRAINER_COPY.replace(
                "    import smdistributed.modelparallel.torch as smp\n",
                "    import smdistributed.modelparallel.torch as smp\n    smp.init()\n",
            ),
            filename="trainer.py",
            note="a module that calls smp.init() is a model-parallel script: SM107's",
        ),
    ),
)


def check_own_xla_path(findings: Findings, script: SmpScript, xla_optional: bool) -> None:
    """A module with model parallel as an option (``script.optional``) that imports torch_xla
    under a check of its own: left as it is, said at the model-parallel import."""
    if not script.optional or not xla_optional:
        return
    findings.report(
        OWN_XLA_PATH,
        script.import_statement,
        "model parallel and XLA are options of this module's own (it imports smdistributed model parallel and "
        "torch_xla each under a check: a copy of a framework's Trainer): it is left as it is; on an XLA host its own "
        "XLA path runs: check that its torch_xla names are the target's",
    )
