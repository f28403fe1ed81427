"""SM1 and SM2: SageMaker launcher scripts (estimators of the SageMaker Python SDK).

SM1 the ``distribution`` of model-parallel jobs (smdistributed modelparallel under MPI)
and the training script such a job runs; SM2 SageMaker Training Compiler.
"""

from __future__ import annotations

import dataclasses

from codemods.engine.rule import Expected, Invalid, Rule, Valid, invalid, valid

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


LAUNCHER_UNRESOLVED = Rule(
    code="SM100",
    name="launcher-unresolved",
    severity="info",
    summary="A launcher value the checks need is not fixed in the file (read from elsewhere, computed): could not check",
    fixable=False,
    why="The checks read the estimator's arguments statically; a value that only exists when the launcher "
    "runs is reported instead of guessed, so the job's configuration still needs a look.",
    instead="Values the launcher writes itself: a `distribution` dict literal (or names bound once, in the same file, to "
    'dict literals, such as `smp_options` and `mpi_options`) and a literal `instance_type` (`"ml.p3.16xlarge"`). '
    "Where a value must stay computed (read from a config file, passed in as an argument), check what the job "
    "gets against the SM1 rules by hand.",
    examples=lambda: (
        _invalid(
            _PT + 'PyTorch(entry_point="train.py", distribution=load_config())\n',
            findings=(Expected(3, 46, "could not check `distribution`"),),
        ),
    ),
    valid=lambda: (_valid(_launcher(), note="all-in-the-file"),),
    invalid=lambda: (
        _invalid(
            """
            from sagemaker.pytorch import PyTorch

            import json

            distribution = json.load(open("dist.json"))
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", distribution=distribution)
            """,
            note="from-a-config-file",
            findings=(Expected(5, 16, "could not check `distribution`"),),
        ),
        _invalid(
            _launcher(smp=_SMP, gap=False, arguments="instance_type=args.instance_type"),
            note="instance-type-passed-in",
            findings=(Expected(5, 47, "could not check what depends on `instance_type` (GPUs, EFA)"),),
        ),
        _invalid(
            _launcher(arguments='instance_type="ml.x9.99xlarge"'),
            note="unknown-instance-type",
            findings=(Expected(6, 47, "could not check what depends on `instance_type` (GPUs, EFA)"),),
        ),
        _invalid(
            """
            from sagemaker.pytorch import PyTorch

            mpi_options = {"enabled": True, "processes_per_host": 8}
            mpi_options["custom_mpi_options"] = flags
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                  "mpi": mpi_options})
            """,
            note="changed-after-it-is-built",
            findings=(Expected(7, 30, 'could not check `"mpi"`'),),
        ),
        _invalid(
            """
            import sagemaker.pytorch

            sagemaker.pytorch.PyTorch(entry_point="train.py", distribution=make_distribution())
            """,
            alias=True,
            findings=(Expected(3, 64, "could not check `distribution`"),),
        ),
    ),
)

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

