"""XLA611-XLA613: PyTorch FSDP (rewrite.py says what each argument becomes)."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

XLA_FSDP = Rule(
    "XLA611", "xla-fsdp", "error",
    "FullyShardedDataParallel becomes torch_xla's XlaFullyShardedDataParallel, its arguments mapped (mixed "
    "precision -> compute/buffer dtypes, sharding strategy, wrap policies); device_id and CUDA options dropped",
    True,
    why="torch's FSDP finds no backend for the XLA device under the xla process group (\"Device 'xla:0' does not "
    "have a corresponding backend registered\"). torch_xla's FSDP shards over the XLA processes, one per device, "
    "which is how the tool launches the script; its gradients are reduce-scattered by the wrapper, so the "
    "optimizer step stays optimizer.step() with the step barrier after it (xm.optimizer_step would all-reduce "
    "the sharded gradients again). torch's MixedPrecision(param_dtype, reduce_dtype, buffer_dtype) is "
    "compute_dtype, fp32_reduce_scatter (a float32 reduce dtype) and buffer_dtype (float32 when torch's policy "
    "leaves buffers alone). torch_xla's wrap policies have torch's names but take unwrapped_params=: a policy "
    "function of the script's own gets that parameter name, and ModuleWrapPolicy(classes) becomes "
    "functools.partial(transformer_auto_wrap_policy, transformer_layer_cls=classes). "
    "The SPMD-based FSDPv2 (torch_xla.experimental.spmd_fully_sharded_data_parallel) is not what the tool "
    "writes: it needs one process per host, a device mesh and inputs sharded over it, a different program "
    "than the one-process-per-device script that torch's FSDP runs.",
    examples=(example(
        """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision
        from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy


        def wrap(model, rank):
            policy = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            return FSDP(model, auto_wrap_policy=size_based_auto_wrap_policy, mixed_precision=policy, device_id=rank)
        """,
        """
        import torch
        from torch.distributed.fsdp import MixedPrecision
        import torch_xla.distributed.fsdp as xla_fsdp
        import torch_xla.distributed.fsdp.wrap as xla_wrap


        def wrap(model, rank):
            policy = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=xla_wrap.size_based_auto_wrap_policy, compute_dtype=torch.bfloat16, buffer_dtype=torch.float32, fp32_reduce_scatter=True)
        """,
    ),),
)

FSDP_MANUAL = Rule(
    "XLA612", "fsdp-manual", "error",
    "FSDP options that torch_xla's FSDP does not have (CPU offload, ignored modules, process groups, hybrid or no "
    "sharding, FSDP2's fully_shard): what to do by hand", False,
    why="Each of these is left as it is, so the converted script stops at it with a TypeError rather than "
    "training differently: what it asked for has no torch_xla equivalent the tool could write.",
    examples=(example(
        """
        from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP


        def wrap(model):
            return FSDP(model, cpu_offload=CPUOffload(offload_params=True))
        """,
        """
        from torch.distributed.fsdp import CPUOffload
        import torch_xla.distributed.fsdp as xla_fsdp


        def wrap(model):
            return xla_fsdp.XlaFullyShardedDataParallel(model, cpu_offload=CPUOffload(offload_params=True))
        """,
    ),),
)

FSDP_STATE_DICT = Rule(
    "XLA613", "fsdp-state-dict", "error",
    "FSDP state-dict types and torch.distributed.checkpoint work on torch's FSDP only: save each process's shard "
    "with its shard metadata, and consolidate", False,
    why="torch_xla's FSDP has no state-dict types: model.state_dict() is always this process's shard (flattened "
    "names, a slice of each parameter), so a checkpoint that rank 0 saved as the full model would silently hold "
    "one shard. torch_xla saves every process's shard with model.get_shard_metadata() and joins them with "
    "torch_xla.distributed.fsdp.consolidate_sharded_model_checkpoints.",
    examples=(example(
        """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType


        def save(model):
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
                torch.save(model.state_dict(), "model.pt")
        """,
        """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
        import torch_xla.core.xla_model as xm


        def save(model):
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
                xm.save(model.state_dict(), "model.pt")
        """,
    ),),
)

RULES = (XLA_FSDP, FSDP_MANUAL, FSDP_STATE_DICT)
