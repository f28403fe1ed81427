"""Fine-tuning with SageMaker Training Compiler on one 8-GPU instance (transformers 4.21,
PyTorch 1.11): the compiled job needs the pytorchxla runtime to use every GPU."""
from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

hyperparameters = {
    "model_name_or_path": "bert-base-cased",
    "per_device_train_batch_size": 24,
    "optim": "adamw_torch_xla",
}

estimator = HuggingFace(
    entry_point="run_mlm.py",
    source_dir="./scripts",
    instance_type="ml.p3.16xlarge",
    instance_count=1,
    role=role,
    transformers_version="4.21.1",
    pytorch_version="1.11.0",
    py_version="py38",
    hyperparameters=hyperparameters,
    compiler_config=TrainingCompilerConfig(),
    disable_profiler=True,
    debugger_hook_config=False,
    distribution={"pytorchxla": {"enabled": True}},
)

estimator.fit()
