"""XLA601 xla-process-group: process groups use the "xla" backend and the ``xla://`` init
method, which take rank and size from the XLA runtime (on the sagemaker target, torch 1.13's
env:// store, with MASTER_ADDR/MASTER_PORT set just before).  Its hooks rewrite the
``init_process_group`` calls and the backend and init method values the distributed facts
name (``process_groups``, ``backend_values``), and put the env:// settings before the line of
a group they ported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.distributed.rules.fallback_group_cases import env_fallback_cases
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.distributed.facts import ProcessGroup
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

XLA_PROCESS_GROUP = Rule(
    code="XLA601",
    name="xla-process-group",
    severity="error",
    summary='init_process_group uses the "xla" backend with init_method="xla://" (nccl/gloo cannot reduce XLA tensors; '
    "sagemaker: rank and world size from the runtime, MASTER_ADDR/MASTER_PORT set)",
    fixable=True,
    why="NCCL and Gloo work on CUDA and CPU tensors; XLA tensors are reduced by the xla backend, which takes the "
    "rank and world size from the XLA runtime (so rank=/world_size= go). torch 1.13 has no xla:// rendezvous "
    "(pjrt:// came with torch_xla 2.0, xla:// with 2.2: 'No rendezvous handler for xla://'), so on the sagemaker "
    "target the default env:// store meets at MASTER_ADDR/MASTER_PORT (set with `os.environ.setdefault` just "
    "before, so a launcher's values win) and rank and world size are passed from `xm.get_ordinal()` and "
    "`xm.xrt_world_size()`, as torch_xla 1.13's own tests do. An init method read from a command-line flag "
    "(`init_method=args.dist_url`) stays, its default made xla://, but the command line may still give another "
    "(`--dist-url tcp://localhost:10001`, as a README's launch line does), which needs a rank and a world size: "
    "they are passed from `xr.global_ordinal()` and `xr.world_size()` (xla:// ignores them). A group started "
    "with the env:// rendezvous (written, or the default) in a `try` whose `except` goes on with one process "
    "(a set-up helper's fallback) keeps env://, on both targets: a plain `python train.py` has no RANK or "
    "WORLD_SIZE, so it still falls back as the original did (xla:// would start a group of one there, and what "
    "the script does only under a group, such as SyncBatchNorm, would run and raise), and under torchrun it "
    "meets as before. Where the XLA launcher starts the processes (the script's own torch_xla.launch or xmp.spawn, "
    "the launcher the port adds for mp.spawn, a torchrun-style main guard or `convert --distributed`, or such a "
    "script of the run that imports the helper's module) it sets no RANK or WORLD_SIZE: env:// would fail in "
    "every process and each would train alone on all the data, so there the group meets through xla://; a helper "
    "module no file of the run imports is reported instead (the tool cannot tell how its processes start).",
    examples=lambda: (
        invalid(
            """
        import torch.distributed as dist


        def setup(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
        """,
            """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def setup(rank, world_size):
            dist.init_process_group("xla", init_method="xla://")
        """,
            findings=(Expected(6, 5, 'dist.init_process_group("xla", init_method="xla://")'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def init_distributed():
                try:
                    dist.init_process_group("xla", init_method="env://")
                    return True
                except:
                    return False
            """,
            note="env-fallback-ported",
        ),
        valid(
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401

            def setup():
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="already-xla",
        ),
        valid(
            """
            import os
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401

            def setup():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            target="sagemaker",
            note="already-xla-on-1.13",
        ),
    ),
    invalid=lambda: (
        *env_fallback_cases(),
        invalid(
            """
            import torch.distributed as dist


            def setup(rank, world_size):
                # join the others
                dist.init_process_group("nccl", rank=rank, world_size=world_size)
            """,
            """
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup(rank, world_size):
                # join the others
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            target="sagemaker",
            note="sagemaker-env-rendezvous",
            findings=(
                Expected(
                    11,
                    5,
                    'dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size()): '
                    'the "xla" backend, rank and world size from the XLA runtime; torch 1.13\'s env:// store',
                ),
            ),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend


            def setup():
                dist.init_process_group("xla", init_method="xla://")
            """,
            """
            import os
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend
            import torch_xla.core.xla_model as xm


            def setup():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            target="sagemaker",
            note="2.9-group-moved-to-1.13",
            findings=(Expected(10, 5, 'dist.init_process_group("xla", rank=xm.get_ordinal()'),),
        ),
        # A 1.13 script upgraded: its plain xla_backend import stays the only one.
        invalid(
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend


            def setup():
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend


            def setup():
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="1.13-group-upgraded-imports-once",
            findings=(Expected(6, 5, 'dist.init_process_group("xla", init_method="xla://")'),),
        ),
        invalid(
            """
            import torch.distributed as dist

            def setup(rank, world):
                dist.init_process_group(backend="nccl", init_method="env://", rank=rank, world_size=world)
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(rank, world):
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="keyword-backend",
            findings=(Expected(5, 5, 'dist.init_process_group("xla", init_method="xla://")'),),
        ),
        invalid(
            """
            import torch.distributed as dist

            backend = "nccl"

            def setup():
                dist.init_process_group(backend)
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            backend = "xla"

            def setup():
                dist.init_process_group(backend, init_method="xla://")
            """,
            note="backend-variable",
            findings=(
                Expected(4, 11, '"nccl" -> "xla"'),
                Expected(7, 5, 'dist.init_process_group(backend, init_method="xla://")'),
            ),
        ),
        invalid(
            """
            from torch.distributed import init_process_group as ipg

            def setup():
                ipg("gloo")
            """,
            """
            from torch.distributed import init_process_group as ipg
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup():
                ipg("xla", init_method="xla://")
            """,
            note="from-import",
            alias=True,
            findings=(Expected(5, 5, 'ipg("xla", init_method="xla://")'),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist

            def setup(rank):
                device = torch.device(f"cuda:{rank}")
                backend = torch.distributed.get_default_backend_for_device(device)
                dist.init_process_group(backend=backend)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(rank):
                device = torch_xla.device()
                backend = "xla"
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="default-backend-for-the-device",
            findings=(
                Expected(8, 15, 'torch.distributed.get_default_backend_for_device(device) -> "xla"'),
                Expected(9, 5, 'dist.init_process_group("xla", init_method="xla://")'),
            ),
        ),
        # The init method a --dist-url flag gives: the command line may still pass tcp://, which
        # needs a rank and a world size (xla:// ignores them).
        *(
            invalid(
                """
                import argparse
                import torch.distributed as dist

                parser = argparse.ArgumentParser()
                parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456", type=str)
                args = parser.parse_args()


                def setup(rank, world):
                    dist.init_process_group("nccl", init_method=args.dist_url, rank=rank, world_size=world)
                """,
                after,
                target=target,
                note=f"an-init-method-from-the-command-line-{target}",
                findings=(
                    Expected(line - 5 if target == "2.9" else line - 7, 43, f'"tcp://127.0.0.1:23456" -> "{url}"'),
                    Expected(line, 5, group),
                ),
            )
            for target, line, url, group, after in (
                (
                    "2.9",
                    12,
                    "xla://",
                    'dist.init_process_group("xla", init_method=args.dist_url, rank=xr.global_ordinal(), '
                    "world_size=xr.world_size())",
                    """
                    import argparse
                    import torch.distributed as dist
                    import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
                    import torch_xla.runtime as xr

                    parser = argparse.ArgumentParser()
                    parser.add_argument("--dist-url", default="xla://", type=str)
                    args = parser.parse_args()


                    def setup(rank, world):
                        dist.init_process_group("xla", init_method=args.dist_url, rank=xr.global_ordinal(), world_size=xr.world_size())
                    """,
                ),
                (
                    "sagemaker",
                    15,
                    "env://",
                    'dist.init_process_group("xla", init_method=args.dist_url, rank=xm.get_ordinal(), '
                    "world_size=xm.xrt_world_size())",
                    """
                    import argparse
                    import torch.distributed as dist
                    import os
                    import torch_xla.core.xla_model as xm
                    import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

                    parser = argparse.ArgumentParser()
                    parser.add_argument("--dist-url", default="env://", type=str)
                    args = parser.parse_args()


                    def setup(rank, world):
                        os.environ.setdefault("MASTER_ADDR", "localhost")
                        os.environ.setdefault("MASTER_PORT", "12355")
                        dist.init_process_group("xla", init_method=args.dist_url, rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                    """,
                ),
            )
        ),
        invalid(
            """
            import torch.distributed as dist

            url = "tcp://127.0.0.1:23456"


            def setup(rank, world):
                dist.init_process_group("nccl", init_method=url, rank=rank, world_size=world)
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            url = "xla://"


            def setup(rank, world):
                dist.init_process_group("xla", init_method=url)
            """,
            note="an-init-method-the-file-holds-becomes-xla-and-takes-no-rank",
            findings=(Expected(4, 7, '"tcp://127.0.0.1:23456" -> "xla://"'), Expected(8, 5, "init_method=url)")),
        ),
    ),
)

# Registers the "xla" process group backend.
XLA_BACKEND = "torch_xla.distributed.xla_backend"
# What the env:// store meets at on torch 1.13, unless the launcher set it.
_ENV_SETTINGS = (("MASTER_ADDR", "localhost"), ("MASTER_PORT", "12355"))


@on_facts(XLA_PROCESS_GROUP, nodes=lambda facts: facts.distributed.backend_values)
def _backend_value(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    """A backend or init method value (a literal a variable or flag holds, the default
    backend's call) becomes the XLA one."""
    import libcst as cst

    from codemods.distributed.rules.edits import replaced
    from codemods.engine.nodes import quoted_like, string_value, walk

    value = ctx.facts.distributed.backend_values[original]
    if value == "xla://":
        value = ctx.target.rendezvous
    if string_value(original) == value:
        return updated
    template = next((n for n in walk(original) if isinstance(n, cst.SimpleString)), None)
    return replaced(
        ctx,
        XLA_PROCESS_GROUP,
        original,
        updated,
        f"the process group's XLA {'backend' if value == 'xla' else 'init method'}",
        lambda: quoted_like(template, value) if template is not None else cst.SimpleString(f'"{value}"'),
    )


@on_facts(XLA_PROCESS_GROUP, nodes=lambda facts: facts.distributed.process_groups)
def _process_group(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    from codemods.distributed.rules.edits import joined, keyword_arg, new_value, other_group_args

    group = ctx.facts.distributed.process_groups[original]
    named = dict(group.arguments)
    kept = {"backend": group.keep_backend, "init_method": group.keep_init_method}
    rendezvous = ctx.target.rendezvous
    if original in ctx.facts.distributed.env_fallback_groups or original in ctx.facts.distributed.env_fallback_unknown:
        from codemods.distributed.rules.fallback_groups import fallback_process_group

        return fallback_process_group(ctx, original, updated, group, kept, XLA_PROCESS_GROUP, XLA_BACKEND)
    if _ported(ctx, named, kept, rendezvous, group.init_method_from_flag):
        return updated
    if rendezvous != "xla://":
        return _env_process_group(ctx, original, updated, group, kept)

    def build() -> cst.Call | None:
        if not ctx.imports.require_package(XLA_BACKEND):
            return None
        backend = named.get("backend")
        if kept["backend"] and backend is not None:
            first = cst.Arg(new_value(original, updated, backend.value), keyword=backend.keyword, equal=backend.equal)
        else:
            first = cst.Arg(cst.SimpleString('"xla"'))
        init = named.get("init_method")
        init_value = new_value(original, updated, init.value) if kept["init_method"] and init is not None else None
        args = [first, keyword_arg("init_method", init_value or cst.SimpleString('"xla://"'))]
        if init_value is not None and group.init_method_from_flag:  # --dist-url tcp://... on the command line
            rank, world = ctx.call("global_ordinal"), ctx.call("world_size")
            if rank is None or world is None:
                return None
            args += [keyword_arg("rank", rank), keyword_arg("world_size", world)]
        args += other_group_args(ctx, original, updated, group.arguments, kept)
        return updated.with_changes(args=joined(args))

    return ctx.fix_or_keep(
        updated,
        XLA_PROCESS_GROUP,
        original,
        '{new}: the "xla" backend; rank and world size come from the XLA runtime (xla://)',
        build,
    )


def _env_process_group(
    ctx: Context[Facts], original: cst.Call, updated: cst.Call, group: ProcessGroup, kept: dict[str, bool]
) -> cst.BaseExpression:
    """torch 1.13 has no xla:// rendezvous: the env:// store (the default) meets at
    MASTER_ADDR/MASTER_PORT, set just before (``_env_settings``) unless the launcher set
    them, and rank and world size come from the XLA runtime."""
    import libcst as cst

    from codemods.distributed.facts import PROCESS_GROUP_DROPPED
    from codemods.distributed.rules.edits import forget_removed_arg, joined, keyword_arg, new_value
    from codemods.targets import Api

    if group.line is None:
        ctx.report(
            XLA_PROCESS_GROUP,
            original,
            f"{ctx.code(original.func)}(...) on one line with other code: use "
            f'dist.init_process_group("xla", rank={ctx.target.api("global_ordinal").spelled}(), '
            f"world_size={ctx.target.api('world_size').spelled}()) and set MASTER_ADDR/MASTER_PORT before it",
        )
        return updated
    arguments = group.arguments
    named = dict(arguments)

    def build() -> cst.Call | None:
        environ = ctx.imports.expression(Api("os", "environ"))
        rank, world = ctx.call("global_ordinal"), ctx.call("world_size")
        if environ is None or rank is None or world is None or not ctx.imports.require_package(XLA_BACKEND):
            return None
        backend = named.get("backend")
        if kept["backend"] and backend is not None:
            args = [cst.Arg(new_value(original, updated, backend.value), keyword=backend.keyword, equal=backend.equal)]
        else:
            args = [cst.Arg(cst.SimpleString('"xla"'))]
        for name, arg in arguments:
            if name in kept and kept[name] and name != "backend":
                args.append(keyword_arg(name, new_value(original, updated, arg.value)))
            elif name in kept or name in PROCESS_GROUP_DROPPED:
                forget_removed_arg(ctx, original, updated, arg)
            else:
                args.append(keyword_arg(name, new_value(original, updated, arg.value)))
        args += [keyword_arg("rank", rank), keyword_arg("world_size", world)]
        return updated.with_changes(args=joined(args))

    return ctx.fix_or_keep(
        updated,
        XLA_PROCESS_GROUP,
        original,
        '{new}: the "xla" backend, rank and world size from the XLA runtime; torch 1.13\'s env:// store meets '
        "at MASTER_ADDR/MASTER_PORT, set before unless the launcher set them (on several hosts: the first "
        "host's address)",
        build,
    )


@on_facts(
    XLA_PROCESS_GROUP,
    nodes=lambda facts: {
        g.line
        for g in facts.distributed.process_groups.values()
        if g.line is not None and g.line not in facts.distributed.import_time_groups
    },
)
def _env_settings(
    ctx: Context[Facts], original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
    """Before the line of a process group ported to env:// (``_env_process_group``): the
    MASTER_ADDR/MASTER_PORT settings, which a launcher's values win over.  (A line that
    XLA603 moves into ``_mp_fn`` gets them from its hook, with ``env_settings``.)"""
    import libcst as cst

    setup = env_settings(ctx, original)
    if not setup:
        return updated
    first = setup[0].with_changes(leading_lines=updated.leading_lines)
    return cst.FlattenSentinel([first, *setup[1:], updated.with_changes(leading_lines=())])


def env_settings(ctx: Context[Facts], line: cst.SimpleStatementLine) -> list[cst.SimpleStatementLine]:
    """The MASTER_ADDR/MASTER_PORT settings that go before ``line``, where it holds a process
    group this rewrite ported to env:// (none for xla://)."""
    import libcst as cst

    from codemods.engine.positions import code_of
    from codemods.targets import Api

    groups = ctx.facts.distributed.process_groups
    fallbacks = ctx.facts.distributed.env_fallback_groups
    if ctx.target.rendezvous == "xla://" or not any(
        group.line is line and call not in fallbacks and ctx.fixed(XLA_PROCESS_GROUP, call)
        for call, group in groups.items()
    ):
        return []
    environ = ctx.imports.expression(Api("os", "environ"))
    if environ is None:  # never: the port of the group made it
        return []
    return [
        cst.ensure_type(
            cst.parse_statement(f'{code_of(environ)}.setdefault("{key}", "{value}")\n'), cst.SimpleStatementLine
        )
        for key, value in _ENV_SETTINGS
    ]


def _ported(
    ctx: Context[Facts], named: dict[str, cst.Arg], kept: dict[str, bool], rendezvous: str, from_flag: bool
) -> bool:
    """The process group already is the XLA one: backend "xla" and init method "xla://"
    (as literals, or variables that hold them), nothing that the xla:// method takes (but the
    rank and world size from the runtime, with an init method a flag gives); for env:// (torch
    1.13), no other init method, and rank and world size from the runtime."""
    from codemods.distributed.facts import PROCESS_GROUP_DROPPED
    from codemods.engine.nodes import string_value

    backend, init = named.get("backend"), named.get("init_method")
    if backend is None or not (kept["backend"] or string_value(backend.value) == "xla"):
        return False
    rank, world = named.get("rank"), named.get("world_size")
    runtime_ranks = (
        rank is not None
        and _runtime_value(ctx, rank, "global_ordinal")
        and world is not None
        and _runtime_value(ctx, world, "world_size")
    )
    if rendezvous != "xla://":
        return (init is None or kept["init_method"] or string_value(init.value) == rendezvous) and runtime_ranks
    if init is not None and kept["init_method"] and from_flag:  # --dist-url may give tcp://: ranks passed
        return runtime_ranks and not (PROCESS_GROUP_DROPPED - {"rank", "world_size"}) & set(named)
    return (
        init is not None
        and (kept["init_method"] or string_value(init.value) == "xla://")
        and not PROCESS_GROUP_DROPPED & set(named)
    )


def _runtime_value(ctx: Context[Facts], arg: cst.Arg, concept: str) -> bool:
    """``arg`` is the target's runtime call for ``concept`` (``rank=xm.get_ordinal()``)."""
    import libcst as cst

    value = arg.value
    return (
        isinstance(value, cst.Call)
        and not value.args
        and ctx.resolve(value.func) == ctx.target.api(concept).qualified_name
    )
