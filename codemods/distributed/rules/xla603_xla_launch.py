"""XLA603 xla-launch: the processes start with the target's launcher.  Its hooks rewrite the
``mp.spawn`` calls the distributed facts name (``spawns``; in ``_mp_fn(index)``, where the
platform calls it, the spawn of the guard becomes a call of the worker), turn the main guard
whose code runs in every process (``entry_guard``, or the spawning ``spawn_guard``) into
``_mp_fn(index)`` started by the launcher (with the process groups the module started as it
was imported, ``import_time_groups``, moved in first), and port a launcher of the other
release (``xmp.spawn`` on 2.9, ``torch_xla.launch`` on sagemaker).  What they build is
launch_builds.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.distributed.rules.env_rank_cases import env_rank_invalid
from codemods.distributed.rules.xla609_distributed_manual import DISTRIBUTED_MANUAL
from codemods.distributed.rules.xla_launch_cases import xla_launch_invalid
from codemods.engine.hooks import on_calls, on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.targets import ENTRY_FUNCTION, XMP

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

XMP_SPAWN = f"{XMP}.spawn"
TORCH_XLA_LAUNCH = "torch_xla.launch"

XLA_LAUNCH = Rule(
    code="XLA603",
    name="xla-launch",
    severity="error",
    summary="mp.spawn, a torchrun-style main guard and an old xmp.spawn start the processes with the XLA launcher",
    fixable=True,
    changes_start="launcher",
    why="XLA starts one process per device itself and hands each its index: torch_xla.launch on torch_xla 2.9, "
    "xmp.spawn on 1.13 (SageMaker's pytorchxla runtime calls `_mp_fn(index)` directly). The launching process "
    'must not touch the XLA runtime before the launcher starts the others (it refuses: "Runtime is already '
    'initialized"), so a process group the module starts as it is imported (`dist.init_process_group(...)` on a '
    "line of its own before the main guard) moves into `_mp_fn`, first: each launched process starts its own, "
    "as each process torchrun started did; one that cannot move (under a check at module level) is reported. "
    "A main guard that does nothing (`pass`, `...`, a docstring) starts nothing: it is left as it is. The "
    "finding says when the launched processes will not act as ranks: a `--launcher` flag whose default is none "
    "(OpenMMLab's and BasicSR's scripts), or a library object that reads its rank itself, unported (audiotools' "
    "`Accelerator`, from LOCAL_RANK, which the XLA launcher does not set), or a function of the script or of a "
    "project module it calls that still reads RANK, LOCAL_RANK or WORLD_SIZE from the environment once converted "
    "(a loop over several launchers' variables, `for v in ('SLURM_PROCID', 'RANK'): if v in os.environ`; a "
    "helper module's `'WORLD_SIZE' in os.environ`): each process then trains its own copy "
    "as rank 0 and all write the same outputs; start one process, or read the rank from the XLA runtime "
    "(xr.global_ordinal(), xr.local_ordinal(), xr.world_size()).",
    examples=lambda: (
        invalid(
            """
        import torch.multiprocessing as mp


        def train(rank, world_size):
            pass


        if __name__ == "__main__":
            mp.spawn(train, args=(8,), nprocs=8, join=True)
        """,
            """
        import torch_xla


        def train(rank, world_size):
            pass


        if __name__ == "__main__":
            torch_xla.launch(train, args=(8,))
        """,
            findings=(Expected(9, 5, "mp.spawn(...) -> torch_xla.launch"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def main():
                model = torch.nn.Linear(2, 2)


            if __name__ == "__main__":
                main()
            """,
            note="one-device",
        ),
        valid(
            """
            import torch
            import torch.distributed as dist


            def evaluate(model):
                model = torch.nn.parallel.DistributedDataParallel(model)
                dist.barrier()
                return model


            if __name__ == "__main__":
                "nothing to run: another script starts the evaluation"
                pass
            """,
            note="a main guard that does nothing: no code to launch",
        ),
        valid(
            """
            import torch
            import torch.distributed as dist


            def evaluate(model):
                model = torch.nn.parallel.DistributedDataParallel(model)
                dist.barrier()
                return model


            if __name__ == "__main__": ...
            """,
            target="sagemaker",
            note="a main guard that does nothing, on one line (sagemaker)",
        ),
        # A module-level script: no launcher is added, its group stays where it is.
        valid(
            """
            import torch
            import torch.distributed as dist

            dist.init_process_group("xla", init_method="xla://")
            model = torch.nn.Linear(2, 2)
            """,
            note="process-group-in-a-module-level-script",
            target_only=True,
        ),
    ),
    invalid=lambda: (*xla_launch_invalid(), *env_rank_invalid()),
)


