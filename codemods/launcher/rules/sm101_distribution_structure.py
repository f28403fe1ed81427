"""SM101 distribution-structure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _P3, _fixed, _invalid, _launcher, _valid

if TYPE_CHECKING:
    from codemods.launcher.facts import Entry, Mapping
    from codemods.launcher.rules.job import Job


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


# The strategies "smdistributed" takes (the SDK's keys).
STRATEGIES = ("modelparallel", "dataparallel")


def strategies_of(job: Job, smdistributed: Entry) -> Mapping | None:
    """The strategies under ``"smdistributed"``; None (reported) when they are not a dict."""
    from codemods.launcher.facts import Mapping, Unknown

    strategies = smdistributed.value
    if isinstance(strategies, Unknown):
        job.findings.unknown(strategies, '`"smdistributed"`')
        return None
    if not isinstance(strategies, Mapping):
        job.findings.report(
            DISTRIBUTION_STRUCTURE,
            smdistributed.written,
            '"smdistributed" takes a dict: {"modelparallel": {...}} or {"dataparallel": {...}}',
        )
        return None
    return strategies


def fix_flat_form(job: Job, smdistributed: Entry) -> None:
    """``{"smdistributed": smp_options}`` -> ``{"smdistributed": {"modelparallel": smp_options}}``."""
    import libcst as cst

    from codemods.launcher.rules.job import Edit, code, string_like

    key = smdistributed.key_node

    def wrap(written: cst.CSTNode) -> cst.CSTNode:
        name = string_like(key, "modelparallel")
        return cst.Dict([cst.DictElement(name, written)])  # type: ignore[arg-type]  # Edit's build takes any node: the one planned here is the written value, an expression

    job.findings.plan(
        smdistributed.written,
        Edit(
            DISTRIBUTION_STRUCTURE,
            f"{code(smdistributed.written)} -> {{new}}: the model-parallel settings go under "
            '"smdistributed" -> "modelparallel"',
            wrap,
        ),
    )


def check_strategy_names(job: Job, strategies: Mapping) -> None:
    for key, entry in strategies.entries.items():
        if key not in STRATEGIES:
            job.findings.report(
                DISTRIBUTION_STRUCTURE,
                entry.key_node,
                f'"smdistributed" has no strategy {key!r}: use "modelparallel" or "dataparallel"',
            )


def model_parallel_enabled(job: Job, config: Mapping) -> bool:
    """Checks ``enabled`` of the modelparallel settings; False when the library is switched off."""
    from codemods.launcher.facts import Unknown
    from codemods.launcher.rules.job import constant

    enabled = config.get("enabled")
    if isinstance(enabled, Unknown):
        job.findings.unknown(enabled, '`"enabled"` of modelparallel')
    elif enabled is None and config.hidden is None:
        job.findings.report(
            DISTRIBUTION_STRUCTURE,
            config.node,
            'modelparallel has no "enabled": True (required): without it the job runs without the model-parallel library',
        )
    elif constant(enabled, True) is False:
        return False
    return True


def model_parallel_parameters(job: Job, config: Mapping) -> Mapping | None:
    """The ``parameters`` of the modelparallel settings; None (reported when missing) when not a dict."""
    from codemods.launcher.facts import Mapping, Unknown

    parameters = config.get("parameters")
    if parameters is None:
        if config.hidden is None:
            job.findings.report(
                DISTRIBUTION_STRUCTURE,
                config.node,
                'modelparallel has no "parameters" (required), with at least "pipeline_parallel_degree"',
            )
    elif isinstance(parameters, Unknown):
        job.findings.unknown(parameters, '`"parameters"` of modelparallel')
    return parameters if isinstance(parameters, Mapping) else None


def check_pipeline_degree(job: Job, parameters: Mapping) -> None:
    """The modelparallel parameters name the pipeline degree (or its old name, SM102's)."""
    entries = parameters.entries
    if "partitions" not in entries and "pipeline_parallel_degree" not in entries and parameters.hidden is None:
        job.findings.report(
            DISTRIBUTION_STRUCTURE,
            parameters.node,
            'modelparallel parameters have no "pipeline_parallel_degree" (required): the number of model partitions',
        )


def mpi_of(job: Job, distribution: Mapping) -> Mapping | None:
    """The ``mpi`` settings a model-parallel job runs under; None (reported) when missing or not a dict."""
    from codemods.launcher.facts import Mapping, Unknown

    mpi = distribution.get("mpi")
    if mpi is None:
        job.findings.report(
            DISTRIBUTION_STRUCTURE,
            distribution.node,
            'model parallel runs under MPI: add "mpi": {"enabled": True, '
            '"processes_per_host": <GPUs per instance>} to the distribution',
        )
    elif isinstance(mpi, Unknown):
        job.findings.unknown(mpi, '`"mpi"`')
    return mpi if isinstance(mpi, Mapping) else None


def check_mpi_enabled(job: Job, mpi: Mapping) -> None:
    from codemods.launcher.facts import Unknown
    from codemods.launcher.rules.job import constant

    enabled = mpi.get("enabled")
    if isinstance(enabled, Unknown):
        job.findings.unknown(enabled, '`"enabled"` of mpi')
    elif constant(enabled, True) is not True and not (enabled is None and mpi.hidden is not None):
        job.findings.report(
            DISTRIBUTION_STRUCTURE,
            mpi.node,
            'mpi needs "enabled": True (required): the model-parallel library runs its processes under MPI',
        )
