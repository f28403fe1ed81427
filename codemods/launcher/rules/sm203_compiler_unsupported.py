"""SM203 compiler-unsupported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _compiled_pytorchxla, _invalid, _valid

if TYPE_CHECKING:
    from codemods.launcher.rules.job import Job


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


def check_image_uri(job: Job) -> None:
    """Training Compiler picks its own container: an ``image_uri`` (other than None) is refused."""
    from codemods.launcher.facts import Constant

    image = job.estimator.value("image_uri")
    if image is not None and not (isinstance(image, Constant) and image.value is None):
        job.findings.report(
            COMPILER_UNSUPPORTED,
            job.estimator.arguments["image_uri"].node,
            "Training Compiler does not take "
            "image_uri: give the framework versions and let the SDK pick its compiler container",
        )


def check_pytorchxla_release(job: Job, version: tuple[int, ...], since: tuple[int, ...]) -> None:
    """The pytorchxla runtime, switched on, on a PyTorch ``version`` before the first it supports."""
    if version < since:
        job.findings.report(
            COMPILER_UNSUPPORTED,
            job.estimator.arguments["distribution"].node,
            f"the pytorchxla runtime needs PyTorch >= {_dotted(since)} with Training Compiler ({_dotted(version)} given)",
        )


def report_other_distribution(job: Job) -> None:
    job.findings.report(
        COMPILER_UNSUPPORTED,
        job.estimator.arguments["distribution"].node,
        'with Training Compiler the only distribution is {"pytorchxla": {"enabled": True}}',
    )


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))
