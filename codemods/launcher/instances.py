"""SageMaker ML instance types the launcher checks know: GPUs per instance, EFA support.

Sources (a type missing here is reported as unknown, never guessed):
- GPU counts of the GPU types: the SageMaker Python SDK's table
  ``FALLBACK_GPU_RESOURCE_MAPPING`` (``src/sagemaker/instance_types_gpu_info.py``), the
  figures the SDK itself uses when it cannot ask EC2.
- EFA: the SDK's ``TrainingCompilerConfig.SUPPORTED_INSTANCE_TYPES_WITH_EFA``
  (``src/sagemaker/pytorch/training_compiler/config.py`` and the Hugging Face twin), the
  seed document's examples (ml.p4d.24xlarge, ml.p3dn.24xlarge), and the EC2 user guide's
  list of EFA instance types for ml.p4de.24xlarge and ml.p5.48xlarge.
- CPU-only types (no GPU): the instance families of the SageMaker AI pricing page's
  training instances (m4, m5, c4, c5, c5n, r5).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceType:
    gpus: int
    efa: bool = False


_GPU_COUNTS = {
    "ml.p5.48xlarge": 8,
    "ml.p4d.24xlarge": 8,
    "ml.p4de.24xlarge": 8,
    "ml.p3.2xlarge": 1,
    "ml.p3.8xlarge": 4,
    "ml.p3.16xlarge": 8,
    "ml.p3dn.24xlarge": 8,
    "ml.p2.xlarge": 1,
    "ml.p2.8xlarge": 8,
    "ml.p2.16xlarge": 16,
    "ml.g4dn.xlarge": 1,
    "ml.g4dn.2xlarge": 1,
    "ml.g4dn.4xlarge": 1,
    "ml.g4dn.8xlarge": 1,
    "ml.g4dn.16xlarge": 1,
    "ml.g4dn.12xlarge": 4,
    "ml.g5.xlarge": 1,  # spelled "ml.g5n.xlarge" in the SDK's table
    "ml.g5.2xlarge": 1,
    "ml.g5.4xlarge": 1,
    "ml.g5.8xlarge": 1,
    "ml.g5.16xlarge": 1,
    "ml.g5.12xlarge": 4,
    "ml.g5.24xlarge": 4,
    "ml.g5.48xlarge": 8,
}

_EFA = {
    "ml.g4dn.8xlarge",
    "ml.g4dn.12xlarge",
    "ml.g5.48xlarge",
    "ml.p3dn.24xlarge",
    "ml.p4d.24xlarge",
    "ml.p4de.24xlarge",
    "ml.p5.48xlarge",
}

_CPU_SIZES = {
    "m4": ("xlarge", "2xlarge", "4xlarge", "10xlarge", "16xlarge"),
    "m5": ("large", "xlarge", "2xlarge", "4xlarge", "12xlarge", "24xlarge"),
    "c4": ("xlarge", "2xlarge", "4xlarge", "8xlarge"),
    "c5": ("xlarge", "2xlarge", "4xlarge", "9xlarge", "18xlarge"),
    "c5n": ("xlarge", "2xlarge", "4xlarge", "9xlarge", "18xlarge"),
    "r5": ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge"),
}

INSTANCE_TYPES: dict[str, InstanceType] = {
    **{name: InstanceType(gpus, name in _EFA) for name, gpus in _GPU_COUNTS.items()},
    **{f"ml.{family}.{size}": InstanceType(0) for family, sizes in _CPU_SIZES.items() for size in sizes},
}


def lookup(instance_type: str) -> InstanceType | None:
    """The table's entry, or None for a type it does not know (local mode included:
    ``local_gpu`` has the GPUs of whatever machine runs it)."""
    return INSTANCE_TYPES.get(instance_type)
