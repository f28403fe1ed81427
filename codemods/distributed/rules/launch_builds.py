"""What XLA603's hooks build (xla603_xla_launch.py): the launcher's call made of a spawn's
arguments, the worker's own call in ``_mp_fn(index)``, and ``_mp_fn(index)`` made of a main
guard's code with the guard that now starts it.  The rule, its messages and cases stay in its
module, whose hooks load this one (and LibCST) when they port a node: a rule module loads no
LibCST."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.distributed.rules.edits import forget_removed_arg, joined, keyword_arg, new_value
from codemods.engine.nodes import with_comma
from codemods.targets import ENTRY_FUNCTION

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


def launch_call(
    ctx: Context[Facts],
    original: cst.Call,
    updated: cst.Call,
    fn: cst.BaseExpression,
    args: cst.BaseExpression | None,
    start_method: cst.BaseExpression | None,
) -> cst.Call | None:
    """``launch(fn, args=..., start_method=...)`` from what these nodes became."""
    func = ctx.imports.expression(ctx.target.api("launch"))
    if func is None:
        return None
    new_args = [cst.Arg(new_value(original, updated, fn))]
    if args is not None:
        new_args.append(keyword_arg("args", new_value(original, updated, args)))
    if start_method is not None:
        new_args.append(keyword_arg("start_method", new_value(original, updated, start_method)))
    ctx.imports.discard(original.func)
    for arg in original.args:
        if arg.value not in (fn, args, start_method):
            forget_removed_arg(ctx, original, updated, arg)
    return updated.with_changes(func=func, args=joined(new_args))


def xmp_spawn_arguments(
    call: cst.Call,
) -> tuple[cst.BaseExpression, cst.BaseExpression | None, cst.BaseExpression | None] | None:
    """The worker, ``args`` and ``start_method`` of an old ``xmp.spawn(...)`` call, which the
    launch call is made of (None without a positional worker)."""
    fn = call.args[0].value if call.args and call.args[0].keyword is None else None
    if fn is None:
        return None
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    args = keywords.get("args", positional[1] if len(positional) > 1 else None)
    start = keywords.get("start_method", positional[5] if len(positional) > 5 else None)
    return fn, args, start


def worker_call(
    ctx: Context[Facts], original: cst.Call, updated: cst.Call, fn: cst.BaseExpression, args: cst.BaseExpression | None
) -> cst.Call:
    """``fn(index, *args)``: in ``_mp_fn(index)``, which the platform runs in every process, the
    spawn's worker itself."""
    new_args = [cst.Arg(cst.Name("index"))]
    values = new_value(original, updated, args) if args is not None else None
    if isinstance(values, cst.Tuple):
        new_args += [
            cst.Arg(element.value, star="*" if isinstance(element, cst.StarredElement) else "")
            for element in values.elements
        ]
    elif values is not None:
        new_args.append(cst.Arg(values, star="*"))
    ctx.imports.discard(original.func)
    for arg in original.args:
        if arg.value is not fn and arg.value is not args:
            forget_removed_arg(ctx, original, updated, arg)
    return cst.Call(func=new_value(original, updated, fn), args=joined(new_args))


def entry_function(
    ctx: Context[Facts],
    updated: cst.If,
    body_block: cst.IndentedBlock,
    moved: Sequence[cst.BaseStatement],
    shared: Sequence[str],
) -> cst.FlattenSentinel[cst.BaseStatement] | None:
    """``def _mp_fn(index):`` holding the main guard's code (after the ``moved`` statements,
    with ``global`` for the ``shared`` names the guard binds), and the guard, which now starts
    it with the target's launcher."""
    launch = ctx.call("launch", [with_comma(cst.Arg(cst.Name(ENTRY_FUNCTION))), keyword_arg("args", cst.Tuple([]))])
    if launch is None:
        return None
    body = [*moved, *body_block.body]
    if shared:
        declaration = cst.SimpleStatementLine([cst.Global([cst.NameItem(cst.Name(n)) for n in shared])])
        body = [declaration, *body]
    function = cst.FunctionDef(
        name=cst.Name(ENTRY_FUNCTION),
        params=cst.Parameters([cst.Param(cst.Name("index"))]),
        body=body_block.with_changes(body=body, footer=()),
        leading_lines=updated.leading_lines,
    )
    # Comment lines that ended the guard's block end the file's code still.
    guard = updated.with_changes(
        body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Expr(launch)])], footer=body_block.footer),
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
    )
    return cst.FlattenSentinel([function, guard])


def ported_statements(ctx: Context[Facts], calls: Sequence[cst.Call]) -> list[cst.SimpleStatementLine]:
    """One statement line for each of these calls, as the rewrite ported it (the module-level
    process groups that move first into ``_mp_fn(index)``)."""
    lines = []
    for call in calls:
        ported = ctx.result_of(call)
        if isinstance(ported, cst.BaseExpression):
            lines.append(cst.SimpleStatementLine([cst.Expr(ported)]))
    return lines


def import_time_group_line(
    ctx: Context[Facts], updated: cst.SimpleStatementLine, setup: Sequence[cst.SimpleStatementLine], moved: bool
) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
    """What stays at module level of a process group's line: the MASTER_ADDR/MASTER_PORT
    settings of an env:// group (``setup``), before the line if its call did not move into
    ``_mp_fn(index)``, in its place if it did."""
    if not moved:
        if not setup:
            return updated
        first = setup[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([first, *setup[1:], updated.with_changes(leading_lines=())])
    if not setup:
        # Its comments lead the next statement; its blank lines go (the next has its own).
        dropped = updated.with_changes(leading_lines=[line for line in updated.leading_lines if line.comment])
        ctx.drop_statement(dropped)
        return dropped
    return cst.FlattenSentinel([setup[0].with_changes(leading_lines=updated.leading_lines), *setup[1:]])
