"""SM1 and SM2: SageMaker launcher scripts (estimators of the SageMaker Python SDK).

SM1 the ``distribution`` of model-parallel jobs (smdistributed modelparallel under MPI)
and the training script such a job runs; SM2 SageMaker Training Compiler.
"""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

_LAUNCH = "launch.py"
_PT = "from sagemaker.pytorch import PyTorch\n\n"
_ESTIMATOR = (
    'PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",\n'
    '        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})\n'
)

LAUNCHER_UNRESOLVED = Rule(
    "SM100", "launcher-unresolved", "info",
    "A launcher value the checks need is not fixed in the file (read from elsewhere, computed): could not check",
    False,
    why="The checks read the estimator's arguments statically; a value that only exists when the launcher "
    "runs is reported instead of guessed, so the job's configuration still needs a look.",
    examples=(Invalid(
        _PT + 'PyTorch(entry_point="train.py", distribution=load_config())\n',
        None, filename=_LAUNCH, findings=(Expected(3, 46, "could not check `distribution`"),)),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="all-in-the-file",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            import json

            distribution = json.load(open("dist.json"))
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", distribution=distribution)
            """,
            filename="launch.py",
            note="from-a-config-file",
            findings=(Expected(5, 16, "could not check `distribution`"),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8}
            PyTorch(entry_point="train.py", instance_type=args.instance_type,
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="instance-type-passed-in",
            findings=(Expected(5, 47, "could not check what depends on `instance_type` (GPUs, EFA)"),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.x9.99xlarge",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="unknown-instance-type",
            findings=(Expected(6, 47, "could not check what depends on `instance_type` (GPUs, EFA)"),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            mpi_options = {"enabled": True, "processes_per_host": 8}
            mpi_options["custom_mpi_options"] = flags
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                  "mpi": mpi_options})
            """,
            filename="launch.py",
            note="changed-after-it-is-built",
            findings=(Expected(7, 30, 'could not check `"mpi"`'),),
        ),
        invalid(
            """
            import sagemaker.pytorch

            sagemaker.pytorch.PyTorch(entry_point="train.py", distribution=make_distribution())
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(3, 64, "could not check `distribution`"),),
        ),
    ),
)

DISTRIBUTION_STRUCTURE = Rule(
    "SM101", "distribution-structure", "error",
    'Model parallel needs `{"smdistributed": {"modelparallel": {"enabled": True, "parameters": {...}}}, '
    '"mpi": {"enabled": True, ...}}`',
    True,
    why="The SDK only starts the model-parallel library for that exact shape: a missing `enabled` or "
    "`parameters`, or the configuration put directly under `smdistributed`, leaves the library off or fails the "
    "job. The flat form is rewritten; missing parts are reported.",
    examples=(Invalid(
        'from sagemaker.estimator import Estimator\n\n'
        'smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}\n'
        'estimator = Estimator(\n    image_uri=image,\n    distribution={"smdistributed": smp_options, "mpi": mpi_options},\n)\n',
        'from sagemaker.estimator import Estimator\n\n'
        'smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}\n'
        'estimator = Estimator(\n    image_uri=image,\n    distribution={"smdistributed": {"modelparallel": smp_options}, '
        '"mpi": mpi_options},\n)\n', filename=_LAUNCH,
        findings=(Expected(6, 36, 'smp_options -> {"modelparallel"'),),
    ),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="seed-shape",
        ),
        valid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"enabled": False}}})
            """,
            filename="launch.py",
            note="switched-off",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.estimator import Estimator

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            Estimator(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                      distribution={"smdistributed": smp_options, "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            """
            from sagemaker.estimator import Estimator

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            Estimator(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                      distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            filename="launch.py",
            note="flat-form",
            findings=(Expected(5, 42, 'smp_options -> {"modelparallel"'),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"parameters": {"pipeline_parallel_degree": 2}}},
                                  "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            filename="launch.py",
            note="no-enabled",
            findings=(Expected(4, 58, 'modelparallel has no "enabled"'),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}}})
            """,
            filename="launch.py",
            note="no-mpi",
            findings=(Expected(4, 22, "model parallel runs under MPI"),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"enabled": True}},
                                  "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            filename="launch.py",
            note="no-parameters",
            findings=(
                Expected(4, 58, 'modelparallel has no "parameters" (required), with at least "pipeline_parallel_degree"'),
            ),
        ),
        invalid(
            """
            from sagemaker.estimator import Estimator as Est

            smp = dict(enabled=True, parameters=dict(pipeline_parallel_degree=2))
            Est(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                distribution=dict(smdistributed=smp, mpi=dict(enabled=True, processes_per_host=8)))
            """,
            """
            from sagemaker.estimator import Estimator as Est

            smp = dict(enabled=True, parameters=dict(pipeline_parallel_degree=2))
            Est(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                distribution=dict(smdistributed={"modelparallel": smp}, mpi=dict(enabled=True, processes_per_host=8)))
            """,
            filename="launch.py",
            note="dict-calls",
            alias=True,
            findings=(Expected(5, 37, 'smp -> {"modelparallel"'),),
        ),
    ),
)

PARTITIONS_RENAMED = Rule(
    "SM102", "partitions-renamed", "error",
    '`"partitions"` is `"pipeline_parallel_degree"` since smdistributed-modelparallel 1.6.0',
    True,
    why='smdistributed-modelparallel 1.6.0 renamed the required "partitions" parameter to '
    '"pipeline_parallel_degree" (a breaking change in the library\'s release notes).',
    examples=(Invalid(
        _PT + 'smp_options = {"enabled": True, "parameters": {"partitions": 2}}\n' + _ESTIMATOR,
        _PT + 'smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}\n' + _ESTIMATOR,
        filename=_LAUNCH, findings=(Expected(3, 48, '"partitions" -> "pipeline_parallel_degree"'),)),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
        ),
        valid(
            """
            from sagemaker.pytorch import PyTorch

            disk = {"partitions": 2}
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", hyperparameters=disk)
            """,
            filename="launch.py",
            note="not-a-distribution",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {
                "enabled": True,
                "parameters": {
                    "partitions": 2,  # Required
                    "microbatches": 4,
                },
            }
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {
                "enabled": True,
                "parameters": {
                    "pipeline_parallel_degree": 2,  # Required
                    "microbatches": 4,
                },
            }
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            findings=(Expected(6, 9, '"partitions" -> "pipeline_parallel_degree"'),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {'enabled': True, 'parameters': {'partitions': 2, 'pipeline_parallel_degree': 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="both-given",
            findings=(Expected(3, 48, '"partitions" and "pipeline_parallel_degree" both given'),),
        ),
        invalid(
            """
            from sagemaker.tensorflow import TensorFlow as TF

            TF(entry_point="train.py", instance_type="ml.p3.16xlarge",
               distribution={"smdistributed": {"modelparallel": dict(enabled=True, parameters=dict(partitions=2, horovod=True))},
                             "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            """
            from sagemaker.tensorflow import TensorFlow as TF

            TF(entry_point="train.py", instance_type="ml.p3.16xlarge",
               distribution={"smdistributed": {"modelparallel": dict(enabled=True, parameters=dict(pipeline_parallel_degree=2, horovod=True))},
                             "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            filename="launch.py",
            note="tensorflow-dict-call",
            alias=True,
            findings=(Expected(4, 88, "partitions -> pipeline_parallel_degree"),),
        ),
    ),
)

MODEL_AND_DATA_PARALLEL = Rule(
    "SM103", "model-and-data-parallel", "error",
    '`"modelparallel"` and `"dataparallel"` together in one job are not supported',
    False,
    why='The SDK accepts one smdistributed strategy per job. For data parallelism on top of model parallelism '
    'set `"ddp": True` (PyTorch) or `"horovod": True` (TensorFlow) in the modelparallel parameters.',
    examples=(Invalid(
        _PT + 'PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": True}},\n'
        '                      "mpi": mpi_options})\n',
        None, filename=_LAUNCH,
            findings=(Expected(4, 71, '"modelparallel" and "dataparallel" cannot be used in one job'),),
        ),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": False}},
                                  "mpi": mpi_options})
            """,
            filename="launch.py",
            note="dataparallel-off",
        ),
        valid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"dataparallel": {"enabled": True}}})
            """,
            filename="launch.py",
            note="dataparallel-only",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": True}},
                                  "mpi": mpi_options})
            """,
            filename="launch.py",
            findings=(Expected(7, 71, '"modelparallel" and "dataparallel" cannot be used in one job'),),
        ),
        invalid(
            """
            from sagemaker import pytorch

            strategies = {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}},
                          "dataparallel": {"enabled": True}}
            pytorch.PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                            distribution={"smdistributed": strategies, "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(4, 15, '"modelparallel" and "dataparallel" cannot be used in one job'),),
        ),
    ),
)

