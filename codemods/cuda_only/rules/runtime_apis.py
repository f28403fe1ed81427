"""The CUDA runtime APIs the CUDA-only rules report (or drop), with what to use on XLA: one
table per rule, read by their hooks (XLA502 the settings with no effect; XLA506, and XLA508
behind a switch, the CUDA-only APIs), by the device analysis (which calls crash without CUDA)
and by the walk's choice of the references the rewrites visit (codemods/analyse.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codemods import apis


@dataclass(frozen=True)
class RuntimeApi:
    advice: str
    # Raises on a machine without CUDA (where XLA scripts run): code that reaches it
    # must not be switched on by the device rewrites.
    crashes_without_cuda: bool = False


def _table(advice: str, names: str, crashes: bool = False) -> dict[str, RuntimeApi]:
    return {name: RuntimeApi(advice, crashes) for name in names.split()}


# Settings and calls with no effect on an XLA device (XLA502).
NO_EFFECT: dict[str, RuntimeApi] = {
    **_table(
        "has no effect on an XLA device; remove it",
        "torch.cuda.empty_cache torch.cuda.reset_peak_memory_stats torch.cuda.reset_max_memory_allocated "
        "torch.cuda.ipc_collect torch.backends.cudnn.benchmark torch.backends.cudnn.deterministic "
        "torch.backends.cudnn.enabled torch.backends.cuda.matmul.allow_tf32 torch.backends.cudnn.allow_tf32",
    ),
    **_table(
        "records nothing on an XLA device (without CUDA, torch.profiler disables CUDA profiling); to profile the "
        "XLA device use torch_xla.debug.profiler (xp.start_server(9012), then xp.trace or TensorBoard's profile "
        "plugin)",
        "torch.profiler.ProfilerActivity.CUDA torch.autograd.ProfilerActivity.CUDA",
    ),
    **_table(
        "picks among CUDA's kernels for scaled_dot_product_attention; it only sets a flag (no CUDA needed) and "
        "XLA lowers attention itself, whatever the flags say: no effect on an XLA device; remove it",
        "torch.backends.cuda.enable_flash_sdp torch.backends.cuda.enable_mem_efficient_sdp "
        "torch.backends.cuda.enable_math_sdp torch.backends.cuda.enable_cudnn_sdp torch.backends.cuda.sdp_kernel",
    ),
    **_table(
        "picks the backends of scaled_dot_product_attention (flash, memory-efficient, cuDNN, math); it only sets "
        "flags of the process (no CUDA needed) and XLA lowers attention itself, whatever they say: no effect on "
        "an XLA device; remove it",
        "torch.nn.attention.sdpa_kernel",
    ),
}

# CUDA-only APIs with no XLA equivalent here (XLA506; XLA508 where a switch that is off
# by default keeps them from running).
CUDA_ONLY: dict[str, RuntimeApi] = {
    **_table(
        "is CUDA-only and has no XLA equivalent here; remove it or guard it",
        "torch.cuda.device_count torch.cuda.is_bf16_supported",
    ),
    **_table(
        "is torch's SyncBatchNorm, which takes only CUDA and XPU tensors: once a process group is started it raises "
        "ValueError on XLA tensors at the first training step; keep the BatchNorm layers (statistics per device), or, "
        "on torch_xla 2.x, build its own SyncBatchNorm (in its core `functions` module) in place of each BatchNorm "
        "(it has no convert_sync_batchnorm)",
        "torch.nn.SyncBatchNorm torch.nn.SyncBatchNorm.convert_sync_batchnorm torch.nn.modules.batchnorm.SyncBatchNorm",
        crashes=True,
    ),
    **_table(
        "raises without CUDA; use xm.get_memory_info(device) for XLA memory",
        "torch.cuda.mem_get_info",
        crashes=True,
    ),
    **_table(
        # torch 2.9 without CUDA: memory_stats() is empty, and the summary's first read of it
        # raises KeyError('allocated_bytes.all.current').
        "raises without CUDA (KeyError: its statistics are empty); use xm.get_memory_info(device) for XLA memory",
        "torch.cuda.memory_summary",
        crashes=True,
    ),
    **_table(
        "is CUDA-only and raises without CUDA; remove it or guard it",
        "torch.cuda.get_device_name torch.cuda.get_device_properties torch.cuda.get_device_capability "
        "torch.cuda.current_device torch.cuda.Stream torch.cuda.stream "
        "torch.cuda.current_stream torch.cuda.device torch.cuda.graph torch.cuda.CUDAGraph "
        "torch.cuda.set_per_process_memory_fraction torch.cuda.utilization torch.cuda.nvtx.range_push "
        "torch.cuda.nvtx.range_pop torch.cuda.nvtx.range",
        crashes=True,
    ),
    **_table(
        "times CUDA streams and raises without CUDA (`record()`: no NVIDIA driver): on XLA time a step with "
        "torch_xla.sync(), xm.wait_device_ops() and time.perf_counter() around it",
        "torch.cuda.Event",
        crashes=True,
    ),
}

CUDA_RUNTIME: dict[str, RuntimeApi] = {**NO_EFFECT, **CUDA_ONLY}


def handled_elsewhere(qualified: str) -> bool:
    """A torch.cuda API other rules port or check (availability checks, CUDA tensor types,
    set_device, synchronize, torch.cuda.amp): not one to report as CUDA-only."""
    return qualified in apis.HANDLED_CUDA_APIS or qualified.startswith(apis.HANDLED_CUDA_PREFIXES)
