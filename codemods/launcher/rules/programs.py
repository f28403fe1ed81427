"""Programs and helpers the launcher rules' cases share."""

from __future__ import annotations

import dataclasses

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_LAUNCH = "launch.py"


_PT = "from sagemaker.pytorch import PyTorch\n\n"


# The parts of the model-parallel launcher most cases start from (see _launcher).
_SMP = '{"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}'


_SMP_DDP = '{"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}'


_MPI = '{"enabled": True, "processes_per_host": 8}'


_P3 = 'instance_type="ml.p3.16xlarge"'


_P3_VERSION = 'instance_type="ml.p3.16xlarge", framework_version="1.13.1"'


_DISTRIBUTION = '{"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options}'


# The MPI option SageMaker passes itself (SM105).
_MCA_DEFAULT = "--mca btl_vader_single_copy_mechanism none "


_PYTORCHXLA = 'distribution={"pytorchxla": {"enabled": True}}'


_HF_COMPILER = "from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig\n\n"


_SMP_SCRIPT = "import torch\nimport smdistributed.modelparallel.torch as smp\n\nsmp.init()\n"


def _launcher(
    *,
    smp: str | None = _SMP_DDP,
    mpi: str | None = _MPI,
    gap: bool = True,
    arguments: str = _P3_VERSION,
    distribution: str = _DISTRIBUTION,
) -> str:
    """A PyTorch estimator's launcher: ``smp_options`` and ``mpi_options`` (None: not set),
    a blank line after them (``gap``), then the estimator with its ``arguments`` but the
    entry point and ``distribution``. By default the examples' model-parallel launcher."""
    options = "".join(
        f"{name} = {value}\n" for name, value in (("smp_options", smp), ("mpi_options", mpi)) if value is not None
    )
    if options and gap:
        options += "\n"
    return f'{_PT}{options}PyTorch(entry_point="train.py", {arguments},\n        distribution={distribution})\n'


def _custom_mpi(options: str) -> str:
    """``mpi_options`` with 8 processes per host and ``options`` (a string literal) as its
    ``custom_mpi_options``, on a line of its own."""
    return '{"enabled": True, "processes_per_host": 8,\n               "custom_mpi_options": ' + options + "}"


def _with_data_parallel(enabled: str) -> str:
    """The launcher's distribution with a ``dataparallel`` strategy beside model parallel."""
    return (
        '{"smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": ' + enabled + "}},\n"
        '                      "mpi": mpi_options}'
    )


def _compiled(instance_type: str, transformers: str, pytorch: str) -> str:
    """A Hugging Face estimator on one instance with Training Compiler."""
    return (
        _HF_COMPILER + f'HuggingFace(entry_point="train.py", instance_type="{instance_type}", instance_count=1,\n'
        f'            transformers_version="{transformers}", pytorch_version="{pytorch}", compiler_config=TrainingCompilerConfig())\n'
    )


def _compiled_pytorchxla(transformers: str, pytorch: str) -> str:
    """A Hugging Face estimator with Training Compiler and the pytorchxla distribution."""
    return (
        _HF_COMPILER
        + f'HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", transformers_version="{transformers}",\n'
        f'            pytorch_version="{pytorch}", compiler_config=TrainingCompilerConfig(),\n            {_PYTORCHXLA})\n'
    )


def _valid(before: str, *, note: str = "") -> Valid:
    return valid(before, filename=_LAUNCH, note=note)


def _invalid(before: str, *, findings: tuple[Expected, ...], note: str = "", alias: bool = False) -> Invalid:
    return invalid(before, filename=_LAUNCH, note=note, alias=alias, findings=findings)


def _fixed(
    before: str,
    old: str,
    new: str,
    *,
    findings: tuple[Expected, ...],
    note: str = "",
    alias: bool = False,
    filename: str = _LAUNCH,
) -> Invalid:
    """An invalid case whose fix replaces ``old`` (there once) with ``new``."""
    case = invalid(before, filename=filename, note=note, alias=alias, findings=findings)
    if case.before.count(old) != 1:
        raise ValueError(f"not once in the case: {old!r}")
    return dataclasses.replace(case, after=case.before.replace(old, new))


# smp.init() pins no GPU: the fix adds the call after it.
_PINNED = ("smp.init()\n", "smp.init()\ntorch.cuda.set_device(smp.local_rank())\n")
