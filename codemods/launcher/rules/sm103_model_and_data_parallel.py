"""SM103 model-and-data-parallel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _P3, _invalid, _launcher, _valid, _with_data_parallel

if TYPE_CHECKING:
    from codemods.launcher.facts import Entry
    from codemods.launcher.rules.job import Job


MODEL_AND_DATA_PARALLEL = Rule(
    code="SM103",
    name="model-and-data-parallel",
    severity="error",
    summary='`"modelparallel"` and `"dataparallel"` together in one job are not supported',
    fixable=False,
    why="The SDK accepts one smdistributed strategy per job, and refuses a second key even when it is switched off. For data parallelism on top of model parallelism "
    'set `"ddp": True` (PyTorch) or `"horovod": True` (TensorFlow) in the modelparallel parameters.',
    instead='`"modelparallel"` alone under `"smdistributed"`, with data parallelism across the model replicas switched on '
    'in its parameters, `"ddp": True` (PyTorch) or `"horovod": True` (TensorFlow), not both: '
    '`distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": '
    '{"pipeline_parallel_degree": 2, "ddp": True}}}, "mpi": mpi_options}`.',
    examples=lambda: (
        _invalid(
            _launcher(smp=None, mpi=None, arguments=_P3, distribution=_with_data_parallel("True")),
            findings=(Expected(4, 71, '"modelparallel" and "dataparallel" cannot be used in one job'),),
        ),
    ),
    valid=lambda: (
        _valid(
            _launcher(
                smp=None, mpi=None, arguments=_P3, distribution='{"smdistributed": {"dataparallel": {"enabled": True}}}'
            ),
            note="dataparallel-only",
        ),
    ),
    invalid=lambda: (
        _invalid(
            _launcher(arguments=_P3, distribution=_with_data_parallel("True")),
            findings=(Expected(7, 71, '"modelparallel" and "dataparallel" cannot be used in one job'),),
        ),
        _invalid(
            _launcher(arguments=_P3, distribution=_with_data_parallel("False")),
            findings=(Expected(7, 71, '"dataparallel" is switched off, but the SDK still refuses it'),),
            note="dataparallel-off",
        ),
        _invalid(
            """
            from sagemaker import pytorch

            strategies = {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}},
                          "dataparallel": {"enabled": True}}
            pytorch.PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                            distribution={"smdistributed": strategies, "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            alias=True,
            findings=(Expected(4, 15, '"modelparallel" and "dataparallel" cannot be used in one job'),),
        ),
    ),
)


def check_beside_model_parallel(job: Job, data_parallel: Entry) -> None:
    """A ``"dataparallel"`` strategy beside ``"modelparallel"``: the SDK refuses a second
    ``"smdistributed"`` key, switched off or not."""
    from codemods.launcher.rules.job import constant, entry_value

    switched_off = constant(entry_value(data_parallel.value, "enabled"), True) is False
    job.findings.report(
        MODEL_AND_DATA_PARALLEL,
        data_parallel.key_node,
        (
            '"dataparallel" is switched off, but the SDK still refuses it beside "modelparallel" '
            '(one "smdistributed" key per job): remove it'
        )
        if switched_off
        else (
            '"modelparallel" and "dataparallel" cannot be used in one job: for data parallelism '
            'across model replicas set "ddp": True (PyTorch) or "horovod": True (TensorFlow) in the '
            "modelparallel parameters"
        ),
    )