EFA_FLAGS = Rule(
    code="SM106",
    name="efa-flags",
    severity="warning",
    summary="EFA instance types run model parallel fastest with `-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa "
    "-x RDMAV_FORK_SAFE=1`",
    fixable=False,
    why="On EFA-capable instances (ml.p4d.24xlarge, ml.p3dn.24xlarge, ...) these flags let MPI and NCCL use "
    "the fabric's RDMA path; without them the job runs, slower. Reported with the flags to add, never "
    "rewritten: MPI options are the user's call.",
    instead='The three flags in the job\'s MPI options, after any it already has: `mpi_options = {"enabled": True, '
    '"processes_per_host": 8, "custom_mpi_options": "-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x '
    'RDMAV_FORK_SAFE=1"}`.',
    examples=lambda: (
        _invalid(
            _launcher(smp=None, gap=False, arguments='instance_type="ml.p4d.24xlarge"'),
            findings=(Expected(3, 15, "ml.p4d.24xlarge has EFA"),),
        ),
    ),
    valid=lambda: (
        _valid(
            _launcher(
                smp=_SMP,
                mpi=_custom_mpi('"-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x RDMAV_FORK_SAFE=1"'),
                gap=False,
                arguments='instance_type="ml.p4d.24xlarge"',
            ),
            note="flags-given",
        ),
        _valid(_launcher(), note="no-efa"),
    ),
    invalid=lambda: (
        _invalid(
            _launcher(arguments='instance_type="ml.p4d.24xlarge", instance_count=2'),
            findings=(Expected(4, 15, "ml.p4d.24xlarge has EFA"),),
        ),
        _invalid(
            """
            from sagemaker.pytorch.estimator import PyTorch as Launcher

            Launcher(entry_point="train.py", instance_type="ml.p3dn.24xlarge",
                     distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                   "mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "-x FI_PROVIDER=efa"}})
            """,
            alias=True,
            findings=(Expected(5, 96, "ml.p3dn.24xlarge has EFA"),),
        ),
    ),
)

# smp.init() pins no GPU: the fix adds the call after it.
_PINNED = ("smp.init()\n", "smp.init()\ntorch.cuda.set_device(smp.local_rank())\n")