@on_facts(XLA_LAUNCH, nodes=lambda facts: facts.distributed.spawns)
def _spawn(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    from codemods.distributed.rules.edits import entry_from_spawn
    from codemods.distributed.rules.launch_builds import launch_call

    part = ctx.facts.distributed
    spawn = part.spawns[original]
    if original in part.guard_spawns and entry_from_spawn(ctx):
        return _worker_call(ctx, original, updated, spawn.fn, spawn.args)
    if not spawn.joins:
        ctx.report(
            DISTRIBUTED_MANUAL,
            original,
            "`join=False`: the XLA launcher always waits for its processes; "
            "start them with torch_xla.launch and wait where the script joined them",
        )
        return updated
    return ctx.fix_or_keep(
        updated,
        XLA_LAUNCH,
        original,
        f"{ctx.code(original.func)}(...) -> {{new}}: the XLA launcher starts one process per device "
        "and passes each its index (nprocs is not needed)",
        lambda: launch_call(ctx, original, updated, spawn.fn, spawn.args, spawn.start_method),
        result=lambda node: node.func if isinstance(node, cst.Call) else node,
    )


def _worker_call(
    ctx: Context[Facts], original: cst.Call, updated: cst.Call, fn: cst.BaseExpression, args: cst.BaseExpression | None
) -> cst.BaseExpression:
    """In ``_mp_fn(index)``, which the platform runs in every process: the worker itself."""
    from codemods.distributed.rules.launch_builds import worker_call

    return ctx.fix_or_keep(
        updated,
        XLA_LAUNCH,
        original,
        f"{ctx.code(original.func)}(...) -> {{new}}: in `{ENTRY_FUNCTION}(index)`, which the XLA runtime "
        "calls in each of its processes",
        lambda: worker_call(ctx, original, updated, fn, args),
    )


@on_calls(XLA_LAUNCH, names=XMP_SPAWN)
def _xmp_spawn(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    """An old ``xmp.spawn(fn, args=..., nprocs=N)`` on the 2.9 target."""
    import libcst as cst

    from codemods.distributed.rules.launch_builds import launch_call, xmp_spawn_arguments

    if ctx.target.api("launch").qualified_name == XMP_SPAWN:
        return updated
    spawned = xmp_spawn_arguments(original)
    if spawned is None:
        return updated
    fn, args, start = spawned
    return ctx.fix_or_keep(
        updated,
        XLA_LAUNCH,
        original,
        f"{ctx.code(original.func)}(...) -> {{new}}: torch_xla 2.9's launcher (nprocs is not needed)",
        lambda: launch_call(ctx, original, updated, fn, args, start),
        result=lambda node: node.func if isinstance(node, cst.Call) else node,
    )


@on_calls(XLA_LAUNCH, names=TORCH_XLA_LAUNCH)
def _torch_xla_launch(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    """``torch_xla.launch(fn, args=...)`` (torch_xla 2.1 on) on the sagemaker target: torch_xla
    1.13 starts the processes with ``xmp.spawn(fn, args=...)``, the same call without
    ``debug_single_process``."""
    import libcst as cst

    from codemods.distributed.rules.launch_builds import launch_call
    from codemods.engine.nodes import args_by_position

    if ctx.target.api("launch").qualified_name == TORCH_XLA_LAUNCH:
        return updated
    named = dict(args_by_position(original, ("fn", "args", "start_method", "debug_single_process")))
    if "fn" not in named or any(a.star for a in original.args):
        return updated
    args, start = named.get("args"), named.get("start_method")
    debug = named.get("debug_single_process")
    if ctx.target.runtime_calls_entry and ctx.facts.entry.mp_fn is None:
        ctx.report(
            XLA_LAUNCH,
            original,
            f"SageMaker's pytorchxla runtime does not run this: it imports the script and calls "
            f"`{ENTRY_FUNCTION}(index)` in each process; define `def {ENTRY_FUNCTION}(index):` that calls "
            f"{ctx.code(named['fn'].value)}(index, ...) as the launcher would",
        )
    note = (
        f" (without {ctx.code(debug).rstrip(',').strip()}: for one process, pass nprocs=1)" if debug is not None else ""
    )
    return ctx.fix_or_keep(
        updated,
        XLA_LAUNCH,
        original,
        f"{ctx.code(original.func)}(...) -> {{new}}: torch_xla {ctx.target.torch_xla_version}'s launcher{note}",
        lambda: launch_call(
            ctx, original, updated, named["fn"].value, args.value if args else None, start.value if start else None
        ),
        result=lambda node: node.func if isinstance(node, cst.Call) else node,
    )


@on_facts(
    XLA_LAUNCH,
    nodes=lambda facts: [g for g in (facts.distributed.entry_guard, facts.distributed.spawn_guard) if g is not None],
)
def _main_guard(
    ctx: Context[Facts], original: cst.If, updated: cst.If
) -> cst.If | cst.FlattenSentinel[cst.BaseStatement]:
    """A main guard whose code runs in every process (torchrun style) becomes
    ``_mp_fn(index)``, started by the target's launcher."""
    import libcst as cst

    from codemods.distributed.rules.edits import entry_from_spawn
    from codemods.distributed.rules.launch_builds import entry_function

    part = ctx.facts.distributed
    spawning = original is part.spawn_guard and entry_from_spawn(ctx)
    if not (original is part.entry_guard or spawning) or not isinstance(updated.body, cst.IndentedBlock):
        return updated
    body_block = updated.body

    return ctx.fix_or_keep(  # type: ignore[misc]  # mypy cannot infer fix_or_keep()'s ReplacementT from a build returning a FlattenSentinel
        updated,
        XLA_LAUNCH,
        original,
        f"the main guard's code -> def {ENTRY_FUNCTION}(index): it runs in every process, started by "
        f"{ctx.target.api('launch').qualified_name}(...){_launcher_flag_note(ctx)}{_env_rank_note(ctx)}",
        lambda: entry_function(ctx, updated, body_block, _moved_groups(ctx), part.guard_globals),
        result=lambda node: node.nodes[0] if isinstance(node, cst.FlattenSentinel) else node,
    )


def _launcher_flag_note(ctx: Context[Facts]) -> str:
    """What a launcher flag whose default is none (``--launcher none``) makes of those processes."""
    flag = ctx.facts.distributed.launcher_flag
    if flag is None:
        return _library_rank_note(ctx)
    launch = ctx.target.api("launch").qualified_name
    single = "debug_single_process=True" if launch == TORCH_XLA_LAUNCH else "nprocs=1"
    return (
        f"; but `{flag}` (default none) keeps the script non-distributed: with it, each process trains its own "
        "copy of the model, with no gradient all-reduce, and all write the same outputs. Start one process "
        f"({launch}(..., {single})), or set `{flag}` to a launcher whose process-group start is ported to XLA "
        "(mmcv's and BasicSR's init_dist set a CUDA device and start nccl)"
    )


def _library_rank_note(ctx: Context[Facts]) -> str:
    """What a library object that reads its own rank (library_apis.LIBRARY_RANKS) makes of those processes."""
    ranks = ctx.facts.distributed.library_ranks
    if not ranks:
        return ""
    launch = ctx.target.api("launch").qualified_name
    single = "debug_single_process=True" if launch == TORCH_XLA_LAUNCH else "nprocs=1"
    return ctx.target.advice(
        f"; but {'; '.join(ranks)}: every process acts as rank 0, trains its own copy of the model with no "
        "gradient all-reduce, and all write the same checkpoints and logs. Start one process "
        f"({launch}(..., {single})), or take the rank from the XLA runtime (xr.global_ordinal()) where the "
        "library's is read"
    )


def _env_rank_note(ctx: Context[Facts]) -> str:
    """What a project function the script calls that takes its rank from RANK/LOCAL_RANK/WORLD_SIZE
    (distributed/env_ranks.py) makes of those processes: the XLA launcher sets none of them."""
    readers = ctx.facts.distributed.env_rank_readers
    if not readers:
        return ""
    # (a caller through a function named already is left out: ``main`` through ``world_info``)
    shown = [
        (c, r)
        for c, r in readers.items()
        if not (via := r.partition(" through ")[2]) or f"{via} (" not in "".join(readers)
    ]
    named = "; ".join(f"{callee} reads {reads}" for callee, reads in shown[:3])
    return ctx.target.advice(
        f"; but the rank or world size comes from variables torch_xla.launch does not set ({named}): every "
        "process gets rank 0 of "
        "a world of 1 (no distributed setup, each process the master), trains on all the data and writes the "
        "same checkpoints and logs. Take the rank from xr.global_ordinal(), the local rank from "
        "xr.local_ordinal() and the world size from xr.world_size() there"
    )


def _import_time_crash(ctx: Context[Facts]) -> str:
    """Why a process group must not start as the module is imported."""
    return (
        "at module level it runs as the script is imported, in the launching process too, and starts the XLA "
        f"runtime there, which {ctx.target.api('launch').qualified_name}(...) then refuses "
        '("Runtime is already initialized")'
    )


@on_facts(XLA_LAUNCH, nodes=lambda facts: facts.distributed.import_time_groups.values())
def _import_time_call(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """Follow the ported call of a module-level process group: the main guard's hook puts it
    first in ``_mp_fn``."""
    ctx.track([original])
    return updated


@on_facts(XLA_LAUNCH, nodes=lambda facts: facts.distributed.import_time_groups)
def _import_time_group(
    ctx: Context[Facts], original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
    """A module-level ``init_process_group(...)`` line moves into ``_mp_fn(index)``: each
    launched process starts its group there (the MASTER_ADDR/MASTER_PORT settings of an
    env:// group stay at module level, before it runs)."""
    import libcst as cst

    from codemods.distributed.rules.launch_builds import import_time_group_line
    from codemods.distributed.rules.xla601_xla_process_group import env_settings

    setup = env_settings(ctx, original)
    call = ctx.facts.distributed.import_time_groups[original]
    moved = ctx.fix(
        XLA_LAUNCH,
        original,
        f"moved {ctx.code(call.func)}(...) into def {ENTRY_FUNCTION}(index): {_import_time_crash(ctx)}",
        lambda: updated,
        result=lambda line: cst.ensure_type(line.body[0], cst.Expr).value,
    )
    return import_time_group_line(ctx, updated, setup, moved is not None)


def _moved_groups(ctx: Context[Facts]) -> list[cst.SimpleStatementLine]:
    """The module-level process groups ``_import_time_group`` moved, as ported."""
    from codemods.distributed.rules.launch_builds import ported_statements

    groups = ctx.facts.distributed.import_time_groups
    return ported_statements(ctx, [call for line, call in groups.items() if ctx.fixed(XLA_LAUNCH, line)])


@reports_facts(XLA_LAUNCH, nodes=lambda facts: facts.distributed.unmoved_import_time_groups)
def _unmoved_import_time_group(ctx: Context[Facts], original: cst.Call) -> str:
    return f"{ctx.code(original.func)}(...): {_import_time_crash(ctx)}; call it in the function each process runs"


def _launched_entry(facts: Facts) -> list[cst.FunctionDef]:
    """The ``_mp_fn`` of a script that the XLA launcher starts already (a port's, on a second run) whose
    processes still take their rank from variables that launcher does not set."""
    part = facts.distributed
    entry = facts.entry.mp_fn
    if entry is None or part.style != "launched" or not part.xla_launched or not part.env_rank_readers:
        return []
    return [entry]


@reports_facts(XLA_LAUNCH, nodes=_launched_entry)
def _launched_env_ranks(ctx: Context[Facts], original: cst.FunctionDef) -> str:
    """What the main guard's port said of the ranks, said again of the launched entry function: the
    cause (a function that reads RANK/WORLD_SIZE) is still there after the port."""
    return (
        f"`{ENTRY_FUNCTION}(index)` runs in every process, started by "
        f"{ctx.target.api('launch').qualified_name}(...){_env_rank_note(ctx)}"
    )
