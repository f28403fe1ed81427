"""The seed's PyTorch estimator as older guides wrote it: the pre-1.6.0 "partitions" key,
more processes than ml.p3.16xlarge has GPUs, model and data parallel together, and
the default MCA flag repeated in custom_mpi_options."""
import sagemaker
from sagemaker.pytorch import PyTorch

smp_options = {
    "enabled":True,
    "parameters": {                        # Required
        "pipeline_parallel_degree": 2,                   # Required
        "microbatches": 4,
        "placement_strategy": "spread",
        "pipeline": "interleaved",
        "optimize": "speed",
        "ddp": True,
    }
}

mpi_options = {
    "enabled" : True,                      # Required
    "processes_per_host" : 8,             # Required
    "custom_mpi_options" : "-x NCCL_DEBUG=WARN -x SMP_NCCL_THROTTLE_LIMIT=1",
}

smd_mp_estimator = PyTorch(
    entry_point="your_training_script.py", # Specify your train script
    source_dir="location_to_your_script",
    role=sagemaker.get_execution_role(),
    instance_count=1,
    instance_type='ml.p3.16xlarge',
    framework_version='1.13.1',
    py_version='py38',
    distribution={
        "smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": True}},
        "mpi": mpi_options
    },
    base_job_name="SMD-MP-demo",
)

smd_mp_estimator.fit('s3://my_bucket/my_training_data/')
