"""XLA602 xla-ranks: ranks and world sizes come from the XLA runtime.  This module's hooks port the
reads of ranks and sizes that the distributed facts name (``runtime_reads``; a read of the
launching process, ``parent_reads`` and ``launcher_counts``, where it runs in the workers; a CUDA
count that says how many devices one process drives, ``per_process_counts``; worker parameters
handed a CUDA count, ``rereads``), make a check that a launcher started the process True (every
process is started by the XLA launcher) and remove the asserts of one
(``facts.distributed.launched_checks``, ``launch_assert_lines``), and report the CUDA device count
that a launching process computes and hands on (``n = torch.cuda.device_count()`` then
``mp.spawn(..., nprocs=n)``), which the CUDA-only analysis names
(``facts.cuda_only.launcher_count_uses``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.distributed.rules.group_rank_cases import group_rank_invalid, group_rank_valid
from codemods.distributed.rules.launch_check_cases import launch_check_invalid
from codemods.distributed.rules.launcher_count_cases import launcher_count_cases
from codemods.distributed.rules.rank_flag_cases import rank_flag_invalid, rank_flag_valid
from codemods.distributed.rules.spawning_class_cases import spawning_class_invalid
from codemods.engine.hooks import of_types, on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context, StatementLineT
    from codemods.facts import Facts

# A local rank read from torch.cuda.current_device(): one input for the cases of both targets, whose outputs differ.
LOCAL_RANK_HOLDS_CURRENT_DEVICE = """
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()


def local_setting(args):
    args.local_rank = torch.cuda.current_device
    dist.init_process_group("nccl")
    return args.local_rank()
"""


# A device count that guards DataParallel: one input for the cases of both targets, whose outputs differ.
DEVICE_COUNT_GUARDING_DATA_PARALLEL = """
import os
import torch
import torch.distributed as dist


def main():
    if "LOCAL_RANK" in os.environ:
        dist.init_process_group("nccl")
        n_gpu = 1
    else:
        n_gpu = torch.cuda.device_count()
    model = torch.nn.Linear(4, 2).cuda()
    if n_gpu > 1:
        model = torch.nn.DataParallel(model)
    batch_size = 16 * max(1, n_gpu)


if __name__ == "__main__":
    main()
