"""What the tool knows about the *source* side: CUDA, mixed-precision and multi-GPU APIs
that a native PyTorch script uses.  (The torch_xla side lives in targets.py; the device and training
APIs of libraries, in library_apis.py.)"""

from __future__ import annotations

from codemods.followed_packages import FOLLOWED_PACKAGES as FOLLOWED_PACKAGES  # (read as apis.*)
from codemods.followed_packages import unfollowed_package as unfollowed_package

# Advice written in torch_xla 2.9's names (the default target's); a target that lacks them
# says otherwise (codemods/targets.py: Target.advice).
FUSED_ATTENTION_ADVICE = (
    "use torch.nn.functional.scaled_dot_product_attention, which XLA lowers (it takes (batch, heads, seq, dim), "
    "flash-attn and xformers take (batch, seq, heads, dim): transpose), or on TPU "
    "torch_xla.experimental.custom_kernel.flash_attention"
)
# torch 2.4 and later; the sagemaker target (torch 1.13) says the formula instead (targets.py).
RMS_NORM_ADVICE = "torch.nn.RMSNorm (torch.nn.functional.rms_norm)"
PALLAS_ADVICE = "; on TPU, torch_xla runs Pallas kernels (torch_xla.experimental.custom_kernel)"
AMP_ADVICE = "torch.autocast('xla', dtype=torch.bfloat16) without a scaler, or torch.amp.GradScaler('xla')"
PROCESS_GROUP_ADVICE = "dist.init_process_group('xla', init_method='xla://')"
# The xla:// init method (torch_xla 2.2 and later), where advice names it in passing.
XLA_INIT_METHOD_NOTE = " (init_method xla://)"
OWN_LAUNCHER_ADVICE = (
    "Its workers are not torchrun's (no TORCHELASTIC_RUN_ID), so under xla:// each would take every device: start "
    "the training script with torchrun, or with torch_xla.launch in the training script itself"
)
SPMD_MESH_ADVICE = "lay the devices out with torch_xla's SPMD mesh (torch_xla.distributed.spmd.Mesh) or "
SPMD_FSDP_ADVICE = (
    ", or shard it with SPMD (torch_xla.experimental.spmd_fully_sharded_data_parallel, one process per host)"
)


# Calls that only print what they are handed, as the callee resolves: ``print`` on every
# process, ``xm.master_print`` on the master process (a rank-checked print becomes it, XLA610).
PRINT_CALLS = frozenset({"print", "builtins.print", "torch_xla.core.xla_model.master_print"})


def prints(callee: str | None, name: str | None) -> bool:
    """A call that only prints: ``callee`` is what its function resolves to, ``name`` the
    function's bare name when it is written as one (``print`` resolves to nothing)."""
    return callee in PRINT_CALLS or (callee is None and name == "print")


# Environment variables of CUDA and NCCL (prefixes): XLA's runtime reads them only when
# it runs on NVIDIA GPUs (PJRT_DEVICE=CUDA).
CUDA_ENVIRONMENT = (
    "NCCL_",
    "TORCH_NCCL_",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "PYTORCH_CUDA_ALLOC_CONF",
    "CUDA_VISIBLE_DEVICES",
)

# False on an XLA machine; where they pick the device, the XLA device is always there.
# ``torch.cuda.is_initialized()`` (OLMo's ``is_available() and is_initialized()``) asks
# whether this process has set CUDA up, never so on XLA: an accelerator check too.
AVAILABILITY_CHECKS = frozenset(
    {"torch.cuda.is_available", "torch.accelerator.is_available", "torch.cuda.is_initialized"}
)
# A probe for CUDA's tools (``shutil.which('nvidia-smi') is not None``): False on XLA, as is_available().
CUDA_TOOL_PROBES = frozenset({"shutil.which"})
CUDA_TOOLS = frozenset({"nvidia-smi", "nvcc"})
DEVICE_COUNTS = frozenset({"torch.cuda.device_count", "torch.accelerator.device_count"})


