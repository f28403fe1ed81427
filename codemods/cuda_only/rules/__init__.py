"""XLA004, XLA212, XLA5: CUDA-only libraries, fused kernels and CUDA runtime calls.

One module per rule (its code and name), beside what several of them share: the ``keyword=True``
removal (true_keywords.py), the tables of CUDA runtime APIs (runtime_apis.py) and what their hooks
ask of a reference (runtime_references.py); this package lists them."""

from __future__ import annotations

from codemods.cuda_only.rules.xla004_third_party_cuda import THIRD_PARTY_CUDA
from codemods.cuda_only.rules.xla212_fused_optimizer import FUSED_OPTIMIZER
from codemods.cuda_only.rules.xla501_cuda_synchronize import CUDA_SYNCHRONIZE
from codemods.cuda_only.rules.xla502_cuda_no_effect import CUDA_NO_EFFECT
from codemods.cuda_only.rules.xla503_cuda_memory_stats import CUDA_MEMORY_STATS
from codemods.cuda_only.rules.xla504_cuda_oom import CUDA_OOM
from codemods.cuda_only.rules.xla505_cuda_seed import CUDA_SEED
from codemods.cuda_only.rules.xla506_cuda_api import CUDA_API
from codemods.cuda_only.rules.xla507_sparse_gradients import SPARSE_GRADIENTS
from codemods.cuda_only.rules.xla508_cuda_api_behind_switch import CUDA_API_BEHIND_SWITCH
from codemods.cuda_only.rules.xla509_cuda_string_argument import CUDA_STRING_ARGUMENT
from codemods.cuda_only.rules.xla510_sparse_tensors import SPARSE_TENSORS
from codemods.cuda_only.rules.xla511_cuda_answer_no_effect import CUDA_ANSWER_NO_EFFECT
from codemods.cuda_only.rules.xla512_compiled_extension_op import COMPILED_EXTENSION_OP
from codemods.cuda_only.rules.xla513_nvidia_smi import NVIDIA_SMI
from codemods.cuda_only.rules.xla514_resized_buffer import RESIZED_BUFFER
from codemods.cuda_only.rules.xla515_host_seed import HOST_SEED
from codemods.cuda_only.rules.xla516_packed_gru import PACKED_GRU
from codemods.cuda_only.rules.xla517_dgl_graph_device import DGL_GRAPH_DEVICE

RULES = (
    THIRD_PARTY_CUDA,
    FUSED_OPTIMIZER,
    CUDA_SYNCHRONIZE,
    SPARSE_GRADIENTS,
    CUDA_NO_EFFECT,
    CUDA_MEMORY_STATS,
    CUDA_OOM,
    CUDA_SEED,
    CUDA_API,
    CUDA_API_BEHIND_SWITCH,
    CUDA_STRING_ARGUMENT,
    SPARSE_TENSORS,
    CUDA_ANSWER_NO_EFFECT,
    COMPILED_EXTENSION_OP,
    NVIDIA_SMI,
    RESIZED_BUFFER,
    HOST_SEED,
    PACKED_GRU,
    DGL_GRAPH_DEVICE,
)
