"""XLA601's port of a process group whose ``try`` falls back to one process (the distributed
facts' ``env_fallback_groups``): the "xla" backend with the env:// rendezvous kept; one in a module
that a file of the run imports whose summary cannot be read (``env_fallback_unknown``) is reported:
the tool cannot tell whether torch_xla.launch starts its processes (then it needs xla://)."""

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

    from codemods.distributed.rules.edits import joined, other_group_args
    from codemods.engine.nodes import string_value

    importer = ctx.facts.distributed.env_fallback_unknown.get(original)
    if importer is not None:
        ctx.report(
            rule,
            original,
            f"`{ctx.code(original)}` starts the process group with the env:// rendezvous and falls back to one "
            "process where it fails, and "
            + (
                f"{importer} imports this module, which the tool cannot read"
                if importer
                else "no file of this run imports this module"
            )
            + ": the tool cannot tell how its processes start; where "
            "torch_xla.launch (or xmp.spawn) starts the processes, it sets no RANK or WORLD_SIZE, so env:// fails in "
            "each and each trains alone on all the data; started so, use "
            '`init_process_group("xla", init_method="xla://")`; run as a plain `python` script, keep env:// with the '
            '"xla" backend (xla:// would start a group of one)',
        )
        return updated
    backend = dict(group.arguments).get("backend")
    if backend is not None and (kept["backend"] or string_value(backend.value) == "xla"):
        return updated

    def build() -> cst.Call | None:
        if not ctx.imports.require_package(backend_module):
            return None
        args = [cst.Arg(cst.SimpleString('"xla"'))]
        args += other_group_args(ctx, original, updated, group.arguments, {"backend": False})
        return updated.with_changes(args=joined(args))

    return ctx.fix_or_keep(
        updated,
        rule,
        original,
        '{new}: the "xla" backend; the env:// rendezvous stays, so that where no launcher sets RANK and '
        "WORLD_SIZE (a plain `python` run) it fails as before and the `except` goes on with one process",
        build,
    )