# Packages of CUDA-only kernels that a file may import without naming torch (maskrcnn's
# layers/nms.py: ``from apex import amp`` and the project's compiled ``_C``): such a file is read,
# so that its uses are reported (XLA004, XLA512).
CUDA_ONLY_PACKAGES = ("apex", "deepspeed", "flash_attn", "xformers", "bitsandbytes", "warpctc_pytorch", "dcn_v2")


# Torch names that a module-level assignment may alias (``Device: TypeAlias = torch.device``,
# fairseq2's spelling): the alias resolves as the name does, so ``Device("cuda")`` is a
# device call.
ALIASED_NAMES = frozenset({"torch.device"})
# Calls that end the process (beside `raise` and the builtins exit() and quit()).
PROCESS_EXITS = frozenset({"sys.exit", "os._exit"})
# Calls that start another program: a script that starts its workers with them, rank
# variables in their environment, is a launcher of its own (distributed/ranks.py).
PROGRAM_STARTS = frozenset(
    {f"subprocess.{name}" for name in ("Popen", "run", "call", "check_call", "check_output")}
    | {
        f"os.{name}"
        for name in (
            "execv execve execvp execvpe execl execle execlp execlpe spawnv spawnve spawnvp "
            "spawnvpe spawnl spawnle spawnlp spawnlpe posix_spawn posix_spawnp"
        ).split()
    }
    | {"asyncio.create_subprocess_exec"}
)
# Pick the current GPU: removed on XLA (one device per process).
SET_DEVICE_CALLS = frozenset(
    {"torch.cuda.set_device", "torch.accelerator.set_device_index", "torch.accelerator.set_device_idx"}
)

# Legacy typed constructors: torch.cuda.FloatTensor(...) -> torch.FloatTensor(...) on
# the XLA device.  Used as a value (``Tensor = torch.cuda.FloatTensor``) they stay.
CUDA_TENSOR_TYPES = frozenset(
    f"torch.cuda.{name}Tensor" for name in "Float Double Half BFloat16 Byte Char Short Int Long Bool".split()
)