"""


XLA_RANKS = Rule(
    code="XLA602",
    name="xla-ranks",
    severity="error",
    summary="Ranks and world sizes come from the XLA runtime, not LOCAL_RANK/RANK/WORLD_SIZE, dist.get_rank() or CUDA counts",
    fixable=True,
    why="The XLA launcher sets none of torchrun's environment variables, and torch.cuda.device_count() is 0 on an "
    "XLA machine: the runtime knows each process's ordinal and how many there are. A CUDA count that the "
    "launching process hands to its workers is read again inside them; where the launching process also computes "
    "with it (`lr = 0.1 * world_size`) it is reported there, as it is still 0 (a print of it, or a count under "
    "`if torch.cuda.is_available():`, which is False on XLA, is not; nor is a value the port leaves nowhere to go: "
    "handed to the worker function, which reads the count again at its start, or stored where nothing reads it "
    "afterwards but the `init_process_group(world_size=...)` argument the port drops). A `--local_rank` flag "
    "(`--local-rank`) is the launcher's too: torch.distributed.launch passes it to each process, torch_xla.launch "
    "does not, so every process would keep the flag's default, rank 0 everywhere (each replica trains on the "
    "same data shard: results change silently). Its reads become the runtime's local ordinal, also under the "
    'flag\'s dest when it is another option\'s alias (`add_argument("--rank", "--local_rank")`, read as '
    "`args.rank`, as ParallelWaveGAN does), unless the script computes that attribute itself "
    "(`args.rank = node_rank * gpus + args.rank`). A `--rank` flag of its own (no `--local_rank` alias), read in "
    "the processes torch_xla starts, is an error there: they all get the same command line, so the same rank, "
    "and what it tells apart (the data shard, the master process) is the same in all of them; the port cannot "
    "tell whether it was a global rank or a node's, so it says where to read the runtime's global ordinal (a "
    "print or log of it only shows it: nothing is said). A rank read whose default is -1 (`int(os.getenv('RANK', "
    "-1))`: no launcher started the run, which the script tells by `rank == -1`) becomes the runtime's rank where "
    "several processes run and keeps -1 on one device, where the original was not launched either: the runtime's 0 "
    "there would turn the script's single-process tests (YOLOv6's `master = rank == 0 if world_size > 1 else rank == "
    "-1`) false. `dist.get_rank()` becomes the runtime's ordinal even after the process group is up: a process "
    "has one process group, and the XLA runtime may run several devices as threads of one process (PJRT on the "
    "CPU, TPU v2/v3), where every device reads the same group rank (checked on torch_xla 2.9 with two CPU "
    "devices), while the ordinal is each device's own. A test of the flag for a launcher (`args.local_rank is not "
    "None`, `args.local_rank != -1`) is a launch check, never a test of the ordinal (an int, never None); the same "
    "test of a flag another run saved (`ckpt['args'].local_rank is not None`) is an error where the port makes the "
    "script's own test true: the XLA launcher passes no --local_rank, so the two disagree.",
    examples=lambda: (
        invalid(
            """
        import os
        import torch.distributed as dist


        def setup():
            dist.init_process_group("nccl")
            local_rank = int(os.environ["LOCAL_RANK"])
            world_size = dist.get_world_size()
        """,
            """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def setup():
            dist.init_process_group("xla", init_method="xla://")
            local_rank = xr.local_ordinal()
            world_size = xr.world_size()
        """,
            findings=(
                Expected(8, 18, 'int(os.environ["LOCAL_RANK"]) -> xr.local_ordinal()'),
                Expected(9, 18, "dist.get_world_size() -> xr.world_size()"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import os
            import torch

            def main():
                workers = int(os.environ.get("NUM_WORKERS", 4))
                x = torch.zeros(workers)
            """,
            note="other-env",
        ),
        *rank_flag_valid(),
        *group_rank_valid(),
    ),
    invalid=lambda: (
        *rank_flag_invalid(),
        *group_rank_invalid(),
        *spawning_class_invalid(),
        *launch_check_invalid(),
        invalid(
            DEVICE_COUNT_GUARDING_DATA_PARALLEL,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                if True:
                    dist.init_process_group("xla", init_method="xla://")
                    n_gpu = 1
                else:
                    n_gpu = 1
                model = torch.nn.Linear(4, 2).to(torch_xla.device())
                if n_gpu > 1:
                    pass
                batch_size = 16 * max(1, n_gpu)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            target="2.9",
            note="device-count-guarding-data-parallel-is-one",
            findings=(
                Expected(7, 8, "every process is started by the XLA launcher"),
                Expected(11, 17, "torch.cuda.device_count() -> 1: the devices this process drives"),
            ),
        ),
        invalid(
            DEVICE_COUNT_GUARDING_DATA_PARALLEL,
            """
            import os
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.distributed.xla_multiprocessing as xmp


            def main():
                if True:
                    os.environ.setdefault("MASTER_ADDR", "localhost")
                    os.environ.setdefault("MASTER_PORT", "12355")
                    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                    n_gpu = 1
                else:
                    n_gpu = 1
                model = torch.nn.Linear(4, 2).to(xm.xla_device())
                if n_gpu > 1:
                    pass
                batch_size = 16 * max(1, n_gpu)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            note="device-count-guarding-data-parallel-is-one-1.13",
            findings=(
                Expected(10, 8, "every process is started by the XLA launcher"),
                Expected(16, 17, "torch.cuda.device_count() -> 1: the devices this process drives"),
            ),
        ),
        invalid(
            LOCAL_RANK_HOLDS_CURRENT_DEVICE,
            """
            import argparse
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()


            def local_setting(args):
                args.local_rank = torch.cuda.current_device
                dist.init_process_group("xla", init_method="xla://")
                return xr.local_ordinal()
            """,
            target="2.9",
            note="local-rank-holds-current-device",
            findings=(Expected(15, 12, "args.local_rank() -> xr.local_ordinal()"),),
        ),
        invalid(
            LOCAL_RANK_HOLDS_CURRENT_DEVICE,
            """
            import argparse
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()


            def local_setting(args):
                args.local_rank = torch.cuda.current_device
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                return xm.get_local_ordinal()
            """,
            target="sagemaker",
            note="local-rank-holds-current-device-1.13",
            findings=(Expected(18, 12, "args.local_rank() -> xm.get_local_ordinal()"),),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist

            def main():
                local_rank = int(os.environ["LOCAL_RANK"])
                world = dist.get_world_size()
                dist.init_process_group("nccl")
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            def main():
                local_rank = xr.local_ordinal()
                world = xr.world_size()
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="env-ranks",
            findings=(
                Expected(6, 18, 'int(os.environ["LOCAL_RANK"]) -> xr.local_ordinal()'),
                Expected(7, 13, "dist.get_world_size() -> xr.world_size()"),
            ),
        ),
        invalid(
            """
            import torch.distributed as D

            def main():
                D.init_process_group("nccl")
                rank = D.get_rank()
            """,
            """
            import torch.distributed as D
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            def main():
                D.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()
            """,
            note="dist-alias",
            alias=True,
            findings=(Expected(7, 12, "D.get_rank() -> xr.global_ordinal()"),),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist

            def get_envs():
                local_rank = int(os.getenv("LOCAL_RANK", -1))
                rank = int(os.environ.get("RANK", "-1"))
                world_size = int(os.getenv("WORLD_SIZE", 1))
                node_rank = int(os.getenv("RANK", 0))
                dist.init_process_group("nccl")
                return local_rank, rank, world_size, node_rank
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            def get_envs():
                local_rank = xr.local_ordinal() if xr.world_size() > 1 else -1
                rank = xr.global_ordinal() if xr.world_size() > 1 else -1
                world_size = xr.world_size()
                node_rank = xr.global_ordinal()
                dist.init_process_group("xla", init_method="xla://")
                return local_rank, rank, world_size, node_rank
            """,
            note="rank-default-minus-one-kept-on-one-device",
            findings=(
                Expected(
                    6,
                    18,
                    'int(os.getenv("LOCAL_RANK", -1)) -> xr.local_ordinal() if xr.world_size() > 1 else -1: the '
                    "local rank from the XLA runtime where several processes run, and the read's default, -1, on "
                    "one device (no launcher started that run before either: the script's tests of -1 still hold)",
                ),
                Expected(
                    7, 12, 'int(os.environ.get("RANK", "-1")) -> xr.global_ordinal() if xr.world_size() > 1 else -1'
                ),
                Expected(8, 18, 'int(os.getenv("WORLD_SIZE", 1)) -> xr.world_size()'),
                Expected(9, 17, 'int(os.getenv("RANK", 0)) -> xr.global_ordinal()'),
            ),
        ),
        invalid(
            """
            from os import getenv as env
            import torch.distributed as dist

            def get_envs():
                dist.init_process_group("nccl")
                return int(env("RANK", -1)), int(env("WORLD_SIZE", 1))
            """,
            """
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def get_envs():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                return xm.get_ordinal() if xm.xrt_world_size() > 1 else -1, xm.xrt_world_size()
            """,
            target="sagemaker",
            note="rank-default-minus-one-kept-on-one-device-aliased-1.13",
            alias=True,
            findings=(
                Expected(10, 12, 'int(env("RANK", -1)) -> xm.get_ordinal() if xm.xrt_world_size() > 1 else -1'),
                Expected(10, 65, 'int(env("WORLD_SIZE", 1)) -> xm.xrt_world_size()'),
            ),
        ),
        *launcher_count_cases(),
    ),
)


