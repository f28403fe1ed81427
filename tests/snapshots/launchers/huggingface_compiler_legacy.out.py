"""Training Compiler with transformers 4.11 / PyTorch 1.9 on a 4-GPU instance: before the
pytorchxla runtime a distributed compiled job needs the launcher-script arrangement."""
from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

instance_count = 1
instance_type = "ml.p3.8xlarge"

legacy = HuggingFace(
    entry_point="train.py",
    instance_count=instance_count,
    instance_type=instance_type,
    transformers_version="4.11.0",
    pytorch_version="1.9.0",
    hyperparameters={"n_gpus": 4, "batch_size": 26},
    compiler_config=TrainingCompilerConfig(),
)

# The arrangement of that era: the launcher script runs the training script.
arranged = HuggingFace(
    entry_point="distributed_training_launcher.py",
    instance_count=instance_count,
    instance_type=instance_type,
    transformers_version="4.17.0",
    pytorch_version="1.10.2",
    hyperparameters={"n_gpus": 4, "batch_size": 26, "training_script": "train.py"},
    compiler_config=TrainingCompilerConfig(),
)
