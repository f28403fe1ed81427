"""XLA004's invalid cases (the CUDA-only APIs of DeepSpeed, Apex, bitsandbytes, flash-attn, xformers,
compiled extensions and the rest, with their aliases and both targets), kept apart from the rule so
that its module holds the rule, its messages, its tables and its hooks."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# flash-attn used only where a helper asked whether its import worked (valid), or behind a switch
# that does not ask (invalid).
OPTIONAL_FLASH = """
    import torch
    import torch.nn.functional as F

    try:
        import flash_attn
    except ImportError:
        flash_attn = None


    def use_flash(x):
        return flash_attn is not None and x.device.type == "cuda"


    def attention(q, k, v):
        if use_flash(q):
            return flash_attn.flash_attn_func(q, k, v)
        return F.scaled_dot_product_attention(q, k, v)
    """

# llm-foundry's shapes: padding helpers imported in a ``try`` whose handler binds both names to None,
# and a version check after a ``try`` whose handler returns False (valid); the helpers imported
# unguarded at module level, where the import itself is the break (invalid).
GUARDED_FLASH = """
    import torch
    from packaging import version

    try:
        from flash_attn.bert_padding import unpad_input, pad_input
    except ImportError:
        unpad_input, pad_input = None, None


    def is_flash_v2_installed():
        try:
            import flash_attn
        except ImportError:
            return False
        return version.parse(flash_attn.__version__) >= version.parse("2.0.0")
    """
UNGUARDED_PADDING = """
    import torch
    from flash_attn.bert_padding import index_first_axis, rearrange, unpad_input


    def unpad(x, mask):
        flat, indices, *_ = unpad_input(x, mask)
        return flat, index_first_axis(rearrange(x, "b s ... -> (b s) ..."), indices)
    """


def guarded_flash_valid() -> tuple[Valid, ...]:
    return (
        valid(GUARDED_FLASH, note="flash-attn-helpers-and-version-read-only-where-its-import-worked"),
        valid(
            substituted(
                GUARDED_FLASH, ("import flash_attn\n", "import flash_attn as fa\n"), ("flash_attn.__", "fa.__")
            ),
            target="sagemaker",
            note="flash-attn-helpers-and-version-read-only-where-its-import-worked-alias-sagemaker",
        ),
    )


# audiocraft's ``_is_profiled``: a read of xformers' profiler state after a guarded import runs no
# kernel (valid); a call of its profiler under the same guard is reported (invalid).
PROFILED = """
    import torch


    def _is_profiled():
        try:
            from xformers.profiler import profiler
        except ImportError:
            return False
        return profiler._Profiler._CURRENT_PROFILER is not None
    """

# mmocr's PAN and PSE post-processing: mmcv's pixel_group and contour_expand handed numpy arrays
# (``.cpu().numpy()`` of the prediction, what cv2 returns, ``.astype(...)`` of them) run their CPU
# kernel on an XLA host too (valid); handed the prediction itself, a tensor on the device (invalid).
HOST_ARRAYS = """
    import cv2
    import numpy as np
    import torch
    from mmcv.ops import contour_expand, pixel_group


    def group(pred, threshold):
        pred[:2] = torch.sigmoid(pred[:2])
        pred = pred.detach().cpu().numpy()
        score = pred[0].astype(np.float32)
        text = pred[0] > threshold
        kernel = (pred[1] > threshold) * text
        embedding = (pred[2:] * text.astype(np.float32)).transpose((1, 2, 0))
        count, labels = cv2.connectedComponents(kernel.astype(np.uint8), connectivity=4)
        contours = np.zeros(text.shape, dtype="uint8")
        return pixel_group(score, text, embedding, labels, contours, count, 3.0)


    def expand(pred, area):
        masks = torch.sigmoid(pred) > 0.5
        kernels = masks.data.cpu().numpy().astype(np.uint8)
        count, labels = cv2.connectedComponents(kernels[-1], connectivity=4)
        labels = contour_expand(kernels, labels, area, count)
        return np.array(labels)
    """


# timm's NativeScaler whose CUDA GradScaler the code replaces each epoch (PVT): not reported, replaced or not.
_REPLACED_SCALER = """
import torch
from timm.utils import NativeScaler


