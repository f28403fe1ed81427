"""XLA601's port of a process group whose ``try`` falls back to one process (the distributed
facts' ``env_fallback_groups``): the "xla" backend with the env:// rendezvous kept."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from codemods.distributed.facts import ProcessGroup
    from codemods.engine.rewriter import Context
    from codemods.engine.rule import Rule
    from codemods.facts import Facts


def fallback_process_group(
    ctx: Context[Facts],
    original: cst.Call,
    updated: cst.Call,
    group: ProcessGroup,
    kept: dict[str, bool],
    rule: Rule,
    backend_module: str,
) -> cst.BaseExpression:
    """A group whose ``try`` falls back to one process (``env_fallback_groups``): the "xla" backend,
    the env:// rendezvous kept as written, so that it still fails where no launcher set RANK and
    WORLD_SIZE (``python train.py``), and meets as before under torchrun."""
    import libcst as cst

    from codemods.distributed.facts import PROCESS_GROUP_DROPPED
    from codemods.distributed.rules.edits import forget_removed_arg, joined, keyword_arg, new_value
    from codemods.engine.nodes import string_value

    backend = dict(group.arguments).get("backend")
    if backend is not None and (kept["backend"] or string_value(backend.value) == "xla"):
        return updated

    def build() -> cst.Call | None:
        if not ctx.imports.require_package(backend_module):
            return None
        args = [cst.Arg(cst.SimpleString('"xla"'))]
        for name, arg in group.arguments:
            if name == "backend" or name in PROCESS_GROUP_DROPPED:
                forget_removed_arg(ctx, original, updated, arg)
                continue
            args.append(keyword_arg(name, new_value(original, updated, arg.value)))
        return updated.with_changes(args=joined(args))

    return ctx.fix_or_keep(
        updated,
        rule,
        original,
        '{new}: the "xla" backend; the env:// rendezvous stays, so that where no launcher sets RANK and '
        "WORLD_SIZE (a plain `python` run) it fails as before and the `except` goes on with one process",
        build,
    )
