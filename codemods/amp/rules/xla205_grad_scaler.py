"""XLA205 grad-scaler: CUDA gradient scalers become the target's XLA scaler (2.9:
``torch.amp.GradScaler("xla")``; sagemaker: torch_xla 1.13's ``torch_xla.amp.GradScaler``); torch's
FSDP scaler gets the XLA device (2.9) or is reported (torch_xla 1.13 has none).  A warning, not an
error: the CUDA scaler stays enabled where torch_xla is importable and runs on XLA tensors.  An XLA scaler in
the other release's spelling takes this one's (XLA901).  The hook runs on the scalers the amp
facts name, after XLA208's (which says whether the scaler is needed at all)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.release_names.rules import XLA_RELEASE_NAMES

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

GRAD_SCALER = Rule(
    code="XLA205",
    name="grad-scaler",
    severity="warning",
    summary="The CUDA gradient scaler becomes the target's (`torch.amp.GradScaler('xla')`; sagemaker: `torch_xla.amp.GradScaler()`)",
    fixable=True,
    why="A CUDA gradient scaler (`torch.cuda.amp.GradScaler()`, `torch.amp.GradScaler('cuda')`) works on XLA "
    "too: torch disables it only when neither CUDA nor torch_xla is importable (`amp_definitely_not_available()`, "
    "torch/cuda/amp/common.py, torch 1.13 and 2.9), and it creates its scale on the loss's device, so it scales, "
    "unscales, skips the step on inf/NaN and updates on XLA tensors (checked on torch_xla 2.9 with SGD and "
    "syncfree AdamW against an eager CPU run: the same weights and scale; torch 1.13's scaler asserts a CUDA "
    "or XLA tensor). The port names the device it runs on. On the sagemaker target torch_xla 1.13's "
    "`torch_xla.amp.GradScaler` (a subclass of CUDA's) is also faster: it runs the pending graph before "
    "reading found_inf on the host, and hands found_inf to the sync-free optimizers (XLA206) without a host "
    "read. Hence a warning: the original runs, only slower. torch's FSDP scaler (`ShardedGradScaler`, "
    "default device 'cuda') also runs on XLA tensors on torch_xla 2.9 (checked at world size 1 over the xla "
    "process group, with an inf step); torch_xla 1.13 has none, and the torch FSDP it goes with is XLA611's "
    "error on both targets.",
    examples=lambda: (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            'scaler = torch.amp.GradScaler("xla", enabled=use_amp)\n',
            findings=(Expected(3, 10, 'torch.cuda.amp.GradScaler -> torch.amp.GradScaler("xla", enabled=use_amp)'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler(init_scale=2.**10, enabled=use_amp)
            other = torch.amp.GradScaler("cuda")
            third = torch.amp.GradScaler(device="cuda", growth_interval=100)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = torch.amp.GradScaler("xla", init_scale=2.**10, enabled=use_amp)
            other = torch.amp.GradScaler("xla")
            third = torch.amp.GradScaler("xla", growth_interval=100)
            """,
            findings=(
                Expected(4, 10, 'torch.cuda.amp.GradScaler -> torch.amp.GradScaler("xla", init_scale=2.**10,'),
                Expected(5, 9, 'torch.amp.GradScaler -> torch.amp.GradScaler("xla")'),
                Expected(6, 9, 'torch.amp.GradScaler -> torch.amp.GradScaler("xla", growth_interval=100)'),
            ),
        ),
        invalid(
            """
            import torch

            scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler(enabled=use_amp)
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(4, 10, "torch.amp.GradScaler -> torch_xla.amp.GradScaler(enabled=use_amp)"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import GradScaler as GS

            scaler = GS()
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = torch.amp.GradScaler("xla")
            """,
            alias=True,
            findings=(Expected(4, 10, 'GS -> torch.amp.GradScaler("xla")'),),
        ),
        invalid(
            """
            import torch
            try:
                from torch import GradScaler
            except ImportError:
                from torch.cuda.amp import GradScaler

            scaler = GradScaler("cuda")
            other = GradScaler("cuda", 2.0**10)
            third = GradScaler(device="cuda", init_scale=2.0**10)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            try:
                from torch import GradScaler
            except ImportError:
                from torch.cuda.amp import GradScaler

            scaler = torch.amp.GradScaler("xla")
            other = torch.amp.GradScaler("xla", 2.0**10)
            third = torch.amp.GradScaler("xla", init_scale=2.0**10)
            """,
            note="fallback-import-device-first",
            findings=(
                Expected(8, 10, 'GradScaler -> torch.amp.GradScaler("xla")'),
                Expected(9, 9, 'GradScaler -> torch.amp.GradScaler("xla", 2.0**10)'),
                Expected(10, 9, 'GradScaler -> torch.amp.GradScaler("xla", init_scale=2.0**10)'),
            ),
        ),
        invalid(
            """
            import torch
            try:
                from torch import GradScaler
            except ImportError:
                from torch.cuda.amp import GradScaler

            scaler = GradScaler("cuda")
            other = GradScaler("cuda", 2.0**10)
            third = GradScaler(device="cuda", init_scale=2.0**10)
            fourth = torch.cuda.amp.GradScaler(2.0**10)
            """,
            """
            import torch
            import torch_xla.amp
            try:
                from torch import GradScaler
            except ImportError:
                from torch.cuda.amp import GradScaler

            scaler = torch_xla.amp.GradScaler()
            other = torch_xla.amp.GradScaler(2.0**10)
            third = torch_xla.amp.GradScaler(init_scale=2.0**10)
            fourth = torch_xla.amp.GradScaler(2.0**10)
            """,
            target="sagemaker",
            note="fallback-import-device-first-sagemaker",
            findings=(
                Expected(8, 10, "GradScaler -> torch_xla.amp.GradScaler()"),
                Expected(9, 9, "GradScaler -> torch_xla.amp.GradScaler(2.0**10)"),
                Expected(10, 9, "GradScaler -> torch_xla.amp.GradScaler(init_scale=2.0**10)"),
                Expected(11, 10, "torch.cuda.amp.GradScaler -> torch_xla.amp.GradScaler(2.0**10)"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler(init_scale=2.0**10)
            """,
            """
            import torch
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = ShardedGradScaler("xla", init_scale=2.0**10)
            """,
            note="sharded",
            findings=(
                Expected(
                    5, 10, 'ShardedGradScaler(init_scale=2.0**10) -> ShardedGradScaler("xla", init_scale=2.0**10)'
                ),
            ),
        ),
        invalid(
            """
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler()
            """,
            target="sagemaker",
            note="sharded-sagemaker",
            findings=(Expected(3, 10, "`ShardedGradScaler` shards with torch's FSDP"),),
        ),
    ),
)


@on_facts(GRAD_SCALER, nodes=lambda facts: facts.amp.scalers)
def _scaler(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    from codemods.amp.rules.edits import EMPTY_STRING, argument_list, updated_args
    from codemods.engine.nodes import quoted_like

    scaler = ctx.facts.amp.scalers[original]
    target = ctx.target
    by_device_type = target.autocast_takes == "device_type"
    if scaler.spelling == "sharded":
        return _sharded_scaler(ctx, original, updated)
    if scaler.flavor == "xla" and scaler.spelling == ("torch" if by_device_type else "torch_xla"):
        return updated
    new_args = updated_args(original, updated)
    # torch_xla 1.13's scaler option (zeroed gradients instead of a skipped step, without
    # a host read): torch.amp.GradScaler has no such keyword and raises on it.
    dropped = [
        a
        for a in scaler.arguments
        if by_device_type
        and scaler.spelling == "torch_xla"
        and a.keyword is not None
        and a.keyword.value == "use_zero_grad"
    ]
    rest = [new_args[id(a)] for a in scaler.arguments if a not in dropped]
    if by_device_type:
        rest = [cst.Arg(quoted_like(scaler.device or EMPTY_STRING, target.device_string)), *rest]
    note = ""
    if scaler.flavor == "cuda" and target.autocast_dtype is not None and original in ctx.facts.amp.precision_scalers:
        note = f" (with {target.autocast_dtype} autocast it is not needed: its enabled= condition turns it off)"
    if dropped:
        note += (
            f" (without {ctx.code(dropped[0]).rstrip(',').strip()}: torch_xla 1.13's option, which "
            f"torch.amp.GradScaler does not take)"
        )
    rule = XLA_RELEASE_NAMES if scaler.flavor == "xla" else GRAD_SCALER
    release = f" (torch_xla {target.torch_xla_version})" if scaler.flavor == "xla" else ""

    def build() -> cst.Call | None:
        func = ctx.imports.expression(target.api("grad_scaler"))
        if func is None or (by_device_type and not ctx.imports.require_package("torch_xla")):
            return None
        ctx.imports.discard(original.func)
        for arg in dropped:
            ctx.forget_removed(arg, new_args[id(arg)])
        return updated.with_changes(func=func, args=argument_list(rest, updated))

    return ctx.fix_or_keep(updated, rule, original, f"{ctx.code(original.func)} -> {{new}}{release}{note}", build)


def _sharded_scaler(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """torch's FSDP scaler takes the device first, like torch.amp.GradScaler, and runs on
    XLA tensors under the xla process group (torch_xla 2.9; checked at world size 1):
    it keeps its name and gets the XLA device.  torch_xla 1.13 has no such scaler."""
    import libcst as cst

    from codemods.amp.rules.edits import EMPTY_STRING, argument_list, updated_args
    from codemods.engine.nodes import quoted_like

    scaler = ctx.facts.amp.scalers[original]
    target = ctx.target
    if not target.sharded_grad_scaler:
        ctx.report(
            GRAD_SCALER,
            original,
            f"`{ctx.code(original.func)}` shards with torch's FSDP: torch_xla {target.torch_xla_version} has "
            "no sharded gradient scaler; use torch_xla.amp.GradScaler and all-reduce found_inf over the processes, "
            "or train without loss scaling",
        )
        return updated
    if scaler.flavor == "xla":
        return updated
    new_args = updated_args(original, updated)
    rest = [
        cst.Arg(quoted_like(scaler.device or EMPTY_STRING, target.device_string)),
        *(new_args[id(a)] for a in scaler.arguments),
    ]

    def build() -> cst.Call | None:
        if not ctx.imports.require_package("torch_xla"):
            return None
        if scaler.device is not None:
            ctx.imports.discard(scaler.device)
        return updated.with_changes(args=argument_list(rest, updated))

    return ctx.fix_or_keep(
        updated,
        GRAD_SCALER,
        original,
        f"{ctx.code(original)} -> {{new}}: the FSDP scaler on the XLA device (found_inf agreed on over the "
        "xla process group)",
        build,
    )
