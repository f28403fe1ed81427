"""SM1 and SM2: SageMaker launcher scripts (estimators of the SageMaker Python SDK).

SM1 the ``distribution`` of model-parallel jobs (smdistributed modelparallel under MPI)
and the training script such a job runs; SM2 SageMaker Training Compiler.
"""

from __future__ import annotations

from codemods.engine.rule import Example, Rule

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
    examples=(Example(
        _PT + 'PyTorch(entry_point="train.py", distribution=load_config())\n',
        None, filename=_LAUNCH),),
)

DISTRIBUTION_STRUCTURE = Rule(
    "SM101", "distribution-structure", "error",
    'Model parallel needs `{"smdistributed": {"modelparallel": {"enabled": True, "parameters": {...}}}, '
    '"mpi": {"enabled": True, ...}}`',
    True,
    why="The SDK only starts the model-parallel library for that exact shape: a missing `enabled` or "
    "`parameters`, or the configuration put directly under `smdistributed`, leaves the library off or fails the "
    "job. The flat form is rewritten; missing parts are reported.",
    examples=(Example(
        'from sagemaker.estimator import Estimator\n\n'
        'smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}\n'
        'estimator = Estimator(\n    image_uri=image,\n    distribution={"smdistributed": smp_options, "mpi": mpi_options},\n)\n',
        'from sagemaker.estimator import Estimator\n\n'
        'smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}\n'
        'estimator = Estimator(\n    image_uri=image,\n    distribution={"smdistributed": {"modelparallel": smp_options}, '
        '"mpi": mpi_options},\n)\n', filename=_LAUNCH),),
)

PARTITIONS_RENAMED = Rule(
    "SM102", "partitions-renamed", "error",
    '`"partitions"` is `"pipeline_parallel_degree"` since smdistributed-modelparallel 1.6.0',
    True,
    why='smdistributed-modelparallel 1.6.0 renamed the required "partitions" parameter to '
    '"pipeline_parallel_degree" (a breaking change in the library\'s release notes).',
    examples=(Example(
        _PT + 'smp_options = {"enabled": True, "parameters": {"partitions": 2}}\n' + _ESTIMATOR,
        _PT + 'smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}\n' + _ESTIMATOR,
        filename=_LAUNCH),),
)

MODEL_AND_DATA_PARALLEL = Rule(
    "SM103", "model-and-data-parallel", "error",
    '`"modelparallel"` and `"dataparallel"` together in one job are not supported',
    False,
    why='The SDK accepts one smdistributed strategy per job. For data parallelism on top of model parallelism '
    'set `"ddp": True` (PyTorch) or `"horovod": True` (TensorFlow) in the modelparallel parameters.',
    examples=(Example(
        _PT + 'PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": True}},\n'
        '                      "mpi": mpi_options})\n',
        None, filename=_LAUNCH),),
)

PROCESSES_PER_HOST = Rule(
    "SM104", "processes-per-host", "error",
    "`processes_per_host` is required and must not exceed the GPUs of `instance_type`",
    True,
    why="SageMaker maps MPI processes one to one onto GPUs; more processes than GPUs fail the job. A value above "
    "the instance's GPU count is lowered to it (when the pipeline degree still divides it); a missing one is "
    "reported.",
    examples=(Example(
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 16}\n'
        'PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})\n',
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8}\n'
        'PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})\n',
        filename=_LAUNCH),),
)

REPEATED_MCA_DEFAULT = Rule(
    "SM105", "repeated-mca-default", "error",
    "`custom_mpi_options` repeats the default `--mca btl_vader_single_copy_mechanism none`: the job fails",
    True,
    why='SageMaker already passes this MCA parameter; Open MPI refuses a parameter listed twice ("MCA '
    'parameters can only be listed once"). The repeat is removed, the other options are kept.',
    examples=(Example(
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8,\n'
        '               "custom_mpi_options": "--mca btl_vader_single_copy_mechanism none -x NCCL_DEBUG=INFO"}\n'
        + _ESTIMATOR,
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8,\n'
        '               "custom_mpi_options": "-x NCCL_DEBUG=INFO"}\n' + _ESTIMATOR, filename=_LAUNCH),),
)

