"""Model-parallel configurations that leave the library off or break the job: no
"enabled", no "parameters", no MPI section, processes_per_host missing, and an EFA
instance without the EFA flags."""
from sagemaker.pytorch import PyTorch

no_enabled = PyTorch(
    entry_point="train.py",
    instance_type="ml.p3.16xlarge",
    distribution={
        "smdistributed": {"modelparallel": {"parameters": {"pipeline_parallel_degree": 2}}},
        "mpi": {"enabled": True, "processes_per_host": 8},
    },
)

no_mpi = PyTorch(
    entry_point="train.py",
    instance_type="ml.p3.16xlarge",
    distribution={"smdistributed": {"modelparallel": {"enabled": True}}},
)

efa = PyTorch(
    entry_point="train.py",
    instance_type="ml.p4d.24xlarge",
    instance_count=4,
    distribution={
        "smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 4}}},
        "mpi": {"enabled": True, "custom_mpi_options": "-x NCCL_DEBUG=WARN"},
    },
)