# Mixed precision.  CUDA autocast: torch.cuda.amp.autocast(enabled, dtype, cache_enabled),
# whose dtype defaults to float16; torch.autocast(device_type, dtype, enabled,
# cache_enabled) and its alias torch.amp.autocast.  torch_xla.amp.autocast is
# torch.cuda.amp.autocast itself in torch_xla 1.13 (v1.13.0's torch_xla/amp/autocast_mode.py),
# and torch_xla.amp.autocast(device, enabled, dtype, cache_enabled) from 2.1 on.
CUDA_AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})
TORCH_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
XLA_AUTOCAST = frozenset({"torch_xla.amp.autocast", "torch_xla.amp.autocast_mode.autocast"})
AUTOCAST_PARAMETERS = {
    "cuda_amp": ("enabled", "dtype", "cache_enabled"),
    "torch": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch_xla": ("device", "enabled", "dtype", "cache_enabled"),
    "torch_xla_1_13": ("enabled", "dtype", "cache_enabled"),
}
# Gradient scalers: torch.cuda.amp.GradScaler(init_scale, ..., enabled) and torch_xla
# 1.13's torch_xla.amp.GradScaler take the same arguments; torch.amp.GradScaler takes
# the device first (default "cuda").
CUDA_GRAD_SCALERS = frozenset({"torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"})
TORCH_GRAD_SCALERS = frozenset({"torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler"})
XLA_GRAD_SCALERS = frozenset({"torch_xla.amp.GradScaler", "torch_xla.amp.grad_scaler.GradScaler"})
# The base class of custom autograd functions: their forward and backward run inside a step.
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
# Decorators for custom autograd functions under autocast.
CUDA_CUSTOM_AUTOGRAD = {"torch.cuda.amp.custom_fwd": "custom_fwd", "torch.cuda.amp.custom_bwd": "custom_bwd"}
# torch_xla 1.13's (torch.cuda.amp's own, re-exported; gone from torch_xla 2.9), and torch's
# device-generic ones, which take device_type= ("xla" from torch 2.4 on).
XLA_CUSTOM_AUTOGRAD = {"torch_xla.amp.custom_fwd": "custom_fwd", "torch_xla.amp.custom_bwd": "custom_bwd"}
TORCH_CUSTOM_AUTOGRAD = {"torch.amp.custom_fwd": "custom_fwd", "torch.amp.custom_bwd": "custom_bwd"}
# torch.optim classes that have a sync-free version in torch_xla.amp.syncfree (same arguments).
SYNCFREE_OPTIMIZERS = ("SGD", "Adam", "AdamW")
# Sparse gradients (checked on torch_xla 2.9, PJRT_DEVICE=CPU): the backward of an embedding
# built with sparse=True raises NotImplementedError ("Could not run
# 'aten::_sparse_coo_tensor_with_dims_and_tensors' with arguments from the 'SparseXLA'
# backend"); nn.EmbeddingBag(sparse=True) falls back to a dense gradient (torch_xla warns "XLA
# does not support EmbeddingBag sparse backward function") and trains; torch.optim.SparseAdam
# then raises "SparseAdam does not support dense gradients".
SPARSE_EMBEDDINGS = frozenset(
    {
        "torch.nn.Embedding",
        "torch.nn.modules.sparse.Embedding",
        "torch.nn.Embedding.from_pretrained",
        "torch.nn.modules.sparse.Embedding.from_pretrained",
        "torch.nn.functional.embedding",
    }
)
SPARSE_OPTIMIZERS = frozenset({"torch.optim.SparseAdam", "torch.optim.sparse_adam.SparseAdam"})
# Sparse tensors on XLA (checked likewise): moving a sparse COO tensor to the device raises
# NotImplementedError (SparseXLA); so do torch.spmm / torch.sparse.mm with an XLA operand, even
# with the sparse one left on the CPU.  Densify (.to_dense()) before the move.
SPARSE_CONSTRUCTORS = frozenset(
    {
        "torch.sparse_coo_tensor",
        "torch.sparse_csr_tensor",
        "torch.sparse_csc_tensor",
        "torch.sparse_compressed_tensor",
        "torch.sparse.FloatTensor",
        "torch.sparse.DoubleTensor",
        "torch.sparse.LongTensor",
    }
)
SPARSE_METHODS = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc"})
SPARSE_PRODUCTS = frozenset({"torch.spmm", "torch.sparse.mm", "torch.sparse.addmm", "torch.smm", "torch.hspmm"})
# Keywords of torch.optim that select CUDA/CPU kernels: not for XLA tensors.
KERNEL_KEYWORDS = frozenset({"fused", "foreach", "capturable"})
PRECISION_CHECKS = frozenset({"torch.cuda.is_bf16_supported"})

