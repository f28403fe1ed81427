"""Rewrite: one module per concern, all run in a single traversal (see base.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.rewrite.amp import AmpRewrite
from codemods.rewrite.base import Concern, Context
from codemods.rewrite.checkpoint import CheckpointRewrite
from codemods.rewrite.compile import CompileRewrite
from codemods.rewrite.cuda_only import CudaOnlyRewrite
from codemods.rewrite.device import DeviceRewrite
from codemods.rewrite.distributed import DistributedRewrite
from codemods.rewrite.entry import EntryRewrite
from codemods.rewrite.fsdp import FsdpRewrite
from codemods.rewrite.huggingface import HuggingFaceRewrite
from codemods.rewrite.imports import ImportsRewrite
from codemods.rewrite.lightning import LightningRewrite
from codemods.rewrite.loops import LoopRewrite
from codemods.rewrite.optimizer import OptimizerRewrite
from codemods.rewrite.recompilation import RecompilationRewrite
from codemods.rewrite.project import ProjectRewrite
from codemods.rewrite.reported_apis import CudaRuntimeRewrite, ReportedApis
from codemods.rewrite.step_closures import StepClosureRewrite
from codemods.rewrite.xla_names import XlaNamesRewrite

if TYPE_CHECKING:
    from codemods.analysis.launcher import LauncherFacts


def concerns_for(ctx: Context, launcher: LauncherFacts | None = None) -> list[Concern]:
    """The concerns in the order they see each node; imports last, as they edit the
    module once everything else has asked for what it needs.  A file that builds
    SageMaker estimators also gets the launcher checks; a training script under
    SageMaker model parallel (smdistributed) runs on CUDA GPUs and gets only those."""
    launchers: list[Concern] = []
    if launcher:  # launcher scripts are few: their rewrites load only for them
        from codemods.rewrite.launcher import LauncherRewrite

        if launcher.smp_script is not None:
            return [LauncherRewrite(ctx, launcher)]
        launchers.append(LauncherRewrite(ctx, launcher))
    if ctx.facts.distributed.hogwild is not None:
        # Hogwild training cannot run on XLA: reported, and nothing converted that would
        # pretend otherwise.
        return [DistributedRewrite(ctx)]
    return [
        *launchers,
        DeviceRewrite(ctx),
        AmpRewrite(ctx),
        OptimizerRewrite(ctx),
        LoopRewrite(ctx),
        CheckpointRewrite(ctx),
        CudaRuntimeRewrite(ctx),
        DistributedRewrite(ctx),
        FsdpRewrite(ctx),
        ReportedApis(ctx, apis.THIRD_PARTY, apis.third_party),
        CompileRewrite(ctx),
        CudaOnlyRewrite(ctx),
        XlaNamesRewrite(ctx),
        StepClosureRewrite(ctx),
        RecompilationRewrite(ctx),
        HuggingFaceRewrite(ctx),
        LightningRewrite(ctx),
        EntryRewrite(ctx),
        ProjectRewrite(ctx),
        ImportsRewrite(ctx),
    ]
