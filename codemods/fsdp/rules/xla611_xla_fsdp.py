"""XLA611 xla-fsdp: torch's FullyShardedDataParallel becomes torch_xla's
XlaFullyShardedDataParallel, its arguments mapped where their meaning carries over:

* ``mixed_precision=MixedPrecision(param_dtype, reduce_dtype, buffer_dtype)`` ->
  ``compute_dtype`` (float16 becomes bfloat16 on the 2.9 target, as for autocast),
  ``buffer_dtype`` (torch keeps buffers in their own precision unless told: float32 is
  written then, as torch_xla would cast them to the compute dtype), and
  ``fp32_reduce_scatter=True`` for a float32 ``reduce_dtype`` (torch_xla reduces in the
  compute dtype otherwise, as torch does without a reduce dtype);
* ``sharding_strategy``: FULL_SHARD is the default, SHARD_GRAD_OP is
  ``reshard_after_forward=False``; the others (no sharding, hybrid sharding) are reported;
* torch's wrap policies become torch_xla's of the same name (torch_xla calls them with
  ``unwrapped_params=``), and ``ModuleWrapPolicy(classes)`` a partial of
  ``transformer_auto_wrap_policy``;
* ``device_id`` (the wrapper lives on the XLA device), and the CUDA prefetch and
  rate-limit options go; ``use_orig_params`` goes (torch_xla keeps the original
  parameters unless told to flatten them).

An argument that has no counterpart is reported by XLA612 (FSDP_MANUAL) as the call is
ported, and left as it is: what each argument becomes is wrap_arguments.py's, loaded (with
LibCST) by the hook that ports the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codemods import apis
from codemods.engine.hooks import on_facts, on_references, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.targets import Api

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

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


# -- the wrapper ------------------------------------------------------------------------------


@on_references(XLA_FSDP, names=apis.FSDP_CLASSES)
def _class_reference(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    """``isinstance(m, FSDP)`` and the callee of ``FSDP(...)``: torch_xla's class."""
    import libcst as cst

    if "fsdp" not in ctx.target.apis:
        return updated  # no FSDP port: the wrappers are reported
    parent = ctx.parent()
    if isinstance(parent, cst.Call) and parent.func is original:
        return updated  # the call itself is rewritten with its arguments
    return ctx.fix_or_keep(
        updated,
        XLA_FSDP,
        original,
        f"{ctx.code(original)} -> {{new}}: torch_xla's FSDP class",
        lambda: _xla_class(ctx, original),
    )


def _xla_class(ctx: Context[Facts], original: cst.CSTNode) -> cst.BaseExpression | None:
    func = ctx.imports.expression(ctx.target.api("fsdp"))
    if func is not None:
        ctx.imports.discard(original)
    return func


