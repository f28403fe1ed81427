"""SM104 processes-per-host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _P3, _SMP, _fixed, _invalid, _launcher, _valid

if TYPE_CHECKING:
    from codemods.launcher.facts import Mapping, Value
    from codemods.launcher.rules.job import Job


PROCESSES_PER_HOST = Rule(
    code="SM104",
    name="processes-per-host",
    severity="error",
    summary="`processes_per_host` is required and must not exceed the GPUs of `instance_type`",
    fixable=True,
    why="SageMaker maps MPI processes one to one onto GPUs; more processes than GPUs fail the job. A value above "
    "the instance's GPU count is lowered to it (when the pipeline degree still divides it); a missing one is "
    "reported.",
    examples=lambda: (
        _fixed(
            _launcher(smp=None, mpi='{"enabled": True, "processes_per_host": 16}', gap=False, arguments=_P3),
            '"processes_per_host": 16',
            '"processes_per_host": 8',
            findings=(Expected(3, 55, "processes_per_host 16 -> 8"),),
        ),
    ),
    valid=lambda: (
        _valid(_launcher()),
        _valid(
            _launcher(
                smp=None,
                mpi=None,
                arguments='instance_type="ml.c5.18xlarge"',
                distribution='{"mpi": {"enabled": True, "processes_per_host": 36}}',
            ),
            note="plain-mpi-on-cpus",
        ),
    ),
    invalid=lambda: (
        _fixed(
            _launcher(smp=_SMP, mpi='{"enabled": True, "processes_per_host": 16}'),
            '"processes_per_host": 16',
            '"processes_per_host": 8',
            note="above-the-gpus",
            findings=(Expected(4, 55, "processes_per_host 16 -> 8"),),
        ),
        _invalid(
            _launcher(smp=_SMP, mpi='{"enabled": True}'),
            note="missing",
            findings=(Expected(4, 15, 'mpi has no "processes_per_host" (required)'),),
        ),
        _invalid(
            _launcher(
                smp='{"enabled": True, "parameters": {"pipeline_parallel_degree": 3}}',
                mpi='{"enabled": True, "processes_per_host": 12}',
            ),
            note="degree-does-not-divide-the-gpus",
            findings=(Expected(4, 55, '"processes_per_host" 12 is above the GPUs'),),
        ),
        _invalid(
            _launcher(arguments='instance_type="ml.c5.18xlarge"'),
            note="cpu-instance",
            findings=(Expected(4, 55, "ml.c5.18xlarge has no GPU"),),
        ),
        _fixed(
            """
            import sagemaker.huggingface as hf

            instance = "ml.g5.12xlarge"
            hf.HuggingFace(entry_point="train.py", instance_type=instance,
                           distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                         "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            '"processes_per_host": 8',
            '"processes_per_host": 4',
            alias=True,
            findings=(Expected(6, 77, "processes_per_host 8 -> 4"),),
        ),
    ),
)


def check_processes_per_host(job: Job, mpi: Mapping, degree: Value | None) -> None:
    """``processes_per_host`` given, and no more than the instance's GPUs (lowered to them
    when the pipeline ``degree`` still divides them)."""
    import libcst as cst

    from codemods.launcher.facts import Constant, Unknown
    from codemods.launcher.rules.job import Edit, positive_int

    value = mpi.get("processes_per_host")
    if value is None:
        if mpi.hidden is None:
            instance = job.instance
            hint = f" ({instance[1].gpus} on {instance[0]})" if instance and instance[1].gpus else ""
            job.findings.report(
                PROCESSES_PER_HOST,
                mpi.node,
                f'mpi has no "processes_per_host" (required): set it to the GPUs per instance{hint}',
            )
        return
    if isinstance(value, Unknown):
        job.findings.unknown(value, '`"processes_per_host"`')
        return
    processes = value.value if isinstance(value, Constant) else None
    if not isinstance(processes, int):
        return
    instance = job.instance
    if instance is None:
        return
    name, entry = instance
    if entry.gpus == 0:
        job.findings.report(PROCESSES_PER_HOST, value.node, f"{name} has no GPU: model parallel needs GPU instances")
        return
    if processes <= entry.gpus:
        return
    why = f"{name} has {entry.gpus} GPUs, one per process"
    pipeline = positive_int(degree)
    if not isinstance(value.node, cst.Integer) or (pipeline and entry.gpus % pipeline):
        reason = f" (the pipeline degree {pipeline} does not divide {entry.gpus})" if pipeline else ""
        job.findings.report(
            PROCESSES_PER_HOST, value.node, f'"processes_per_host" {processes} is above the GPUs: {why}{reason}'
        )
        return
    job.findings.plan(
        value.node,
        Edit(
            PROCESSES_PER_HOST,
            f"processes_per_host {processes} -> {entry.gpus}: {why}",
            lambda node: node.with_changes(value=str(entry.gpus)),
        ),
    )
