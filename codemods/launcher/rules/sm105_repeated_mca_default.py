"""SM105 repeated-mca-default."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _MCA_DEFAULT, _P3, _SMP, _custom_mpi, _fixed, _invalid, _launcher, _valid

if TYPE_CHECKING:
    from codemods.launcher.facts import Mapping
    from codemods.launcher.rules.job import Job


REPEATED_MCA_DEFAULT = Rule(
    code="SM105",
    name="repeated-mca-default",
    severity="error",
    summary="`custom_mpi_options` repeats the default `--mca btl_vader_single_copy_mechanism none`: the job fails",
    fixable=True,
    why='SageMaker already passes this MCA parameter; Open MPI refuses a parameter listed twice ("MCA '
    'parameters can only be listed once"). The repeat is removed, the other options are kept.',
    examples=lambda: (
        _fixed(
            _launcher(smp=None, mpi=_custom_mpi(f'"{_MCA_DEFAULT}-x NCCL_DEBUG=INFO"'), gap=False, arguments=_P3),
            _MCA_DEFAULT,
            "",
            findings=(Expected(4, 38, 'custom_mpi_options -> "-x NCCL_DEBUG=INFO"'),),
        ),
    ),
    valid=lambda: (
        _valid(
            _launcher(
                smp=_SMP,
                mpi='{"enabled": True, "processes_per_host": 8, "custom_mpi_options": "--mca btl_tcp_if_include eth0"}',
            )
        ),
    ),
    invalid=lambda: (
        _fixed(
            _launcher(smp=_SMP, mpi=_custom_mpi(f'"-x NCCL_DEBUG=WARN {_MCA_DEFAULT}-x A=1"')),
            _MCA_DEFAULT,
            "",
            note="keeps-the-rest",
            findings=(Expected(5, 38, 'custom_mpi_options -> "-x NCCL_DEBUG=WARN -x A=1"'),),
        ),
        _fixed(
            _launcher(smp=_SMP, mpi=_custom_mpi(f"'{_MCA_DEFAULT}'")),
            _MCA_DEFAULT,
            "",
            note="only-the-default",
            findings=(Expected(5, 38, "custom_mpi_options -> ''"),),
        ),
        _invalid(
            _launcher(
                smp=None,
                mpi=None,
                arguments=_P3,
                distribution='{"mpi": {"enabled": True, "custom_mpi_options": "-mca btl_vader_single_copy_mechanism cma"}}',
            ),
            note="other-value-reported",
            findings=(Expected(4, 70, "custom_mpi_options sets btl_vader_single_copy_mechanism, which SageMaker"),),
        ),
        _fixed(
            """
            from sagemaker.tensorflow.estimator import TensorFlow

            TensorFlow(entry_point="train.py", instance_type="ml.p3.16xlarge",
                       distribution=dict(mpi=dict(enabled=True, custom_mpi_options="--mca btl_vader_single_copy_mechanism none -x X=1")))
            """,
            _MCA_DEFAULT,
            "",
            alias=True,
            findings=(Expected(4, 72, 'custom_mpi_options -> "-x X=1"'),),
        ),
    ),
)


# The MCA parameter SageMaker already passes to mpirun, as custom_mpi_options may repeat it.
_REPEATED_MCA = re.compile(r"(?<!\S)--?mca\s+btl_vader_single_copy_mechanism\s+(\S+)")


def check_mca(job: Job, mpi: Mapping) -> None:
    """``custom_mpi_options`` that repeat SageMaker's ``btl_vader_single_copy_mechanism``:
    the flag removed when it repeats the default in a plain string, else reported."""
    import libcst as cst

    from codemods.launcher.facts import Constant, Unknown
    from codemods.launcher.rules.job import Edit, code, string_like

    options = mpi.get("custom_mpi_options")
    if isinstance(options, Unknown):
        job.findings.unknown(options, '`"custom_mpi_options"`')
        return
    text = options.value if isinstance(options, Constant) else None
    if not isinstance(options, Constant) or not isinstance(text, str):
        return
    repeats = list(_REPEATED_MCA.finditer(text))
    if not repeats:
        return
    if any(m.group(1) != "none" for m in repeats) or not isinstance(options.node, cst.SimpleString):
        job.findings.report(
            REPEATED_MCA_DEFAULT,
            options.node,
            "custom_mpi_options sets btl_vader_single_copy_mechanism, which "
            "SageMaker already passes (`--mca btl_vader_single_copy_mechanism none`): Open MPI fails "
            "on a parameter listed twice; remove it",
        )
        return
    kept = _without(text, repeats)
    job.findings.plan(
        options.node,
        Edit(
            REPEATED_MCA_DEFAULT,
            f"custom_mpi_options -> {code(string_like(options.node, kept))}: SageMaker already passes "
            "`--mca btl_vader_single_copy_mechanism none`, and Open MPI fails on a parameter listed twice",
            lambda node: string_like(node, kept),
        ),
    )


def _without(text: str, repeats: list[re.Match[str]]) -> str:
    """``text`` minus the matched flags, the other options kept as they were written."""
    for match in reversed(repeats):
        before, after = text[: match.start()].rstrip(), text[match.end() :].lstrip()
        text = f"{before} {after}" if before and after else before or after
    return text
