"""XLA005, XLA1: the device (and scripts that have none).

One module per rule (its code and name); this package lists them."""

from __future__ import annotations

from codemods.device.rules.xla005_no_device import NO_DEVICE
from codemods.device.rules.xla101_cuda_device import CUDA_DEVICE
from codemods.device.rules.xla102_dot_cuda import DOT_CUDA
from codemods.device.rules.xla103_integer_device import INTEGER_DEVICE
from codemods.device.rules.xla104_cuda_available_device import CUDA_AVAILABLE_DEVICE
from codemods.device.rules.xla105_cuda_check import CUDA_CHECK
from codemods.device.rules.xla106_set_device import SET_DEVICE
from codemods.device.rules.xla107_cuda_tensor_type import CUDA_TENSOR_TYPE
from codemods.device.rules.xla108_guarded_input_move import GUARDED_INPUT_MOVE
from codemods.device.rules.xla109_device_generator import DEVICE_GENERATOR
from codemods.device.rules.xla110_device_type_check import DEVICE_TYPE_CHECK
from codemods.device.rules.xla111_device_off_xla import DEVICE_OFF_XLA
from codemods.device.rules.xla112_device_from_project import DEVICE_FROM_PROJECT
from codemods.device.rules.xla113_library_device_helper import LIBRARY_DEVICE
from codemods.device.rules.xla114_ported_condition import PORTED_CONDITION
from codemods.device.rules.xla115_model_move_skipped import MODEL_MOVE_SKIPPED
from codemods.device.rules.xla116_batch_off_xla import BATCH_OFF_XLA
from codemods.device.rules.xla117_tensor_cuda_check import TENSOR_CUDA_CHECK
from codemods.device.rules.xla118_scattering_data_parallel import SCATTERING_DATA_PARALLEL
from codemods.device.rules.xla119_guarded_move import GUARDED_MOVE
from codemods.device.rules.xla120_uncalled_device import UNCALLED_DEVICE
from codemods.device.rules.xla121_device_from_library import DEVICE_FROM_LIBRARY
from codemods.device.rules.xla122_cuda_wait_check import CUDA_WAIT_CHECK
from codemods.device.rules.xla123_device_string_comparison import DEVICE_STRING_COMPARISON

RULES = (
    NO_DEVICE,
    CUDA_DEVICE,
    DOT_CUDA,
    INTEGER_DEVICE,
    CUDA_AVAILABLE_DEVICE,
    CUDA_CHECK,
    SET_DEVICE,
    CUDA_TENSOR_TYPE,
    GUARDED_INPUT_MOVE,
    DEVICE_GENERATOR,
    DEVICE_TYPE_CHECK,
    DEVICE_OFF_XLA,
    DEVICE_FROM_PROJECT,
    LIBRARY_DEVICE,
    PORTED_CONDITION,
    MODEL_MOVE_SKIPPED,
    BATCH_OFF_XLA,
    TENSOR_CUDA_CHECK,
    SCATTERING_DATA_PARALLEL,
    GUARDED_MOVE,
    UNCALLED_DEVICE,
    DEVICE_FROM_LIBRARY,
    CUDA_WAIT_CHECK,
    DEVICE_STRING_COMPARISON,
)
