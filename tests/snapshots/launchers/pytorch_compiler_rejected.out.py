"""PyTorch estimators with Training Compiler that the SDK rejects before the job starts."""
import sagemaker.pytorch as smpt
from sagemaker.pytorch import TrainingCompilerConfig

image = "123456789012.dkr.ecr.us-west-2.amazonaws.com/my-pytorch:latest"

custom_image = smpt.PyTorch(
    entry_point="train.py",
    image_uri=image,
    instance_type="ml.p3.2xlarge",
    instance_count=1,
    framework_version="1.13.1",
    compiler_config=TrainingCompilerConfig(),
)

ddp = smpt.PyTorch(
    entry_point="train.py",
    instance_type="ml.p4d.24xlarge",
    instance_count=2,
    framework_version="1.13.1",
    py_version="py39",
    compiler_config=TrainingCompilerConfig(),
    distribution={"pytorchddp": {"enabled": True}},
)