PROCESSES_PER_HOST = Rule(
    "SM104", "processes-per-host", "error",
    "`processes_per_host` is required and must not exceed the GPUs of `instance_type`",
    True,
    why="SageMaker maps MPI processes one to one onto GPUs; more processes than GPUs fail the job. A value above "
    "the instance's GPU count is lowered to it (when the pipeline degree still divides it); a missing one is "
    "reported.",
    examples=(Invalid(
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 16}\n'
        'PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})\n',
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8}\n'
        'PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})\n',
        filename=_LAUNCH, findings=(Expected(3, 55, "processes_per_host 16 -> 8"),)),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
        ),
        valid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.c5.18xlarge",
                    distribution={"mpi": {"enabled": True, "processes_per_host": 36}})
            """,
            filename="launch.py",
            note="plain-mpi-on-cpus",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 16}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="above-the-gpus",
            findings=(Expected(4, 55, "processes_per_host 16 -> 8"),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="missing",
            findings=(Expected(4, 15, 'mpi has no "processes_per_host" (required)'),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 3}}
            mpi_options = {"enabled": True, "processes_per_host": 12}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="degree-does-not-divide-the-gpus",
            findings=(Expected(4, 55, '"processes_per_host" 12 is above the GPUs'),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.c5.18xlarge",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="cpu-instance",
            findings=(Expected(4, 55, "ml.c5.18xlarge has no GPU"),),
        ),
        invalid(
            """
            import sagemaker.huggingface as hf

            instance = "ml.g5.12xlarge"
            hf.HuggingFace(entry_point="train.py", instance_type=instance,
                           distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                         "mpi": {"enabled": True, "processes_per_host": 8}})
            """,
            """
            import sagemaker.huggingface as hf

            instance = "ml.g5.12xlarge"
            hf.HuggingFace(entry_point="train.py", instance_type=instance,
                           distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                         "mpi": {"enabled": True, "processes_per_host": 4}})
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(6, 77, "processes_per_host 8 -> 4"),),
        ),
    ),
)

