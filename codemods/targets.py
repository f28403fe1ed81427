"""The names each target writes: the one place where torch_xla spellings live.

The AWS guide (SageMaker Training Compiler) documents torch_xla 1.13; several of
its names are gone from torch_xla 2.9.  Rules ask for a *concept* ("device", "sync")
and get back the target's spelling, so no rule carries a torch_xla string of its own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from codemods.apis import (
    AMP_ADVICE,
    FSDP_WRAP_POLICIES,
    FUSED_ATTENTION_ADVICE,
    OWN_LAUNCHER_ADVICE,
    PALLAS_ADVICE,
    PROCESS_GROUP_ADVICE,
    RMS_NORM_ADVICE,
    SPMD_FSDP_ADVICE,
    SPMD_MESH_ADVICE,
    SYNCFREE_OPTIMIZERS,
    XLA_INIT_METHOD_NOTE,
)
from codemods.library_apis import STEP_HOOK_ADVICE


@dataclass(frozen=True)
class Api:
    """A callable the rewritten code uses, and the import that binds it.

    ``module`` is imported as ``alias`` (``import torch_xla.core.xla_model as xm``), or
    plainly (``import torch_xla``) when ``alias`` is None; ``attr`` is the dotted path
    inside the module.
    """

    module: str
    attr: str
    alias: str | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.module}.{self.attr}"

    @property
    def spelled(self) -> str:
        """How the rewritten code spells it (``xm.xla_device``, ``torch.autocast``)."""
        return f"{self.alias}.{self.attr}" if self.alias else self.qualified_name


XM = "torch_xla.core.xla_model"
PL = "torch_xla.distributed.parallel_loader"
XR = "torch_xla.runtime"
XMP = "torch_xla.distributed.xla_multiprocessing"
SYNCFREE = "torch_xla.amp.syncfree"
XLA_FSDP = "torch_xla.distributed.fsdp"
XLA_FSDP_WRAP = "torch_xla.distributed.fsdp.wrap"
# The function a distributed XLA launcher (SageMaker's pytorchxla runtime, torch_xla.launch)
# calls in each process with its index: the port writes it, and finds it already written.
ENTRY_FUNCTION = "_mp_fn"


def _xm(attr: str) -> Api:
    return Api(XM, attr, "xm")


@dataclass(frozen=True)
class Target:
    """One version of torch_xla: what to call for each concept."""

    name: str
    torch_xla_version: str
    apis: dict[str, Api]
    # How autocast names the XLA device: by device type ("xla", torch.autocast), or not at
    # all ("nothing": torch_xla 1.13's torch_xla.amp.autocast is torch.cuda.amp.autocast,
    # which takes enabled, dtype and cache_enabled; the device-first form came in 2.1).
    autocast_takes: str
    # The precision that XLA autocast must use (None: keep the script's, as on the GPUs
    # of the SageMaker Training Compiler).
    autocast_dtype: str | None
    # The string that names the XLA device where a script keeps devices as strings
    # ("cuda" -> this); torch.device("xla") is valid in every torch_xla release.
    device_string: str = "xla"
    # The gradient scaler hands found_inf to torch_xla's sync-free optimizers as a device
    # tensor (torch_xla 1.13's torch_xla.amp.GradScaler passes it to a step() that takes
    # found_inf), so skipping a step reads nothing on the host.  torch 2.9's
    # torch.amp.GradScaler passes it only to optimizers that declare
    # _step_supports_amp_scaling, which the 2.9 sync-free ones do not: it reads found_inf on
    # the host (``.item()``) at every step.
    scaler_skips_on_device: bool = False
    # How the xla process group finds its peers: "xla://" takes rank and world size from the
    # XLA runtime (torch_xla 2.2 on; pjrt:// came in 2.0); torch 1.13 has neither, so there
    # the default "env://" store meets at MASTER_ADDR/MASTER_PORT with rank and world size
    # passed from the runtime (torch_xla 1.13's own tests do so).
    rendezvous: str = "xla://"
    # torch_xla modules that came after this release: a name from them that no rewrite
    # replaces is reported (torch_xla 1.13 has no torch_xla.runtime; its runtime calls are
    # xm.* and torch_xla.experimental.pjrt).
    missing_modules: tuple[str, ...] = ()
    # torch_xla names of other releases that this one lacks (the 2.9 ones checked against the
    # installed torch_xla 2.9): calling them raises AttributeError, even in a project's own
    # XLA path, which the port otherwise leaves as it is (XLA901).
    removed: frozenset[str] = frozenset()
    # xm.save ends with a rendezvous of every process (torch_xla 1.x; 2.x dropped it):
    # called by the master alone, under a rank check, it waits forever.  A torch.save under
    # a rank check stays there and saves ``xm._maybe_convert_to_cpu(state)`` (the "to_cpu"
    # concept): xm.save's own move to the CPU, without its rendezvous (docs/choices.md).
    save_waits_for_all: bool = False
    # The platform starts the processes and calls the script's ``_mp_fn(index)`` in each
    # (SageMaker's pytorchxla runtime imports the script: its main guard does not run).
    runtime_calls_entry: bool = False
    # The torch.compile backend that compiles for XLA; None: the release has no
    # torch.compile at all (PyTorch 1.13 under torch_xla 1.13).
    compile_backend: str | None = None
    # XLA runs on NVIDIA GPUs, its collectives over NCCL (the SageMaker Training Compiler).
    nccl_collectives: bool = False
    # The keywords of XlaFullyShardedDataParallel that the FSDP port may write (checked
    # against the installed torch_xla 2.9).  The sagemaker target has no FSDP port: the
    # 1.13 wrapper's arguments cannot be checked here (it had no auto-wrap policies yet),
    # so torch's FSDP is reported there; nor has it torch's sharded gradient scaler.
    fsdp_keywords: frozenset[str] = frozenset()
    sharded_grad_scaler: bool = False
    # Lightning's XLA names (accelerator "tpu", strategy "xla", precision "bf16-true") are
    # written for the Lightning release checked with torch_xla 2.9 (2.6.6); the Lightning
    # releases of torch_xla 1.13 named them otherwise (strategy "tpu_spawn"): reported there.
    lightning_xla_names: bool = False
    # ``import torch_xla`` replaces ``torch.nn.GRU`` with its scan GRU, which rejects a PackedSequence
    # (torch_xla 2.8 and later: _patched_functions.py; 1.13 patches only clip_grad_norm_).
    patches_gru: bool = False
    # PyTorch-Ignite's backend name for XLA ("xla-tpu"); None: ignite's XLA backend
    # calls xm.get_ordinal and xm.xrt_world_size, which torch_xla 2.7 removed.
    ignite_xla_backend: str | None = None
    # Advice text is written in the default target's names (torch_xla 2.9): phrases of it
    # that this target says otherwise (the device, barrier and rank calls are respelled
    # from the tables, see ``advice``).
    advice_phrases: tuple[tuple[str, str], ...] = ()
    # How to start a script whose conversion wrote the launcher ("launcher") or only the
    # `_mp_fn(index)` entry point ("entry point"): the run's summary says it once
    # (``{script}``: the script's path, or SCRIPT for several).
    how_to_start: dict[str, str] = field(default_factory=dict)

    def lacks(self, qualified: str) -> bool:
        """Whether this release has no ``qualified`` (a torch_xla name of another release)."""
        return qualified in self.removed or any(qualified.startswith(module + ".") for module in self.missing_modules)

    def api(self, concept: str) -> Api:
        return self.apis[concept]

    def advice(self, text: str) -> str:
        """``text``, advice written with torch_xla 2.9's names, in this target's names: its
        calls of the versioned concepts (``torch_xla.sync()`` -> ``xm.mark_step()``) and
        and its launcher, and the phrases it says otherwise (APIs the release lacks)."""
        for phrase, own in self.advice_phrases:
            text = text.replace(phrase, own)
        default = TARGETS[DEFAULT_TARGET]
        for concept in (*VERSIONED_CONCEPTS, "launch"):
            text = re.sub(
                rf"(?<![\w.]){re.escape(default.api(concept).spelled)}(?!\w)", self.api(concept).spelled, text
            )
        return text

    @property
    def xla_autocast(self) -> str:
        """XLA autocast as the rewritten code calls it, for messages."""
        autocast = self.api("autocast").spelled
        if self.autocast_takes == "device_type":
            return f'{autocast}("{self.device_string}", dtype=torch.{self.autocast_dtype})'
        return f"{autocast}()"


# Concepts whose spelling is the same in both targets.
_COMMON = {
    "optimizer_step": _xm("optimizer_step"),
    "save": _xm("save"),
    "wait_device_ops": _xm("wait_device_ops"),
    "mp_device_loader": Api(PL, "MpDeviceLoader", "pl"),
    "add_step_closure": _xm("add_step_closure"),
    "master_print": _xm("master_print"),
    # Gradients all-reduced by hand (the AWS guide's AMP recipe for several processes).
    "fetch_gradients": _xm("_fetch_gradients"),
    "all_reduce": _xm("all_reduce"),
    **{f"syncfree_{name}": Api(SYNCFREE, name, "syncfree") for name in SYNCFREE_OPTIMIZERS},
}

TARGETS: dict[str, Target] = {
    "2.9": Target(
        name="2.9",
        torch_xla_version="2.9",
        apis={
            "device": Api("torch_xla", "device"),
            "sync": Api("torch_xla", "sync"),
            "world_size": Api(XR, "world_size", "xr"),
            "global_ordinal": Api(XR, "global_ordinal", "xr"),
            "local_ordinal": Api(XR, "local_ordinal", "xr"),
            "local_process_count": Api(XR, "local_process_count", "xr"),
            "launch": Api("torch_xla", "launch"),
            # Seeds the XLA device's generator (torch.manual_seed leaves it alone).
            "seed_device": Api("torch_xla", "manual_seed"),
            "autocast": Api("torch", "autocast"),
            "grad_scaler": Api("torch.amp", "GradScaler"),
            "custom_fwd": Api("torch.amp", "custom_fwd"),
            "custom_bwd": Api("torch.amp", "custom_bwd"),
            "fsdp": Api(XLA_FSDP, "XlaFullyShardedDataParallel", "xla_fsdp"),
            **{f"fsdp_{policy}": Api(XLA_FSDP_WRAP, policy, "xla_wrap") for policy in FSDP_WRAP_POLICIES},
            **_COMMON,
        },
        autocast_takes="device_type",
        autocast_dtype="bfloat16",
        compile_backend="openxla",
        fsdp_keywords=frozenset(
            {
                "compute_dtype",
                "buffer_dtype",
                "fp32_reduce_scatter",
                "reshard_after_forward",
                "auto_wrap_policy",
                "param_init_fn",
            }
        ),
        sharded_grad_scaler=True,
        removed=frozenset(
            {
                f"{XM}.xrt_world_size",
                f"{XM}.get_ordinal",
                "torch_xla.amp.GradScaler",
                "torch_xla.amp.custom_fwd",
                "torch_xla.amp.custom_bwd",
            }
        ),
        lightning_xla_names=True,
        patches_gru=True,
        how_to_start={
            "launcher": "`python {script}`: torch_xla.launch in the script starts one process per XLA device "
            "(not torchrun, mp.spawn or --nproc_per_node; PJRT_DEVICE names the device, e.g. TPU or CPU)",
            "entry point": "`python {script}` trains in one process; for one process per XLA device, a "
            "launcher calls `_mp_fn(index)`: `torch_xla.launch(_mp_fn)` under the script's main guard, or "
            "SageMaker's pytorchxla distribution",
        },
    ),
    "sagemaker": Target(
        name="sagemaker",
        torch_xla_version="1.13",
        apis={
            "device": _xm("xla_device"),
            "sync": _xm("mark_step"),
            "world_size": _xm("xrt_world_size"),
            "global_ordinal": _xm("get_ordinal"),
            "local_ordinal": _xm("get_local_ordinal"),
            # torch_xla 1.13 has no per-host process count: on one host it is the world size.
            "local_process_count": _xm("xrt_world_size"),
            "launch": Api(XMP, "spawn", "xmp"),
            "seed_device": _xm("set_rng_state"),
            "autocast": Api("torch_xla.amp", "autocast"),
            "grad_scaler": Api("torch_xla.amp", "GradScaler"),
            "custom_fwd": Api("torch_xla.amp", "custom_fwd"),
            "custom_bwd": Api("torch_xla.amp", "custom_bwd"),
            # What xm.save does before its rendezvous: the device tensors of a nested state go
            # to the CPU in one transfer (a torch.save under a rank check keeps it, see save_waits_for_all).
            "to_cpu": _xm("_maybe_convert_to_cpu"),
            **_COMMON,
        },
        autocast_takes="nothing",
        autocast_dtype=None,
        scaler_skips_on_device=True,
        rendezvous="env://",
        missing_modules=(XR,),
        # torch_xla 1.13's device and barrier are xm's; it starts processes with xmp.spawn.
        removed=frozenset({"torch_xla.device", "torch_xla.sync", "torch_xla.launch"}),
        save_waits_for_all=True,
        runtime_calls_entry=True,
        nccl_collectives=True,
        ignite_xla_backend="xla-tpu",
        # torch 1.13 has no scaled_dot_product_attention (2.0), torch_xla 1.13 no Pallas kernels.
        advice_phrases=(
            (
                FUSED_ATTENTION_ADVICE,
                "write the attention with torch.matmul and torch.softmax, which XLA compiles "
                "(torch 1.13 has no scaled_dot_product_attention, torch_xla 1.13 no attention kernel)",
            ),
            (PALLAS_ADVICE, ""),
            (
                RMS_NORM_ADVICE,
                "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight (torch 1.13 has no RMSNorm)",
            ),
            (AMP_ADVICE, "torch_xla.amp.autocast() with torch_xla.amp.GradScaler()"),
            # torch_xla 1.13 has no SPMD mesh nor SPMD FSDP (2.0 and later).
            (SPMD_MESH_ADVICE, ""),
            (SPMD_FSDP_ADVICE, ""),
            # torch 1.13 has no xla:// rendezvous (2.2): the xla backend starts from the env:// variables.
            (
                PROCESS_GROUP_ADVICE,
                "dist.init_process_group('xla', rank=xm.get_ordinal(), "
                "world_size=xm.xrt_world_size()), after import torch_xla.distributed.xla_backend, with MASTER_ADDR "
                "and MASTER_PORT set",
            ),
            (XLA_INIT_METHOD_NOTE, ""),
            # torch 1.13 has no optimizer step hooks (2.0): the instance's step is wrapped instead.
            (
                STEP_HOOK_ADVICE,
                "after building it, end each of its steps with a barrier (torch 1.13 has no step hooks): "
                "`step = algo.optimizer.step`, then "
                "`algo.optimizer.step = lambda *args, **kwargs: (step(*args, **kwargs), torch_xla.sync())[0]`",
            ),
            (
                OWN_LAUNCHER_ADVICE,
                "Start the training script's processes with xmp.spawn in the script itself "
                "(SageMaker's pytorchxla runtime calls its _mp_fn)",
            ),
        ),
        how_to_start={
            "launcher": "on SageMaker, an estimator with `compiler_config=TrainingCompilerConfig()` and "
            '`distribution={"pytorchxla": {"enabled": True}}` (its runtime calls `_mp_fn(index)` in each '
            "process); elsewhere `python {script}`: xmp.spawn in the script starts one process per device",
            "entry point": "on SageMaker, an estimator with `compiler_config=TrainingCompilerConfig()` and "
            '`distribution={"pytorchxla": {"enabled": True}}` (its runtime calls `_mp_fn(index)` in each '
            "process); `python {script}` trains in one process",
        },
    ),
}

DEFAULT_TARGET = "2.9"

# Concepts whose spelling differs between releases: a zero-argument call to any of
# these spellings is rewritten to the target's spelling (upgrade or downgrade).
VERSIONED_CONCEPTS = ("device", "sync", "world_size", "global_ordinal", "local_ordinal")


@functools.cache
@functools.cache
def spellings(concept: str) -> frozenset[str]:
    """Every qualified name that any target uses for ``concept``."""
    return frozenset(t.api(concept).qualified_name for t in TARGETS.values())


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; choose one of: {', '.join(TARGETS)}") from None
