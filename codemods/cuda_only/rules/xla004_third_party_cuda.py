"""XLA004 third-party-cuda."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codemods.apis import AMP_ADVICE, FUSED_ATTENTION_ADVICE, PALLAS_ADVICE, PROCESS_GROUP_ADVICE, RMS_NORM_ADVICE
from codemods.cuda_only.rules.deepspeed_apis import OPS, STATE_QUERIES, deepspeed_invalid, queries_valid
from codemods.cuda_only.rules.third_party_cuda_cases import (
    HOST_ARRAYS,
    OPTIONAL_FLASH,
    PROFILED,
    guarded_flash_valid,
    native_scaler_valid,
    third_party_cuda_invalid,
)
from codemods.engine.hooks import on_nodes, on_references
from codemods.engine.rule import Expected, Invalid, Rule, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context


THIRD_PARTY_CUDA = Rule(
    code="XLA004",
    name="third-party-cuda",
    severity="error",
    summary="A third-party API that runs only on CUDA (DeepSpeed, Apex, bitsandbytes, flash-attn, xformers, Triton "
    "kernels, timm's Apex scaler, TorchRec's model parallelism, ColossalAI, the DCNv2 and warp-ctc extensions, "
    "mmcv's and BasicSR's compiled ops)",
    fixable=False,
    why="These libraries call CUDA kernels directly: on an XLA machine they fail, or silently do nothing. timm's "
    "`NativeScaler()` is not reported: the `torch.cuda.amp.GradScaler()` it builds (newer timm: "
    "`torch.amp.GradScaler('cuda')`) stays enabled wherever torch_xla is installed (torch 1.13 and 2.9 disable it "
    "only when neither CUDA nor torch_xla is importable, torch/cuda/amp/common.py) and creates its scale on the "
    "loss's device, so it scales, unscales, skips a step on inf/NaN and updates on XLA tensors (checked on "
    "torch_xla 2.9 against an eager CPU run); timm's `ApexScaler` (NVIDIA Apex AMP) is. One table (in the rule's module, codemods/cuda_only/rules/xla004_third_party_cuda.py) names each "
    "API or module with its XLA alternative, or none: torch.nn.functional.scaled_dot_product_attention (or "
    "torch_xla's flash_attention kernel on TPU) for flash-attn and xformers attention, torch.nn's LayerNorm and "
    "RMSNorm, a rotary embedding in torch operations and torch.nn.CrossEntropyLoss for flash-attn's other "
    "kernels, torch.optim.AdamW or "
    "torch_xla.amp.syncfree for fused and 8-bit optimizers, torch.autocast for Apex AMP, the xla process group "
    "for DeepSpeed and Apex multi-GPU code, torch operations for Triton kernels, unsharded embedding tables and "
    "DDP or torch_xla's FSDP for TorchRec's DistributedModelParallel and sharding planner, DDP over the xla process "
    "group or torch_xla's FSDP for ColossalAI's Booster, none for DCNv2 (`from dcn_v2 import DCN`: a C++/CUDA "
    "extension installed from its own repository, which the project's setup.py-built extensions, XLA512, do not "
    "cover), torch.nn.CTCLoss for warp-ctc's `warpctc_pytorch.CTCLoss` (a compiled C++/CUDA extension too), "
    "the op written in torch operations for BasicSR's compiled ops (`basicsr.ops`: fused_act's FusedLeakyReLU, "
    "upfirdn2d, dcn: their built C++/CUDA extension runs every tensor that is not on the CPU), and for mmcv's compiled ops (`mmcv.ops`: nms, roi_align, Voxelization, "
    "points_in_boxes, sparse convolutions and the rest run C++/CUDA kernels of mmcv._ext; those written in torch "
    "operations, point_sample, multi_scale_deformable_attn_pytorch and MultiScaleDeformableAttention (the "
    "compiled op only for CUDA tensors), the sparse containers, GroupAll and box2corners, are not reported; nor is a "
    "call of `pixel_group` or `contour_expand`, which take numpy arrays, whose every array argument the calling "
    "function provably holds as a numpy array (bound to `.cpu().numpy()`, `np.array(...)`, what a cv2 function "
    "returns, an element or `.astype(...)` of one: the op runs its CPU kernel, on an XLA host as anywhere; handed "
    "a tensor, such as the model's output, it is reported). Each "
    "use is reported at its "
    "line. Imports of other third-party packages never need converting. Code that only a parameter ZeRO-3 "
    'partitioned reaches (under `if hasattr(param, "ds_id"):`, or another attribute only ZeRO-3 sets: ds_status, '
    "ds_tensor, ds_shape, ds_numel, ds_persist, ds_active_sub_modules) never runs on XLA and is not reported; the "
    "imports it needs still need DeepSpeed installed. `deepspeed.zero.GatheredParameters(...)` is not reported either: it "
    "gathers only parameters that ZeRO-3 partitioned (DeepSpeed's `is_zero_param`) and is a no-op for any other, and "
    "nothing partitions parameters on XLA (`deepspeed.initialize` and `deepspeed.zero.Init`, which would, are reported). "
    "Nor are DeepSpeed's queries of its own state and version (`deepspeed.comm.is_initialized()`, "
    "`deepspeed.checkpointing.is_configured()`, `deepspeed.__version__`): plain Python, they answer False where "
    "DeepSpeed was never set up, as on XLA (`deepspeed.init_distributed` and the DeepSpeed calls they guard are "
    "reported). DeepSpeed's kernels (`deepspeed.ops`) are named by what they compute: its optimizers, "
    "DeepSpeed4Science's EvoformerAttention (an attention kernel: the plain attention path), its fused transformer "
    "layer and its sparse attention. "
    "flash-attn builds its CUDA kernels when it is installed, so an XLA host never has it: a use reached only where "
    "its import worked (in a `try` whose handler catches the ImportError and falls back, after such a `try` whose "
    "handler returns, `except ImportError: return False` (one that raises is no fallback), under `if flash_attn is not "
    "None:`, or under a function of the file that returns False when the handler set it to None) is not reported, "
    "nor is the handler's fallback binding (`unpad_input, pad_input = None, None`). A module-level import of it "
    "outside a `try` is reported at the import: the module itself fails to import on an XLA host. flash-attn's "
    "padding helpers (`flash_attn.bert_padding`: unpad_input, pad_input, index_first_axis, and einops' `rearrange` "
    "it re-exports) are torch code, not kernels: their uses are reported for the import they need. "
    "Nor is a read of xformers' profiler state (`profiler._Profiler._CURRENT_PROFILER is not None`): Python "
    "bookkeeping around torch.profiler, no kernel; a call of it is. "
    "Apex's amp decorators (`amp.float_function`, `amp.half_function`, `amp.promote_function`, and their "
    "`register_` forms) are not reported: a decorated function runs unchanged while no amp handle is active, which "
    "on XLA it never is (`amp.initialize` and `amp.init`, which would activate one, are reported).",
    examples=lambda: (
        Invalid(
            "import torch\nfrom apex import amp\nmodel, optimizer = amp.initialize(model, optimizer)\n",
            findings=(Expected(3, 20, "`amp.initialize` is NVIDIA Apex mixed precision, which runs only on CUDA"),),
        ),
    ),
    valid=lambda: (
        valid(OPTIONAL_FLASH, note="flash-attn-behind-a-helper-that-asks-for-its-import"),
        *guarded_flash_valid(),
        valid(PROFILED, note="a-read-of-xformers-profiler-state-runs-no-kernel"),
        valid(
            PROFILED.replace(
                "from xformers.profiler import profiler", "from xformers.profiler import profiler as prof"
            ).replace("return profiler._Profiler", "return prof._Profiler"),
            note="a-read-of-xformers-profiler-state-runs-no-kernel-aliased",
        ),
        valid(
            """
            import torch
            from apex import amp


            def attend(q, k, op):
                is_half = isinstance(q, torch.cuda.HalfTensor)
                fn = amp.float_function(op) if is_half else op
                return fn(q, k)


            @amp.half_function
            def pooled(x):
                return x.mean(0)
            """,
            note="apex-amp-decorators-pass-through-while-amp-is-off",
        ),
        valid(
            """
            import apex

            import torch

            apex.amp.register_float_function(torch, "sigmoid")
            roi = apex.amp.float_function(torch.nn.functional.relu)
            """,
            target="sagemaker",
            note="apex-amp-decorators-pass-through-alias",
        ),
        valid(
            """
            import torch
            import torch.nn.functional as F


            def attention(q, k, v):
                try:
                    from flash_attn import flash_attn_func

                    return flash_attn_func(q, k, v)
                except (ImportError, RuntimeError):
                    pass
                return F.scaled_dot_product_attention(q, k, v)
            """,
            target="sagemaker",
            note="flash-attn-imported-in-a-try-with-a-fallback-sagemaker",
        ),
        valid(
            """
            import torch

            try:
                import flash_attn as fa
            except ModuleNotFoundError:
                fa = None

            out = fa.flash_attn_func(q, k, v) if fa is not None else attend(q, k, v)
            """,
            note="flash-attn-alias-under-its-none-check",
        ),
        valid(
            """
            import torch
            from mmcv.ops import point_sample

            out = point_sample(features, points, align_corners=False)
            """,
            note="mmcv-op-written-in-torch-operations",
        ),
        valid(HOST_ARRAYS, note="mmcv-array-ops-handed-numpy-arrays-run-their-cpu-kernel"),
        valid(
            substituted(
                HOST_ARRAYS,
                ("from mmcv.ops import contour_expand, pixel_group", "import mmcv.ops as mo"),
                ("return pixel_group(", "return mo.pixel_group("),
                ("labels = contour_expand(", "labels = mo.contour_expand("),
            ),
            target="sagemaker",
            note="mmcv-array-ops-handed-numpy-arrays-module-alias-sagemaker",
        ),
        valid(
            """
            import torch
            import mmcv.ops as mo

            attention = mo.MultiScaleDeformableAttention(embed_dims=32, num_levels=1)
            out = mo.multi_scale_deformable_attn_pytorch(value, shapes, locations, weights)
            """,
            target="sagemaker",
            note="mmcv-attention-with-a-torch-fallback-module-alias-sagemaker",
        ),
        valid(
            """
            import torch
            from colossalai_notes import Booster

            booster = Booster(plugin=plugin)
            """,
            note="not-colossalai",
        ),
        valid(
            """
            import torch
            from colossalai.nn.lr_scheduler import CosineAnnealingWarmupLR

            scheduler = CosineAnnealingWarmupLR(optimizer, total_steps=1000, warmup_steps=10)
            for x in loader:
                scheduler.step()
            """,
            note="a-colossalai-lr-scheduler-is-pure-python",
        ),
        valid(
            """
            import torch


            def maybe_zero_3(param):
                from deepspeed import zero
                from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus

                if hasattr(param, "ds_id"):
                    if param.ds_status == ZeroParamStatus.NOT_AVAILABLE:
                        pass
                    with zero.GatheredParameters([param]):
                        param = param.data.detach().cpu().clone()
                else:
                    param = param.detach().cpu().clone()
                return param


            def numel(p):
                return p.ds_numel if hasattr(p, "ds_numel") and zero.is_enabled() else p.numel()
            """,
            note="under a test that only a parameter ZeRO-3 partitioned passes: never runs on XLA",
        ),
        valid(
            """
            import deepspeed
            import torch
            import torch.nn as nn
            from deepspeed.runtime.zero.partition_parameters import GatheredParameters as Gathered

            model = nn.Embedding(16, 4)
            with deepspeed.zero.GatheredParameters(model.weight, modifier_rank=None):
                vocab = model.weight.shape[0]
            with Gathered(list(model.parameters())):
                total = sum(p.numel() for p in model.parameters())
            """,
            note="gathered-parameters-without-zero3-is-a-no-op",
        ),
        valid(
            """
            import torch
            from timm.scheduler import create_scheduler
            from transformers import get_scheduler

            scheduler, _ = create_scheduler(args, optimizer)
            lr_scheduler = get_scheduler("linear", optimizer, num_warmup_steps=0, num_training_steps=10)
            """,
            note="schedulers-need-nothing",
        ),
        valid(
            """
            import torch
            import torch.nn.functional as F

            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            """,
            note="torch-alternatives",
        ),
        *native_scaler_valid(),
        *queries_valid(),
    ),
    invalid=lambda: (*third_party_cuda_invalid(), *deepspeed_invalid()),
)


def _each(advice: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), advice)


# Third-party APIs that matter on XLA (what the rest of timm, apex, accelerate or
# transformers does needs nothing: their schedulers and models run as they are).
_APIS: dict[str, str] = {
    **_each(
        "is NVIDIA Apex mixed precision, which runs only on CUDA: use torch.autocast with the XLA device "
        "(bfloat16 needs no loss scaling)",
        "apex.amp.initialize apex.amp.scale_loss apex.amp.master_params",
    ),
    **_each(
        "is an NVIDIA Apex CUDA kernel: use the torch.optim (or torch_xla.amp.syncfree) optimizer, or torch.nn's layer",
        "apex.optimizers.FusedAdam apex.optimizers.FusedLAMB apex.optimizers.FusedSGD apex.optimizers.FusedNovoGrad "
        "apex.normalization.FusedLayerNorm apex.normalization.FusedRMSNorm",
    ),
    **_each(
        "is NVIDIA Apex multi-GPU code, which runs only on CUDA: use torch_xla's process group and MpDeviceLoader",
        "apex.parallel.DistributedDataParallel apex.parallel.convert_syncbn_model apex.parallel.SyncBatchNorm",
    ),
    **_each(
        f"scales the loss with NVIDIA Apex AMP inside timm, which runs only on CUDA: on XLA use {AMP_ADVICE}",
        "timm.utils.ApexScaler timm.utils.cuda.ApexScaler",
    ),
    **_each(
        "is DeepSpeed, which does not run on XLA devices: train with the XLA optimizer step instead",
        "deepspeed.initialize",
    ),
    **_each(
        "returns ColossalAI's accelerator device (CUDA, NPU or the CPU), never an XLA device: put the model "
        "and the batches on the XLA device instead",
        "colossalai.utils.get_current_device colossalai.utils.device.get_current_device",
    ),
    **_each(
        "is ColossalAI's seeding helper, and ColossalAI's accelerators are CUDA, NPU and the CPU, never an "
        "XLA device: seed with torch.manual_seed (and Python's and NumPy's seeds) instead",
        "colossalai.utils.set_seed colossalai.utils.common.set_seed",
    ),
    **_each(
        f"starts DeepSpeed's NCCL process group: on XLA use {PROCESS_GROUP_ADVICE}",
        "deepspeed.init_distributed",
    ),
    **_each(
        "is a Triton GPU kernel (Triton compiles for CUDA and ROCm only): write the computation with torch "
        f"operations, which XLA fuses{PALLAS_ADVICE}",
        "triton.jit triton.autotune triton.heuristics",
    ),
}

# Whole third-party modules that only run on CUDA, by prefix (the longest that matches
# wins; the exact names above come first).  Each says what to use on XLA, or "none".
_SDPA = FUSED_ATTENTION_ADVICE
_FLASH_NORM = (
    "is flash-attn's fused LayerNorm/RMSNorm kernel (Triton or a CUDA extension), not attention: use "
    f"torch.nn.LayerNorm (torch.nn.functional.layer_norm), or for RMSNorm {RMS_NORM_ADVICE}; add the "
    "residual (and dropout) it was handed before the norm, which XLA fuses"
)
_FLASH_ROTARY = (
    "is flash-attn's rotary-embedding kernel (Triton), not attention: rotate with torch operations, which XLA "
    "fuses: x * cos + rotate_half(x) * sin on the rotary part of the head dimension, cos and sin repeated to its "
    "width (rotate_half makes the halves (x1, x2) into (-x2, x1); interleaved=True pairs even and odd elements)"
)
_FLASH_CROSS_ENTROPY = (
    "is flash-attn's fused cross-entropy kernel (Triton), not attention: use torch.nn.CrossEntropyLoss "
    "(torch.nn.functional.cross_entropy, label_smoothing included)"
)
_FLASH_IMPORT = (
    "flash_attn imports only where its CUDA kernels were built, never on an XLA host (its import raises "
    "ImportError there)"
)
_MODULES: dict[str, str] = {
    "deepspeed.": (
        "is DeepSpeed, which does not run on XLA devices; XLA alternative: none "
        "(train with torch.optim and the XLA optimizer step)"
    ),
    **OPS,
    "deepspeed.zero.": (
        "is DeepSpeed ZeRO sharding: on XLA shard with torch_xla's FSDP "
        "(torch_xla.distributed.fsdp.XlaFullyShardedDataParallel)"
    ),
    "deepspeed.checkpointing.": "is DeepSpeed activation checkpointing: use torch.utils.checkpoint.checkpoint",
    "apex.": "is NVIDIA Apex, which runs only on CUDA; XLA alternative: the torch.nn / torch.optim equivalent",
    "apex.amp.": (
        "is NVIDIA Apex mixed precision, which runs only on CUDA: use torch.autocast with "
        "the XLA device (bfloat16 needs no loss scaling)"
    ),
    "apex.optimizers.": "is an NVIDIA Apex CUDA kernel: use the torch.optim (or torch_xla.amp.syncfree) optimizer",
    "apex.parallel.": "is NVIDIA Apex multi-GPU code, which runs only on CUDA: use torch_xla's process group and MpDeviceLoader",
    "bitsandbytes.optim.": (
        "is a bitsandbytes 8-bit optimizer (CUDA kernels): use "
        "torch.optim.AdamW, or torch_xla.amp.syncfree.AdamW under AMP; 8-bit optimizer "
        "state on XLA: none"
    ),
    "bitsandbytes.nn.": (
        "is a bitsandbytes quantized layer (CUDA kernels): use torch.nn.Linear "
        "(bfloat16 weights); 8-bit or 4-bit training layers on XLA: none"
    ),
    "bitsandbytes.": "is bitsandbytes, whose kernels need CUDA; XLA alternative: none",
    "flash_attn.": f"is FlashAttention, a CUDA kernel: {_SDPA}",
    # flash-attn's kernels that are not attention (flash_attn/ops, layers, losses): each its torch operation.
    "flash_attn.ops.triton.layer_norm.": _FLASH_NORM,
    "flash_attn.ops.layer_norm.": _FLASH_NORM,
    "flash_attn.ops.rms_norm.": _FLASH_NORM,
    "flash_attn.layers.rotary.": _FLASH_ROTARY,
    "flash_attn.ops.triton.rotary.": _FLASH_ROTARY,
    "flash_attn.losses.cross_entropy.": _FLASH_CROSS_ENTROPY,
    "flash_attn.ops.triton.cross_entropy.": _FLASH_CROSS_ENTROPY,
    # flash-attn's helpers in torch code (bert_padding's gather/scatter, utils' collectives): no kernel.
    "flash_attn.bert_padding.": (
        f"is flash-attn's padding helper (torch indexing, not a CUDA kernel), but {_FLASH_IMPORT}: index with "
        "torch (`x.flatten(0, 1)[mask.flatten()]`, `torch.gather`), or keep the padding and mask the attention "
        "scores; unpadding gives a shape that depends on the data, which XLA compiles anew for each count of tokens"
    ),
    "flash_attn.bert_padding.rearrange.": (
        f"is einops' `rearrange`, which flash_attn.bert_padding re-exports, but {_FLASH_IMPORT}: import it from einops"
    ),
    "flash_attn.utils.": f"is a helper of flash-attn in torch code (not a CUDA kernel), but {_FLASH_IMPORT}",
    "flash_attn.ops.fused_dense.": (
        "is flash-attn's fused dense layer and MLP (a CUDA extension), not attention: use torch.nn.Linear and "
        "the activation, which XLA fuses"
    ),
    "torchrec.distributed.": (
        "is TorchRec's model parallelism (DistributedModelParallel, the sharding "
        "planner, the sharders and train pipelines), which shards embedding tables "
        "with FBGEMM's CUDA kernels over NCCL (or the CPU over gloo), never on XLA "
        "devices; XLA alternative: none (keep the embedding tables unsharded, as "
        "torch.nn.EmbeddingBag, and wrap the model in DDP or torch_xla's FSDP)"
    ),
    "colossalai.": (
        "is ColossalAI, whose accelerators are CUDA, NPU and the CPU "
        "(colossalai.accelerator), never an XLA device; XLA alternative: the torch or torch_xla "
        "equivalent of this call"
    ),
    "colossalai.booster.": (
        "is ColossalAI's Booster, whose plugins (Torch DDP, Gemini, low-level ZeRO, hybrid "
        "parallel) place the model on ColossalAI's accelerator (CUDA or NPU) over NCCL or "
        "HCCL; on XLA wrap the model in DistributedDataParallel over the xla process group, "
        "or in torch_xla's FSDP (XlaFullyShardedDataParallel), and step it with "
        "xm.optimizer_step"
    ),
    "colossalai.nn.optimizer.": (
        "is a ColossalAI optimizer kernel (HybridAdam, CPUAdam, "
        "FusedAdam): use torch.optim.AdamW, or torch_xla.amp.syncfree.AdamW under "
        "AMP"
    ),
    "xformers.": "is xformers, whose kernels need CUDA; XLA alternative: the torch.nn equivalent",
    # CharlesShang's DCNv2 (CenterNet, FairMOT and their descendants install it from its own repository):
    # a C++/CUDA extension, whose ops take CUDA tensors; no XLA device kernel.
    "dcn_v2.": (
        "is DCNv2, a compiled C++/CUDA extension (deformable convolution) built apart from the project: "
        "its ops have no XLA kernel, and its import fails where it was not built; XLA alternative: none "
        "(a model variant without deformable convolutions)"
    ),
    # mmcv's ops (mmcv/ops, 1.x mmcv-full and 2.x): nms, roi_align, Voxelization, points_in_boxes, sparse
    # convolutions and the rest call ``ext_module`` (mmcv._ext, built C++/CUDA kernels), which take CPU or CUDA
    # tensors and have no XLA kernel; the few written in torch operations are _TORCH_MMCV_OPS.
    "mmcv.ops.": (
        "is one of mmcv's compiled ops (mmcv._ext, C++/CUDA kernels), which has no XLA kernel and raises on XLA "
        "tensors: a model whose forward runs it fails on XLA; XLA alternative: the op written in torch "
        "operations, or keep it out of the model trained on XLA"
    ),
    "xformers.ops.": f"is an xformers CUDA kernel (memory_efficient_attention): {_SDPA}",
    # BasicSR's ops (basicsr/ops: fused_act, upfirdn2d, dcn): built C++/CUDA extensions (at install, or
    # with BASICSR_JIT); fused_act and upfirdn2d take a native path only for CPU tensors.
    "basicsr.ops.": (
        "is one of BasicSR's compiled ops (fused_act, upfirdn2d, dcn: C++/CUDA kernels), which has no XLA kernel "
        "and raises on XLA tensors (only CPU tensors take a native path): a model whose forward runs it fails on "
        "XLA; XLA alternative: the op written in torch operations (FusedLeakyReLU: a bias add, leaky_relu and a "
        "scale), or keep it out of the model trained on XLA"
    ),
    # Baidu's warp-ctc bindings (SeanNaren/warp-ctc, crnn and speech models): a C++/CUDA extension built apart
    # from the project; its loss reads its tensors' memory through CUDA or the CPU, never an XLA device.
    "warpctc_pytorch.": (
        "is warp-ctc, a compiled C++/CUDA extension (CTC loss) built apart from the project: its kernels have "
        "no XLA implementation (XLA tensors make it raise), and its import fails where it was not built; use "
        "torch.nn.CTCLoss (log_softmax the activations first: warp-ctc takes them unnormalised)"
    ),
}


@on_nodes(THIRD_PARTY_CUDA, types="Module")
def _unguarded_imports(ctx: Context[Any], original: cst.Module, updated: cst.Module) -> cst.Module:
    """A module-level import of a package an XLA host never has (flash_attn), outside a ``try``:
    the module itself fails to import there."""
    from codemods.cuda_only.rules.absent_on_xla import unguarded_imports

    for statement, package in unguarded_imports(original):
        ctx.report(
            THIRD_PARTY_CUDA,
            statement,
            f"`{ctx.code(statement)}` raises ImportError on an XLA host: {package} installs only with its CUDA "
            "kernels built, so importing this module (or any module that imports it) fails there; import it "
            "in a `try` whose `except ImportError` falls back to torch code, or drop the dependency",
        )
    return updated


@on_references(THIRD_PARTY_CUDA, names=frozenset(_APIS), modules=tuple(_MODULES))
def _report(ctx: Context[Any], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    """Each use, with what to use on XLA: the name's own entry, else its longest module's;
    none where only a parameter ZeRO-3 partitioned reaches it."""
    from codemods.cuda_only.rules.absent_on_xla import never_runs_on_xla

    if (
        qualified in _GATHERS_ZERO3_ONLY
        or qualified in STATE_QUERIES
        or (qualified.startswith("mmcv.ops.") and not _TORCH_MMCV_OPS.isdisjoint(qualified.split(".")[2:]))
        or qualified in _APEX_PASSES_THROUGH
        or qualified.startswith(_COLOSSALAI_SCHEDULERS)
        or _handed_numpy_arrays(ctx, original, qualified)
        or _under_zero3_guard(ctx.ancestors)
        or never_runs_on_xla(ctx.ancestors, qualified)
        or _profiler_state_read(qualified, original, ctx.parent())
    ):
        return updated
    advice = _APIS.get(qualified)
    if advice is None:
        dotted = qualified + "."
        advice = _MODULES[max((module for module in _MODULES if dotted.startswith(module)), key=len)]
    ctx.report(THIRD_PARTY_CUDA, original, f"`{ctx.code(original)}` {ctx.target.advice(advice)}")
    return updated


# mmcv's ops written in torch operations, which run on XLA (mmcv 2.x, mmcv/ops): point_sample.py;
# multi_scale_deform_attn.py's torch version, and its module, which calls the compiled op only for CUDA
# tensors; the sparse containers of sparse_structure.py and sparse_modules.py (the convolutions they hold
# are compiled); group_points.py's GroupAll; diff_iou_rotated.py's box2corners.
_TORCH_MMCV_OPS = frozenset(
    {
        "point_sample",
        "bilinear_grid_sample",
        "rel_roi_point_to_rel_img_point",
        "multi_scale_deformable_attn_pytorch",
        "MultiScaleDeformableAttention",
        "SparseConvTensor",
        "SparseSequential",
        "SparseModule",
        "GroupAll",
        "box2corners",
    }
)


# mmcv's ops that take numpy arrays as well as tensors, with their array parameters (mmcv/ops/pixel_group.py,
# contour_expand.py: an array becomes ``torch.from_numpy(...)``, a CPU tensor, and the op has a CPU kernel only;
# their other parameters must be Python numbers).
_ARRAY_PARAMETERS: dict[str, tuple[str, ...]] = {
    "pixel_group": ("score", "mask", "embedding", "kernel_label", "kernel_contour"),
    "contour_expand": ("kernel_mask", "internal_kernel_label"),
}


def _handed_numpy_arrays(ctx: Context[Any], original: cst.CSTNode, qualified: str) -> bool:
    """A call of one of mmcv's ops that take numpy arrays whose every array argument the calling function
    provably holds as one (``.cpu().numpy()``, ``np.array(...)``, what cv2 returns, engine/host_arrays.py):
    the op runs its CPU kernel, on an XLA host as anywhere."""
    import libcst as cst

    from codemods.engine.host_arrays import holds_numpy_array
    from codemods.engine.nodes import args_by_position

    parts = qualified.split(".")
    parameters = _ARRAY_PARAMETERS.get(parts[-1]) if parts[:2] == ["mmcv", "ops"] else None
    call = ctx.parent()
    if parameters is None or not isinstance(call, cst.Call) or call.func is not original:
        return False
    if any(arg.star for arg in call.args):
        return False
    handed = dict(args_by_position(call, parameters))
    return all(
        parameter in handed and holds_numpy_array(handed[parameter].value, ctx.ancestors[:-1], ctx.resolve)
        for parameter in parameters
    )


# Apex's amp decorators and their registry forms (apex/amp/amp.py): a decorated function runs
# unchanged while no amp handle is active (``_decorator_helper``: ``if handle is None or not
# handle.is_active(): return orig_fn(...)``), and the registry is read only by ``amp.init``.  On
# XLA amp is never active (``amp.initialize`` and ``amp.init`` are reported where they are), so
# they change nothing and run on any device.
_APEX_PASSES_THROUGH = frozenset(
    f"apex.amp{module}.{kind}{form}_function"
    for module in ("", ".amp")
    for kind in ("", "register_")
    for form in ("half", "float", "promote")
)


# ColossalAI's learning-rate schedulers (CosineAnnealingWarmupLR and the rest: torch _LRScheduler
# subclasses over an optimizer's param_groups, pure Python): they run on any device.
_COLOSSALAI_SCHEDULERS = "colossalai.nn.lr_scheduler."


# Contexts that gather only the parameters ZeRO-3 partitioned and do nothing for any other
# (deepspeed/runtime/zero/partition_parameters.py, ``GatheredParameters.__init__``: ``if not
# any(is_zero_param(p) for p in params): self.enabled = False``): a no-op on XLA, where nothing
# partitions them.
_GATHERS_ZERO3_ONLY = frozenset(
    {
        "deepspeed.zero.GatheredParameters",
        "deepspeed.runtime.zero.GatheredParameters",
        "deepspeed.runtime.zero.partition_parameters.GatheredParameters",
    }
)


# What DeepSpeed's ZeRO-3 sets on each parameter it partitions (deepspeed/runtime/zero/
# partition_parameters.py, ``_convert_to_deepspeed_param``; ``is_zero_param`` asks ``hasattr(p,
# "ds_id")``): no parameter has them without DeepSpeed, so never on XLA.
_ZERO3_ATTRIBUTES = frozenset(
    {"ds_id", "ds_status", "ds_tensor", "ds_shape", "ds_numel", "ds_persist", "ds_active_sub_modules"}
)


def _profiler_state_read(qualified: str, original: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
    """A read of xformers' profiler state (``profiler._Profiler._CURRENT_PROFILER is not None``): xformers/profiler
    is Python bookkeeping around torch.profiler, and reading its attributes runs no kernel; a call is reported."""
    import libcst as cst

    return qualified.startswith("xformers.profiler.") and not (isinstance(parent, cst.Call) and parent.func is original)


def _under_zero3_guard(ancestors: list[cst.CSTNode]) -> bool:
    """In the body of an ``if`` (or the value an ``x if test else y`` takes when the test holds,
    or right of an ``and``) whose test requires ``hasattr(param, "ds_id")`` or another attribute only ZeRO-3 sets."""
    import libcst as cst

    from codemods.engine.nodes import arg_value, string_value

    for outer, inner in zip(ancestors, ancestors[1:]):
        if isinstance(outer, (cst.If, cst.IfExp)) and inner is outer.body:
            required = [outer.test]
        elif isinstance(outer, cst.BooleanOperation) and isinstance(outer.operator, cst.And) and inner is outer.right:
            required = [outer.left]
        else:
            continue
        while required:
            part = required.pop()
            if isinstance(part, cst.BooleanOperation) and isinstance(part.operator, cst.And):
                required += [part.left, part.right]
            elif (
                isinstance(part, cst.Call)
                and isinstance(part.func, cst.Name)
                and part.func.value == "hasattr"
                and string_value(arg_value(part, 1, "name")) in _ZERO3_ATTRIBUTES
            ):
                return True
    return False
