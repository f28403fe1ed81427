"""What the arguments of torch's ``FSDP(module, ...)`` become on torch_xla's
XlaFullyShardedDataParallel (XLA611's port of the call, xla611_xla_fsdp.py): kept, dropped,
mapped (mixed precision, sharding strategy) or reported (XLA612) and kept.  The port of one
call decides, argument by argument, so XLA612's findings on a call's arguments are made here,
in the one rebuild of the call; the rule modules load this one (and LibCST) from their hooks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import KEYWORD_EQUAL, call_args, dotted
from codemods.fsdp.rules.xla612_fsdp_manual import FSDP_MANUAL
from codemods.targets import Api

if TYPE_CHECKING:
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# Arguments that only steer CUDA placement, streams and prefetching: nothing on XLA.
_DROPPED = frozenset({"device_id", "backward_prefetch", "forward_prefetch", "limit_all_gathers", "use_orig_params"})
# Arguments dropped when they say what torch_xla does anyway.
_DEFAULT_FALSE = frozenset({"sync_module_states"})
_NONE_DROPPED = frozenset({"process_group", "ignored_modules", "ignored_states", "device_mesh", "cpu_offload"})
_FLOAT16 = frozenset({"torch.float16", "torch.half"})
_FLOAT32 = frozenset({"torch.float32", "torch.float"})

_WHY_KEPT = {
    "process_group": "torch_xla's FSDP shards over every process (or the sharding_groups= it is given)",
    "ignored_modules": "torch_xla's FSDP shards every parameter of the module: move the ignored modules out of it",
    "ignored_states": "torch_xla's FSDP shards every parameter of the module: move the ignored ones out of it",
    "device_mesh": "torch_xla's FSDP takes no device mesh: hybrid sharding is sharding_groups=, sharding_rank=, "
    "sharding_world_size=",
    "cpu_offload": "torch_xla's FSDP has no CPU offload: parameters stay on the device (shard over more devices, "
    "or wrap blocks with torch_xla.distributed.fsdp.checkpoint_module to save memory)",
    "sync_module_states": "torch_xla's FSDP does not broadcast rank 0's weights: seed every process alike before "
    "building the model, or call xm.broadcast_master_param(model) before wrapping",
}


@dataclass(frozen=True)
class MappedArguments:
    # The call's arguments on torch_xla's wrapper: those kept (as the traversal made them),
    # then those added, laid out as the call's were.
    args: list[cst.Arg]
    # The arguments that go: each as it was and as the traversal made it.
    removed: list[tuple[cst.Arg, cst.Arg]]
    # What the port did beyond renaming the class, for its message ("dropped device_id; ...").
    details: list[str]


def mapped_arguments(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> MappedArguments:
    """What ``original``'s arguments become (reporting those it keeps that torch_xla's FSDP
    has no counterpart for)."""
    target = ctx.target
    new_args = {id(o): u for o, u in zip(original.args, updated.args)}
    kept: list[cst.Arg] = []
    added: list[cst.Arg] = []
    dropped: list[str] = []
    notes: list[str] = []
    removed_args: list[cst.Arg] = []
    by_arg = {id(arg): name for name, arg in ctx.facts.fsdp.wraps[original].arguments}
    for arg in original.args:
        name = by_arg.get(id(arg))
        new = new_args[id(arg)]
        if name is None:  # *args / **kwargs
            ctx.report(
                FSDP_MANUAL,
                arg,
                f"`{ctx.code(arg)}` is passed on to torch_xla's FSDP unchecked: make sure it holds none of "
                "torch's FSDP options (device_id, sharding_strategy, mixed_precision, cpu_offload, ...)",
            )
            kept.append(new)
            continue
        if name == "module":
            kept.append(new)
        elif name in _DROPPED:
            dropped.append(name)
            removed_args.append(arg)
        elif name == "mixed_precision":
            mapped = _mixed_precision(ctx, arg.value)
            if mapped is None:
                kept.append(new)
            else:
                added.extend(mapped[0])
                notes.extend(mapped[1])
                removed_args.append(arg)
        elif name == "sharding_strategy":
            strategy = _sharding_strategy(ctx, arg)
            if strategy is None:
                kept.append(new)
            else:
                added.extend(strategy)
                removed_args.append(arg)
                if strategy:
                    notes.append("SHARD_GRAD_OP -> reshard_after_forward=False")
        elif name in _NONE_DROPPED or name in _DEFAULT_FALSE:
            if (
                is_name(arg.value, "None")
                or (name in _DEFAULT_FALSE and is_name(arg.value, "False"))
                or (name == "cpu_offload" and _no_offload(ctx, arg.value))
            ):
                dropped.append(name)
                removed_args.append(arg)
            else:
                ctx.report(FSDP_MANUAL, arg, f"`{ctx.code(arg).rstrip(',')}`: {_WHY_KEPT[name]}")
                kept.append(new)
        elif name in ("auto_wrap_policy", "param_init_fn"):
            if name not in target.fsdp_keywords:
                ctx.report(
                    FSDP_MANUAL,
                    arg,
                    f"`{name}`: torch_xla {target.torch_xla_version}'s FSDP takes none; wrap the submodules in "
                    "XlaFullyShardedDataParallel yourself",
                )
            elif arg in ctx.facts.fsdp.numel_policies:
                function = ctx.facts.fsdp.numel_policies[arg]
                ctx.report(
                    FSDP_MANUAL,
                    arg,
                    f"`{function}` takes torch's `nonwrapped_numel`: torch_xla's FSDP calls its policy with "
                    "`unwrapped_params=`; rename the parameter",
                )
            kept.append(new)
        else:
            ctx.report(
                FSDP_MANUAL,
                arg,
                f"`{ctx.code(arg).rstrip(',')}`: not an argument of torch_xla's XlaFullyShardedDataParallel",
            )
            kept.append(new)
    details = []
    if dropped:
        details.append(f"dropped {', '.join(dropped)}")
    details.extend(notes)
    return MappedArguments(
        laid_out([*kept, *added], updated), [(arg, new_args[id(arg)]) for arg in removed_args], details
    )


def _sharding_strategy(ctx: Context[Facts], arg: cst.Arg) -> list[cst.Arg] | None:
    """FULL_SHARD: nothing (torch_xla's default); SHARD_GRAD_OP: reshard_after_forward=False;
    others: reported (None)."""
    owner, _, strategy = (ctx.resolve(arg.value) or "").rpartition(".")
    if owner not in apis.FSDP_SHARDING_STRATEGY:
        strategy = ""
    if strategy == "FULL_SHARD":
        return []
    if strategy == "SHARD_GRAD_OP" and "reshard_after_forward" in ctx.target.fsdp_keywords:
        return [keyword("reshard_after_forward", cst.Name("False"))]
    why = {
        "NO_SHARD": "torch_xla's FSDP always shards: for replicated parameters use DistributedDataParallel",
        "HYBRID_SHARD": "hybrid sharding is torch_xla's sharding_groups=, sharding_rank=, sharding_world_size=",
        "_HYBRID_SHARD_ZERO2": "hybrid sharding is torch_xla's sharding_groups=, sharding_rank=, "
        "sharding_world_size= (with reshard_after_forward=False)",
    }.get(
        strategy,
        "the tool cannot tell which strategy this is: FULL_SHARD is torch_xla's default, "
        "SHARD_GRAD_OP is reshard_after_forward=False",
    )
    ctx.report(FSDP_MANUAL, arg, f"`{ctx.code(arg).rstrip(',')}`: {why}")
    return None


def _no_offload(ctx: Context[Facts], value: cst.BaseExpression) -> bool:
    """``CPUOffload()`` or ``CPUOffload(offload_params=False)``."""
    if not isinstance(value, cst.Call) or ctx.resolve(value.func) not in apis.FSDP_CPU_OFFLOAD:
        return False
    return all(is_name(a.value, "False") for a in value.args if not a.star) and not any(a.star for a in value.args)


# -- mixed precision --------------------------------------------------------------------------


def _mixed_precision(ctx: Context[Facts], value: cst.BaseExpression) -> tuple[list[cst.Arg], list[str]] | None:
    """The keywords of torch_xla's FSDP for a mixed-precision value: a MixedPrecision
    call, a name bound once to one, None, or a choice between those
    (``policy if args.bf16 else None``).  None (and a report) if it cannot be mapped."""
    leaves: list[cst.Call | None] = []
    if not _precision_leaves(ctx, value, leaves):
        ctx.report(
            FSDP_MANUAL,
            value,
            f"mixed_precision={ctx.code(value)}: the tool cannot read this policy; torch_xla's FSDP takes "
            "compute_dtype= (MixedPrecision's param_dtype), buffer_dtype= and fp32_reduce_scatter=",
        )
        return None
    per_leaf: list[dict[str, cst.BaseExpression]] = []
    notes: list[str] = []
    for leaf in leaves:
        mapped = _precision_keywords(ctx, leaf, value, notes)
        if mapped is None:
            return None
        per_leaf.append(mapped)
    keywords: list[cst.Arg] = []
    for name in ("compute_dtype", "buffer_dtype", "fp32_reduce_scatter"):
        if all(name not in mapped for mapped in per_leaf):
            continue
        if name not in ctx.target.fsdp_keywords:
            ctx.report(
                FSDP_MANUAL,
                value,
                f"mixed_precision={ctx.code(value)}: torch_xla {ctx.target.torch_xla_version}'s FSDP "
                f"takes no {name}= (what MixedPrecision asks for here)",
            )
            return None
        default: cst.BaseExpression = cst.Name("False" if name == "fp32_reduce_scatter" else "None")
        built = _choice(ctx, value, [m.get(name, default) for m in per_leaf])
        keywords.append(keyword(name, built))
    return keywords, notes


def _precision_leaves(ctx: Context[Facts], value: cst.BaseExpression, leaves: list[cst.Call | None]) -> bool:
    if isinstance(value, cst.IfExp):
        return _precision_leaves(ctx, value.body, leaves) and _precision_leaves(ctx, value.orelse, leaves)
    if is_name(value, "None"):
        leaves.append(None)
        return True
    if isinstance(value, cst.Call) and ctx.resolve(value.func) in apis.FSDP_MIXED_PRECISION:
        leaves.append(value)
        return True
    name = dotted(value)
    if name is not None and name in ctx.facts.fsdp.precision_policies:
        leaves.append(ctx.facts.fsdp.precision_policies[name])
        return True
    return False


def _choice(ctx: Context[Facts], value: cst.BaseExpression, values: list[cst.BaseExpression]) -> cst.BaseExpression:
    """``value``'s choice structure with each leaf replaced by the next mapped value
    (one value, if every leaf maps to the same code)."""
    if len({ctx.code(v) for v in values}) == 1:
        return values[0]
    return _rebuilt(value, iter(values))


def _precision_keywords(
    ctx: Context[Facts], leaf: cst.Call | None, value: cst.BaseExpression, notes: list[str]
) -> dict[str, cst.BaseExpression] | None:
    if leaf is None:
        return {}
    if any(a.star for a in leaf.args):
        ctx.report(
            FSDP_MANUAL,
            value,
            f"`{ctx.code(leaf)}` unpacks its arguments: set compute_dtype= "
            "(param_dtype), buffer_dtype= and fp32_reduce_scatter= of torch_xla's FSDP by hand",
        )
        return None
    fields: dict[str, cst.BaseExpression] = {}
    positional = [a for a in leaf.args if a.keyword is None]
    for index, arg in enumerate(positional[: len(apis.MIXED_PRECISION_PARAMETERS)]):
        fields[apis.MIXED_PRECISION_PARAMETERS[index]] = arg.value
    fields.update({k: a.value for k, a in call_args(leaf)[1].items()})
    unmapped = [
        k
        for k, v in fields.items()
        if k in ("keep_low_precision_grads", "cast_forward_inputs")
        and not is_name(v, "False")
        or k == "cast_root_forward_inputs"
        and not is_name(v, "True")
        or k not in apis.MIXED_PRECISION_PARAMETERS
    ]
    if unmapped:
        ctx.report(FSDP_MANUAL, value, f"`{ctx.code(leaf)}`: torch_xla's FSDP has no {', '.join(unmapped)}")
        return None
    param, reduce, buffer = (fields.get(k) for k in ("param_dtype", "reduce_dtype", "buffer_dtype"))
    mapped: dict[str, cst.BaseExpression] = {}
    if param is not None and not is_name(param, "None"):
        mapped["compute_dtype"] = _dtype(ctx, param, notes)
        mapped["buffer_dtype"] = _dtype(ctx, buffer, notes) if buffer is not None else _torch(ctx, "float32")
        if reduce is not None and ctx.resolve(reduce) in _FLOAT32 and ctx.resolve(param) not in _FLOAT32:
            mapped["fp32_reduce_scatter"] = cst.Name("True")
        elif reduce is not None and ctx.code(reduce) != ctx.code(param) and not is_name(reduce, "None"):
            ctx.report(
                FSDP_MANUAL,
                value,
                f"`{ctx.code(leaf)}`: torch_xla's FSDP reduces gradients in "
                "the compute dtype or (fp32_reduce_scatter=True) in float32 only",
            )
            return None
    elif buffer is not None and not is_name(buffer, "None"):
        mapped["buffer_dtype"] = _dtype(ctx, buffer, notes)
    elif reduce is not None and not is_name(reduce, "None") and ctx.resolve(reduce) not in _FLOAT32:
        ctx.report(
            FSDP_MANUAL,
            value,
            f"`{ctx.code(leaf)}`: without a compute dtype torch_xla's FSDP reduces gradients in float32",
        )
        return None
    return mapped


def _dtype(ctx: Context[Facts], node: cst.BaseExpression, notes: list[str]) -> cst.BaseExpression:
    precision = ctx.target.autocast_dtype
    if precision is not None and ctx.resolve(node) in _FLOAT16:
        note = f"float16 -> {precision}: XLA devices compute in {precision}"
        if note not in notes:
            notes.append(note)
        return _torch(ctx, precision)
    return node.deep_clone()


def _torch(ctx: Context[Facts], dtype: str) -> cst.BaseExpression:
    return ctx.imports.expression(Api("torch", dtype)) or cst.parse_expression(f"torch.{dtype}")


def _rebuilt(node: cst.BaseExpression, leaves: Iterator[cst.BaseExpression]) -> cst.BaseExpression:
    """A choice (``a if c else b``) with its leaves taken from ``leaves``, in order."""
    if isinstance(node, cst.IfExp):
        body = _rebuilt(node.body, leaves)
        return node.with_changes(body=body, test=node.test.deep_clone(), orelse=_rebuilt(node.orelse, leaves))
    return next(leaves)


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=KEYWORD_EQUAL)


def is_name(node: cst.CSTNode | None, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def laid_out(args: list[cst.Arg], like: cst.Call) -> list[cst.Arg]:
    """The kept arguments, then the new ones, separated as ``like``'s were (one per line,
    or inline) and ending as its list did (a trailing comma or not)."""
    if not args:
        return args
    last_comma = like.args[-1].comma if like.args else cst.MaybeSentinel.DEFAULT
    trailing = isinstance(last_comma, cst.Comma)
    separator = next((a.comma for a in like.args[:-1] if isinstance(a.comma, cst.Comma)), None)
    if separator is None:
        separator = (
            last_comma if type(last_comma) is cst.Comma else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
    laid = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            laid.append(arg.with_changes(comma=last_comma if trailing else cst.MaybeSentinel.DEFAULT))
        elif isinstance(arg.comma, cst.Comma) and arg.comma is not last_comma:
            laid.append(arg)
        else:
            laid.append(arg.with_changes(comma=separator))
    return laid
