"""SM105 repeated-mca-default."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _MCA_DEFAULT, _P3, _SMP, _custom_mpi, _fixed, _invalid, _launcher, _valid

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
