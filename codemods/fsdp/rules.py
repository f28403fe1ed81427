"""XLA611-XLA613: PyTorch FSDP (rewrite.py says what each argument becomes)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

XLA_FSDP = Rule(
    code="XLA611",
    name="xla-fsdp",
    severity="error",
    summary="FullyShardedDataParallel becomes torch_xla's XlaFullyShardedDataParallel, its arguments mapped (mixed "
    "precision -> compute/buffer dtypes, sharding strategy, wrap policies); device_id and CUDA options dropped",
    fixable=True,
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
    examples=lambda: (
        invalid(
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
            findings=(
                Expected(9, 12, "FSDP(...) -> xla_fsdp.XlaFullyShardedDataParallel"),
                Expected(9, 73, "size_based_auto_wrap_policy -> xla_wrap.size_based_auto_wrap_policy"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch_xla.distributed.fsdp as xla_fsdp
            from torch_xla.distributed.fsdp.wrap import size_based_auto_wrap_policy


            def wrap(model):
                return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=size_based_auto_wrap_policy)
            """,
            note="already-xla",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision, ShardingStrategy


            def wrap(model, local_rank):
                return FSDP(
                    model,
                    sharding_strategy=ShardingStrategy.SHARD_GRAD_OP,
                    mixed_precision=MixedPrecision(param_dtype=torch.float16, reduce_dtype=torch.float32),
                    device_id=local_rank,
                )
            """,
            """
            import torch
            import torch_xla.distributed.fsdp as xla_fsdp


            def wrap(model, local_rank):
                return xla_fsdp.XlaFullyShardedDataParallel(
                    model,
                    reshard_after_forward=False,
                    compute_dtype=torch.bfloat16,
                    buffer_dtype=torch.float32,
                    fp32_reduce_scatter=True,
                )
            """,
            note="mixed-precision-and-strategy",
            findings=(Expected(6, 12, "FSDP(...) -> xla_fsdp.XlaFullyShardedDataParallel"),),
        ),
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def train(model, loader):
                model = FSDP(model)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    loss = model(x).sum()
                    loss.backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.fsdp as xla_fsdp


            def train(model, loader):
                model = xla_fsdp.XlaFullyShardedDataParallel(model)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    loss = model(x).sum()
                    loss.backward()
                    optimizer.step()
                    torch_xla.sync()
            """,
            note="plain-optimizer-step",
            findings=(Expected(7, 13, "FSDP(...) -> xla_fsdp.XlaFullyShardedDataParallel"),),
        ),
        invalid(
            """
            import functools
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision
            from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

            bf16 = MixedPrecision(param_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)


            def wrap(model, block, use_bf16):
                policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={block})
                return FSDP(model, auto_wrap_policy=policy, mixed_precision=bf16 if use_bf16 else None)
            """,
            """
            import functools
            import torch
            from torch.distributed.fsdp import MixedPrecision
            import torch_xla.distributed.fsdp as xla_fsdp
            import torch_xla.distributed.fsdp.wrap as xla_wrap

            bf16 = MixedPrecision(param_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)


            def wrap(model, block, use_bf16):
                policy = functools.partial(xla_wrap.transformer_auto_wrap_policy, transformer_layer_cls={block})
                return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=policy, compute_dtype=torch.bfloat16 if use_bf16 else None, buffer_dtype=torch.bfloat16 if use_bf16 else None)
            """,
            note="policy-by-name",
            findings=(
                Expected(11, 32, "transformer_auto_wrap_policy -> xla_wrap.transformer_auto_wrap_policy"),
                Expected(12, 12, "FSDP(...) -> xla_fsdp.XlaFullyShardedDataParallel"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision


            def wrap(model):
                return FSDP(model, mixed_precision=MixedPrecision(param_dtype=torch.float16), device_id=torch.cuda.current_device())
            """,
            target="sagemaker",
            note="sagemaker-reported",
            findings=(Expected(6, 12, "`FSDP` (torch's FSDP) does not run on the XLA device"),),
        ),
        invalid(
            """
            import torch.distributed.fsdp as fsdp
            from torch.distributed.fsdp import wrap as wrapping


            def wrap(model):
                model = fsdp.FullyShardedDataParallel(model, auto_wrap_policy=wrapping.always_wrap_policy)
                assert isinstance(model, fsdp.FullyShardedDataParallel)
                return model
            """,
            """
            import torch_xla.distributed.fsdp as xla_fsdp
            import torch_xla.distributed.fsdp.wrap as xla_wrap


            def wrap(model):
                model = xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=xla_wrap.always_wrap_policy)
                assert isinstance(model, xla_fsdp.XlaFullyShardedDataParallel)
                return model
            """,
            note="module-alias",
            alias=True,
            findings=(
                Expected(6, 13, "fsdp.FullyShardedDataParallel(...) -> xla_fsdp.XlaFullyShardedDataParallel"),
                Expected(6, 74, "wrapping.always_wrap_policy -> xla_wrap.always_wrap_policy"),
                Expected(7, 30, "fsdp.FullyShardedDataParallel -> xla_fsdp.XlaFullyShardedDataParallel"),
            ),
        ),
        invalid(
            """
            import functools
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def big_enough(module, recurse, nonwrapped_numel, min_params=10**6):
                return recurse or nonwrapped_numel >= min_params


            def wrap(model):
                return FSDP(model, auto_wrap_policy=functools.partial(big_enough, min_params=1000))
            """,
            """
            import functools
            import torch_xla.distributed.fsdp as xla_fsdp


            def big_enough(module, recurse, unwrapped_params, min_params=10**6):
                return recurse or unwrapped_params >= min_params


            def wrap(model):
                return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=functools.partial(big_enough, min_params=1000))
            """,
            note="torch-style-policy",
            findings=(
                Expected(5, 1, "`big_enough` takes `unwrapped_params` for torch's `nonwrapped_numel`"),
                Expected(10, 12, "FSDP(...) -> xla_fsdp.XlaFullyShardedDataParallel"),
            ),
        ),
    ),
)

FSDP_MANUAL = Rule(
    code="XLA612",
    name="fsdp-manual",
    severity="error",
    summary="FSDP options that torch_xla's FSDP does not have (CPU offload, ignored modules, process groups, hybrid or no "
    "sharding, FSDP2's fully_shard and CUDA device meshes): what to do by hand",
    fixable=False,
    why="Each of these is left as it is, so the converted script stops at it with a TypeError rather than "
    "training differently: what it asked for has no torch_xla equivalent the tool could write.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(6, 24, "`cpu_offload=CPUOffload(offload_params=True)`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from torch.distributed.device_mesh import init_device_mesh


            def groups():
                return init_device_mesh("cpu", (2,), mesh_dim_names=("dp",))
            """,
            note="cpu-device-mesh",
        ),
        valid(
            """
            from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP


            def wrap(model):
                return FSDP(model, cpu_offload=CPUOffload(offload_params=False), sync_module_states=False, use_orig_params=True)
            """,
            """
            import torch_xla.distributed.fsdp as xla_fsdp


            def wrap(model):
                return xla_fsdp.XlaFullyShardedDataParallel(model)
            """,
            note="defaults-dropped",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from torch.distributed.device_mesh import init_device_mesh


            def groups(world_size):
                return init_device_mesh("cuda", (world_size,), mesh_dim_names=("dp",))
            """,
            note="cuda-device-mesh",
            findings=(Expected(5, 12, "builds a DeviceMesh over CUDA devices and NCCL process groups"),),
        ),
        invalid(
            """
            import torch.distributed as dist


            def groups(kind, shape):
                return dist.init_device_mesh(device_type=kind, mesh_shape=shape)
            """,
            note="device-mesh-of-a-device-chosen-at-run-time",
            alias=True,
            findings=(Expected(5, 12, "torch_xla.distributed.spmd.Mesh"),),
        ),
        invalid(
            """
            import torch.distributed.fsdp as fsdp
            from torch.distributed.fsdp.wrap import ModuleWrapPolicy


            def wrap(model, Block):
                return fsdp.FullyShardedDataParallel(
                    model, auto_wrap_policy=ModuleWrapPolicy({Block}), sharding_strategy=fsdp.ShardingStrategy.NO_SHARD
                )
            """,
            """
            import torch.distributed.fsdp as fsdp
            import functools
            import torch_xla.distributed.fsdp as xla_fsdp
            import torch_xla.distributed.fsdp.wrap as xla_wrap


            def wrap(model, Block):
                return xla_fsdp.XlaFullyShardedDataParallel(
                    model, auto_wrap_policy=functools.partial(xla_wrap.transformer_auto_wrap_policy, transformer_layer_cls={Block}), sharding_strategy=fsdp.ShardingStrategy.NO_SHARD
                )
            """,
            note="wrap-policy-and-no-shard",
            findings=(Expected(9, 60, "`sharding_strategy=fsdp.ShardingStrategy.NO_SHARD`"),),
        ),
        invalid(
            """
            from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP


            def wrap(model):
                return FSDP(model, cpu_offload=CPUOffload(offload_params=True), sync_module_states=True)
            """,
            """
            from torch.distributed.fsdp import CPUOffload
            import torch_xla.distributed.fsdp as xla_fsdp


            def wrap(model):
                return xla_fsdp.XlaFullyShardedDataParallel(model, cpu_offload=CPUOffload(offload_params=True), sync_module_states=True)
            """,
            note="offload-and-sync",
            findings=(
                Expected(6, 24, "`cpu_offload=CPUOffload(offload_params=True)`"),
                Expected(6, 69, "`sync_module_states=True`"),
            ),
        ),
        invalid(
            """
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def big_enough(module, recurse, nonwrapped_numel, unwrapped_params=None):
                return recurse or nonwrapped_numel >= 1000


            def wrap(model):
                return FSDP(model, auto_wrap_policy=big_enough)
            """,
            """
            import torch_xla.distributed.fsdp as xla_fsdp


            def big_enough(module, recurse, nonwrapped_numel, unwrapped_params=None):
                return recurse or nonwrapped_numel >= 1000


            def wrap(model):
                return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=big_enough)
            """,
            note="torch-style-policy-kept",
            findings=(Expected(9, 24, "`big_enough` takes torch's `nonwrapped_numel`"),),
        ),
        invalid(
            """
            from torch.distributed.fsdp import fully_shard as shard


            def wrap(model):
                for block in model.blocks:
                    shard(block)
                shard(model)
            """,
            note="fsdp2",
            alias=True,
            findings=(
                Expected(6, 9, "`shard` (FSDP2) has no torch_xla counterpart"),
                Expected(7, 5, "`shard` (FSDP2) has no torch_xla counterpart"),
            ),
        ),
    ),
)

FSDP_STATE_DICT = Rule(
    code="XLA613",
    name="fsdp-state-dict",
    severity="error",
    summary="FSDP state-dict types and torch.distributed.checkpoint work on torch's FSDP only: save each process's shard "
    "with its shard metadata, and consolidate",
    fixable=False,
    why="torch_xla's FSDP has no state-dict types: model.state_dict() is always this process's shard (flattened "
    "names, a slice of each parameter), so a checkpoint that rank 0 saved as the full model would silently hold "
    "one shard. torch_xla saves every process's shard with model.get_shard_metadata() and joins them with "
    "torch_xla.distributed.fsdp.consolidate_sharded_model_checkpoints.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(7, 10, "`FSDP.state_dict_type` works on torch's FSDP modules only"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def save(model, ema, path):
                model = FSDP(model)
                torch.save(ema.state_dict(), path)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.fsdp as xla_fsdp


            def save(model, ema, path):
                model = xla_fsdp.XlaFullyShardedDataParallel(model)
                xm.save(ema.state_dict(), path)
            """,
            note="other-model",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, FullStateDictConfig, StateDictType


            def save(model):
                config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
                with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
                    state = model.state_dict()
                return state
            """,
            note="state-dict-type",
            findings=(
                Expected(6, 14, "`FullStateDictConfig` works on torch's FSDP modules only"),
                Expected(7, 10, "`FSDP.state_dict_type` works on torch's FSDP modules only"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            class Trainer:
                def __init__(self, model):
                    self.model = FSDP(model)

                def save(self, path):
                    torch.save(self.model.state_dict(), path)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.fsdp as xla_fsdp


            class Trainer:
                def __init__(self, model):
                    self.model = xla_fsdp.XlaFullyShardedDataParallel(model)

                def save(self, path):
                    xm.save(self.model.state_dict(), path)
            """,
            note="sharded-state-dict",
            findings=(
                Expected(11, 17, "`self.model.state_dict()` of an FSDP model is this process's shard on torch_xla"),
            ),
        ),
        invalid(
            """
            import torch.distributed.checkpoint as dcp
            from torch.distributed.checkpoint.state_dict import get_state_dict as state_of


            def save(model, optimizer):
                model_state, optimizer_state = state_of(model, optimizer)
                dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id="ckpt")
            """,
            note="distributed-checkpoint",
            alias=True,
            findings=(
                Expected(6, 36, "`torch.distributed.checkpoint.state_dict.get_state_dict` saves and loads"),
                Expected(
                    7, 5, "`torch.distributed.checkpoint.save` saves and loads torch's sharded (FSDP, DTensor) state"
                ),
            ),
        ),
    ),
)

RULES = (XLA_FSDP, FSDP_MANUAL, FSDP_STATE_DICT)