@on_facts(XLA_RANKS, nodes=lambda facts: facts.distributed.launched_checks)
def _launched_check(ctx: Context[Facts], original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
    import libcst as cst

    from codemods.distributed.rules.edits import replaced

    launched = ctx.facts.distributed.launched_checks[original]
    return replaced(
        ctx,
        XLA_RANKS,
        original,
        updated,
        "every process is started by the XLA launcher",
        lambda: cst.Name(str(launched)),
    )


@on_facts(XLA_RANKS, nodes=lambda facts: facts.distributed.launch_assert_lines)
def _without_launch_asserts(ctx: Context[Facts], original: StatementLineT, updated: StatementLineT) -> StatementLineT:
    """``assert "LOCAL_RANK" in os.environ, msg``: its test became True (every process is
    started by the XLA launcher), so the statement goes (a block left empty keeps a
    ``pass``: Context.drop_statement)."""
    import libcst as cst

    from codemods.engine.nodes import fold_true, is_true, walk

    checks = ctx.facts.distributed.launched_checks
    to_remove = {
        id(new)
        for old, new in zip(original.body, updated.body)
        if isinstance(old, cst.Assert)
        and isinstance(new, cst.Assert)
        and any(n in checks for n in walk(old.test) if type(n) is cst.Comparison)
        and fold_true(new.test, is_true) is True
    }
    if not to_remove:
        return updated
    for old, new in zip(original.body, updated.body):
        if id(new) not in to_remove:
            continue
        ctx.forget_fixes_inside(old)
        statement = old.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        if (
            ctx.fix(
                XLA_RANKS,
                old,
                f"removed `{ctx.code(statement)}`: every process is started by the XLA launcher",
                lambda: new,  # noqa: B023 - fix() calls it at once
            )
            is None
        ):
            to_remove.discard(id(new))
        else:
            ctx.forget_removed(old, new)
    kept: list[cst.BaseSmallStatement] = [new for new in updated.body if id(new) not in to_remove]
    return ctx.line_keeping(updated, kept)


@reports_facts(XLA_RANKS, nodes=lambda facts: facts.cuda_only.launcher_count_uses)
def _launcher_count(ctx: Context[Facts], original: cst.Name) -> str:
    assignment = ctx.facts.cuda_only.launcher_count_uses[original]
    return (
        f"`{original.value}` here is the CUDA device count (`{ctx.code(assignment.value)}`), 0 on an XLA machine: "
        f"the workers read the XLA world size ({ctx.target.api('world_size').spelled}()), but the launching process "
        "still sees 0; compute what needs it inside the workers"
    )


@reports_facts(XLA_RANKS, nodes=lambda facts: facts.distributed.argv_ranks)
def _argv_rank(ctx: Context[Facts], original: cst.Attribute) -> str:
    return (
        f"`{ctx.code(original)}` is the `--rank` flag, which torch_xla's launcher does not set: every process it "
        "starts gets the same command line, so the same rank (the default, or whatever is passed): what it tells "
        "apart (a data shard, the master process) is the same in every process; read the rank from the XLA runtime "
        f"({ctx.target.api('global_ordinal').spelled}()) where the processes are told apart"
    )


# -- ranks and sizes read from the runtime ------------------------------------------------------


@on_facts(XLA_RANKS, nodes=lambda facts: of_types(facts.distributed.runtime_reads, "Call Attribute BinaryOperation"))
def _runtime_read(ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
    """A rank or size read in the launched processes (``int(os.environ["LOCAL_RANK"])``,
    ``dist.get_world_size()``, ``args.local_rank``): the runtime's."""
    concept = ctx.facts.distributed.runtime_reads[original]
    if original in ctx.facts.distributed.unlaunched_defaults:
        return _single_process_default(ctx, original, updated, concept)
    return _from_runtime(ctx, original, updated, concept)


def _single_process_default(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression, concept: str
) -> cst.BaseExpression:
    """``int(os.getenv("RANK", -1))``: the runtime's rank where several processes run, and the
    read's -1 on one device, where no launcher started the original either (YOLOv6's ``master =
    rank == 0 if world_size > 1 else rank == -1`` stays true there)."""
    import libcst as cst

    from codemods.distributed.rules.edits import CONCEPT_WORDS, replaced

    def build() -> cst.BaseExpression | None:
        rank, size = ctx.call(concept), ctx.call("world_size")
        if rank is None or size is None:
            return None
        several = cst.Comparison(size, [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("1"))])
        return cst.IfExp(test=several, body=rank, orelse=cst.UnaryOperation(cst.Minus(), cst.Integer("1")))

    why = (
        f"the {CONCEPT_WORDS[concept]} from the XLA runtime where several processes run, and the read's default, -1, "
        "on one device (no launcher started that run before either: the script's tests of -1 still hold)"
    )
    return replaced(ctx, XLA_RANKS, original, updated, why, build)


@on_facts(XLA_RANKS, nodes=lambda facts: of_types(facts.distributed.parent_reads, "Call Attribute"))
def _read_in_workers(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    """A read of the launching process in a spawning main guard that becomes _mp_fn runs in
    the workers: the runtime's (elsewhere it is XLA609's report)."""
    from codemods.distributed.rules.edits import runs_in_workers

    if not runs_in_workers(ctx, original):
        return updated
    return _from_runtime(ctx, original, updated, ctx.facts.distributed.parent_reads[original])


@on_facts(XLA_RANKS, nodes=lambda facts: facts.distributed.launcher_counts)
def _count_for_workers(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """A CUDA count in the launching process that only feeds the workers, which read the XLA
    one themselves: nothing to say of it (in a spawning main guard that becomes _mp_fn it runs in
    the workers: the runtime's)."""
    from codemods.distributed.rules.edits import runs_in_workers

    if runs_in_workers(ctx, original):
        return _from_runtime(ctx, original, updated, ctx.facts.distributed.launcher_counts[original])
    ctx.forget_removed(original, updated)
    return updated


@on_facts(XLA_RANKS, nodes=lambda facts: facts.distributed.per_process_counts)
def _per_process_count(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """A CUDA count that guards a DataParallel wrap (``if n_gpu > 1:``), which goes: one device
    per process."""
    import libcst as cst

    from codemods.distributed.rules.edits import replaced

    return replaced(
        ctx,
        XLA_RANKS,
        original,
        updated,
        "the devices this process drives: one XLA device per process (the count guards a DataParallel wrap, "
        f"which goes; the processes on the host are {ctx.target.api('local_process_count').spelled}())",
        lambda: cst.Integer("1"),
    )


@on_facts(XLA_RANKS, nodes=lambda facts: facts.distributed.rereads)
def _rereads(ctx: Context[Facts], original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
    """Workers that received a CUDA device count from the launching process read the XLA
    one when they start."""
    import libcst as cst

    rereads = ctx.facts.distributed.rereads[original]
    body = updated.body
    if not isinstance(body, cst.IndentedBlock):
        return updated

    def build() -> cst.FunctionDef | None:
        lines: list[cst.BaseStatement] = []
        for param, concept in rereads:
            call = ctx.call(concept)
            if call is None:
                return None
            lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(param))], call)]))
        statements = list(body.body)
        at = 1 if statements and _is_docstring(statements[0]) else 0
        return updated.with_changes(body=body.with_changes(body=[*statements[:at], *lines, *statements[at:]]))

    names = ", ".join(f"`{param}`" for param, _ in rereads)
    return ctx.fix_or_keep(
        updated,
        XLA_RANKS,
        original,
        f"{names} read from the XLA runtime when `{original.name.value}` starts: the launching process "
        "passed a CUDA device count" + _per_host_caveat(ctx, [concept for _, concept in rereads]),
        build,
    )