# torch.compile (PyTorch 2.0 and later; PyTorch 1.13 has none) and nn.Module.compile,
# which takes the same keywords.  Checked on torch 2.9 / torch_xla 2.9 (CPU): the default
# inductor backend fails on XLA tensors (InductorError: KeyError: 'xla'); "openxla" runs
# a training step, with fullgraph= and dynamic= as given; mode= and options= go to the
# backend, which ignores them (aot_autograd logs "ignoring extra kwargs").
TORCH_COMPILE = "torch.compile"
DYNAMO_OPTIMIZE = "torch._dynamo.optimize"  # before torch.compile: optimize(backend="inductor", ...)
COMPILE_KEYWORDS = frozenset({"fullgraph", "dynamic", "backend", "mode", "options", "disable"})
# Backends that target CUDA, and what they do on XLA tensors.
CUDA_COMPILE_BACKENDS = {
    "inductor": "fails on XLA tensors (InductorError: KeyError: 'xla')",
    "cudagraphs": "records CUDA graphs; on XLA tensors it skips them and runs the graph uncompiled",
}
# What the inductor-only options did (on CUDA); the openxla backend ignores them.
INDUCTOR_MODES = {
    "max-autotune": "tuned inductor's Triton matmul and convolution kernels and replayed CUDA graphs",
    "max-autotune-no-cudagraphs": "tuned inductor's Triton matmul and convolution kernels",
    "reduce-overhead": "replayed CUDA graphs to cut kernel-launch overhead",
}
INDUCTOR_OPTIONS = "set inductor's own configuration (torch._inductor.config)"
# The one key of ``options`` that torch.compile itself reads (for dynamo), not inductor.
DYNAMO_OPTION_KEYS = frozenset({"guard_filter_fn"})
# Settings of the compiler stack: dynamo traces the graphs torch_xla compiles (its
# settings still apply); inductor does not run on XLA (its settings do nothing).
COMPILER_SETTINGS = {
    "torch._dynamo.config.": "is a dynamo setting: dynamo still traces the graphs that the openxla backend "
    "compiles, so it applies on XLA too; check that it is still wanted",
    "torch._inductor.config.": "is an inductor setting: inductor does not compile for XLA (the openxla backend "
    "does), so it has no effect there; remove it",
}

DDP = "torch.nn.parallel.DistributedDataParallel"
# DistributedDataParallel, also as imported from the module that defines it.
DDP_CLASSES = frozenset({DDP, "torch.nn.parallel.distributed.DistributedDataParallel"})
# Multi-GPU APIs: their calls are ported (the distributed rules' hooks) or reported (XLA609).
# PyTorch-Ignite's launchers (``import ignite.distributed as idist``): idist.Parallel
# (backend, nproc_per_node, ...), idist.initialize(backend, ...) and idist.spawn(backend,
# fn, args, ...) take the backend first.  "nccl", "gloo" and "mpi" are torch.distributed's
# (ignite/distributed/comp_models/native.py), "xla-tpu" is ignite's XLA backend
# (comp_models/xla.py); with no backend (None) idist runs serially, on CUDA or the CPU.
IGNITE_LAUNCHERS = frozenset(
    {
        "ignite.distributed.Parallel",
        "ignite.distributed.launcher.Parallel",
        "ignite.distributed.initialize",
        "ignite.distributed.utils.initialize",
        "ignite.distributed.spawn",
        "ignite.distributed.utils.spawn",
    }
)
IGNITE_NATIVE_BACKENDS = frozenset({"nccl", "gloo", "mpi"})

# torch's dtypes (torch 2.9): ``module.to(torch.bfloat16)`` casts, it does not move.
DTYPES = frozenset(
    f"torch.{name}"
    for name in (
        "bfloat16 bool cdouble cfloat chalf complex128 complex32 complex64 double float float16 float32 "
        "float64 float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu half int int16 "
        "int32 int64 int8 long short uint16 uint32 uint64 uint8"
    ).split()
)

# Multi-GPU APIs: the distributed concern ports them or reports them.
DISTRIBUTED = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.distributed.init_process_group",
        "torch.multiprocessing.spawn",
        "torch.distributed.launch",
    }
)

# PyTorch FSDP (torch.distributed.fsdp): the wrapper, its argument types, the wrap
# policies that torch_xla has under the same names (torch_xla.distributed.fsdp.wrap,
# which call them with ``unwrapped_params=`` where torch says ``nonwrapped_numel=``),
# and the state-dict and checkpoint APIs that work on torch's FSDP modules only.
FSDP_MODULE = "torch.distributed.fsdp"


def _fsdp_paths(name: str) -> frozenset[str]:
    """A public name of torch.distributed.fsdp under each module that exports it."""
    return frozenset(f"{FSDP_MODULE}{sub}.{name}" for sub in ("", ".api", ".fully_sharded_data_parallel"))


