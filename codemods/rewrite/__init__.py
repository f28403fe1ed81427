"""Rewrite: one module per concern, all run in a single traversal (see base.py)."""

from __future__ import annotations

from codemods import apis
from codemods.rewrite.amp import AmpRewrite
from codemods.rewrite.base import Concern, Context
from codemods.rewrite.checkpoint import CheckpointRewrite
from codemods.rewrite.device import DeviceRewrite
from codemods.rewrite.imports import ImportsRewrite
from codemods.rewrite.loops import LoopRewrite
from codemods.rewrite.optimizer import OptimizerRewrite
from codemods.rewrite.project import ProjectRewrite
from codemods.rewrite.reported_apis import CudaRuntimeRewrite, ReportedApis
from codemods.rewrite.xla_names import XlaNamesRewrite


def concerns_for(ctx: Context) -> list[Concern]:
    """The concerns in the order they see each node; imports last, as they edit the
    module once everything else has asked for what it needs."""
    return [
        DeviceRewrite(ctx),
        AmpRewrite(ctx),
        OptimizerRewrite(ctx),
        LoopRewrite(ctx),
        CheckpointRewrite(ctx),
        CudaRuntimeRewrite(ctx),
        ReportedApis(ctx, apis.DISTRIBUTED),
        XlaNamesRewrite(ctx),
        ProjectRewrite(ctx),
        ImportsRewrite(ctx),
    ]
