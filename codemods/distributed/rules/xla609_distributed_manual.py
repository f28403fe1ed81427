"""XLA609 distributed-manual: multi-process code the port leaves to a person.  Its hooks report
what the distributed facts name (a launcher of the script's own, calls of another module's
callable that starts the process group under a launcher check, environment reads the XLA
launcher does not answer, ranks and sizes read in the process that starts the others, training
at module level with no launcher check) and any call of a multi-GPU API that no rule ports
(``apis.DISTRIBUTED``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.distributed.rules.display_read_cases import display_read_invalid, display_read_valid
from codemods.distributed.rules.distributed_manual_cases import distributed_manual_invalid
from codemods.distributed.rules.spawning_class_cases import parent_called_method_invalid
from codemods.engine.hooks import of_types, on_facts, on_references, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.targets import ENTRY_FUNCTION

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DISTRIBUTED_MANUAL = Rule(
    code="XLA609",
    name="distributed-manual",
    severity="error",
    summary="Multi-process code the tool cannot port safely: what to do by hand",
    fixable=False,
    why="Environment variables the XLA launcher does not set, ranks read in the launching process (where the "
    "XLA runtime may not start before the launch: torch_xla.launch then raises 'Runtime is already initialized') "
    "and training at module level need a person. A method of a class that spawns its own method (ProDiff's "
    "`Trainer`: `mp.spawn(self.ddp_run, ...)` with several devices, `self.run_single_process(task)` otherwise) "
    "runs in the launching process only where the module names it outside `self.<name>` of its class, or a "
    "method that may run there calls it: one reached only from the spawned method, or from the other arm of the "
    "`if` whose arm spawns (that run launches nothing), is a worker's, and its rank read is ported (XLA602). So does a launcher of its own (a "
    "script that starts its workers with subprocess or os.exec*, RANK/LOCAL_RANK/WORLD_SIZE in their "
    "environment, and starts no process group): it stays as it is, since wrapping it in torch_xla.launch would "
    "start every worker once per device; its workers are not torchrun's, so start the training script with "
    "torchrun or torch_xla.launch instead. A MASTER_PORT that the function starting the process group sets "
    "from a value each process computes for itself (a free port, an MPI job's port broadcast from rank 0: under "
    "the XLA launcher each process is an MPI world of its own) differs between the processes, and the "
    "rendezvous, which builds its store from each process's MASTER_PORT, never meets: checked on torch_xla "
    "2.9's xla:// handler. A DistributedDataParallel built only under a CUDA check that "
    "stays (`if torch.cuda.is_available(): model = DDP(model, ...)` beside an `else` that keeps the bare model): the "
    "check is False on an XLA host, so the other path runs and nothing all-reduces the gradients across the "
    "processes torch_xla.launch starts; the optimizer steps of a file that wraps its model in DDP stay plain, so "
    "each process trains its own replica. Make the check hold on XLA (or drop it) so that DDP wraps the model. "
    "So with a process group started only under such a check (`if distributed and torch.cuda.is_available(): "
    "dist.init_process_group(...)`): the port makes it start the xla process group, but on an XLA host the check "
    'is False and none starts, so a later DistributedDataParallel raises ValueError ("Default process group has '
    'not been initialized"); drop the check (or make it hold on XLA). A helper of another module that starts the '
    "process group only when RANK and WORLD_SIZE are set (torchvision's `utils.init_distributed_mode`; also when "
    "its other way to the start is SLURM's, `elif 'SLURM_PROCID' in os.environ:` in DETR's and DeiT's, which only "
    "srun sets), called by a script torch_xla.launch now starts: no process group starts, each process goes through all the data (and "
    "trains its own copy with a plain step); where the script or a project module it imports (its model's forward) "
    "runs a collective (`dist.all_gather`, `dist.barrier()`...) with no check that a process group is started (no "
    "`if dist.is_initialized():` around it, no branch that returns before it: neither `if ...: return` nor the helper's "
    "own `else: return`, which leaves its `dist.barrier()` after `init_process_group` unreached, and not in a "
    "function its module names only under a check: `map(_meter_reduce if distributed else avg, meters)` runs it "
    "only where the flag holds), the finding names it: the run crashes there. An environment rank read that only "
    'decides what a process shows (a print or a log under `if os.environ.get("RANK", "0") == "0":`, a flag only '
    "such an `if` tests, a progress bar's `disable=`) is left alone: every process prints, nothing else changes.",
    examples=lambda: (
        invalid(
            """
        import os
        import torch.distributed as dist


        def setup():
            dist.init_process_group("nccl")
            return os.environ["RANK"]
        """,
            """
        import os
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def setup():
            dist.init_process_group("xla", init_method="xla://")
            return os.environ["RANK"]
        """,
            findings=(Expected(8, 12, "`RANK` read from the environment"),),
        ),
    ),
    valid=lambda: (
        *display_read_valid(),
        valid(
            """
            import torch as th
            from torch.distributed import init_process_group as start


            def setup(rank):
                if th.cuda.is_available():
                    start(backend="nccl")
                else:
                    start(backend="gloo")
            """,
            """
            import torch as th
            from torch.distributed import init_process_group as start
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup(rank):
                if th.cuda.is_available():
                    start("xla", init_method="xla://")
                else:
                    start("xla", init_method="xla://")
            """,
            note="process-group-on-both-paths-of-a-kept-cuda-check",
        ),
        valid(
            """
            import os
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401


            def setup():
                dist.init_process_group("xla", init_method="xla://")
                port = os.environ.get("MASTER_PORT", "12355")
            """,
            note="ported",
        ),
        valid(
            """
            import os

            import torch.distributed as dist
            import torch.multiprocessing as mp


            def worker(rank, world_size, port):
                os.environ["MASTER_PORT"] = str(port)
                dist.init_process_group("nccl", rank=rank, world_size=world_size)


            def main(find_port):
                mp.spawn(worker, args=(2, find_port()), nprocs=2)
            """,
            """
            import os

            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def worker(rank, world_size, port):
                os.environ["MASTER_PORT"] = str(port)
                dist.init_process_group("xla", init_method="xla://")


            def main(find_port):
                torch_xla.launch(worker, args=(2, find_port()))
            """,
            note="a port picked once in the launching process and handed to every worker",
        ),
        valid(
            """
            import os

            import torch.distributed as dist


            def setup(args):
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ["MASTER_PORT"] = str(args.port or int(os.environ.get("PORT", "12355")))
                dist.init_process_group("nccl")
            """,
            """
            import os

            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup(args):
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ["MASTER_PORT"] = str(args.port or int(os.environ.get("PORT", "12355")))
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="a port from a flag or the environment every process shares",
        ),
        # DDP on both paths of a CUDA check that stays: the model is wrapped either way.
        valid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP


            def wrap(model):
                if torch.cuda.is_available():
                    return DDP(model)
                else:
                    return DDP(model, find_unused_parameters=True)
            """,
            note="ddp-on-both-paths-of-a-kept-cuda-check",
        ),
        # DDP under a condition that is no CUDA check: it runs on XLA where it ran before.
        valid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP


            def wrap(model, distributed):
                if distributed:
                    model = DDP(model)
                return model
            """,
            note="ddp-under-a-flag",
        ),
        # A prefix test that also takes "xla" holds on XLA: DDP wraps the model there.
        valid(
            """
            from torch.nn.parallel import DistributedDataParallel


            def wrap_model(model, device, distributed):
                model.to(device)
                if device.type.startswith(("cuda", "xla")) and distributed:
                    model = DistributedDataParallel(model)
                return model
            """,
            note="ddp-under-a-prefix-test-that-takes-xla",
        ),
    ),
    invalid=lambda: (*distributed_manual_invalid(), *display_read_invalid(), *parent_called_method_invalid()),
)


