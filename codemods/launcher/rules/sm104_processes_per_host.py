"""SM104 processes-per-host."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _P3, _SMP, _fixed, _invalid, _launcher, _valid

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
