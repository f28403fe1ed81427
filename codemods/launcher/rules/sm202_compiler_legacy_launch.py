"""SM202 compiler-legacy-launch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _compiled, _invalid, _valid

if TYPE_CHECKING:
    from codemods.launcher.rules.job import Job


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


def check_legacy_launch(job: Job) -> None:
    """A compiled job on a release before the pytorchxla runtime runs distributed only through
    a launcher script (``hyperparameters["training_script"]``)."""
    from codemods.launcher.facts import Constant, Mapping, Unknown

    hyperparameters = job.estimator.value("hyperparameters")
    if isinstance(hyperparameters, Unknown):
        job.findings.unknown(hyperparameters, "the launcher arrangement of a compiled job: `hyperparameters`")
        return
    if isinstance(hyperparameters, Mapping) and (
        "training_script" in hyperparameters.entries or hyperparameters.hidden is not None
    ):
        return
    entry_point = job.estimator.value("entry_point")
    script = entry_point.value if isinstance(entry_point, Constant) else "your training script"
    job.findings.report(
        COMPILER_LEGACY_LAUNCH,
        job.estimator.call,
        "transformers <= 4.17 / PyTorch <= 1.10.2: Training Compiler "
        "runs a distributed job through a launcher script: pass it as entry_point and the training "
        f"script as hyperparameters['training_script'] ({script!r} now runs as a single process)",
    )