@reports_facts(
    DISTRIBUTED_MANUAL,
    nodes=lambda facts: [facts.distributed.own_launcher] if facts.distributed.own_launcher is not None else [],
)
def _own_launcher(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original.func)}(...)` starts this script's workers with rank variables in "
        "their environment, and the script starts no process group: a launcher of its own, left "
        + ctx.target.advice(f"as it is (no torch_xla.launch). {apis.OWN_LAUNCHER_ADVICE}")
    )


@reports_facts(DISTRIBUTED_MANUAL, nodes=lambda facts: facts.device.guarded_ddp)
def _guarded_ddp(ctx: Context[Facts], original: cst.Call) -> str:
    return ctx.facts.device.guarded_ddp[original][1]


@reports_facts(DISTRIBUTED_MANUAL, nodes=lambda facts: facts.device.guarded_groups)
def _guarded_group(ctx: Context[Facts], original: cst.CSTNode) -> str:
    return ctx.facts.device.guarded_groups[original]


@reports_facts(DISTRIBUTED_MANUAL, nodes=lambda facts: facts.distributed.external_launch_checks)
def _external_launch_check(ctx: Context[Facts], original: cst.Call) -> str:
    collective = ctx.facts.distributed.unchecked_collective
    outcome = (
        f"setup (no process group), and {collective}, which runs with no check that a process group is started, "
        "raises there (ValueError: Default process group has not been initialized): the run crashes when it first "
        "gets there."
        if collective
        else "setup (no process group, no DDP, no sampler) and go through all the data: with a plain optimizer step "
        "each trains its own copy, with xm.optimizer_step they average their gradients and step one model, each "
        "process over all the data (no speedup)."
    )
    return (
        f"{ctx.facts.distributed.external_launch_checks[original]} starts the process group only when a launcher's "
        "variables (RANK, WORLD_SIZE, LOCAL_RANK) are set, and that check stays there: "
        + ctx.target.advice(
            f"torch_xla.launch sets none of them, so every process would skip the script's distributed {outcome} "
            "Replace the check there with True (every process is started by the XLA launcher), or start this "
            "script with torchrun"
        )
    )


@reports_facts(DISTRIBUTED_MANUAL, nodes=lambda facts: facts.distributed.varying_rendezvous)
def _varying_rendezvous(ctx: Context[Facts], original: cst.CSTNode) -> str:
    value, broadcast = ctx.facts.distributed.varying_rendezvous[original]
    mpi = (
        "under torch_xla.launch its MPI broadcast makes nothing agree (each process is an MPI world of its own). "
        if broadcast
        else ""
    )
    return (
        f"`{ctx.code(original)} = {value}` sets a port that each process computes for itself: the process group's "
        "rendezvous builds its store from MASTER_PORT as each process sees it, so processes with different ports "
        "never meet (with more than one device, init_process_group waits until it times out). "
        + ctx.target.advice(
            f"{mpi}Drop the assignment (every process then uses port 12355) or set one fixed port before "
            "torch_xla.launch"
        )
    )


@reports_facts(DISTRIBUTED_MANUAL, nodes=lambda facts: facts.distributed.raw_env_reads)
def _raw_env_read(ctx: Context[Facts], original: cst.CSTNode) -> str:
    return (
        f"`{ctx.facts.distributed.raw_env_reads[original]}` read from the environment: the XLA "
        "launcher does not set it; use the XLA runtime's rank and size (as a number, where this "
        "string is converted)"
    )


@on_facts(DISTRIBUTED_MANUAL, nodes=lambda facts: of_types(facts.distributed.parent_reads, "Call Attribute"))
def _launching_process_read(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    """A rank or size read in the process that starts the others (in the workers all the same,
    it is XLA602's port)."""
    from codemods.distributed.rules.edits import CONCEPT_WORDS, runs_in_workers

    if runs_in_workers(ctx, original):
        return updated
    ctx.report(
        DISTRIBUTED_MANUAL,
        original,
        f"`{ctx.code(original)}` reads the {CONCEPT_WORDS[ctx.facts.distributed.parent_reads[original]]} in the "
        "process that starts the others: the XLA runtime may not be used there; read it in the workers",
    )
    return updated


@on_facts(
    DISTRIBUTED_MANUAL,
    nodes=lambda facts: (
        [facts.distributed.module_level_script]
        if facts.distributed.module_level_script is not None and not facts.distributed.module_level_checked
        else []
    ),
)
def _module_level_training(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
    """Distributed training at module level, with no launcher check it stays under (with one it
    is XLA614's), reported as the rewrite leaves the module."""
    ctx.report(
        DISTRIBUTED_MANUAL,
        ctx.facts.distributed.module_level_anchor,
        "distributed training at module level: move it "
        f"into a function, call it from `def {ENTRY_FUNCTION}(index):` and start that with "
        "the XLA launcher",
    )
    return updated


@on_references(DISTRIBUTED_MANUAL, names=apis.DISTRIBUTED)
def _unported_call(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    """A call of a multi-GPU API that no rule ports is reported."""
    import libcst as cst

    parent = ctx.parent()
    if not isinstance(parent, cst.Call) or parent.func is not original:
        return updated
    part = ctx.facts.distributed
    handled = (part.process_groups, part.spawns, part.ddp_calls, part.data_parallel)
    if part.hogwild is None and not any(parent in table for table in handled):
        ctx.report(
            DISTRIBUTED_MANUAL,
            parent,
            f"`{ctx.code(parent.func)}` is not ported here: on XLA use the "
            "xla process group, the XLA launcher and one process per device",
        )
    return updated
