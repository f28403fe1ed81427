"""XLA616 ignite-backend: PyTorch-Ignite's launchers (idist.Parallel, idist.initialize and
idist.spawn) take the backend that decides where the processes train.  For torch_xla 1.13 a
native backend literal ("nccl", "gloo", "mpi") becomes ignite's XLA backend ("xla-tpu");
torch_xla 2.9 has no names that backend can run on, so there every launcher is reported.  The
launchers and their backend arguments are the distributed facts' (``ignite_launchers``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

IGNITE_BACKEND = Rule(
    code="XLA616",
    name="ignite-backend",
    severity="error",
    summary='PyTorch-Ignite launchers (idist.Parallel, idist.initialize, idist.spawn) use ignite\'s XLA backend "xla-tpu" '
    "(sagemaker); on torch_xla 2.9, where that backend cannot run, they are reported",
    fixable=True,
    why='The backend given to ignite\'s launcher decides where the processes train: with "nccl" or "gloo" they '
    "train on CUDA or the CPU over torch.distributed, and with no backend idist runs serially on CUDA or the CPU, "
    "so a converted script whose launcher was left alone never uses the XLA device. Ignite's XLA backend is "
    '"xla-tpu" (ignite/distributed/comp_models/xla.py); it reads ranks with xm.get_ordinal and '
    "xm.xrt_world_size, which torch_xla 2.7 removed, so for torch_xla 2.9 no backend name is right: every "
    "launcher is reported there, with what to use instead. A backend that is not a literal is reported.",
    examples=lambda: (
        invalid(
            """
            import ignite.distributed as idist


            def training(local_rank, config):
                model = idist.auto_model(build_model(config))


            with idist.Parallel(backend="nccl", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            """
            import ignite.distributed as idist


            def training(local_rank, config):
                model = idist.auto_model(build_model(config))


            with idist.Parallel(backend="xla-tpu", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            target="sagemaker",
            findings=(Expected(8, 29, 'ignite backend "nccl" -> "xla-tpu"'),),
        ),
        invalid(
            """
            import ignite.distributed as idist

            with idist.Parallel(backend="nccl", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            findings=(
                Expected(
                    3,
                    29,
                    'ignite\'s "xla-tpu" backend reads ranks with xm.get_ordinal and '
                    "xm.xrt_world_size, which torch_xla 2.7 removed",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import ignite.distributed as idist

            with idist.Parallel(backend="xla-tpu", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            target="sagemaker",
            note="already-xla-tpu",
        ),
        valid(
            """
            import torch
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=2, backend="loky")(delayed(torch.load)(p) for p in paths)
            """,
            target="sagemaker",
            note="not-ignite",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from ignite import distributed as dist

            with dist.Parallel("gloo", 2) as parallel:
                parallel.run(training, config)
            dist.initialize(backend='nccl')
            """,
            """
            from ignite import distributed as dist

            with dist.Parallel("xla-tpu", 2) as parallel:
                parallel.run(training, config)
            dist.initialize(backend='xla-tpu')
            """,
            target="sagemaker",
            alias=True,
            note="alias-positional-initialize",
            findings=(
                Expected(3, 20, 'ignite backend "gloo" -> "xla-tpu"'),
                Expected(5, 25, "ignite backend 'nccl' -> \"xla-tpu\""),
            ),
        ),
        invalid(
            """
            from ignite.distributed import Parallel, spawn

            spawn("nccl", training, (config,), nproc_per_node=2)
            with Parallel(backend=config["backend"]) as parallel:
                parallel.run(training, config)
            with Parallel(**dist_config) as parallel:
                parallel.run(training, config)
            with Parallel(backend=None) as parallel:
                parallel.run(training, config)
            """,
            """
            from ignite.distributed import Parallel, spawn

            spawn("xla-tpu", training, (config,), nproc_per_node=2)
            with Parallel(backend=config["backend"]) as parallel:
                parallel.run(training, config)
            with Parallel(**dist_config) as parallel:
                parallel.run(training, config)
            with Parallel(backend=None) as parallel:
                parallel.run(training, config)
            """,
            target="sagemaker",
            alias=True,
            note="from-import-not-literal-and-serial",
            findings=(
                Expected(3, 7, 'ignite backend "nccl" -> "xla-tpu"'),
                Expected(4, 23, 'ignite\'s backend comes from `config["backend"]`: make it "xla-tpu"'),
                Expected(6, 15, "ignite's backend comes from `**dist_config`"),
                Expected(8, 23, "with no backend idist runs the function in this one process"),
            ),
        ),
        invalid(
            """
            import ignite.distributed as idist

            idist.initialize("xla-tpu")
            with idist.Parallel() as parallel:
                parallel.run(training, config)
            """,
            note="2.9-xla-tpu-and-serial",
            findings=(
                Expected(3, 18, "torch_xla 2.7 removed, so on torch_xla 2.9 it fails at its first rank query"),
                Expected(4, 6, "with no backend idist runs the function in this one process"),
            ),
        ),
    ),
)

# What ignite's "xla-tpu" backend needs and torch_xla 2.9 lacks, and what to do instead.
_NO_XLA_BACKEND = (
    'ignite\'s "xla-tpu" backend reads ranks with xm.get_ordinal and xm.xrt_world_size, which torch_xla 2.7 '
    "removed, so on torch_xla {version} it fails at its first rank query; start the processes with "
    "torch_xla.launch (or one process, with torch_xla.device()) and read ranks from torch_xla.runtime, "
    "or convert with --target sagemaker for torch_xla 1.13"
)
_SERIAL = (
    "with no backend idist runs the function in this one process, and idist.device() (which auto_model and "
    "auto_dataloader use) is CUDA or the CPU, never the XLA device"
)


@on_facts(IGNITE_BACKEND, nodes=lambda facts: facts.distributed.ignite_launchers)
def _backend(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    from codemods.engine.nodes import is_none, quoted_like, string_value

    backend = ctx.facts.distributed.ignite_launchers[original]
    target = ctx.target
    xla = target.ignite_xla_backend
    value = None if backend is None or backend.star else backend.value
    literal = string_value(value) if value is not None else None
    at: cst.CSTNode = value if value is not None else backend if backend is not None else original
    if xla is None:
        serial = backend is None or is_none(value)
        ctx.report(
            IGNITE_BACKEND,
            at,
            (f"{_SERIAL}; " if serial else "") + _NO_XLA_BACKEND.format(version=target.torch_xla_version),
        )
        return updated
    if literal == xla:
        return updated
    if literal in apis.IGNITE_NATIVE_BACKENDS:
        index = original.args.index(backend)

        def build() -> cst.Call:
            arg = updated.args[index]
            args = [
                *updated.args[:index],
                arg.with_changes(value=quoted_like(arg.value, xla)),
                *updated.args[index + 1 :],
            ]
            return updated.with_changes(args=args)

        return ctx.fix_or_keep(
            updated,
            IGNITE_BACKEND,
            at,
            f'ignite backend {ctx.code(at)} -> "{xla}": with {ctx.code(at)} the processes train on '
            "CUDA (or the CPU), not on the XLA device",
            build,
        )
    if backend is None or is_none(value):
        message = f'{_SERIAL}: pass backend="{xla}"'
    elif literal is not None:
        message = f'ignite backend {ctx.code(at)} trains on CUDA or the CPU: make it "{xla}" on the XLA device'
    else:
        message = (
            f"ignite's backend comes from `{ctx.code(at)}`: make it "
            f'"{xla}" on the XLA device (with "nccl", "gloo" or no backend the processes train on '
            "CUDA or the CPU)"
        )
    ctx.report(IGNITE_BACKEND, at, message)
    return updated