FSDP_CLASSES = frozenset(
    {f"{FSDP_MODULE}.FullyShardedDataParallel", f"{FSDP_MODULE}.fully_sharded_data_parallel.FullyShardedDataParallel"}
)
# FullyShardedDataParallel(module, process_group, sharding_strategy, cpu_offload, auto_wrap_policy,
# backward_prefetch, mixed_precision, ignored_modules, param_init_fn, device_id, sync_module_states,
# forward_prefetch, limit_all_gathers, use_orig_params, ignored_states, device_mesh) in torch 2.9.
FSDP_PARAMETERS = (
    "module",
    "process_group",
    "sharding_strategy",
    "cpu_offload",
    "auto_wrap_policy",
    "backward_prefetch",
    "mixed_precision",
    "ignored_modules",
    "param_init_fn",
    "device_id",
    "sync_module_states",
    "forward_prefetch",
    "limit_all_gathers",
    "use_orig_params",
    "ignored_states",
    "device_mesh",
)
# torch_xla's wrapper (a script ported before): it reduce-scatters gradients itself too.
XLA_FSDP_CLASSES = frozenset(
    {
        "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",
        "torch_xla.distributed.fsdp.xla_fully_sharded_data_parallel.XlaFullyShardedDataParallel",
    }
)
# MixedPrecision(param_dtype, reduce_dtype, buffer_dtype, keep_low_precision_grads,
# cast_forward_inputs, cast_root_forward_inputs).
FSDP_MIXED_PRECISION = _fsdp_paths("MixedPrecision")
MIXED_PRECISION_PARAMETERS = (
    "param_dtype",
    "reduce_dtype",
    "buffer_dtype",
    "keep_low_precision_grads",
    "cast_forward_inputs",
    "cast_root_forward_inputs",
)
FSDP_CPU_OFFLOAD = _fsdp_paths("CPUOffload")
FSDP_SHARDING_STRATEGY = _fsdp_paths("ShardingStrategy")
FSDP_WRAP_POLICIES = (
    "always_wrap_policy",
    "lambda_auto_wrap_policy",
    "size_based_auto_wrap_policy",
    "transformer_auto_wrap_policy",
)
FSDP_WRAP = f"{FSDP_MODULE}.wrap"
FSDP_MODULE_WRAP_POLICY = f"{FSDP_WRAP}.ModuleWrapPolicy"
# The gradient scaler of torch's FSDP: torch.amp.GradScaler's arguments plus process_group;
# it agrees on found_inf over the process group (the xla one included).
SHARDED_GRAD_SCALERS = frozenset({f"{FSDP_MODULE}.sharded_grad_scaler.ShardedGradScaler"})
# torch's FSDP methods that gather, shard or convert state dicts, and the configuration
# types they take: on torch_xla's wrapper, state_dict() is always this process's shard.
FSDP_STATE_DICT_METHODS = frozenset(
    "state_dict_type set_state_dict_type get_state_dict_type full_optim_state_dict sharded_optim_state_dict "
    "optim_state_dict optim_state_dict_to_load shard_full_optim_state_dict scatter_full_optim_state_dict "
    "flatten_sharded_optim_state_dict rekey_optim_state_dict summon_full_params".split()
)
FSDP_STATE_DICT_TYPES = frozenset(
    path
    for name in "StateDictType FullStateDictConfig ShardedStateDictConfig LocalStateDictConfig "
    "FullOptimStateDictConfig ShardedOptimStateDictConfig LocalOptimStateDictConfig StateDictSettings".split()
    for path in _fsdp_paths(name)
)
DISTRIBUTED_CHECKPOINT = "torch.distributed.checkpoint"
# FSDP2 (per-module sharding on DTensor): torch_xla's counterpart is SPMD (FSDPv2), a
# different program structure.
FSDP2 = frozenset(
    {
        f"{FSDP_MODULE}.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard.fully_shard",
    }
)
# A DeviceMesh over CUDA devices and NCCL groups (FSDP2, tensor parallel): torch_xla's
# counterpart is its SPMD mesh (torch_xla.distributed.spmd.Mesh).
DEVICE_MESHES = frozenset({"torch.distributed.device_mesh.init_device_mesh", "torch.distributed.init_device_mesh"})

