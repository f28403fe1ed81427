"""Rewrite: one module per concern, all run in a single traversal (see base.py)."""

from __future__ import annotations

from codemods import apis
from codemods.rewrite.base import Concern, Context
from codemods.rewrite.checkpoint import CheckpointRewrite
from codemods.rewrite.device import DeviceRewrite
from codemods.rewrite.entry import EntryRewrite
from codemods.rewrite.huggingface import HuggingFaceRewrite
from codemods.rewrite.imports import ImportsRewrite
from codemods.rewrite.loops import LoopRewrite
from codemods.rewrite.optimizer import OptimizerRewrite
from codemods.rewrite.recompilation import RecompilationRewrite
from codemods.rewrite.reported_apis import CudaRuntimeRewrite, ReportedApis
from codemods.rewrite.step_closures import StepClosureRewrite
from codemods.rewrite.xla_names import XlaNamesRewrite


def concerns_for(ctx: Context) -> list[Concern]:
    """The concerns in the order they see each node; imports last, as they edit the
    module once everything else has asked for what it needs."""
    return [
        DeviceRewrite(ctx),
        OptimizerRewrite(ctx),
        LoopRewrite(ctx),
        CheckpointRewrite(ctx),
        CudaRuntimeRewrite(ctx),
        ReportedApis(ctx, apis.AMP),
        ReportedApis(ctx, apis.DISTRIBUTED),
        XlaNamesRewrite(ctx),
        StepClosureRewrite(ctx),
        RecompilationRewrite(ctx),
        HuggingFaceRewrite(ctx),
        EntryRewrite(ctx),
        ImportsRewrite(ctx),
    ]