def main(args, model, optimizer, batches, checkpoint, save):
    loss_scaler = NativeScaler()
    if checkpoint is not None:
        loss_scaler.load_state_dict(checkpoint["scaler"])
    for epoch in range(args.epochs):
        loss_scaler._scaler = torch.cuda.amp.GradScaler(enabled=not args.fp32)
        train_one_epoch(model, batches, optimizer, loss_scaler)
        save({"scaler": loss_scaler.state_dict()})
"""


_STEPS_FIRST = _REPLACED_SCALER.replace(
    "    for epoch in range(args.epochs):\n",
    "    train_one_epoch(model, batches, optimizer, loss_scaler)\n    for epoch in range(args.epochs):\n",
)


def _ported_scaler(program: str) -> str:
    """The port of ``_REPLACED_SCALER`` (or a variant): XLA's scaler, the epoch loop's barrier (XLA301)."""
    return substituted(
        program,
        ("import torch\n", "import torch\nimport torch_xla\n"),
        ("torch.cuda.amp.GradScaler(enabled=not args.fp32)", 'torch.amp.GradScaler("xla", enabled=not args.fp32)'),
        (
            '        save({"scaler": loss_scaler.state_dict()})\n',
            '        save({"scaler": loss_scaler.state_dict()})\n        torch_xla.sync()\n',
        ),
    )


def native_scaler_valid() -> tuple[Valid, ...]:
    """timm's NativeScaler builds torch's CUDA GradScaler, which stays enabled where torch_xla is
    installed and scales, unscales and steps XLA tensors: no finding, whether or not the code
    replaces its ``_scaler``, on either target."""
    return (
        valid(
            _REPLACED_SCALER,
            _ported_scaler(_REPLACED_SCALER),
            note="a-native-scaler-whose-cuda-scaler-is-replaced-before-it-steps",
            target_only=True,
        ),
        valid(
            _STEPS_FIRST,
            _ported_scaler(_STEPS_FIRST),
            note="a-native-scaler-that-steps-before-its-cuda-scaler-is-replaced",
            target_only=True,
        ),
        valid(
            """
            import torch
            import torch_xla.amp
            import timm.utils as tu

            scaler = tu.NativeScaler()
            scaler._scaler = torch_xla.amp.GradScaler()
            scaler(loss, optimizer)
            """,
            target="sagemaker",
            note="replaced-by-xlas-scaler-sagemaker",
        ),
        valid(
            """
            import torch
            import torch_xla
            from timm.utils import NativeScaler as Scaler

            loss_scaler = Scaler()
            with torch.autocast("xla", dtype=torch.bfloat16):
                loss = model(x)
            loss_scaler(loss, optimizer, parameters=model.parameters())
            """,
            note="a-native-scaler-steps-xla-tensors",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm
            import timm.utils as tu

            loss_scaler = tu.NativeScaler()
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
            """,
            target="sagemaker",
            note="a-native-scaler-steps-xla-tensors-sagemaker",
        ),
    )