REPEATED_MCA_DEFAULT = Rule(
    "SM105", "repeated-mca-default", "error",
    "`custom_mpi_options` repeats the default `--mca btl_vader_single_copy_mechanism none`: the job fails",
    True,
    why='SageMaker already passes this MCA parameter; Open MPI refuses a parameter listed twice ("MCA '
    'parameters can only be listed once"). The repeat is removed, the other options are kept.',
    examples=(Invalid(
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8,\n'
        '               "custom_mpi_options": "--mca btl_vader_single_copy_mechanism none -x NCCL_DEBUG=INFO"}\n'
        + _ESTIMATOR,
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8,\n'
        '               "custom_mpi_options": "-x NCCL_DEBUG=INFO"}\n' + _ESTIMATOR, filename=_LAUNCH,
            findings=(Expected(4, 38, 'custom_mpi_options -> "-x NCCL_DEBUG=INFO"'),),
        ),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "--mca btl_tcp_if_include eth0"}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8,
                           "custom_mpi_options": "-x NCCL_DEBUG=WARN --mca btl_vader_single_copy_mechanism none -x A=1"}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8,
                           "custom_mpi_options": "-x NCCL_DEBUG=WARN -x A=1"}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="keeps-the-rest",
            findings=(Expected(5, 38, 'custom_mpi_options -> "-x NCCL_DEBUG=WARN -x A=1"'),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8,
                           "custom_mpi_options": '--mca btl_vader_single_copy_mechanism none '}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8,
                           "custom_mpi_options": ''}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="only-the-default",
            findings=(Expected(5, 38, "custom_mpi_options -> ''"),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"mpi": {"enabled": True, "custom_mpi_options": "-mca btl_vader_single_copy_mechanism cma"}})
            """,
            filename="launch.py",
            note="other-value-reported",
            findings=(Expected(4, 70, "custom_mpi_options sets btl_vader_single_copy_mechanism, which SageMaker"),),
        ),
        invalid(
            """
            from sagemaker.tensorflow.estimator import TensorFlow

            TensorFlow(entry_point="train.py", instance_type="ml.p3.16xlarge",
                       distribution=dict(mpi=dict(enabled=True, custom_mpi_options="--mca btl_vader_single_copy_mechanism none -x X=1")))
            """,
            """
            from sagemaker.tensorflow.estimator import TensorFlow

            TensorFlow(entry_point="train.py", instance_type="ml.p3.16xlarge",
                       distribution=dict(mpi=dict(enabled=True, custom_mpi_options="-x X=1")))
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(4, 72, 'custom_mpi_options -> "-x X=1"'),),
        ),
    ),
)

