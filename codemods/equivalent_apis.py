"""Names that mean what a torch API means, apart from apis.py (the source side's tables): libraries'
CUDA availability checks, which return ``torch.cuda.is_available()``, and torch.nn's classes whose
instances are tensors, not modules."""

from __future__ import annotations

# Libraries' own checks answer as it does (they return ``torch.cuda.is_available()``; checked in
# transformers 5.24 and accelerate 1.15): ``transformers.utils.is_torch_cuda_available`` (its
# import_utils module's), accelerate's ``is_cuda_available``.  CUDA-only code under them never runs
# on XLA (cuda_only); the port leaves them and the device choices they make as they are: the
# library's other callers read them too.
LIBRARY_AVAILABILITY_CHECKS = frozenset(
    {
        "transformers.utils.is_torch_cuda_available",
        "transformers.utils.import_utils.is_torch_cuda_available",
        "accelerate.utils.is_cuda_available",
        "accelerate.utils.imports.is_cuda_available",
    }
)

# Classes of torch.nn whose instances are tensors, not modules (``new_val = torch.nn.Parameter(t)``).
TENSOR_CLASSES_OF_NN = frozenset(
    {
        "torch.nn.Parameter",
        "torch.nn.parameter.Parameter",
        "torch.nn.UninitializedParameter",
        "torch.nn.parameter.UninitializedParameter",
        "torch.nn.Buffer",
        "torch.nn.parameter.Buffer",
    }
)