# torch.cuda names other rules take care of (rewritten, or reported with their own advice).
HANDLED_CUDA_APIS = AVAILABILITY_CHECKS | CUDA_TENSOR_TYPES | SET_DEVICE_CALLS | {"torch.cuda.synchronize"}
HANDLED_CUDA_PREFIXES = ("torch.cuda.amp.",)

# Clocks: a torch.cuda.synchronize() right before reading one times the device's work.
CLOCKS = frozenset(
    {
        "time.time",
        "time.perf_counter",
        "time.monotonic",
        "time.time_ns",
        "time.perf_counter_ns",
        "time.monotonic_ns",
        "timeit.default_timer",
        "datetime.datetime.now",
    }
)

# Accelerator methods that end the pending XLA graph (``xm.mark_step()``) on XLA (accelerate 1.15;
# ``_tpu_gather``, sizes gathered; ``accumulate`` syncs the gradients, which marks the step on a TPU).
ACCELERATE_STEP_ENDERS = frozenset(
    {"gather", "gather_for_metrics", "reduce", "pad_across_processes", "save_state", "accumulate"}
)
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# Iterable-style data sets: a DataLoader over one refuses a sampler (ValueError "DataLoader with
# IterableDataset: expected unspecified sampler option"; DistributedSampler itself raises
# TypeError first when the data set has no len(): checked on torch 2.9).  torch's base
# classes; webdataset's pipelines (WebDataset and DataPipeline derive from IterableDataset);
# torchdata's and torch's iterable datapipes (IterDataPipe); Hugging Face's streaming data sets
# (``load_dataset(..., streaming=True)`` and ``IterableDataset``, a torch IterableDataset when
# torch is installed).
ITERABLE_DATASET_CLASSES = frozenset(
    {
        "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.IterableDataset",
        "torch.utils.data.ChainDataset",
        "torch.utils.data.dataset.ChainDataset",
        "torch.utils.data.IterDataPipe",
        "datasets.IterableDataset",
        "datasets.iterable_dataset.IterableDataset",
    }
)
ITERABLE_DATASET_MODULES = ("webdataset.", "torchdata.datapipes.iter.", "torch.utils.data.datapipes.iter.")
STREAMING_LOADS = frozenset({"datasets.load_dataset"})  # iterable with streaming=True

# Reading a tensor's value to the host forces a graph execution in lazy mode.
HOST_READ_METHODS = frozenset({"item", "tolist", "cpu", "numpy"})
HOST_READ_BUILTINS = frozenset({"float", "print"})

OPTIMIZER_MODULE = "torch.optim"
SCHEDULER_MODULE = "torch.optim.lr_scheduler"
# torch.optim.swa_utils: SWALR is a learning-rate scheduler (an LRScheduler); AveragedModel
# and the rest are no optimizers either.
SWA_UTILS = "torch.optim.swa_utils"
SWA_SCHEDULER = f"{SWA_UTILS}.SWALR"
# Objects with a ``step()`` that takes no training step: torch.profiler's profile (its ``step()``
# advances the profiling schedule), and the ``nullcontext()`` that stands in for one when profiling
# is off (``prof = profile(...) if on else nullcontext()``).
PROFILERS = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile", "contextlib.nullcontext"})
# Optimizer classes of libraries (subclasses of torch.optim.Optimizer, stepped like them):
# transformers' AdamW (deprecated in 4.x, removed in 5: old code still names it) and Adafactor,
# every class of timm.optim, apex.optimizers and bitsandbytes.optim but these few that are none.
LIBRARY_OPTIMIZERS = frozenset(
    {
        "transformers.AdamW",
        "transformers.optimization.AdamW",
        "transformers.Adafactor",
        "transformers.optimization.Adafactor",
    }
)
LIBRARY_OPTIMIZER_MODULES = ("timm.optim.", "apex.optimizers.", "bitsandbytes.optim.")
LIBRARY_OPTIMIZER_OTHERS = frozenset({"OptimInfo", "OptimizerRegistry", "GlobalOptimManager"})
# Library functions that build an optimizer over the parameters of the module they are handed, and the
# position and keyword of that module: mmcv 1.x's build_optimizer(model, cfg) (mmcv/runner/optimizer/
# builder.py: an optimizer constructor called with the model, ``DefaultOptimizerConstructor`` reads
# ``model.named_parameters()``), and mmengine's build_optim_wrapper(model, cfg) (mmengine/optim/optimizer/
# builder.py: the same, the optimizer inside an OptimWrapper).
LIBRARY_OPTIMIZER_BUILDERS: dict[str, tuple[int, str]] = {
    "mmcv.runner.build_optimizer": (0, "model"),
    "mmcv.runner.optimizer.build_optimizer": (0, "model"),
    "mmcv.runner.optimizer.builder.build_optimizer": (0, "model"),
    "mmengine.optim.build_optim_wrapper": (0, "model"),
    "mmengine.optim.optimizer.build_optim_wrapper": (0, "model"),
    "mmengine.optim.optimizer.builder.build_optim_wrapper": (0, "model"),
}