EFA_FLAGS = Rule(
    "SM106", "efa-flags", "warning",
    "EFA instance types run model parallel fastest with `-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa "
    "-x RDMAV_FORK_SAFE=1`",
    False,
    why="On EFA-capable instances (ml.p4d.24xlarge, ml.p3dn.24xlarge, ...) these flags let MPI and NCCL use "
    "the fabric's RDMA path; without them the job runs, slower. Reported with the flags to add, never "
    "rewritten: MPI options are the user's call.",
    examples=(Invalid(
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8}\n'
        'PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})\n',
        None, filename=_LAUNCH, findings=(Expected(3, 15, "ml.p4d.24xlarge has EFA"),)),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
            mpi_options = {"enabled": True, "processes_per_host": 8,
                           "custom_mpi_options": "-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x RDMAV_FORK_SAFE=1"}
            PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="flags-given",
        ),
        valid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            note="no-efa",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.pytorch import PyTorch

            smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
            mpi_options = {"enabled": True, "processes_per_host": 8}

            PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge", instance_count=2,
                    distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
            """,
            filename="launch.py",
            findings=(Expected(4, 15, "ml.p4d.24xlarge has EFA"),),
        ),
        invalid(
            """
            from sagemaker.pytorch.estimator import PyTorch as Launcher

            Launcher(entry_point="train.py", instance_type="ml.p3dn.24xlarge",
                     distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                   "mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "-x FI_PROVIDER=efa"}})
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(5, 96, "ml.p3dn.24xlarge has EFA"),),
        ),
    ),
)

