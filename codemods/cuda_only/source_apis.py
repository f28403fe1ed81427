"""The CUDA runtime and third-party CUDA APIs the tool reports (or drops), each with its
rule and what to use on XLA: read by the rewrites that report them (reported_apis.py),
by the device analysis (which calls crash without CUDA) and by the walk's choice of the
references the rewrites visit (codemods/analyse.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codemods.apis import AMP_ADVICE, FUSED_ATTENTION_ADVICE, PALLAS_ADVICE, PROCESS_GROUP_ADVICE
from codemods.cuda_only.rules.xla004_third_party_cuda import THIRD_PARTY_CUDA
from codemods.cuda_only.rules.xla502_cuda_no_effect import CUDA_NO_EFFECT
from codemods.cuda_only.rules.xla506_cuda_api import CUDA_API
from codemods.engine.rule import Rule


@dataclass(frozen=True)
class SourceApi:
    rule: Rule
    advice: str
    # Raises on a machine without CUDA (where XLA scripts run): code that reaches it
    # must not be switched on by the device rewrites.
    crashes_without_cuda: bool = False


def _table(rule: Rule, advice: str, names: str, crashes: bool = False) -> dict[str, SourceApi]:
    return {name: SourceApi(rule, advice, crashes) for name in names.split()}


CUDA_RUNTIME: dict[str, SourceApi] = {
    **_table(
        CUDA_NO_EFFECT,
        "has no effect on an XLA device; remove it",
        "torch.cuda.empty_cache torch.cuda.reset_peak_memory_stats torch.cuda.reset_max_memory_allocated "
        "torch.cuda.ipc_collect torch.backends.cudnn.benchmark torch.backends.cudnn.deterministic "
        "torch.backends.cudnn.enabled torch.backends.cuda.matmul.allow_tf32 torch.backends.cudnn.allow_tf32",
    ),
    **_table(
        CUDA_NO_EFFECT,
        "records nothing on an XLA device (without CUDA, torch.profiler disables CUDA profiling); to profile the "
        "XLA device use torch_xla.debug.profiler (xp.start_server(9012), then xp.trace or TensorBoard's profile "
        "plugin)",
        "torch.profiler.ProfilerActivity.CUDA torch.autograd.ProfilerActivity.CUDA",
    ),
    **_table(
        CUDA_NO_EFFECT,
        "picks among CUDA's kernels for scaled_dot_product_attention; it only sets a flag (no CUDA needed) and "
        "XLA lowers attention itself, whatever the flags say: no effect on an XLA device; remove it",
        "torch.backends.cuda.enable_flash_sdp torch.backends.cuda.enable_mem_efficient_sdp "
        "torch.backends.cuda.enable_math_sdp torch.backends.cuda.enable_cudnn_sdp torch.backends.cuda.sdp_kernel",
    ),
    **_table(
        CUDA_NO_EFFECT,
        "picks the backends of scaled_dot_product_attention (flash, memory-efficient, cuDNN, math); it only sets "
        "flags of the process (no CUDA needed) and XLA lowers attention itself, whatever they say: no effect on "
        "an XLA device; remove it",
        "torch.nn.attention.sdpa_kernel",
    ),
    **_table(
        CUDA_API,
        "is CUDA-only and has no XLA equivalent here; remove it or guard it",
        "torch.cuda.device_count torch.cuda.is_bf16_supported",
    ),
    **_table(
        CUDA_API,
        "is torch's SyncBatchNorm, which takes only CUDA and XPU tensors: once a process group is started it raises "
        "ValueError on XLA tensors at the first training step; keep torch.nn.BatchNorm (statistics per device), or build "
        "torch_xla.core.functions.SyncBatchNorm in place of each BatchNorm (it has no convert_sync_batchnorm)",
        "torch.nn.SyncBatchNorm torch.nn.SyncBatchNorm.convert_sync_batchnorm torch.nn.modules.batchnorm.SyncBatchNorm",
        crashes=True,
    ),
    **_table(
        CUDA_API,
        "raises without CUDA; use xm.get_memory_info(device) for XLA memory",
        "torch.cuda.mem_get_info",
        crashes=True,
    ),
    **_table(
        CUDA_API,
        # torch 2.9 without CUDA: memory_stats() is empty, and the summary's first read of it
        # raises KeyError('allocated_bytes.all.current').
        "raises without CUDA (KeyError: its statistics are empty); use xm.get_memory_info(device) for XLA memory",
        "torch.cuda.memory_summary",
        crashes=True,
    ),
    **_table(
        CUDA_API,
        "is CUDA-only and raises without CUDA; remove it or guard it",
        "torch.cuda.get_device_name torch.cuda.get_device_properties torch.cuda.get_device_capability "
        "torch.cuda.current_device torch.cuda.Stream torch.cuda.stream "
        "torch.cuda.current_stream torch.cuda.device torch.cuda.graph torch.cuda.CUDAGraph "
        "torch.cuda.set_per_process_memory_fraction torch.cuda.utilization torch.cuda.nvtx.range_push "
        "torch.cuda.nvtx.range_pop torch.cuda.nvtx.range",
        crashes=True,
    ),
    **_table(
        CUDA_API,
        "times CUDA streams and raises without CUDA (`record()`: no NVIDIA driver): on XLA time a step with "
        "torch_xla.sync(), xm.wait_device_ops() and time.perf_counter() around it",
        "torch.cuda.Event",
        crashes=True,
    ),
}


# Third-party APIs that matter on XLA (what the rest of timm, apex, accelerate or
# transformers does needs nothing: their schedulers and models run as they are).
THIRD_PARTY: dict[str, SourceApi] = {
    **_table(
        THIRD_PARTY_CUDA,
        "is NVIDIA Apex mixed precision, which runs only on CUDA: use torch.autocast with the XLA device "
        "(bfloat16 needs no loss scaling)",
        "apex.amp.initialize apex.amp.scale_loss apex.amp.master_params",
        crashes=True,
    ),
    **_table(
        THIRD_PARTY_CUDA,
        "is an NVIDIA Apex CUDA kernel: use the torch.optim (or torch_xla.amp.syncfree) optimizer, or torch.nn's layer",
        "apex.optimizers.FusedAdam apex.optimizers.FusedLAMB apex.optimizers.FusedSGD apex.optimizers.FusedNovoGrad "
        "apex.normalization.FusedLayerNorm apex.normalization.FusedRMSNorm",
        crashes=True,
    ),
    **_table(
        THIRD_PARTY_CUDA,
        "is NVIDIA Apex multi-GPU code, which runs only on CUDA: use torch_xla's process group and MpDeviceLoader",
        "apex.parallel.DistributedDataParallel apex.parallel.convert_syncbn_model apex.parallel.SyncBatchNorm",
        crashes=True,
    ),
    **_table(
        THIRD_PARTY_CUDA,
        f"builds a CUDA gradient scaler inside timm: on XLA use {AMP_ADVICE}",
        "timm.utils.NativeScaler timm.utils.cuda.NativeScaler timm.utils.ApexScaler timm.utils.cuda.ApexScaler",
    ),
    **_table(
        THIRD_PARTY_CUDA,
        "is DeepSpeed, which does not run on XLA devices: train with the XLA optimizer step instead",
        "deepspeed.initialize",
        crashes=True,
    ),
    **_table(
        THIRD_PARTY_CUDA,
        f"starts DeepSpeed's NCCL process group: on XLA use {PROCESS_GROUP_ADVICE}",
        "deepspeed.init_distributed",
        crashes=True,
    ),
    **_table(
        THIRD_PARTY_CUDA,
        "is a Triton GPU kernel (Triton compiles for CUDA and ROCm only): write the computation with torch "
        f"operations, which XLA fuses{PALLAS_ADVICE}",
        "triton.jit triton.autotune triton.heuristics",
        crashes=True,
    ),
}

# Whole third-party modules that only run on CUDA, by prefix (the longest that matches
# wins; the exact names above come first).  Each says what to use on XLA, or "none".
_SDPA = FUSED_ATTENTION_ADVICE
THIRD_PARTY_MODULES: dict[str, SourceApi] = {
    "deepspeed.": SourceApi(
        THIRD_PARTY_CUDA,
        "is DeepSpeed, which does not run on XLA devices; XLA alternative: none "
        "(train with torch.optim and the XLA optimizer step)",
        True,
    ),
    "deepspeed.ops.": SourceApi(
        THIRD_PARTY_CUDA,
        "is a DeepSpeed CUDA/CPU optimizer kernel (FusedAdam, DeepSpeedCPUAdam, "
        "FusedLamb): use torch.optim.AdamW, or torch_xla.amp.syncfree.AdamW under AMP",
        True,
    ),
    "deepspeed.zero.": SourceApi(
        THIRD_PARTY_CUDA,
        "is DeepSpeed ZeRO sharding: on XLA shard with torch_xla's FSDP "
        "(torch_xla.distributed.fsdp.XlaFullyShardedDataParallel)",
        True,
    ),
    "deepspeed.checkpointing.": SourceApi(
        THIRD_PARTY_CUDA, "is DeepSpeed activation checkpointing: use torch.utils.checkpoint.checkpoint", True
    ),
    "apex.": SourceApi(
        THIRD_PARTY_CUDA,
        "is NVIDIA Apex, which runs only on CUDA; XLA alternative: the torch.nn / torch.optim equivalent",
        True,
    ),
    "apex.amp.": SourceApi(
        THIRD_PARTY_CUDA,
        "is NVIDIA Apex mixed precision, which runs only on CUDA: use torch.autocast with "
        "the XLA device (bfloat16 needs no loss scaling)",
        True,
    ),
    "apex.optimizers.": SourceApi(
        THIRD_PARTY_CUDA,
        "is an NVIDIA Apex CUDA kernel: use the torch.optim (or torch_xla.amp.syncfree) optimizer",
        True,
    ),
    "apex.parallel.": SourceApi(
        THIRD_PARTY_CUDA,
        "is NVIDIA Apex multi-GPU code, which runs only on CUDA: use torch_xla's process group and MpDeviceLoader",
        True,
    ),
    "bitsandbytes.optim.": SourceApi(
        THIRD_PARTY_CUDA,
        "is a bitsandbytes 8-bit optimizer (CUDA kernels): use "
        "torch.optim.AdamW, or torch_xla.amp.syncfree.AdamW under AMP; 8-bit optimizer "
        "state on XLA: none",
        True,
    ),
    "bitsandbytes.nn.": SourceApi(
        THIRD_PARTY_CUDA,
        "is a bitsandbytes quantized layer (CUDA kernels): use torch.nn.Linear "
        "(bfloat16 weights); 8-bit or 4-bit training layers on XLA: none",
        True,
    ),
    "bitsandbytes.": SourceApi(
        THIRD_PARTY_CUDA, "is bitsandbytes, whose kernels need CUDA; XLA alternative: none", True
    ),
    "flash_attn.": SourceApi(THIRD_PARTY_CUDA, f"is FlashAttention, a CUDA kernel: {_SDPA}", True),
    "torchrec.distributed.": SourceApi(
        THIRD_PARTY_CUDA,
        "is TorchRec's model parallelism (DistributedModelParallel, the sharding "
        "planner, the sharders and train pipelines), which shards embedding tables "
        "with FBGEMM's CUDA kernels over NCCL (or the CPU over gloo), never on XLA "
        "devices; XLA alternative: none (keep the embedding tables unsharded, as "
        "torch.nn.EmbeddingBag, and wrap the model in DDP or torch_xla's FSDP)",
        True,
    ),
    "colossalai.": SourceApi(
        THIRD_PARTY_CUDA,
        "is ColossalAI, whose accelerators are CUDA, NPU and the CPU "
        "(colossalai.accelerator), never an XLA device; XLA alternative: none (torch.optim and "
        "the XLA optimizer step)",
        True,
    ),
    "colossalai.booster.": SourceApi(
        THIRD_PARTY_CUDA,
        "is ColossalAI's Booster, whose plugins (Torch DDP, Gemini, low-level ZeRO, hybrid "
        "parallel) place the model on ColossalAI's accelerator (CUDA or NPU) over NCCL or "
        "HCCL; on XLA wrap the model in DistributedDataParallel over the xla process group, "
        "or in torch_xla's FSDP (XlaFullyShardedDataParallel), and step it with "
        "xm.optimizer_step",
        True,
    ),
    "colossalai.nn.optimizer.": SourceApi(
        THIRD_PARTY_CUDA,
        "is a ColossalAI optimizer kernel (HybridAdam, CPUAdam, "
        "FusedAdam): use torch.optim.AdamW, or torch_xla.amp.syncfree.AdamW under "
        "AMP",
        True,
    ),
    "xformers.": SourceApi(
        THIRD_PARTY_CUDA, "is xformers, whose kernels need CUDA; XLA alternative: the torch.nn equivalent", True
    ),
    "xformers.ops.": SourceApi(
        THIRD_PARTY_CUDA, f"is an xformers CUDA kernel (memory_efficient_attention): {_SDPA}", True
    ),
}


def third_party(qualified: str) -> SourceApi | None:
    """The entry for a third-party name: exact, else its longest module prefix."""
    api = THIRD_PARTY.get(qualified)
    if api is not None:
        return api
    dotted = qualified + "."
    matches = [prefix for prefix in THIRD_PARTY_MODULES if dotted.startswith(prefix)]
    return THIRD_PARTY_MODULES[max(matches, key=len)] if matches else None
