"""XLA502 cuda-no-effect: CUDA-only settings have no effect on XLA.  This module's hooks remove
what a person would simply delete: a statement that only sets or calls one of
runtime_apis.NO_EFFECT (``torch.backends.cudnn.benchmark = True``, ``torch.cuda.empty_cache()``:
the lines the CUDA-only facts' ``no_effect_lines`` name), ``pin_memory=True`` given to a torch API
and ``t.pin_memory()`` (the device facts' ``pin_memory_calls``); they report the other uses of
those settings (``profile(activities=[..., ProfilerActivity.CUDA])``), the other
``pin_memory=True``, and the CUDA and NCCL environment variables the script sets (XLA's runtime
reads them only on NVIDIA GPUs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.cuda_only.rules.null_stream_cases import null_stream_no_effect_invalid, null_stream_no_effect_valid
from codemods.cuda_only.rules.null_streams import STREAM_CONTEXT, null_stream
from codemods.cuda_only.rules.runtime_apis import NO_EFFECT
from codemods.engine.hooks import on_facts, on_references, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context, StatementLineT
    from codemods.facts import Facts

CUDA_NO_EFFECT = Rule(
    code="XLA502",
    name="cuda-no-effect",
    severity="info",
    summary="CUDA-only setting with no effect on XLA (empty_cache, cudnn flags, pin_memory) is removed",
    fixable=True,
    why="cuDNN flags, pinned memory and the CUDA caching allocator do not exist on an XLA device, so the setting "
    "does nothing there. It is removed where deleting it is safe (a statement that only sets or calls it, a "
    "keyword of a torch API) and reported elsewhere (a dict of loader options, a value computed by a call). "
    "`torch.cuda.stream(None)`, the null stream (also `torch.cuda.stream(torch.cuda.Stream() if ... else None)`, "
    "where the CUDA stream is not made), runs without CUDA and does nothing: noted here, not as CUDA-only. A "
    "tensor's `.pin_memory()`, which raises without CUDA, becomes the tensor itself. "
    'Also reported: CUDA and NCCL environment variables the script sets (`os.environ["NCCL_DEBUG"] = ...`: '
    "XLA reads them only on NVIDIA GPUs) and the profiler's `ProfilerActivity.CUDA`, which records nothing "
    "without CUDA (torch_xla.debug.profiler profiles the XLA device). The attention-kernel switches "
    "(`torch.backends.cuda.enable_flash_sdp`, `enable_mem_efficient_sdp`, `enable_math_sdp`, "
    "`enable_cudnn_sdp`, the `sdp_kernel(...)` context manager, and `torch.nn.attention.sdpa_kernel(...)`, "
    "which picks the backends by `SDPBackend`) are such settings too: in torch 2.9 they set flags of the "
    "process, without CUDA, and torch_xla's scaled_dot_product_attention ignores them (checked: the same "
    'result with every kernel switched off, where the CPU would raise "No viable backend"; under '
    "`sdpa_kernel(SDPBackend.FLASH_ATTENTION)` or `EFFICIENT_ATTENTION`, attention on the XLA device gives "
    "the result it gives outside the context manager, and runs with a boolean mask (which CUDA's flash "
    'kernel refuses: "Flash Attention does not support non-null attn_mask"), dropout and the backward '
    "pass); removed like the cuDNN flags, and a `with sdp_kernel(...)` or `with sdpa_kernel(...)` is reported.",
    examples=lambda: (
        invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            torch.backends.cudnn.benchmark = True
            loader = DataLoader(dataset, batch_size=64, pin_memory=True)
            """,
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(dataset, batch_size=64)
            """,
            findings=(
                Expected(4, 1, "removed `torch.backends.cudnn.benchmark = True`"),
                Expected(4, 45, "removed `pin_memory=True`"),
            ),
        ),
        invalid(
            """
            import torch

            loader_options = {"num_workers": 4, "pin_memory": True}
            """,
            findings=(Expected(3, 37, "`pin_memory=True` has no effect on an XLA device; remove it"),),
        ),
    ),
    valid=lambda: (
        *null_stream_no_effect_valid(),
        valid(
            """
            import torch

            loader = DataLoader(ds, pin_memory=False)
            """,
        ),
        valid(
            """
            import os
            import torch

            os.environ["PJRT_DEVICE"] = "TPU"
            level = os.environ.get("NCCL_DEBUG", "WARN")
            """,
            note="xla-environment",
        ),
        valid(
            """
            import torch
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                step()
            """,
            note="profiler-cpu-only",
        ),
        valid(
            """
            import torch
            import torch.nn.functional as F
            from torch.nn.attention import SDPBackend

            from mylib.attention import sdpa_kernel

            backend = SDPBackend.FLASH_ATTENTION
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q, k, v)
            """,
            note="sdpa-kernel-of-another-library",
        ),
    ),
    invalid=lambda: (
        *null_stream_no_effect_invalid(),
        invalid(
            """
            import torch

            torch.backends.cuda.enable_flash_sdp(True)
            torch.backends.cuda.enable_math_sdp(False)
            with torch.backends.cuda.sdp_kernel(enable_math=False):
                out = attend(q, k, v)
            """,
            """
            import torch

            with torch.backends.cuda.sdp_kernel(enable_math=False):
                out = attend(q, k, v)
            """,
            note="attention-kernel-switches",
            findings=(
                Expected(3, 1, "removed `torch.backends.cuda.enable_flash_sdp(True)`: no effect on an XLA device"),
                Expected(3, 1, "removed `torch.backends.cuda.enable_math_sdp(False)`"),
                Expected(
                    3, 6, "`torch.backends.cuda.sdp_kernel` picks among CUDA's kernels for scaled_dot_product_attention"
                ),
            ),
        ),
        invalid(
            """
            import torch
            from torch.backends import cuda as backends_cuda
            from torch.backends.cuda import enable_mem_efficient_sdp

            backends_cuda.enable_flash_sdp(True)
            enable_mem_efficient_sdp(False)
            model = build()
            """,
            """
            import torch

            model = build()
            """,
            note="attention-kernel-switches-imported",
            alias=True,
            findings=(
                Expected(3, 1, "removed `backends_cuda.enable_flash_sdp(True)`: no effect on an XLA device"),
                Expected(3, 1, "removed `enable_mem_efficient_sdp(False)`: no effect on an XLA device"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.nn.functional as F
            from torch.nn.attention import sdpa_kernel, SDPBackend

            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                out = F.scaled_dot_product_attention(q, k, v)
            with torch.nn.attention.sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
                out = F.scaled_dot_product_attention(q, k, v)
            """,
            note="sdpa-kernel-context-manager",
            alias=True,
            findings=(
                Expected(5, 6, "`sdpa_kernel` picks the backends of scaled_dot_product_attention"),
                Expected(7, 6, "`torch.nn.attention.sdpa_kernel` picks the backends of scaled_dot_product_attention"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            torch.backends.cudnn.benchmark = True
            loader = DataLoader(ds, batch_size=8, pin_memory=True)
            if args.clear:
                torch.cuda.empty_cache()
            """,
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=8)
            if args.clear:
                pass
            """,
            note="removed",
            findings=(
                Expected(4, 1, "removed `torch.backends.cudnn.benchmark = True`"),
                Expected(4, 39, "removed `pin_memory=True`"),
                Expected(6, 5, "removed `torch.cuda.empty_cache()`"),
            ),
        ),
        *(
            invalid(
                """
                import torch

                for epoch in range(epochs):
                    train(epoch)

                    torch.cuda.empty_cache()
                for epoch in range(epochs):
                    evaluate(epoch)
                    # free the cache
                    torch.cuda.empty_cache()
                """,
                """
                import torch

                for epoch in range(epochs):
                    train(epoch)
                for epoch in range(epochs):
                    evaluate(epoch)
                    # free the cache
                """,
                target=target,
                note=f"removed-last-of-a-block-{target}",
                findings=(
                    Expected(5, 5, "removed `torch.cuda.empty_cache()`"),
                    Expected(7, 5, "removed `torch.cuda.empty_cache()`"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch

            kwargs = {'num_workers': 1, 'pin_memory': True}
            loader = make_loader(ds, pin_memory=True)
            torch.backends.cudnn.benchmark = choose_benchmark()
            if torch.backends.cudnn.benchmark:
                print("benchmark mode")
            """,
            note="reported-where-removal-is-not-safe",
            findings=(
                Expected(3, 29, "`pin_memory=True` has no effect on an XLA device; remove it"),
                Expected(4, 26, "`pin_memory=True` has no effect on an XLA device; remove it"),
                Expected(5, 1, "`torch.backends.cudnn.benchmark` has no effect on an XLA device; remove it"),
                Expected(6, 4, "`torch.backends.cudnn.benchmark` has no effect on an XLA device; remove it"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.backends.cudnn as cudnn
            from torch.cuda import empty_cache
            from torch.utils import data

            cudnn.benchmark = True; empty_cache()
            loader = data.DataLoader(
                ds,
                shuffle=True,
                pin_memory=True,
            )
            """,
            """
            import torch
            from torch.utils import data

            loader = data.DataLoader(
                ds,
                shuffle=True,
            )
            """,
            alias=True,
            findings=(
                Expected(4, 1, "removed `cudnn.benchmark = True`"),
                Expected(4, 25, "removed `empty_cache()`"),
                Expected(7, 5, "removed `pin_memory=True`"),
            ),
        ),
        invalid(
            """
            import os
            import torch

            os.environ["NCCL_DEBUG"] = "INFO"
            os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
            """,
            note="nccl-environment",
            findings=(Expected(4, 1, "sets NCCL_DEBUG"), Expected(5, 1, "sets TORCH_NCCL_ASYNC_ERROR_HANDLING")),
        ),
        invalid(
            """
            import torch
            from os import environ

            environ["NCCL_IB_DISABLE"] = "1"
            """,
            note="environ-alias",
            alias=True,
            findings=(Expected(4, 1, "sets NCCL_IB_DISABLE"),),
        ),
        invalid(
            """
            import torch
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                step()
            """,
            note="profiler-cuda-activity",
            findings=(Expected(4, 48, "torch_xla.debug.profiler"),),
        ),
    ),
)


@reports_facts(CUDA_NO_EFFECT, nodes=lambda facts: facts.cuda_only.environment)
def _environment(ctx: Context[Facts], original: cst.CSTNode) -> str:
    """``os.environ["NCCL_..."] = ...``, ``os.environ.setdefault("NCCL_...", ...)``."""
    target = ctx.target
    where = (
        "the SageMaker Training Compiler's GPU containers: there it still applies); on TPU, Trainium or "
        "CPU it has no effect"
        if target.nccl_collectives
        else f"torch_xla {target.torch_xla_version} has no CUDA device of its own: PJRT_DEVICE takes "
        "CPU, TPU or NEURON); it has no effect"
    )
    return (
        f"`{ctx.code(original)}` sets {ctx.facts.cuda_only.environment[original]}, a CUDA or NCCL setting: XLA's "
        f"runtime reads it only on NVIDIA GPUs ({where}"
    )


@on_references(CUDA_NO_EFFECT, names=frozenset(NO_EFFECT))
def _no_effect_api(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    """Reported where the statement does more than set or call it; else the statement goes
    (``_remove_settings``: its result is followed until its line is left)."""
    from codemods.cuda_only.rules.runtime_references import goes_with_device_call, only_sets_or_calls

    if goes_with_device_call(ctx, original):
        return updated
    statement = only_sets_or_calls(ctx, original)
    if statement is not None:
        ctx.track([statement])
        return updated
    ctx.report(CUDA_NO_EFFECT, original, f"`{ctx.code(original)}` {ctx.target.advice(NO_EFFECT[qualified].advice)}")
    return updated


@on_facts(CUDA_NO_EFFECT, nodes=lambda facts: facts.cuda_only.no_effect_lines)
def _remove_settings(ctx: Context[Facts], original: StatementLineT, updated: StatementLineT) -> StatementLineT:
    """The statement line minus its statements that only set or call a setting with no
    effect (all of them: the line goes, its comments move on; see Context.drop_statement)."""

    from codemods.cuda_only.rules.runtime_references import goes_with_device_call, passive, set_or_called

    removed = set()
    for statement in original.body:
        target = set_or_called(statement)
        if (
            target is None
            or ctx.resolve(target) not in NO_EFFECT
            or not passive(statement)
            or goes_with_device_call(ctx, target)
        ):
            continue
        done = ctx.fix(
            CUDA_NO_EFFECT,
            statement,
            f"removed `{ctx.code(statement).rstrip(';').rstrip()}`: no effect on an XLA device",
            lambda: statement,  # noqa: B023 - fix() calls it at once
        )
        if done is None:
            continue
        ctx.imports.discard(statement)
        removed.add(id(ctx.result_of(statement)))
    kept: list[cst.BaseSmallStatement] = [s for s in updated.body if id(s) not in removed]
    if len(kept) == len(updated.body):
        return updated
    return ctx.line_keeping(updated, kept)


@on_facts(CUDA_NO_EFFECT, nodes=lambda facts: facts.cuda_only.pinned_args)
def _pinned_arg(ctx: Context[Facts], original: cst.Arg, updated: cst.Arg) -> cst.Arg:
    """``pin_memory=True`` given to a torch API (DataLoader, tensor factories), whose keyword is
    optional, goes (``_unpinned_call``); elsewhere (a function of the project that may require
    it) it is reported."""
    if not _removable(ctx, ctx.facts.cuda_only.pinned_args[original]):
        _report_pinned(ctx, original)
    return updated


@on_facts(CUDA_NO_EFFECT, nodes=lambda facts: facts.cuda_only.pinned_entries)
def _pinned_entry(ctx: Context[Facts], original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
    _report_pinned(ctx, original)
    return updated


@on_facts(CUDA_NO_EFFECT, nodes=lambda facts: {call for call in facts.cuda_only.pinned_args.values() if call})
def _unpinned_call(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """The call without its first ``pin_memory=True``; when it was the last argument, the
    one before takes its comma (and with it the layout before the closing parenthesis)."""
    pinned = ctx.facts.cuda_only.pinned_args
    at = next((i for i, arg in enumerate(original.args) if arg in pinned and _removable(ctx, original)), None)
    if at is None:
        return updated
    if len(updated.args) != len(original.args):  # another rewrite reshaped the call
        _report_pinned(ctx, original.args[at])
        return updated

    def without_arg() -> cst.Call:
        args = list(updated.args)
        removed = args.pop(at)
        if at == len(args) and args:
            args[-1] = args[-1].with_changes(comma=removed.comma)
        return updated.with_changes(args=args)

    return ctx.fix_or_keep(
        updated, CUDA_NO_EFFECT, original.args[at], "removed `pin_memory=True`: no effect on an XLA device", without_arg
    )


@on_facts(CUDA_NO_EFFECT, nodes=lambda facts: facts.device.pin_memory_calls)
def _unpinned_tensor(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``t.pin_memory()`` -> ``t``: it raises without CUDA, and pinned memory only speeds
    up copies to a CUDA device."""
    import libcst as cst

    if not isinstance(updated.func, cst.Attribute):
        return updated
    tensor = updated.func.value
    new = ctx.fix(
        CUDA_NO_EFFECT,
        original,
        f"removed `.pin_memory()` from `{ctx.code(original)}`: it raises without CUDA, and pinned memory "
        "only speeds up copies to a CUDA device",
        lambda: tensor,
    )
    if new is None:
        return updated
    ctx.imports.discard(original)
    return new


def _removable(ctx: Context[Facts], call: cst.Call | None) -> bool:
    return call is not None and (ctx.resolve(call.func) or "").startswith("torch.")


def _report_pinned(ctx: Context[Facts], original: cst.CSTNode) -> None:
    ctx.report(CUDA_NO_EFFECT, original, "`pin_memory=True` has no effect on an XLA device; remove it")


@on_references(CUDA_NO_EFFECT, names=frozenset({STREAM_CONTEXT}))
def _null_stream(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    """``torch.cuda.stream(None)``: runs without CUDA and does nothing (null_streams.py)."""
    from codemods.cuda_only.rules.runtime_references import goes_with_device_call

    given = null_stream(ctx, original)
    if (
        given is not None
        and not goes_with_device_call(ctx, original)
        and original not in ctx.facts.cuda_only.guarded_cuda
    ):
        ctx.report(
            CUDA_NO_EFFECT,
            original,
            f"`{ctx.code(original)}` is given {given}: the null stream, a context that runs without CUDA and does "
            "nothing on an XLA device",
        )
    return updated
