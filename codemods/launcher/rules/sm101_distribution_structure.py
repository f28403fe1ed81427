"""SM101 distribution-structure."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _P3, _fixed, _invalid, _launcher, _valid

DISTRIBUTION_STRUCTURE = Rule(
    code="SM101",
    name="distribution-structure",
    severity="error",
    summary='Model parallel needs `{"smdistributed": {"modelparallel": {"enabled": True, "parameters": {...}}}, '
    '"mpi": {"enabled": True, ...}}`',
    fixable=True,
    why="The SDK only starts the model-parallel library for that exact shape: a missing `enabled` or "
    "`parameters`, or the configuration put directly under `smdistributed`, leaves the library off or fails the "
    "job. The flat form is rewritten; missing parts are reported.",
    examples=lambda: (
        _fixed(
            "from sagemaker.estimator import Estimator\n\n"
            'smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}\n'
            'estimator = Estimator(\n    image_uri=image,\n    distribution={"smdistributed": smp_options, "mpi": mpi_options},\n)\n',
            '"smdistributed": smp_options',
            '"smdistributed": {"modelparallel": smp_options}',
            findings=(Expected(6, 36, 'smp_options -> {"modelparallel"'),),
        ),
    ),
    valid=lambda: (
        _valid(_launcher(), note="seed-shape"),
        _valid(
            _launcher(
                smp=None,
                mpi=None,
                arguments=_P3,
                distribution='{"smdistributed": {"modelparallel": {"enabled": False}}}',
            ),
            note="switched-off",
        ),
    ),
    invalid=lambda: (
        _fixed(
            """
            from sagemaker.estimator import Estimator

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            Estimator(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                      distribution={"smdistributed": smp_options, "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            '"smdistributed": smp_options',
            '"smdistributed": {"modelparallel": smp_options}',
            note="flat-form",
            findings=(Expected(5, 42, 'smp_options -> {"modelparallel"'),),
        ),
        _invalid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"parameters": {"pipeline_parallel_degree": 2}}},
                                  "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            note="no-enabled",
            findings=(Expected(4, 58, 'modelparallel has no "enabled"'),),
        ),
        _invalid(
            _launcher(
                smp=None,
                mpi=None,
                arguments=_P3,
                distribution='{"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}}}',
            ),
            note="no-mpi",
            findings=(Expected(4, 22, "model parallel runs under MPI"),),
        ),
        _invalid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"enabled": True}},
                                  "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            note="no-parameters",
            findings=(
                Expected(
                    4, 58, 'modelparallel has no "parameters" (required), with at least "pipeline_parallel_degree"'
                ),
            ),
        ),
        _fixed(
            """
            from sagemaker.estimator import Estimator as Est

            smp = dict(enabled=True, parameters=dict(pipeline_parallel_degree=2))
            Est(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                distribution=dict(smdistributed=smp, mpi=dict(enabled=True, processes_per_host=8)))
            """,
            "smdistributed=smp",
            'smdistributed={"modelparallel": smp}',
            note="dict-calls",
            alias=True,
            findings=(Expected(5, 37, 'smp -> {"modelparallel"'),),
        ),
    ),
)