def _from_runtime(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression, concept: str
) -> cst.BaseExpression:
    from codemods.distributed.rules.edits import CONCEPT_WORDS, replaced

    why = f"the {CONCEPT_WORDS[concept]} from the XLA runtime" + _per_host_caveat(ctx, [concept])
    if ctx.resolve(getattr(original, "func", None)) == "torch.distributed.get_rank":
        why += _GROUP_RANK.format(ordinal=ctx.target.api(concept).spelled)
    return replaced(ctx, XLA_RANKS, original, updated, why, lambda: ctx.call(concept))


# Why the process group's rank is not the device's (checked on torch_xla 2.9, PJRT_DEVICE=CPU,
# CPU_NUM_DEVICES=2: both threads' init_process_group set the one default group, and each read
# dist.get_rank() of whichever thread set it last).
_GROUP_RANK = (
    "; a process has one process group, so one group rank, and the XLA runtime may run several devices as "
    "threads of one process (PJRT on the CPU, TPU v2/v3): every device there reads the same group rank, "
    "while {ordinal}() is each device's own"
)


def _per_host_caveat(ctx: Context[Facts], concepts: list[str]) -> str:
    """A release without a per-host process count writes its world size for it: right on
    one host only (torch_xla 1.13's xm.xrt_world_size() counts hosts x devices)."""
    target = ctx.target
    if "local_process_count" not in concepts or target.api("local_process_count") != target.api("world_size"):
        return ""
    return (
        f"; torch_xla {target.torch_xla_version} has no per-host count: "
        f"{target.api('world_size').spelled}() counts the devices of every host (hosts x devices), so this is "
        "right on one host only: on a multi-instance job divide it by the number of hosts"
    )


def _is_docstring(statement: cst.BaseStatement) -> bool:
    import libcst as cst

    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


@reports_facts(
    XLA_RANKS,
    nodes=lambda facts: facts.distributed.saved_flag_tests if facts.distributed.launched_checks else (),
)
def _saved_flag_test(ctx: Context[Facts], original: cst.Comparison) -> str:
    return (
        f"`{ctx.code(original.with_changes(lpar=(), rpar=()))}` tests a --local_rank flag that another run saved, "
        "as the script tests its own: the port makes the script's own test say launched (every process is started "
        f"by the XLA launcher, the process group always starts), but {ctx.target.api('launch').qualified_name} "
        "passes no --local_rank, so a saved run's flag keeps "
        "its default and this test says not launched: the two disagree (a resume check fails); record whether "
        "the process group was up (dist.is_initialized()) and test that"
    )
