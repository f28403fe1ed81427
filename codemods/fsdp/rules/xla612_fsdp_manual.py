"""XLA612 fsdp-manual: what torch_xla's FSDP has no counterpart for (CPU offload, ignored
modules, process groups, hybrid or no sharding, ModuleWrapPolicy, FSDP2's fully_shard, CUDA
device meshes) is reported and left as it is: the converted script fails on it, at once.
The arguments of an ``FSDP(...)`` call are reported by XLA611's hook, which ports the call
(xla611_xla_fsdp.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import on_references, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

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


@reports_facts(FSDP_MANUAL, nodes=lambda facts: facts.fsdp.device_meshes)
def _device_mesh(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original.func)}(...)` builds a DeviceMesh over CUDA devices and NCCL process groups, "
        "which an XLA machine has none of: on XLA, "
        + ctx.target.advice(
            f"{apis.SPMD_MESH_ADVICE}wrap the model in torch_xla.distributed.fsdp.XlaFullyShardedDataParallel "
            "(one process per device)"
        )
    )


@reports_facts(FSDP_MANUAL, nodes=lambda facts: facts.fsdp.fully_shards)
def _fully_shard(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original.func)}` (FSDP2) has no torch_xla counterpart: wrap the model in "
        "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel (one process per device)"
        + ctx.target.advice(apis.SPMD_FSDP_ADVICE)
    )


@on_references(FSDP_MANUAL, names=apis.FSDP_MODULE_WRAP_POLICY)
def _module_wrap_policy(
    ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str
) -> cst.CSTNode:
    """ModuleWrapPolicy, where it is not a call XLA611 rewrites (``ModuleWrapPolicy(classes)``)."""
    import libcst as cst

    if "fsdp" not in ctx.target.apis:
        return updated  # no FSDP port: the wrappers are reported
    parent = ctx.parent()
    called = isinstance(parent, cst.Call) and parent.func is original
    if called and parent in ctx.facts.fsdp.module_wrap_policies:
        return updated  # the call is rewritten
    node = parent if called and parent is not None else original
    ctx.report(
        FSDP_MANUAL,
        node,
        f"`{ctx.code(node)}`: torch_xla's FSDP takes a policy function, not ModuleWrapPolicy; use "
        "functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={...}) from "
        "torch_xla.distributed.fsdp.wrap",
    )
    return updated