EFA_FLAGS = Rule(
    "SM106", "efa-flags", "warning",
    "EFA instance types run model parallel fastest with `-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa "
    "-x RDMAV_FORK_SAFE=1`",
    False,
    why="On EFA-capable instances (ml.p4d.24xlarge, ml.p3dn.24xlarge, ...) these flags let MPI and NCCL use "
    "the fabric's RDMA path; without them the job runs, slower. Reported with the flags to add, never "
    "rewritten: MPI options are the user's call.",
    examples=(Example(
        _PT + 'mpi_options = {"enabled": True, "processes_per_host": 8}\n'
        'PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge",\n'
        '        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})\n',
        None, filename=_LAUNCH),),
)

SMP_SET_DEVICE = Rule(
    "SM107", "smp-set-device", "error",
    "A PyTorch training script under smdistributed model parallel pins its GPU with "
    "`torch.cuda.set_device(smp.local_rank())`",
    True,
    why="Without it every process of a host starts on GPU 0 and the partitions do not fit or collide; the call "
    "is added right after `smp.init()`.",
    examples=(Example(
        "import torch\nimport smdistributed.modelparallel.torch as smp\n\nsmp.init()\n",
        "import torch\nimport smdistributed.modelparallel.torch as smp\n\nsmp.init()\n"
        "torch.cuda.set_device(smp.local_rank())\n", filename="train.py"),),
)

COMPILER_DISTRIBUTION = Rule(
    "SM201", "compiler-distribution", "error",
    'Training Compiler on several GPUs or instances needs `distribution={"pytorchxla": {"enabled": True}}`',
    True,
    why="Without the pytorchxla runtime a compiled job starts one process per instance: it trains on one GPU, "
    "and instances beyond the first repeat the same work. Added for PyTorch >= 1.12 (PyTorch estimator) and "
    "PyTorch >= 1.11 (Hugging Face estimator).",
    examples=(Example(
        "from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig\n\n"
        'HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", instance_count=1,\n'
        '            transformers_version="4.21.1", pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig())\n',
        "from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig\n\n"
        'HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", instance_count=1,\n'
        '            transformers_version="4.21.1", pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig(), '
        'distribution={"pytorchxla": {"enabled": True}})\n', filename=_LAUNCH),),
)

COMPILER_LEGACY_LAUNCH = Rule(
    "SM202", "compiler-legacy-launch", "warning",
    "Transformers <= 4.17 / PyTorch <= 1.10.2: a distributed compiled job runs through a launcher script "
    "(`entry_point`) with the training script in `hyperparameters`",
    False,
    why="Before the pytorchxla runtime, Training Compiler started distributed jobs through a launcher script; "
    "without it the job runs one process and uses one GPU. Reported: the launcher script is yours to add.",
    examples=(Example(
        "from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig\n\n"
        'HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", instance_count=1,\n'
        '            transformers_version="4.11.0", pytorch_version="1.9.0", compiler_config=TrainingCompilerConfig())\n',
        None, filename=_LAUNCH),),
)

COMPILER_UNSUPPORTED = Rule(
    "SM203", "compiler-unsupported", "error",
    "A Training Compiler job the SDK rejects: `image_uri`, another distribution than pytorchxla, or pytorchxla "
    "on a PyTorch too old for it",
    False,
    why="The SDK's TrainingCompilerConfig.validate raises for these before the job starts.",
    examples=(Example(
        "from sagemaker.pytorch import PyTorch, TrainingCompilerConfig\n\n"
        'PyTorch(entry_point="train.py", image_uri=my_image, framework_version="1.13.1",\n'
        "        compiler_config=TrainingCompilerConfig())\n",
        None, filename=_LAUNCH),),
)

RULES = (LAUNCHER_UNRESOLVED, DISTRIBUTION_STRUCTURE, PARTITIONS_RENAMED, MODEL_AND_DATA_PARALLEL, PROCESSES_PER_HOST, REPEATED_MCA_DEFAULT, EFA_FLAGS, SMP_SET_DEVICE, COMPILER_DISTRIBUTION, COMPILER_LEGACY_LAUNCH, COMPILER_UNSUPPORTED)