SMP_SET_DEVICE = Rule(
    "SM107", "smp-set-device", "error",
    "A PyTorch training script under smdistributed model parallel pins its GPU with "
    "`torch.cuda.set_device(smp.local_rank())`",
    True,
    why="Without it every process of a host starts on GPU 0 and the partitions do not fit or collide; the call "
    "is added right after `smp.init()`.",
    examples=(Invalid(
        "import torch\nimport smdistributed.modelparallel.torch as smp\n\nsmp.init()\n",
        "import torch\nimport smdistributed.modelparallel.torch as smp\n\nsmp.init()\n"
        "torch.cuda.set_device(smp.local_rank())\n", filename="train.py",
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),),
    valid=(
        valid(
            """
            import torch
            import smdistributed.modelparallel.torch as smp

            smp.init()
            local_rank = smp.local_rank()
            torch.cuda.set_device(local_rank)
            """,
            note="through-a-name",
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
    invalid=(
        invalid(
            """
            import torch
            import smdistributed.modelparallel.torch as smp

            smp.init()
            device = torch.device("cuda")
            """,
            """
            import torch
            import smdistributed.modelparallel.torch as smp

            smp.init()
            torch.cuda.set_device(smp.local_rank())
            device = torch.device("cuda")
            """,
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
        invalid(
            """
            import torch
            import smdistributed.modelparallel.torch as smp

            smp.init()
            torch.cuda.set_device(args.local_rank)
            """,
            note="another-device",
            findings=(Expected(5, 1, "`torch.cuda.set_device(args.local_rank)`"),),
        ),
        invalid(
            """
            import torch as th
            from smdistributed.modelparallel import torch as smp_torch


            def main():
                smp_torch.init()
                model = build()
            """,
            """
            import torch as th
            from smdistributed.modelparallel import torch as smp_torch


            def main():
                smp_torch.init()
                th.cuda.set_device(smp_torch.local_rank())
                model = build()
            """,
            alias=True,
            findings=(Expected(7, 5, "smp.init() -> th.cuda.set_device(smp_torch.local_rank())"),),
        ),
    ),
)

COMPILER_DISTRIBUTION = Rule(
    "SM201", "compiler-distribution", "error",
    'Training Compiler on several GPUs or instances needs `distribution={"pytorchxla": {"enabled": True}}`',
    True,
    why="Without the pytorchxla runtime a compiled job starts one process per instance: it trains on one GPU, "
    "and instances beyond the first repeat the same work. Added for PyTorch >= 1.12 (PyTorch estimator) and "
    "PyTorch >= 1.11 (Hugging Face estimator).",
    examples=(Invalid(
        "from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig\n\n"
        'HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", instance_count=1,\n'
        '            transformers_version="4.21.1", pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig())\n',
        "from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig\n\n"
        'HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", instance_count=1,\n'
        '            transformers_version="4.21.1", pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig(), '
        'distribution={"pytorchxla": {"enabled": True}})\n', filename=_LAUNCH,
            findings=(Expected(4, 112, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),),
    valid=(
        valid(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            HuggingFace(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=1,
                        transformers_version="4.21.1", pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig())
            """,
            filename="launch.py",
            note="one-gpu",
        ),
        valid(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", transformers_version="4.21.1",
                        pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig(),
                        distribution={"pytorchxla": {"enabled": True}})
            """,
            filename="launch.py",
            note="already-there",
        ),
    ),
    invalid=(
        invalid(
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
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            estimator = HuggingFace(
                entry_point="train.py",
                instance_type="ml.p3.16xlarge",
                instance_count=1,
                transformers_version="4.21.1",
                pytorch_version="1.11.0",
                compiler_config=TrainingCompilerConfig(),
                distribution={"pytorchxla": {"enabled": True}},
            )
            """,
            filename="launch.py",
            findings=(Expected(10, 5, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                    framework_version="1.13.1", compiler_config=TrainingCompilerConfig())
            """,
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                    framework_version="1.13.1", compiler_config=TrainingCompilerConfig(), distribution={"pytorchxla": {"enabled": True}})
            """,
            filename="launch.py",
            note="several-instances",
            findings=(Expected(4, 79, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
        invalid(
            """
            import sagemaker.huggingface
            from sagemaker.huggingface.training_compiler.config import TrainingCompilerConfig as Compiler

            compiler = Compiler()
            sagemaker.huggingface.HuggingFace("train.py", instance_type="ml.g5.48xlarge",
                                              transformers_version="4.21.1", pytorch_version="1.11.0",
                                              compiler_config=compiler,)
            """,
            """
            import sagemaker.huggingface
            from sagemaker.huggingface.training_compiler.config import TrainingCompilerConfig as Compiler

            compiler = Compiler()
            sagemaker.huggingface.HuggingFace("train.py", instance_type="ml.g5.48xlarge",
                                              transformers_version="4.21.1", pytorch_version="1.11.0",
                                              compiler_config=compiler,
                                              distribution={"pytorchxla": {"enabled": True}},)
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(8, 35, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
    ),
)

COMPILER_LEGACY_LAUNCH = Rule(
    "SM202", "compiler-legacy-launch", "warning",
    "Transformers <= 4.17 / PyTorch <= 1.10.2: a distributed compiled job runs through a launcher script "
    "(`entry_point`) with the training script in `hyperparameters`",
    False,
    why="Before the pytorchxla runtime, Training Compiler started distributed jobs through a launcher script; "
    "without it the job runs one process and uses one GPU. Reported: the launcher script is yours to add.",
    examples=(Invalid(
        "from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig\n\n"
        'HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", instance_count=1,\n'
        '            transformers_version="4.11.0", pytorch_version="1.9.0", compiler_config=TrainingCompilerConfig())\n',
        None, filename=_LAUNCH, findings=(Expected(3, 1, "transformers <= 4.17 / PyTorch <= 1.10.2"),)),),
    valid=(
        valid(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            hyperparameters = {"n_gpus": 4, "training_script": "train.py"}
            HuggingFace(entry_point="distributed_training_launcher.py", instance_type="ml.p3.8xlarge", instance_count=1,
                        transformers_version="4.17.0", pytorch_version="1.10.2", hyperparameters=hyperparameters,
                        compiler_config=TrainingCompilerConfig())
            """,
            filename="launch.py",
            note="launcher-arrangement",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            HuggingFace(entry_point="train.py", instance_type="ml.p3.8xlarge", instance_count=1,
                        transformers_version="4.11.0", pytorch_version="1.9.0", compiler_config=TrainingCompilerConfig())
            """,
            filename="launch.py",
            findings=(Expected(3, 1, "transformers <= 4.17 / PyTorch <= 1.10.2"),),
        ),
        invalid(
            """
            from sagemaker import huggingface

            huggingface.HuggingFace(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                                    transformers_version="4.17.0", pytorch_version="1.10.2",
                                    compiler_config=huggingface.TrainingCompilerConfig(debug=False))
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(3, 1, "transformers <= 4.17 / PyTorch <= 1.10.2"),),
        ),
    ),
)

COMPILER_UNSUPPORTED = Rule(
    "SM203", "compiler-unsupported", "error",
    "A Training Compiler job the SDK rejects: `image_uri`, another distribution than pytorchxla, or pytorchxla "
    "on a PyTorch too old for it",
    False,
    why="The SDK's TrainingCompilerConfig.validate raises for these before the job starts.",
    examples=(Invalid(
        "from sagemaker.pytorch import PyTorch, TrainingCompilerConfig\n\n"
        'PyTorch(entry_point="train.py", image_uri=my_image, framework_version="1.13.1",\n'
        "        compiler_config=TrainingCompilerConfig())\n",
        None, filename=_LAUNCH, findings=(Expected(3, 33, "Training Compiler does not take image_uri"),)),),
    valid=(
        valid(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", image_uri=my_image, instance_type="ml.p3.2xlarge",
                    compiler_config=TrainingCompilerConfig(enabled=False))
            """,
            filename="launch.py",
            note="compiler-off",
        ),
    ),
    invalid=(
        invalid(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", image_uri=my_image, framework_version="1.13.1", instance_type="ml.p3.2xlarge",
                    compiler_config=TrainingCompilerConfig())
            """,
            filename="launch.py",
            note="image-uri",
            findings=(Expected(3, 33, "Training Compiler does not take image_uri"),),
        ),
        invalid(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", transformers_version="4.11.0",
                        pytorch_version="1.9.0", compiler_config=TrainingCompilerConfig(),
                        distribution={"pytorchxla": {"enabled": True}})
            """,
            filename="launch.py",
            note="pytorchxla-too-old",
            findings=(
                Expected(5, 13, "the pytorchxla runtime needs PyTorch >= 1.11 with Training Compiler (1.9.0 given)"),
            ),
        ),
        invalid(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                    compiler_config=TrainingCompilerConfig(), distribution={"torch_distributed": {"enabled": True}})
            """,
            filename="launch.py",
            note="other-distribution",
            findings=(Expected(4, 51, 'with Training Compiler the only distribution is {"pytorchxla"'),),
        ),
        invalid(
            """
            import sagemaker

            sagemaker.pytorch.PyTorch(entry_point="train.py", image_uri="1.dkr.ecr.us-east-1.amazonaws.com/x:1",
                                      instance_type="ml.p3.2xlarge", framework_version="1.13.1",
                                      compiler_config=sagemaker.pytorch.TrainingCompilerConfig())
            """,
            filename="launch.py",
            alias=True,
            findings=(Expected(3, 51, "Training Compiler does not take image_uri"),),
        ),
    ),
)

RULES = (LAUNCHER_UNRESOLVED, DISTRIBUTION_STRUCTURE, PARTITIONS_RENAMED, MODEL_AND_DATA_PARALLEL, PROCESSES_PER_HOST, REPEATED_MCA_DEFAULT, EFA_FLAGS, SMP_SET_DEVICE, COMPILER_DISTRIBUTION, COMPILER_LEGACY_LAUNCH, COMPILER_UNSUPPORTED)
