"""SM102 partitions-renamed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _P3, _fixed, _invalid, _launcher, _valid

if TYPE_CHECKING:
    from codemods.launcher.facts import Mapping
    from codemods.launcher.rules.job import Job


PARTITIONS_RENAMED = Rule(
    code="SM102",
    name="partitions-renamed",
    severity="error",
    summary='`"partitions"` is `"pipeline_parallel_degree"` since smdistributed-modelparallel 1.6.0',
    fixable=True,
    why='smdistributed-modelparallel 1.6.0 renamed the required "partitions" parameter to '
    '"pipeline_parallel_degree" (a breaking change in the library\'s release notes).',
    examples=lambda: (
        _fixed(
            _launcher(smp='{"enabled": True, "parameters": {"partitions": 2}}', mpi=None, gap=False, arguments=_P3),
            '"partitions"',
            '"pipeline_parallel_degree"',
            findings=(Expected(3, 48, '"partitions" -> "pipeline_parallel_degree"'),),
        ),
    ),
    valid=lambda: (
        _valid(_launcher()),
        _valid(
            """
            from sagemaker.pytorch import PyTorch

            disk = {"partitions": 2}
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", hyperparameters=disk)
            """,
            note="not-a-distribution",
        ),
    ),
    invalid=lambda: (
        _fixed(
            _launcher(
                smp="{\n"
                '    "enabled": True,\n'
                '    "parameters": {\n'
                '        "partitions": 2,  # Required\n'
                '        "microbatches": 4,\n'
                "    },\n"
                "}"
            ),
            '"partitions"',
            '"pipeline_parallel_degree"',
            findings=(Expected(6, 9, '"partitions" -> "pipeline_parallel_degree"'),),
        ),
        _invalid(
            _launcher(smp="{'enabled': True, 'parameters': {'partitions': 2, 'pipeline_parallel_degree': 2}}"),
            note="both-given",
            findings=(Expected(3, 48, '"partitions" and "pipeline_parallel_degree" both given'),),
        ),
        _fixed(
            """
            from sagemaker.tensorflow import TensorFlow as TF

            TF(entry_point="train.py", instance_type="ml.p3.16xlarge",
               distribution={"smdistributed": {"modelparallel": dict(enabled=True, parameters=dict(partitions=2, horovod=True))},
                             "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            "partitions=2",
            "pipeline_parallel_degree=2",
            note="tensorflow-dict-call",
            alias=True,
            findings=(Expected(4, 88, "partitions -> pipeline_parallel_degree"),),
        ),
    ),
)


def check_partitions(job: Job, parameters: Mapping) -> None:
    """``partitions`` renamed to ``pipeline_parallel_degree``; reported when both are given."""
    import libcst as cst

    from codemods.launcher.rules.job import Edit, code, string_like

    partitions = parameters.entries.get("partitions")
    if partitions is None:
        return
    if "pipeline_parallel_degree" in parameters.entries:
        job.findings.report(
            PARTITIONS_RENAMED,
            partitions.key_node,
            '"partitions" and "pipeline_parallel_degree" both given: '
            'remove "partitions" (renamed in smdistributed-modelparallel 1.6.0)',
        )
        return
    key = partitions.key_node

    def rename(node: cst.CSTNode) -> cst.CSTNode:
        if isinstance(node, cst.Name):
            return node.with_changes(value="pipeline_parallel_degree")
        return string_like(node, "pipeline_parallel_degree")

    new = "pipeline_parallel_degree" if isinstance(key, cst.Name) else code(rename(key))
    job.findings.plan(
        key,
        Edit(PARTITIONS_RENAMED, f"{code(key)} -> {new}: renamed in smdistributed-modelparallel 1.6.0", rename),
    )
