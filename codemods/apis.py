"""What the tool knows about the *source* side: CUDA, mixed-precision and multi-GPU APIs
that a native PyTorch script uses.  (The torch_xla side lives in targets.py.)"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceApi:
    rule: str
    advice: str
    # Raises on a machine without CUDA (where XLA scripts run): code that reaches it
    # must not be switched on by the device rewrites.
    crashes_without_cuda: bool = False


def _table(rule: str, advice: str, names: str, crashes: bool = False) -> dict[str, SourceApi]:
    return {name: SourceApi(rule, advice, crashes) for name in names.split()}


CUDA_RUNTIME: dict[str, SourceApi] = {
    **_table(
        "XLA502",
        "has no effect on an XLA device; remove it",
        "torch.cuda.empty_cache torch.cuda.reset_peak_memory_stats torch.cuda.reset_max_memory_allocated "
        "torch.cuda.ipc_collect torch.backends.cudnn.benchmark torch.backends.cudnn.deterministic "
        "torch.backends.cudnn.enabled torch.backends.cuda.matmul.allow_tf32 torch.backends.cudnn.allow_tf32",
    ),
    **_table(
        "XLA503",
        "reads 0 on an XLA device; use xm.get_memory_info(device) for XLA memory",
        "torch.cuda.memory_allocated torch.cuda.max_memory_allocated torch.cuda.memory_reserved "
        "torch.cuda.max_memory_reserved torch.cuda.memory_cached torch.cuda.max_memory_cached "
        "torch.cuda.memory_stats torch.cuda.memory_summary",
    ),
    **_table(
        "XLA504",
        "is never raised on XLA: running out of device memory raises RuntimeError "
        "(RESOURCE_EXHAUSTED); catch that instead",
        "torch.cuda.OutOfMemoryError",
    ),
    **_table(
        "XLA505",
        "seeds only CUDA generators; seed the XLA device with xm.set_rng_state(seed)",
        "torch.cuda.manual_seed torch.cuda.manual_seed_all torch.cuda.seed torch.cuda.seed_all",
    ),
    **_table(
        "XLA506",
        "is CUDA-only and has no XLA equivalent here; remove it or guard it",
        "torch.cuda.device_count torch.cuda.is_bf16_supported",
    ),
    **_table(
        "XLA506",
        "raises without CUDA; use xm.get_memory_info(device) for XLA memory",
        "torch.cuda.mem_get_info",
        crashes=True,
    ),
    **_table(
        "XLA506",
        "is CUDA-only and raises without CUDA; remove it or guard it",
        "torch.cuda.get_device_name torch.cuda.get_device_properties torch.cuda.get_device_capability "
        "torch.cuda.current_device torch.cuda.Stream torch.cuda.Event torch.cuda.stream "
        "torch.cuda.current_stream torch.cuda.device torch.cuda.graph torch.cuda.CUDAGraph "
        "torch.cuda.set_per_process_memory_fraction torch.cuda.utilization torch.cuda.nvtx.range_push "
        "torch.cuda.nvtx.range_pop torch.cuda.nvtx.range",
        crashes=True,
    ),
}

# False on an XLA machine; where they pick the device, the XLA device is always there.
AVAILABILITY_CHECKS = frozenset({"torch.cuda.is_available", "torch.accelerator.is_available"})
# Pick the current GPU: removed on XLA (one device per process).
SET_DEVICE_CALLS = frozenset({"torch.cuda.set_device", "torch.accelerator.set_device_index", "torch.accelerator.set_device_idx"})

# Legacy typed constructors: torch.cuda.FloatTensor(...) -> torch.FloatTensor(...) on
# the XLA device.  Used as a value (``Tensor = torch.cuda.FloatTensor``) they stay.
CUDA_TENSOR_TYPES = frozenset(
    f"torch.cuda.{name}Tensor"
    for name in "Float Double Half BFloat16 Byte Char Short Int Long Bool".split()
)

# Mixed precision.  CUDA autocast: torch.cuda.amp.autocast(enabled, dtype, cache_enabled),
# whose dtype defaults to float16; torch.autocast(device_type, dtype, enabled,
# cache_enabled) and its alias torch.amp.autocast.  torch_xla 1.13 spells XLA autocast
# torch_xla.amp.autocast(device, enabled, dtype, cache_enabled).
CUDA_AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})
TORCH_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
XLA_AUTOCAST = frozenset({"torch_xla.amp.autocast", "torch_xla.amp.autocast_mode.autocast"})
AUTOCAST_PARAMETERS = {
    "cuda_amp": ("enabled", "dtype", "cache_enabled"),
    "torch": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch_xla": ("device", "enabled", "dtype", "cache_enabled"),
}
# Gradient scalers: torch.cuda.amp.GradScaler(init_scale, ..., enabled) and torch_xla
# 1.13's torch_xla.amp.GradScaler take the same arguments; torch.amp.GradScaler takes
# the device first (default "cuda").
CUDA_GRAD_SCALERS = frozenset({"torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"})
TORCH_GRAD_SCALERS = frozenset({"torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler"})
XLA_GRAD_SCALERS = frozenset({"torch_xla.amp.GradScaler", "torch_xla.amp.grad_scaler.GradScaler"})
# Decorators for custom autograd functions under autocast.
CUDA_CUSTOM_AUTOGRAD = {"torch.cuda.amp.custom_fwd": "custom_fwd", "torch.cuda.amp.custom_bwd": "custom_bwd"}
# torch.optim classes that have a sync-free version in torch_xla.amp.syncfree (same arguments).
SYNCFREE_OPTIMIZERS = ("SGD", "Adam", "AdamW")
# Keywords of torch.optim that select CUDA/CPU kernels: not for XLA tensors.
KERNEL_KEYWORDS = frozenset({"fused", "foreach", "capturable"})
PRECISION_CHECKS = frozenset({"torch.cuda.is_bf16_supported"})

# Third-party APIs that matter on XLA (what the rest of timm, apex, accelerate or
# transformers does needs nothing: their schedulers and models run as they are).
THIRD_PARTY: dict[str, SourceApi] = {
    **_table(
        "XLA004",
        "is NVIDIA Apex mixed precision, which runs only on CUDA: use torch.autocast with the XLA device "
        "(bfloat16 needs no loss scaling)",
        "apex.amp.initialize apex.amp.scale_loss apex.amp.master_params",
        crashes=True,
    ),
    **_table(
        "XLA004",
        "is an NVIDIA Apex CUDA kernel: use the torch.optim (or torch_xla.amp.syncfree) optimizer, or torch.nn's layer",
        "apex.optimizers.FusedAdam apex.optimizers.FusedLAMB apex.optimizers.FusedSGD apex.optimizers.FusedNovoGrad "
        "apex.normalization.FusedLayerNorm apex.normalization.FusedRMSNorm",
        crashes=True,
    ),
    **_table(
        "XLA004",
        "is NVIDIA Apex multi-GPU code, which runs only on CUDA: use torch_xla's process group and MpDeviceLoader",
        "apex.parallel.DistributedDataParallel apex.parallel.convert_syncbn_model apex.parallel.SyncBatchNorm",
        crashes=True,
    ),
    **_table(
        "XLA004",
        "builds a CUDA gradient scaler inside timm: on XLA use torch.autocast('xla', dtype=torch.bfloat16) "
        "without a scaler, or torch.amp.GradScaler('xla')",
        "timm.utils.NativeScaler timm.utils.cuda.NativeScaler timm.utils.ApexScaler timm.utils.cuda.ApexScaler",
    ),
    **_table(
        "XLA004",
        "is DeepSpeed, which does not run on XLA devices: train with the XLA optimizer step instead",
        "deepspeed.initialize",
        crashes=True,
    ),
}

DDP = "torch.nn.parallel.DistributedDataParallel"
# Multi-GPU APIs: their calls are ported (rewrite/distributed.py) or reported (XLA609).
DISTRIBUTED: dict[str, SourceApi] = _table(
    "XLA609",
    "is not ported here: on XLA use the xla process group, the XLA launcher and one process per device",
    "torch.nn.DataParallel torch.nn.parallel.DataParallel torch.nn.parallel.DistributedDataParallel "
    "torch.distributed.init_process_group "
    "torch.multiprocessing.spawn torch.distributed.launch",
)

# torch.cuda names other rules take care of (rewritten, or reported with their own advice).
HANDLED_CUDA_APIS = AVAILABILITY_CHECKS | CUDA_TENSOR_TYPES | SET_DEVICE_CALLS | {"torch.cuda.synchronize"}
HANDLED_CUDA_PREFIXES = ("torch.cuda.amp.",)

# Clocks: a torch.cuda.synchronize() right before reading one times the device's work.
CLOCKS = frozenset(
    {"time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns",
     "time.monotonic_ns", "timeit.default_timer", "datetime.datetime.now"}
)

# Reading a tensor's value to the host forces a graph execution in lazy mode.
HOST_READ_METHODS = frozenset({"item", "tolist", "cpu", "numpy"})
HOST_READ_BUILTINS = frozenset({"float", "print"})

OPTIMIZER_MODULE = "torch.optim"
SCHEDULER_MODULE = "torch.optim.lr_scheduler"
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})

# References the rewrites inspect by themselves (beyond the fact sheet's nodes): the
# tables above, any torch.cuda or torch.backends API, and the torch_xla names of either
# release.  The analysis marks them so the rewrite traversal visits them.
INSPECTED_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch_xla.", "torch.distributed.", "torch.multiprocessing.",
    "torch.nn.parallel.", "torch.amp.", "torch.accelerator.",
)
INSPECTED_NAMES = frozenset(
    {*CUDA_RUNTIME, *DISTRIBUTED, *THIRD_PARTY, *AVAILABILITY_CHECKS, *CUDA_TENSOR_TYPES, *TORCH_AUTOCAST, "torch_xla"}
)


def inspected(qualified: str) -> bool:
    return qualified in INSPECTED_NAMES or qualified.startswith(INSPECTED_PREFIXES)