@on_facts(XLA_FSDP, nodes=lambda facts: facts.fsdp.wraps)
def _wrap(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``FSDP(module, ...)``: torch_xla's wrapper with the arguments that carry over."""
    from codemods.fsdp.rules.wrap_arguments import mapped_arguments

    target = ctx.target
    if "fsdp" not in target.apis:
        ctx.report(
            XLA_FSDP,
            original,
            f"`{ctx.code(original.func)}` (torch's FSDP) does not run on the XLA device: port it by hand to "
            f"torch_xla {target.torch_xla_version}'s torch_xla.distributed.fsdp.XlaFullyShardedDataParallel "
            "(compute_dtype= for mixed precision, submodules wrapped by hand) and keep optimizer.step()",
        )
        return updated
    arguments = mapped_arguments(ctx, original, updated)
    note = f" ({'; '.join(arguments.details)})" if arguments.details else ""

    def build() -> cst.Call | None:
        func = _xla_class(ctx, original.func)
        if func is None:
            return None
        for removed, new in arguments.removed:
            ctx.forget_removed(removed, new)
        return updated.with_changes(func=func, args=arguments.args)

    return ctx.fix_or_keep(
        updated,
        XLA_FSDP,
        original,
        f"{ctx.code(original.func)}(...) -> {{new}}: torch_xla's FSDP on the XLA device{note}; the optimizer "
        "step stays optimizer.step() (xm.optimizer_step would reduce the sharded gradients again)",
        build,
        result=lambda call: call.func,
    )


@reports_facts(XLA_FSDP, nodes=lambda facts: facts.fsdp.foreign_training)
def _trained_elsewhere(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"{ctx.facts.fsdp.foreign_training[original]} trains this FSDP model: keep its optimizer.step() plain there, "
        "with the step barrier after it (that module does not wrap the model itself: converted without this "
        "file, its step becomes xm.optimizer_step, which would reduce the sharded gradients a second time); "
        "convert the two together (the project folder) and the step stays plain"
    )


# -- wrap policies ----------------------------------------------------------------------------


@on_references(XLA_FSDP, names=frozenset(f"{apis.FSDP_WRAP}.{name}" for name in apis.FSDP_WRAP_POLICIES))
def _policy(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    """torch's wrap policies: torch_xla's of the same name."""
    if "fsdp" not in ctx.target.apis:
        return updated  # no FSDP port: the wrappers are reported
    concept = f"fsdp_{qualified.rpartition('.')[2]}"

    def build() -> cst.BaseExpression | None:
        new = ctx.imports.expression(ctx.target.api(concept))
        if new is not None:
            ctx.imports.discard(original)
        return new

    return ctx.fix_or_keep(
        updated,
        XLA_FSDP,
        original,
        f"{ctx.code(original)} -> {{new}}: torch_xla's FSDP calls its policies with unwrapped_params=",
        build,
    )


@on_facts(XLA_FSDP, nodes=lambda facts: facts.fsdp.module_wrap_policies)
def _module_wrap_policy(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``ModuleWrapPolicy(classes)`` -> ``functools.partial(transformer_auto_wrap_policy,
    transformer_layer_cls=classes)``: both wrap the submodules of those classes."""
    import libcst as cst

    from codemods.engine.nodes import KEYWORD_EQUAL

    if "fsdp" not in ctx.target.apis:
        return updated

    def build() -> cst.Call | None:
        partial = ctx.imports.expression(Api("functools", "partial"))
        policy = ctx.imports.expression(ctx.target.api("fsdp_transformer_auto_wrap_policy"))
        if partial is None or policy is None:
            return None
        ctx.imports.discard(original.func)
        classes = updated.args[0].with_changes(
            keyword=cst.Name("transformer_layer_cls"), equal=KEYWORD_EQUAL, comma=cst.MaybeSentinel.DEFAULT
        )
        first = cst.Arg(policy, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return cst.Call(partial, [first, classes])

    return ctx.fix_or_keep(
        updated,
        XLA_FSDP,
        original,
        f"{ctx.code(original)} -> {{new}}: torch_xla's FSDP takes policy functions; this one wraps the same submodules",
        build,
    )


@on_facts(XLA_FSDP, nodes=lambda facts: facts.fsdp.policy_renames)
def _policy_parameter(
    ctx: Context[Facts], original: cst.FunctionDef, updated: cst.FunctionDef
) -> cst.CSTNode | cst.FlattenSentinel[Any] | cst.RemovalSentinel:
    """A policy written for torch (``nonwrapped_numel``) takes torch_xla's ``unwrapped_params``."""
    import libcst as cst

    class Renamer(cst.CSTTransformer):
        """Every ``nonwrapped_numel`` name (the parameter and its uses) becomes ``unwrapped_params``."""

        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            if updated_node.value == "nonwrapped_numel":
                return updated_node.with_changes(value="unwrapped_params")
            return updated_node

    if "fsdp" not in ctx.target.apis:
        return updated
    return ctx.fix_or_keep(
        updated,
        XLA_FSDP,
        original,
        f"`{original.name.value}` takes `unwrapped_params` for torch's `nonwrapped_numel`: torch_xla's FSDP calls "
        "its policy with that keyword",
        lambda: updated.visit(Renamer()),
    )