SMP_SET_DEVICE = Rule(
    code="SM107",
    name="smp-set-device",
    severity="error",
    summary="A PyTorch training script under smdistributed model parallel pins its GPU with "
    "`torch.cuda.set_device(smp.local_rank())`",
    fixable=True,
    why="Without it every process of a host starts on GPU 0 and the partitions do not fit or collide; the call "
    "is added right after `smp.init()`.",
    examples=lambda: (
        _fixed(
            _SMP_SCRIPT,
            *_PINNED,
            filename="train.py",
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
    ),
    valid=lambda: (
        valid(
            _SMP_SCRIPT + "local_rank = smp.local_rank()\ntorch.cuda.set_device(local_rank)\n", note="through-a-name"
        ),
        valid(
            """
            import tensorflow as tf
            import smdistributed.modelparallel.tensorflow as smp

            smp.init()
            """,
            note="tensorflow",
        ),
    ),
    invalid=lambda: (
        _fixed(
            _SMP_SCRIPT + 'device = torch.device("cuda")\n',
            *_PINNED,
            filename="train.py",
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
        invalid(
            _SMP_SCRIPT + "torch.cuda.set_device(args.local_rank)\n",
            note="another-device",
            findings=(Expected(5, 1, "`torch.cuda.set_device(args.local_rank)`"),),
        ),
        _fixed(
            """
            import torch as th
            from smdistributed.modelparallel import torch as smp_torch


            def main():
                smp_torch.init()
                model = build()
            """,
            "smp_torch.init()\n",
            "smp_torch.init()\n    th.cuda.set_device(smp_torch.local_rank())\n",
            filename="train.py",
            alias=True,
            findings=(Expected(7, 5, "smp.init() -> th.cuda.set_device(smp_torch.local_rank())"),),
        ),
    ),
)

COMPILER_DISTRIBUTION = Rule(
    code="SM201",
    name="compiler-distribution",
    severity="error",
    summary='Training Compiler on several GPUs or instances needs `distribution={"pytorchxla": {"enabled": True}}`',
    fixable=True,
    why="Without the pytorchxla runtime a compiled job starts one process per instance: it trains on one GPU, "
    "and instances beyond the first repeat the same work. Added for PyTorch >= 1.12 (PyTorch estimator) and "
    "PyTorch >= 1.11 (Hugging Face estimator).",
    examples=lambda: (
        _fixed(
            _compiled("ml.p3.16xlarge", "4.21.1", "1.11.0"),
            "TrainingCompilerConfig())",
            f"TrainingCompilerConfig(), {_PYTORCHXLA})",
            findings=(Expected(4, 112, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
    ),
    valid=lambda: (
        _valid(_compiled("ml.p3.2xlarge", "4.21.1", "1.11.0"), note="one-gpu"),
        _valid(_compiled_pytorchxla("4.21.1", "1.11.0"), note="already-there"),
    ),
    invalid=lambda: (
        _fixed(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            estimator = HuggingFace(
                entry_point="train.py",
                instance_type="ml.p3.16xlarge",
                instance_count=1,
                transformers_version="4.21.1",
                pytorch_version="1.11.0",
                compiler_config=TrainingCompilerConfig(),
            )
            """,
            "TrainingCompilerConfig(),\n",
            f"TrainingCompilerConfig(),\n    {_PYTORCHXLA},\n",
            findings=(Expected(10, 5, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
        _fixed(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                    framework_version="1.13.1", compiler_config=TrainingCompilerConfig())
            """,
            "TrainingCompilerConfig())",
            f"TrainingCompilerConfig(), {_PYTORCHXLA})",
            note="several-instances",
            findings=(Expected(4, 79, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
        _fixed(
            """
            import sagemaker.huggingface
            from sagemaker.huggingface.training_compiler.config import TrainingCompilerConfig as Compiler

            compiler = Compiler()
            sagemaker.huggingface.HuggingFace("train.py", instance_type="ml.g5.48xlarge",
                                              transformers_version="4.21.1", pytorch_version="1.11.0",
                                              compiler_config=compiler,)
            """,
            "compiler_config=compiler,",
            "compiler_config=compiler,\n" + " " * 34 + _PYTORCHXLA + ",",
            alias=True,
            findings=(Expected(8, 35, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
    ),
)

COMPILER_LEGACY_LAUNCH = Rule(
    code="SM202",
    name="compiler-legacy-launch",
    severity="warning",
    summary="Transformers <= 4.17 / PyTorch <= 1.10.2: a distributed compiled job runs through a launcher script "
    "(`entry_point`) with the training script in `hyperparameters`",
    fixable=False,
    why="Before the pytorchxla runtime, Training Compiler started distributed jobs through a launcher script; "
    "without it the job runs one process and uses one GPU. Reported: the launcher script is yours to add.",
    instead='A release with the pytorchxla runtime: the Hugging Face estimator with `transformers_version="4.21.1", '
    'pytorch_version="1.11.0"`, or the PyTorch estimator with `framework_version="1.12.0"` or `"1.13.1"`, each '
    'with `distribution={"pytorchxla": {"enabled": True}}` (SM201 adds it). To stay on these versions, make '
    "`entry_point` a launcher script that starts the training script on each GPU, and pass it the training script "
    'and the GPU count in `hyperparameters` (`{"training_script": "train.py", "n_gpus": 4}`), as SageMaker\'s '
    "Training Compiler guide does with `distributed_training_launcher.py`.",
    examples=lambda: (
        _invalid(
            _compiled("ml.p3.16xlarge", "4.11.0", "1.9.0"),
            findings=(Expected(3, 1, "transformers <= 4.17 / PyTorch <= 1.10.2"),),
        ),
    ),
    valid=lambda: (
        _valid(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            hyperparameters = {"n_gpus": 4, "training_script": "train.py"}
            HuggingFace(entry_point="distributed_training_launcher.py", instance_type="ml.p3.8xlarge", instance_count=1,
                        transformers_version="4.17.0", pytorch_version="1.10.2", hyperparameters=hyperparameters,
                        compiler_config=TrainingCompilerConfig())
            """,
            note="launcher-arrangement",
        ),
    ),
    invalid=lambda: (
        _invalid(
            _compiled("ml.p3.8xlarge", "4.11.0", "1.9.0"),
            findings=(Expected(3, 1, "transformers <= 4.17 / PyTorch <= 1.10.2"),),
        ),
        _invalid(
            """
            from sagemaker import huggingface

            huggingface.HuggingFace(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                                    transformers_version="4.17.0", pytorch_version="1.10.2",
                                    compiler_config=huggingface.TrainingCompilerConfig(debug=False))
            """,
            alias=True,
            findings=(Expected(3, 1, "transformers <= 4.17 / PyTorch <= 1.10.2"),),
        ),
    ),
)

COMPILER_UNSUPPORTED = Rule(
    code="SM203",
    name="compiler-unsupported",
    severity="error",
    summary="A Training Compiler job the SDK rejects: `image_uri`, another distribution than pytorchxla, or pytorchxla "
    "on a PyTorch too old for it",
    fixable=False,
    why="The SDK's TrainingCompilerConfig.validate raises for these before the job starts.",
    instead="The Training Compiler image the estimator picks from its versions, without `image_uri`: the PyTorch "
    'estimator with `framework_version="1.12.0"` or `"1.13.1"`, the Hugging Face estimator with '
    '`transformers_version="4.21.1", pytorch_version="1.11.0"` (or 4.17.0 with 1.10.2, 4.11.0 with 1.9.0); and '
    '`distribution={"pytorchxla": {"enabled": True}}` as the only distribution, which needs PyTorch 1.12 or later '
    "with the PyTorch estimator, 1.11 with the Hugging Face one. A custom image or another distribution runs "
    "without `compiler_config`.",
    examples=lambda: (
        _invalid(
            "from sagemaker.pytorch import PyTorch, TrainingCompilerConfig\n\n"
            'PyTorch(entry_point="train.py", image_uri=my_image, framework_version="1.13.1",\n'
            "        compiler_config=TrainingCompilerConfig())\n",
            findings=(Expected(3, 33, "Training Compiler does not take image_uri"),),
        ),
    ),
    valid=lambda: (
        _valid(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", image_uri=my_image, instance_type="ml.p3.2xlarge",
                    compiler_config=TrainingCompilerConfig(enabled=False))
            """,
            note="compiler-off",
        ),
    ),
    invalid=lambda: (
        _invalid(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", image_uri=my_image, framework_version="1.13.1", instance_type="ml.p3.2xlarge",
                    compiler_config=TrainingCompilerConfig())
            """,
            note="image-uri",
            findings=(Expected(3, 33, "Training Compiler does not take image_uri"),),
        ),
        _invalid(
            _compiled_pytorchxla("4.11.0", "1.9.0"),
            note="pytorchxla-too-old",
            findings=(
                Expected(5, 13, "the pytorchxla runtime needs PyTorch >= 1.11 with Training Compiler (1.9.0 given)"),
            ),
        ),
        _invalid(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    compiler_config=TrainingCompilerConfig(), distribution={"torch_distributed": {"enabled": True}})
            """,
            note="other-distribution",
            findings=(Expected(4, 51, 'with Training Compiler the only distribution is {"pytorchxla"'),),
        ),
        _invalid(
            """
            import sagemaker

            sagemaker.pytorch.PyTorch(entry_point="train.py", image_uri="1.dkr.ecr.us-east-1.amazonaws.com/x:1",
                                      instance_type="ml.p3.2xlarge", framework_version="1.13.1",
                                      compiler_config=sagemaker.pytorch.TrainingCompilerConfig())
            """,
            alias=True,
            findings=(Expected(3, 51, "Training Compiler does not take image_uri"),),
        ),
    ),
)

RULES = (
    LAUNCHER_UNRESOLVED,
    DISTRIBUTION_STRUCTURE,
    PARTITIONS_RENAMED,
    MODEL_AND_DATA_PARALLEL,
    PROCESSES_PER_HOST,
    REPEATED_MCA_DEFAULT,
    EFA_FLAGS,
    SMP_SET_DEVICE,
    COMPILER_DISTRIBUTION,
    COMPILER_LEGACY_LAUNCH,
    COMPILER_UNSUPPORTED,
)
