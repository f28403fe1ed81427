"""FSDP (XLA611-XLA613): torch's FullyShardedDataParallel becomes torch_xla's
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
  ``unwrapped_params=``);
* ``device_id`` (the wrapper lives on the XLA device), and the CUDA prefetch and
  rate-limit options go; ``use_orig_params`` goes (torch_xla keeps the original
  parameters unless told to flatten them).

What has no counterpart (CPU offload, ignored modules, process groups, ModuleWrapPolicy,
FSDP2, sync_module_states) is reported and left as it is: the converted script fails on
it, at once.  So are state-dict and checkpoint APIs (XLA613): torch_xla's state_dict() is
the process's shard.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import KEYWORD_EQUAL, call_args, dotted
from codemods.engine.rewriter import Concern
from codemods.fsdp.facts import FsdpWrap
from codemods.fsdp.rules import FSDP_MANUAL, FSDP_STATE_DICT, XLA_FSDP
from codemods.targets import Api

if TYPE_CHECKING:
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


class FsdpRewrite(Concern):
    facts: Facts

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        fsdp = self.facts.fsdp
        if original in fsdp.wraps:
            return self._wrap(original, updated, fsdp.wraps[original])
        if original in fsdp.module_wrap_policies and "fsdp" in self.ctx.target.apis:
            return self._module_wrap_policy(original, updated)
        if original in fsdp.foreign_training:
            self.ctx.report(
                XLA_FSDP,
                original,
                f"{fsdp.foreign_training[original]} trains this FSDP model: keep its optimizer.step() plain there, "
                "with the step barrier after it (that module does not wrap the model itself: converted without this "
                "file, its step becomes xm.optimizer_step, which would reduce the sharded gradients a second time); "
                "convert the two together (the project folder) and the step stays plain",
            )
        if original in fsdp.state_dicts:
            self._state_dict(original)
        elif original in fsdp.device_meshes:
            self.ctx.report(
                FSDP_MANUAL,
                original,
                f"`{self.ctx.code(original.func)}(...)` builds a DeviceMesh over CUDA devices and NCCL process groups, "
                "which an XLA machine has none of: on XLA, "
                + self.ctx.target.advice(
                    f"{apis.SPMD_MESH_ADVICE}wrap the model in torch_xla.distributed.fsdp.XlaFullyShardedDataParallel "
                    "(one process per device)"
                ),
            )
        elif original in fsdp.fully_shards:
            self.ctx.report(
                FSDP_MANUAL,
                original,
                f"`{self.ctx.code(original.func)}` (FSDP2) has no torch_xla counterpart: wrap the model in "
                "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel (one process per device)"
                + self.ctx.target.advice(apis.SPMD_FSDP_ADVICE),
            )
        return updated

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        if "fsdp" not in self.ctx.target.apis:
            return updated  # no FSDP port: the wrappers are reported
        if qualified in apis.FSDP_CLASSES:
            return self._class_reference(original, updated)
        owner, _, name = qualified.rpartition(".")
        if owner == apis.FSDP_WRAP and name in apis.FSDP_WRAP_POLICIES:
            return self._policy(original, updated, name)
        if qualified == apis.FSDP_MODULE_WRAP_POLICY:
            parent = self.ctx.parent()
            if (
                isinstance(parent, cst.Call)
                and parent.func is original
                and parent in self.facts.fsdp.module_wrap_policies
            ):
                return updated  # the call is rewritten
            node = parent if isinstance(parent, cst.Call) and parent.func is original else original
            self.ctx.report(
                FSDP_MANUAL,
                node,
                f"`{self.ctx.code(node)}`: torch_xla's FSDP takes a policy function, not ModuleWrapPolicy; use "
                "functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={...}) from "
                "torch_xla.distributed.fsdp.wrap",
            )
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        self._state_dict(original)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        self._state_dict(original)
        return updated

    # -- the wrapper --------------------------------------------------------------------------

    def _class_reference(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        """``isinstance(m, FSDP)`` and the callee of ``FSDP(...)``: torch_xla's class."""
        parent = self.ctx.parent()
        if isinstance(parent, cst.Call) and parent.func is original:
            return updated  # the call itself is rewritten with its arguments
        return self.ctx.fix_or_keep(
            updated,
            XLA_FSDP,
            original,
            f"{self.ctx.code(original)} -> {{new}}: torch_xla's FSDP class",
            lambda: self._xla_class(original),
        )

    def _xla_class(self, original: cst.CSTNode) -> cst.BaseExpression | None:
        func = self.ctx.imports.expression(self.ctx.target.api("fsdp"))
        if func is not None:
            self.ctx.imports.discard(original)
        return func

    def _wrap(self, original: cst.Call, updated: cst.Call, wrap: FsdpWrap) -> cst.BaseExpression:
        target = self.ctx.target
        if "fsdp" not in target.apis:
            self.ctx.report(
                XLA_FSDP,
                original,
                f"`{self.ctx.code(original.func)}` (torch's FSDP) does not run on the XLA device: port it by hand to "
                f"torch_xla {target.torch_xla_version}'s torch_xla.distributed.fsdp.XlaFullyShardedDataParallel "
                "(compute_dtype= for mixed precision, submodules wrapped by hand) and keep optimizer.step()",
            )
            return updated
        new_args = {id(o): u for o, u in zip(original.args, updated.args)}
        kept: list[cst.Arg] = []
        added: list[cst.Arg] = []
        dropped: list[str] = []
        notes: list[str] = []
        removed_args: list[cst.Arg] = []
        by_arg = {id(arg): name for name, arg in wrap.arguments}
        for arg in original.args:
            name = by_arg.get(id(arg))
            new = new_args[id(arg)]
            if name is None:  # *args / **kwargs
                self.ctx.report(
                    FSDP_MANUAL,
                    arg,
                    f"`{self.ctx.code(arg)}` is passed on to torch_xla's FSDP unchecked: make sure it holds none of "
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
                mapped = self._mixed_precision(arg.value)
                if mapped is None:
                    kept.append(new)
                else:
                    added.extend(mapped[0])
                    notes.extend(mapped[1])
                    removed_args.append(arg)
            elif name == "sharding_strategy":
                strategy = self._sharding_strategy(arg)
                if strategy is None:
                    kept.append(new)
                else:
                    added.extend(strategy)
                    removed_args.append(arg)
                    if strategy:
                        notes.append("SHARD_GRAD_OP -> reshard_after_forward=False")
            elif name in _NONE_DROPPED or name in _DEFAULT_FALSE:
                if (
                    _is_name(arg.value, "None")
                    or (name in _DEFAULT_FALSE and _is_name(arg.value, "False"))
                    or (name == "cpu_offload" and self._no_offload(arg.value))
                ):
                    dropped.append(name)
                    removed_args.append(arg)
                else:
                    self.ctx.report(FSDP_MANUAL, arg, f"`{self.ctx.code(arg).rstrip(',')}`: {_WHY_KEPT[name]}")
                    kept.append(new)
            elif name in ("auto_wrap_policy", "param_init_fn"):
                if name not in target.fsdp_keywords:
                    self.ctx.report(
                        FSDP_MANUAL,
                        arg,
                        f"`{name}`: torch_xla {target.torch_xla_version}'s FSDP takes none; wrap the submodules in "
                        "XlaFullyShardedDataParallel yourself",
                    )
                elif arg in self.facts.fsdp.numel_policies:
                    function = self.facts.fsdp.numel_policies[arg]
                    self.ctx.report(
                        FSDP_MANUAL,
                        arg,
                        f"`{function}` takes torch's `nonwrapped_numel`: torch_xla's FSDP calls its policy with "
                        "`unwrapped_params=`; rename the parameter",
                    )
                kept.append(new)
            else:
                self.ctx.report(
                    FSDP_MANUAL,
                    arg,
                    f"`{self.ctx.code(arg).rstrip(',')}`: not an argument of torch_xla's XlaFullyShardedDataParallel",
                )
                kept.append(new)
        details = []
        if dropped:
            details.append(f"dropped {', '.join(dropped)}")
        details.extend(notes)
        note = f" ({'; '.join(details)})" if details else ""

        def build() -> cst.Call | None:
            func = self._xla_class(original.func)
            if func is None:
                return None
            for arg in removed_args:
                self.ctx.forget_removed(arg, new_args[id(arg)])
            return updated.with_changes(func=func, args=_laid_out([*kept, *added], updated))

        return self.ctx.fix_or_keep(
            updated,
            XLA_FSDP,
            original,
            f"{self.ctx.code(original.func)}(...) -> {{new}}: torch_xla's FSDP on the XLA device{note}; the optimizer "
            "step stays optimizer.step() (xm.optimizer_step would reduce the sharded gradients again)",
            build,
            result=lambda call: call.func,
        )

    def _sharding_strategy(self, arg: cst.Arg) -> list[cst.Arg] | None:
        """FULL_SHARD: nothing (torch_xla's default); SHARD_GRAD_OP: reshard_after_forward=False;
        others: reported (None)."""
        owner, _, strategy = (self.ctx.resolve(arg.value) or "").rpartition(".")
        if owner not in apis.FSDP_SHARDING_STRATEGY:
            strategy = ""
        if strategy == "FULL_SHARD":
            return []
        if strategy == "SHARD_GRAD_OP" and "reshard_after_forward" in self.ctx.target.fsdp_keywords:
            return [_keyword("reshard_after_forward", cst.Name("False"))]
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
        self.ctx.report(FSDP_MANUAL, arg, f"`{self.ctx.code(arg).rstrip(',')}`: {why}")
        return None

    def _no_offload(self, value: cst.BaseExpression) -> bool:
        """``CPUOffload()`` or ``CPUOffload(offload_params=False)``."""
        if not isinstance(value, cst.Call) or self.ctx.resolve(value.func) not in apis.FSDP_CPU_OFFLOAD:
            return False
        return all(_is_name(a.value, "False") for a in value.args if not a.star) and not any(a.star for a in value.args)

    # -- mixed precision ------------------------------------------------------------------------

    def _mixed_precision(self, value: cst.BaseExpression) -> tuple[list[cst.Arg], list[str]] | None:
        """The keywords of torch_xla's FSDP for a mixed-precision value: a MixedPrecision
        call, a name bound once to one, None, or a choice between those
        (``policy if args.bf16 else None``).  None (and a report) if it cannot be mapped."""
        leaves: list[cst.Call | None] = []
        if not self._precision_leaves(value, leaves):
            self.ctx.report(
                FSDP_MANUAL,
                value,
                f"mixed_precision={self.ctx.code(value)}: the tool cannot read this policy; torch_xla's FSDP takes "
                "compute_dtype= (MixedPrecision's param_dtype), buffer_dtype= and fp32_reduce_scatter=",
            )
            return None
        per_leaf: list[dict[str, cst.BaseExpression]] = []
        notes: list[str] = []
        for leaf in leaves:
            mapped = self._precision_keywords(leaf, value, notes)
            if mapped is None:
                return None
            per_leaf.append(mapped)
        keywords: list[cst.Arg] = []
        for name in ("compute_dtype", "buffer_dtype", "fp32_reduce_scatter"):
            if all(name not in mapped for mapped in per_leaf):
                continue
            if name not in self.ctx.target.fsdp_keywords:
                self.ctx.report(
                    FSDP_MANUAL,
                    value,
                    f"mixed_precision={self.ctx.code(value)}: torch_xla {self.ctx.target.torch_xla_version}'s FSDP "
                    f"takes no {name}= (what MixedPrecision asks for here)",
                )
                return None
            default: cst.BaseExpression = cst.Name("False" if name == "fp32_reduce_scatter" else "None")
            built = self._choice(value, [m.get(name, default) for m in per_leaf])
            keywords.append(_keyword(name, built))
        return keywords, notes

    def _precision_leaves(self, value: cst.BaseExpression, leaves: list[cst.Call | None]) -> bool:
        if isinstance(value, cst.IfExp):
            return self._precision_leaves(value.body, leaves) and self._precision_leaves(value.orelse, leaves)
        if _is_name(value, "None"):
            leaves.append(None)
            return True
        if isinstance(value, cst.Call) and self.ctx.resolve(value.func) in apis.FSDP_MIXED_PRECISION:
            leaves.append(value)
            return True
        name = dotted(value)
        if name is not None and name in self.facts.fsdp.precision_policies:
            leaves.append(self.facts.fsdp.precision_policies[name])
            return True
        return False

    def _choice(self, value: cst.BaseExpression, values: list[cst.BaseExpression]) -> cst.BaseExpression:
        """``value``'s choice structure with each leaf replaced by the next mapped value
        (one value, if every leaf maps to the same code)."""
        if len({self.ctx.code(v) for v in values}) == 1:
            return values[0]
        return _rebuilt(value, iter(values))

    def _precision_keywords(
        self, leaf: cst.Call | None, value: cst.BaseExpression, notes: list[str]
    ) -> dict[str, cst.BaseExpression] | None:
        if leaf is None:
            return {}
        if any(a.star for a in leaf.args):
            self.ctx.report(
                FSDP_MANUAL,
                value,
                f"`{self.ctx.code(leaf)}` unpacks its arguments: set compute_dtype= "
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
            and not _is_name(v, "False")
            or k == "cast_root_forward_inputs"
            and not _is_name(v, "True")
            or k not in apis.MIXED_PRECISION_PARAMETERS
        ]
        if unmapped:
            self.ctx.report(
                FSDP_MANUAL, value, f"`{self.ctx.code(leaf)}`: torch_xla's FSDP has no {', '.join(unmapped)}"
            )
            return None
        param, reduce, buffer = (fields.get(k) for k in ("param_dtype", "reduce_dtype", "buffer_dtype"))
        mapped: dict[str, cst.BaseExpression] = {}
        if param is not None and not _is_name(param, "None"):
            mapped["compute_dtype"] = self._dtype(param, notes)
            mapped["buffer_dtype"] = self._dtype(buffer, notes) if buffer is not None else self._torch("float32")
            if reduce is not None and self.ctx.resolve(reduce) in _FLOAT32 and self.ctx.resolve(param) not in _FLOAT32:
                mapped["fp32_reduce_scatter"] = cst.Name("True")
            elif reduce is not None and self.ctx.code(reduce) != self.ctx.code(param) and not _is_name(reduce, "None"):
                self.ctx.report(
                    FSDP_MANUAL,
                    value,
                    f"`{self.ctx.code(leaf)}`: torch_xla's FSDP reduces gradients in "
                    "the compute dtype or (fp32_reduce_scatter=True) in float32 only",
                )
                return None
        elif buffer is not None and not _is_name(buffer, "None"):
            mapped["buffer_dtype"] = self._dtype(buffer, notes)
        elif reduce is not None and not _is_name(reduce, "None") and self.ctx.resolve(reduce) not in _FLOAT32:
            self.ctx.report(
                FSDP_MANUAL,
                value,
                f"`{self.ctx.code(leaf)}`: without a compute dtype torch_xla's FSDP reduces gradients in float32",
            )
            return None
        return mapped

    def _dtype(self, node: cst.BaseExpression, notes: list[str]) -> cst.BaseExpression:
        precision = self.ctx.target.autocast_dtype
        if precision is not None and self.ctx.resolve(node) in _FLOAT16:
            note = f"float16 -> {precision}: XLA devices compute in {precision}"
            if note not in notes:
                notes.append(note)
            return self._torch(precision)
        return node.deep_clone()

    def _torch(self, dtype: str) -> cst.BaseExpression:
        return self.ctx.imports.expression(Api("torch", dtype)) or cst.parse_expression(f"torch.{dtype}")

    # -- wrap policies --------------------------------------------------------------------------

    def _policy(self, original: cst.CSTNode, updated: cst.CSTNode, name: str) -> cst.CSTNode:
        concept = f"fsdp_{name}"

        def build() -> cst.BaseExpression | None:
            new = self.ctx.imports.expression(self.ctx.target.api(concept))
            if new is not None:
                self.ctx.imports.discard(original)
            return new

        return self.ctx.fix_or_keep(
            updated,
            XLA_FSDP,
            original,
            f"{self.ctx.code(original)} -> {{new}}: torch_xla's FSDP calls its policies with unwrapped_params=",
            build,
        )

    def _module_wrap_policy(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``ModuleWrapPolicy(classes)`` -> ``functools.partial(transformer_auto_wrap_policy,
        transformer_layer_cls=classes)``: both wrap the submodules of those classes."""

        def build() -> cst.Call | None:
            partial = self.ctx.imports.expression(Api("functools", "partial"))
            policy = self.ctx.imports.expression(self.ctx.target.api("fsdp_transformer_auto_wrap_policy"))
            if partial is None or policy is None:
                return None
            self.ctx.imports.discard(original.func)
            classes = updated.args[0].with_changes(
                keyword=cst.Name("transformer_layer_cls"), equal=KEYWORD_EQUAL, comma=cst.MaybeSentinel.DEFAULT
            )
            first = cst.Arg(policy, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            return cst.Call(partial, [first, classes])

        return self.ctx.fix_or_keep(
            updated,
            XLA_FSDP,
            original,
            f"{self.ctx.code(original)} -> {{new}}: torch_xla's FSDP takes policy functions; this one wraps the same "
            "submodules",
            build,
        )

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """A policy written for torch (``nonwrapped_numel``) takes torch_xla's ``unwrapped_params``."""
        if original not in self.facts.fsdp.policy_renames or "fsdp" not in self.ctx.target.apis:
            return updated
        return self.ctx.fix_or_keep(  # type: ignore[return-value]  # the replacement is a FunctionDef (build renames its parameter): fix_or_keep's type is wider
            updated,
            XLA_FSDP,
            original,
            f"`{original.name.value}` takes `unwrapped_params` for torch's `nonwrapped_numel`: torch_xla's FSDP calls "
            "its policy with that keyword",
            lambda: updated.visit(_Renamer("nonwrapped_numel", "unwrapped_params")),
        )

    # -- state dicts and checkpoints ---------------------------------------------------------------

    def _state_dict(self, original: cst.CSTNode) -> None:
        what = self.facts.fsdp.state_dicts.get(original)
        if what is not None:
            rank = self.ctx.target.api("global_ordinal")
            shown = f"{rank.alias or rank.module}.{rank.attr}()"
            self.ctx.report(FSDP_STATE_DICT, original, _state_dict_message(what, shown))


def _state_dict_message(what: str, rank: str) -> str:
    if what.startswith(apis.DISTRIBUTED_CHECKPOINT):
        start = (
            f"`{what}` saves and loads torch's sharded (FSDP, DTensor) state: on torch_xla model.state_dict() is "
            "this process's shard."
        )
    elif what.endswith("()"):
        start = f"`{what}` of an FSDP model is this process's shard on torch_xla (torch's gathers the full state)."
    else:
        start = f"`{what}` works on torch's FSDP modules only: on torch_xla model.state_dict() is this process's shard."
    return (
        f"{start} Save {{'model': model.state_dict(), 'shard_metadata': model.get_shard_metadata()}} per process "
        f"(xm.save(..., f'rank{{{rank}}}.pth', master_only=False)) and join the shards with "
        "torch_xla.distributed.fsdp.consolidate_sharded_model_checkpoints"
    )


class _Renamer(cst.CSTTransformer):
    """Every ``old`` name (parameters and uses) becomes ``new``."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.new) if updated_node.value == self.old else updated_node


def _rebuilt(node: cst.BaseExpression, leaves: Iterator[cst.BaseExpression]) -> cst.BaseExpression:
    """A choice (``a if c else b``) with its leaves taken from ``leaves``, in order."""
    if isinstance(node, cst.IfExp):
        body = _rebuilt(node.body, leaves)
        return node.with_changes(body=body, test=node.test.deep_clone(), orelse=_rebuilt(node.orelse, leaves))
    return next(leaves)


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=KEYWORD_EQUAL)


def _is_name(node: cst.CSTNode | None, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _laid_out(args: list[cst.Arg], like: cst.Call) -> list[cst.Arg]:
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