def third_party_cuda_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            PROFILED.replace(
                "return profiler._Profiler._CURRENT_PROFILER is not None", "return profiler.profile(None)"
            ),
            note="a-call-of-xformers-profiler-is-reported",
            findings=(Expected(9, 12, "`profiler.profile` is xformers, whose kernels need CUDA"),),
        ),
        invalid(
            """
            import torch
            from deepspeed import zero


            def gather(param):
                if not hasattr(param, "ds_id"):
                    with zero.GatheredParameters([param]):
                        return param.data.clone()
                elif hasattr(param, "grad"):
                    with zero.Init():
                        return zero.GatheredParameters([param])
            """,
            note="under a test that a parameter without ZeRO-3 passes: the partitioning context is reported",
            findings=(Expected(10, 14, "`zero.Init` is DeepSpeed ZeRO sharding"),),
        ),
        *(
            invalid(
                """
                import colossalai
                from colossalai.booster import Booster
                from colossalai.booster.plugin import GeminiPlugin as Gemini

                colossalai.launch_from_torch()
                booster = Booster(plugin=Gemini())
                model, optimizer, _, loader, _ = booster.boost(model, optimizer, dataloader=loader)
                """,
                target=target,
                alias=True,
                note=f"colossalai-booster-{target}",
                findings=(
                    Expected(5, 1, "`colossalai.launch_from_torch` is ColossalAI, whose accelerators are CUDA, NPU"),
                    Expected(6, 11, "`Booster` is ColossalAI's Booster"),
                    Expected(6, 26, "`Gemini` is ColossalAI's Booster"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                """
                import torch
                from colossalai.nn.lr_scheduler import CosineAnnealingWarmupLR
                from colossalai.utils import get_current_device, set_seed

                set_seed(1)
                device = get_current_device()
                scheduler = CosineAnnealingWarmupLR(optimizer, total_steps=1000, warmup_steps=10)
                """,
                target=target,
                note=f"colossalai-helpers-named-for-what-they-are-scheduler-left-alone-{target}",
                findings=(
                    Expected(5, 1, "`set_seed` is ColossalAI's seeding helper"),
                    Expected(6, 10, "`get_current_device` returns ColossalAI's accelerator device"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch
            from apex import amp

            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            """,
            findings=(Expected(4, 20, "`amp.initialize` is NVIDIA Apex mixed precision, which runs only on CUDA"),),
        ),
        invalid(
            """
            import torch
            import timm.utils as tu

            loss_scaler = tu.ApexScaler()
            """,
            alias=True,
            findings=(Expected(4, 15, "`tu.ApexScaler` scales the loss with NVIDIA Apex AMP inside timm"),),
            note="timms-apex-scaler",
        ),
        invalid(
            """
            from timm.utils import ApexScaler

            loss_scaler = ApexScaler()
            """,
            target="sagemaker",
            findings=(Expected(3, 15, "`ApexScaler` scales the loss with NVIDIA Apex AMP inside timm"),),
            note="timms-apex-scaler-sagemaker",
        ),
        invalid(
            """
            import deepspeed
            import torch
            import bitsandbytes as bnb
            from apex.optimizers import FusedLAMB
            from deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam

            deepspeed.init_distributed()
            optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-3)
            proj = bnb.nn.Linear4bit(64, 64)
            lamb = FusedLAMB(model.parameters())
            offload = DeepSpeedCPUAdam(model.parameters())
            fused = FusedAdam(model.parameters())
            engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=cfg)
            """,
            note="deepspeed-apex-bitsandbytes",
            findings=(
                Expected(7, 1, "NCCL process group"),
                Expected(8, 13, "8-bit optimizer"),
                Expected(9, 8, "quantized layer"),
                Expected(10, 8, "Apex CUDA kernel"),
                Expected(11, 11, "DeepSpeed CUDA/CPU optimizer kernel"),
                Expected(12, 9, "DeepSpeed CUDA/CPU optimizer kernel"),
                Expected(13, 27, "DeepSpeed, which does not run on XLA"),
            ),
        ),
        invalid(
            """
            import torch
            import triton
            import triton.language as tl
            import xformers.ops as xops
            from flash_attn import flash_attn_func


            @triton.jit
            def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
                offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * 2, mask=offsets < n)


            y = flash_attn_func(q, k, v, causal=True)
            z = xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())
            """,
            note="kernels-and-attention",
            findings=(
                Expected(5, 1, "`from flash_attn import flash_attn_func` raises ImportError on an XLA host"),
                Expected(8, 2, "Triton GPU kernel"),
                Expected(14, 5, "scaled_dot_product_attention"),
                Expected(15, 5, "`xops.memory_efficient_attention` is an xformers CUDA kernel"),
                Expected(15, 56, "`xops.LowerTriangularMask` is an xformers CUDA kernel"),
            ),
        ),
        invalid(
            """
            import torch
            import flash_attn.flash_attn_interface as fai
            from bitsandbytes.optim import Adam8bit as EightBitAdam

            out = fai.flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_len, max_len)
            optimizer = EightBitAdam(model.parameters())
            """,
            note="module-alias",
            alias=True,
            findings=(
                Expected(2, 1, "`import flash_attn.flash_attn_interface as fai` raises ImportError on an XLA host"),
                Expected(5, 7, "FlashAttention"),
                Expected(6, 13, "8-bit optimizer"),
            ),
        ),
        invalid(
            UNGUARDED_PADDING,
            note="flash-attn-padding-helpers-imported-at-module-level",
            findings=(
                Expected(
                    2,
                    1,
                    "`from flash_attn.bert_padding import index_first_axis, rearrange, unpad_input` raises "
                    "ImportError on an XLA host: flash_attn installs only with its CUDA kernels built",
                ),
                Expected(6, 25, "`unpad_input` is flash-attn's padding helper (torch indexing, not a CUDA kernel)"),
                Expected(7, 18, "`index_first_axis` is flash-attn's padding helper"),
                Expected(7, 35, "`rearrange` is einops' `rearrange`, which flash_attn.bert_padding re-exports"),
            ),
        ),
        invalid(
            substituted(
                UNGUARDED_PADDING,
                (
                    "from flash_attn.bert_padding import index_first_axis, rearrange, unpad_input",
                    "import flash_attn.bert_padding as bp",
                ),
                ("= unpad_input(", "= bp.unpad_input("),
                ("index_first_axis(rearrange(", "bp.index_first_axis(bp.rearrange("),
            ),
            target="sagemaker",
            alias=True,
            note="flash-attn-padding-helpers-module-alias-sagemaker",
            findings=(
                Expected(2, 1, "`import flash_attn.bert_padding as bp` raises ImportError on an XLA host"),
                Expected(6, 25, "`bp.unpad_input` is flash-attn's padding helper"),
                Expected(7, 18, "`bp.index_first_axis` is flash-attn's padding helper"),
                Expected(7, 38, "`bp.rearrange` is einops' `rearrange`"),
            ),
        ),
        invalid(
            substituted(
                GUARDED_FLASH, ("        return False\n", '        raise RuntimeError("install flash-attn")\n')
            ),
            target="sagemaker",
            note="flash-attn-version-read-after-a-handler-that-raises-sagemaker",
            findings=(Expected(15, 26, "`flash_attn.__version__`"),),
        ),
        invalid(
            substituted(GUARDED_FLASH, ("        return False\n", "        pass\n")),
            note="flash-attn-version-read-after-a-handler-that-falls-through",
            findings=(Expected(15, 26, "`flash_attn.__version__`"),),
        ),
        invalid(
            substituted(OPTIONAL_FLASH, ("if use_flash(q):", "if args.flash:")),
            note="flash-attn-behind-a-switch-that-does-not-ask-for-its-import",
            findings=(Expected(16, 16, "`flash_attn.flash_attn_func` is FlashAttention"),),
        ),
        invalid(
            """
            import torch
            from flash_attn.layers.rotary import apply_rotary_emb
            from flash_attn.ops.triton.layer_norm import layer_norm_fn

            q = apply_rotary_emb(q, cos, sin)
            h = layer_norm_fn(x, weight, None, eps=1e-5, is_rms_norm=True)
            """,
            note="flash-attn-norm-and-rotary-kernels",
            findings=(
                Expected(2, 1, "flash_attn installs only with its CUDA kernels built, so importing this module"),
                Expected(3, 1, "raises ImportError on an XLA host"),
                Expected(5, 5, "`apply_rotary_emb` is flash-attn's rotary-embedding kernel (Triton), not attention"),
                Expected(6, 5, "or for RMSNorm torch.nn.RMSNorm (torch.nn.functional.rms_norm)"),
            ),
        ),
        invalid(
            """
            import torch
            import flash_attn.ops.rms_norm as fused_norm
            from flash_attn.losses.cross_entropy import CrossEntropyLoss as FusedCE

            h = fused_norm.rms_norm(x, weight, 1e-5)
            criterion = FusedCE(label_smoothing=0.1)
            """,
            target="sagemaker",
            alias=True,
            note="flash-attn-norm-and-loss-kernels-sagemaker",
            findings=(
                Expected(2, 1, "raises ImportError on an XLA host"),
                Expected(3, 1, "raises ImportError on an XLA host"),
                Expected(5, 5, "or for RMSNorm x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight"),
                Expected(6, 13, "`FusedCE` is flash-attn's fused cross-entropy kernel (Triton), not attention"),
            ),
        ),
        invalid(
            """
            import torch
            from torchrec.distributed.model_parallel import DistributedModelParallel
            from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology

            planner = EmbeddingShardingPlanner(topology=Topology(world_size=8, compute_device="cuda"))
            model = DistributedModelParallel(module=model, device=device, plan=planner.collective_plan(model))
            """,
            note="torchrec-model-parallel",
            findings=(
                Expected(5, 11, "`EmbeddingShardingPlanner` is TorchRec's model parallelism"),
                Expected(5, 45, "`Topology` is TorchRec's model parallelism"),
                Expected(6, 9, "`DistributedModelParallel` is TorchRec's model parallelism"),
            ),
        ),
        invalid(
            """
            import torch
            from dcn_v2 import DCN

            conv = DCN(64, 64, kernel_size=(3, 3), stride=1, padding=1, dilation=1, deformable_groups=1)
            """,
            note="dcnv2-extension",
            findings=(Expected(4, 8, "`DCN` is DCNv2, a compiled C++/CUDA extension"),),
        ),
        invalid(
            """
            import torch
            from mmcv.ops import nms

            keep, _ = nms(boxes, scores, 0.5)
            """,
            note="mmcv-compiled-op",
            findings=(Expected(4, 11, "`nms` is one of mmcv's compiled ops (mmcv._ext, C++/CUDA kernels)"),),
        ),
        *(
            invalid(
                """
                import torch
                import basicsr.ops.upfirdn2d as ops
                from basicsr.ops.fused_act import FusedLeakyReLU

                act = FusedLeakyReLU(8)
                out = ops.upfirdn2d(x, kernel, pad=(1, 1))
                """,
                target=target,
                alias=True,
                note=f"basicsr-compiled-ops-{target}",
                findings=(
                    Expected(5, 7, "`FusedLeakyReLU` is one of BasicSR's compiled ops (fused_act, upfirdn2d, dcn"),
                    Expected(6, 7, "`ops.upfirdn2d` is one of BasicSR's compiled ops"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            substituted(HOST_ARRAYS, ("kernels = masks.data.cpu().numpy().astype(np.uint8)", "kernels = masks")),
            note="mmcv-array-op-handed-a-device-tensor",
            findings=(Expected(23, 14, "`contour_expand` is one of mmcv's compiled ops"),),
        ),
        invalid(
            substituted(
                HOST_ARRAYS,
                (
                    "        count, labels = cv2.connectedComponents(kernels[-1], connectivity=4)\n",
                    "        count, labels = cv2.connectedComponents(kernels[-1], connectivity=4)\n"
                    "        if area < 0:\n"
                    "            kernels = masks\n",
                ),
            ),
            note="mmcv-array-op-handed-an-array-a-branch-may-replace-with-a-device-tensor",
            findings=(Expected(25, 14, "`contour_expand` is one of mmcv's compiled ops"),),
        ),
        invalid(
            substituted(
                HOST_ARRAYS,
                ("from mmcv.ops import contour_expand, pixel_group", "import mmcv.ops as mo"),
                ("return pixel_group(", "return mo.pixel_group("),
                ("labels = contour_expand(", "labels = mo.contour_expand("),
                ("pred = pred.detach().cpu().numpy()", "pred = pred.detach()"),
            ),
            target="sagemaker",
            alias=True,
            note="mmcv-array-op-handed-the-prediction-module-alias-sagemaker",
            findings=(Expected(16, 12, "`mo.pixel_group` is one of mmcv's compiled ops"),),
        ),
        invalid(
            """
            import torch
            import mmcv.ops as mo

            voxelize = mo.Voxelization(voxel_size=[0.2, 0.2, 4], point_cloud_range=[0, -40, -3, 70, 40, 1], max_num_points=32)
            """,
            target="sagemaker",
            alias=True,
            note="mmcv-compiled-op-module-alias-sagemaker",
            findings=(Expected(4, 12, "`mo.Voxelization` is one of mmcv's compiled ops"),),
        ),
        invalid(
            """
            import torch
            import dcn_v2 as dcn

            conv = dcn.DCNv2(64, 64, (3, 3), 1, 1)
            """,
            note="dcnv2-extension-module-alias",
            alias=True,
            findings=(Expected(4, 8, "`dcn.DCNv2` is DCNv2"),),
        ),
        invalid(
            """
            import torch
            from warpctc_pytorch import CTCLoss

            criterion = CTCLoss()
            """,
            note="warp-ctc-loss",
            findings=(Expected(4, 13, "`CTCLoss` is warp-ctc, a compiled C++/CUDA extension (CTC loss)"),),
        ),
        invalid(
            """
            import torch
            import warpctc_pytorch as warp_ctc

            criterion = warp_ctc.CTCLoss(size_average=True)
            """,
            target="sagemaker",
            note="warp-ctc-loss-module-alias-sagemaker",
            alias=True,
            findings=(Expected(4, 13, "use torch.nn.CTCLoss"),),
        ),
    )
