"""The seed's generic Estimator on a custom image (the seed leaves out the comma after
image_uri, fixed here), with the model-parallel settings put directly under
"smdistributed" as the seed writes them."""
import sagemaker
from sagemaker.estimator import Estimator

sagemaker_session = sagemaker.Session()

smp_options = {
    "enabled": True,
    "parameters": {
        "pipeline_parallel_degree": 2,
        "microbatches": 4,
        "ddp": True,
    },
}

mpi_options = {
    "enabled": True,
    "processes_per_host": 8,
}

smd_mp_estimator = Estimator(
    entry_point="your_training_script.py",
    role=sagemaker.get_execution_role(),
    instance_type='ml.p3.16xlarge',
    sagemaker_session=sagemaker_session,
    image_uri='your_aws_account_id.dkr.ecr.region.amazonaws.com/name:tag',
    instance_count=1,
    distribution={
        "smdistributed": {"modelparallel": smp_options},
        "mpi": mpi_options
    },
    base_job_name="SMD-MP-demo",
)

smd_mp_estimator.fit('s3://my_bucket/my_training_data/')