def is_dtype(name: str | None, resolved: str | None) -> bool:
    """A ``.to()`` argument that casts rather than moves: a torch dtype (``resolved`` is what the
    file's imports make of it) or a name ending in ``dtype`` (``self.dtype``, ``weight_dtype``)."""
    return name is not None and (name.rsplit(".", 1)[-1].lower().endswith("dtype") or resolved in DTYPES)


def is_optimizer_class(callee: str) -> bool:
    """``callee`` is an optimizer class: of torch.optim (not swa_utils'), or a library's."""
    last = callee.rsplit(".", 1)[-1]
    if callee.startswith(OPTIMIZER_MODULE + "."):
        return not callee.startswith(SWA_UTILS + ".") and last[:1].isupper()
    return callee in LIBRARY_OPTIMIZERS or (
        callee.startswith(LIBRARY_OPTIMIZER_MODULES) and last[:1].isupper() and last not in LIBRARY_OPTIMIZER_OTHERS
    )


def optimizer_class(callee: str) -> str | None:
    """The optimizer class a callee names: ``torch.optim.AdamW`` or ``torch.optim.adamw.AdamW``
    -> "AdamW" (not the ``Optimizer`` base class)."""
    parts = callee.split(".")
    if parts[:2] != ["torch", "optim"] or not parts[-1][:1].isupper() or parts[-1] == "Optimizer":
        return None
    if len(parts) == 3 or (len(parts) == 4 and parts[2] == parts[3].lower()):
        return parts[-1]
    return None


MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Model classes of libraries, modules too: a subclass's ``forward`` is a forward computation.
LIBRARY_MODEL_BASES = frozenset({"transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel"})
# Dataset classes: what a subclass computes is host data (its items are made in DataLoader
# workers, on the CPU).
DATASET_BASES = frozenset(
    {
        "torch.utils.data.Dataset",
        "torch.utils.data.dataset.Dataset",
        "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.IterableDataset",
        # PyTorch Geometric's: ``process()`` saves the collated graphs once, ``__init__`` loads them.
        "torch_geometric.data.Dataset",
        "torch_geometric.data.InMemoryDataset",
        "torch_geometric.data.dataset.Dataset",
        "torch_geometric.data.in_memory_dataset.InMemoryDataset",
    }
)

# Containers built from keyword arguments whose members are read as attributes (``optims.gen``),
# and those read by key (``optims["gen"]``): what each member holds is followed (an optimizer
# kept in one is stepped like any other).
ATTRIBUTE_BAGS = frozenset(
    {"types.SimpleNamespace", "argparse.Namespace", "munch.Munch", "easydict.EasyDict", "addict.Dict"}
)
KEYED_CONTAINERS = frozenset({"dict", "collections.OrderedDict", "munch.Munch", "easydict.EasyDict", "addict.Dict"})
