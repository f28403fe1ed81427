"""What the distributed rules' hooks share: the arguments they write, an argument removed, a
node replaced with its finding, the words for the runtime's ranks and sizes and where a read
runs (loaded by the hooks: a rule module loads no LibCST)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import libcst as cst

from codemods.distributed.facts import PROCESS_GROUP_DROPPED
from codemods.engine.nodes import KEYWORD_EQUAL, counterpart, with_comma
from codemods.engine.rewriter import Context, NodeT
from codemods.engine.rule import Rule

if TYPE_CHECKING:
    from codemods.facts import Facts


def entry_from_spawn(ctx: Context[Facts]) -> bool:
    """Where the platform calls _mp_fn, a spawning main guard becomes it: what the guard
    reads runs in the workers, from the XLA runtime."""
    return ctx.facts.distributed.spawn_guard is not None and ctx.target.runtime_calls_entry


def runs_in_workers(ctx: Context[Facts], node: cst.CSTNode) -> bool:
    """A read of the launching process (``facts.distributed.parent_reads``, ``launcher_counts``)
    that runs in the workers all the same: it is in a spawning main guard that becomes _mp_fn
    (``node`` is the node the traversal is leaving: its ancestors are the context's)."""
    guard = ctx.facts.distributed.spawn_guard
    return entry_from_spawn(ctx) and any(ancestor is guard for ancestor in ctx.ancestors)


# What each runtime concept a rank or size read becomes is, in a finding.
CONCEPT_WORDS = {
    "global_ordinal": "global rank",
    "local_ordinal": "local rank",
    "world_size": "world size",
    "local_process_count": "processes on this host",
}


def replaced(
    ctx: Context[Any],
    rule: Rule,
    original: NodeT,
    updated: NodeT,
    why: str,
    build: Callable[[], cst.BaseExpression | None],
) -> cst.BaseExpression:
    """``original`` -> what ``build`` makes (what was inside it is gone, findings too)."""
    fixed = ctx.fix(rule, original, f"{ctx.code(original)} -> {{new}}: {why}", build)
    if fixed is None:
        return updated  # type: ignore[return-value]  # callers pass an expression as ``updated`` (NodeT is not bound to expressions)
    ctx.forget_removed(original, updated)
    return fixed


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=KEYWORD_EQUAL)


def joined(args: list[cst.Arg]) -> list[cst.Arg]:
    """The arguments on one line, separated by ", "."""
    return (
        [with_comma(arg) for arg in args[:-1]] + [args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        if args
        else []
    )


def forget_removed_arg(ctx: Context[Any], original: cst.Call, updated: cst.Call, arg: cst.Arg) -> None:
    """``arg`` goes from the call (with the findings inside it), unless it went before."""
    new = counterpart(original, updated, arg)
    if new is not None:
        ctx.forget_removed(arg, new)


def new_value(original: cst.Call, updated: cst.Call, value: cst.BaseExpression) -> cst.BaseExpression:
    """What the argument ``value`` of ``original`` became in ``updated``."""
    new = counterpart(original, updated, next(arg for arg in original.args if arg.value is value))
    return new.value if new is not None else value


def other_group_args(
    ctx: Context[Any],
    original: cst.Call,
    updated: cst.Call,
    arguments: tuple[tuple[str, cst.Arg], ...],
    written: Mapping[str, bool],
) -> list[cst.Arg]:
    """A process group's arguments (``arguments``, by parameter name) as keywords of its port, in
    their order, but for those the port writes itself (``written``: True where what it wrote keeps
    the argument, else the argument goes, with the findings inside it) and those it drops
    (PROCESS_GROUP_DROPPED, which go)."""
    args = []
    for name, arg in arguments:
        if name in written or name in PROCESS_GROUP_DROPPED:
            if not written.get(name, False):
                forget_removed_arg(ctx, original, updated, arg)
            continue
        args.append(keyword_arg(name, new_value(original, updated, arg.value)))
    return args
