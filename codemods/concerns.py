"""Rewrite: one module per concern, all run in a single traversal (engine/rewriter.py):
``rewrite`` is the pipeline's rewrite step."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.amp import rules as amp_rules
from codemods.checkpoint import rules as checkpoint_rules
from codemods.compile import rules as compile_rules
from codemods.cuda_only import rules as cuda_only_rules
from codemods.device import rules as device_rules
from codemods.device.rules.xla005_no_device import NO_DEVICE
from codemods.device.rules.xla116_batch_off_xla import BATCH_OFF_XLA
from codemods.device.rules.xla118_scattering_data_parallel import SCATTERING_DATA_PARALLEL
from codemods.distributed import rules as distributed_rules
from codemods.engine.rewriter import Concern, Context, PendingFinding, Rewriter
from codemods.engine.rule import Rule, RuleSelection
from codemods.engine.rule_hooks import RuleHooks
from codemods.fsdp import rules as fsdp_rules
from codemods.huggingface import rules as huggingface_rules
from codemods.imports import rules as imports_rules
from codemods.lazy import rules as lazy_rules
from codemods.lightning import rules as lightning_rules
from codemods.project import rules as project_rules
from codemods.release_names import rules as release_names_rules
from codemods.targets import Target
from codemods.training import rules as training_rules

if TYPE_CHECKING:
    from codemods.facts import Facts
    from codemods.launcher.facts import LauncherFacts


DEVICE_LESS = (
    "this script trains but picks no device: it runs on the CPU and is left unchanged (a barrier or an XLA "
    "optimizer step alone would not move it); to run it on XLA, move the model and its tensors with "
    "`.to(torch_xla.device())` and convert again"
)
# The same, for a model that a call of a package the tool does not follow builds.
LIBRARY_DEVICE_LESS = (
    "this script trains but picks no device: its model comes from `{call}(...)`, of {package}, a package the "
    "tool does not follow, which may place it itself (on the CPU or a GPU) but is never told of XLA; the script "
    "is left unchanged (a barrier or an XLA optimizer step alone would not move it); to run it on XLA, move the "
    "model and its tensors with `.to(torch_xla.device())` and convert again"
)


def rewrite(
    module: cst.Module,
    facts: Facts,
    target: Target,
    selection: RuleSelection,
    suppressed: Callable[[Rule, cst.CSTNode], bool],
    launcher: LauncherFacts | None = None,
) -> tuple[cst.Module, list[PendingFinding]]:
    """The rewritten module and the findings: every concern's rewrite in one traversal,
    reading ``facts`` (a launcher script's rewrites read ``launcher`` too, and visit every
    node).  A script that trains on no device is only reported: a barrier or an XLA
    optimizer step alone would leave a half port that still runs on the CPU."""
    ctx = Context(facts, target, selection, suppressed)
    if launcher is None and facts.training.device_less is not None:
        library = facts.training.device_less_library
        message = DEVICE_LESS if library is None else LIBRARY_DEVICE_LESS.format(call=library[0], package=library[1])
        ctx.report(NO_DEVICE, facts.training.device_less, ctx.target.advice(message))
        return module, ctx.findings
    to_visit = facts.nodes_to_visit if launcher is None else None
    return Rewriter(ctx, concerns_for(ctx, launcher), to_visit).transform(module), ctx.findings


def concerns_for(ctx: Context[Facts], launcher: LauncherFacts | None = None) -> list[Concern]:
    """The concerns in the order they see each node; imports last, as they edit the
    module once everything else has asked for what it needs.  A file that builds
    SageMaker estimators also gets the launcher checks; a training script under
    SageMaker model parallel (smdistributed) runs on CUDA GPUs and gets only those (but a
    module that imports it only under an `if` or a `try` and never calls ``smp.init()``:
    model parallel is one of its options; unless XLA is one of them too, SM108)."""
    launchers: list[Concern] = []
    if launcher:  # launcher scripts are few: their rewrites load only for them
        from codemods.launcher.rewrite import LauncherRewrite

        smp = launcher.smp_script
        if smp is not None and (not smp.optional or ctx.facts.imports.xla_optional):
            return [LauncherRewrite(ctx, launcher)]
        launchers.append(LauncherRewrite(ctx, launcher))
    if ctx.facts.distributed.hogwild is not None:
        # Hogwild training cannot run on XLA: reported, and nothing converted that would
        # pretend otherwise; a DataParallel wrapper still goes (XLA605), and what its scatter
        # moved is reported (XLA116, XLA118).
        return [RuleHooks(ctx, (BATCH_OFF_XLA, SCATTERING_DATA_PARALLEL)), RuleHooks(ctx, distributed_rules.RULES)]
    return [
        *launchers,
        RuleHooks(ctx, device_rules.RULES),
        RuleHooks(ctx, amp_rules.RULES),
        RuleHooks(ctx, training_rules.RULES),
        RuleHooks(ctx, checkpoint_rules.RULES),
        RuleHooks(ctx, cuda_only_rules.RULES),
        RuleHooks(ctx, distributed_rules.RULES),
        RuleHooks(ctx, fsdp_rules.RULES),
        RuleHooks(ctx, compile_rules.RULES),
        # A project's own XLA path (`if is_torch_tpu_available(): ... xm.xrt_world_size()`) is
        # left as ported, but a torch_xla name the target lacks there still crashes (XLA901, XLA902).
        RuleHooks(ctx, release_names_rules.RULES, under_xla_guard=True),
        RuleHooks(ctx, lazy_rules.RULES),
        RuleHooks(ctx, huggingface_rules.RULES),
        RuleHooks(ctx, lightning_rules.RULES),
        RuleHooks(ctx, project_rules.RULES),
        RuleHooks(ctx, imports_rules.RULES),
    ]
