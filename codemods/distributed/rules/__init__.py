"""XLA6: multi-process and multi-GPU training (each rule's module says what each becomes).

One module per rule (its code and name); this package lists them."""

from __future__ import annotations

from codemods.distributed.rules.xla601_xla_process_group import XLA_PROCESS_GROUP
from codemods.distributed.rules.xla602_xla_ranks import XLA_RANKS
from codemods.distributed.rules.xla603_xla_launch import XLA_LAUNCH
from codemods.distributed.rules.xla604_ddp_device_ids import DDP_DEVICE_IDS
from codemods.distributed.rules.xla605_data_parallel import DATA_PARALLEL
from codemods.distributed.rules.xla606_distributed_sampler import DISTRIBUTED_SAMPLER
from codemods.distributed.rules.xla607_amp_gradient_all_reduce import AMP_GRADIENT_ALL_REDUCE
from codemods.distributed.rules.xla608_hogwild import HOGWILD
from codemods.distributed.rules.xla609_distributed_manual import DISTRIBUTED_MANUAL
from codemods.distributed.rules.xla610_master_print import MASTER_PRINT
from codemods.distributed.rules.xla614_module_level_distributed import MODULE_LEVEL_DISTRIBUTED
from codemods.distributed.rules.xla615_average_all_reduce import AVERAGE_ALL_REDUCE
from codemods.distributed.rules.xla616_ignite_backend import IGNITE_BACKEND
from codemods.distributed.rules.xla617_iterable_dataset_shards import ITERABLE_DATASET_SHARDS
from codemods.distributed.rules.xla618_process_group_fallback import PROCESS_GROUP_FALLBACK
from codemods.distributed.rules.xla619_ray_gpu_actor import RAY_GPU_ACTOR

RULES = (
    XLA_PROCESS_GROUP,
    XLA_RANKS,
    XLA_LAUNCH,
    DDP_DEVICE_IDS,
    DATA_PARALLEL,
    DISTRIBUTED_SAMPLER,
    AMP_GRADIENT_ALL_REDUCE,
    HOGWILD,
    DISTRIBUTED_MANUAL,
    MASTER_PRINT,
    MODULE_LEVEL_DISTRIBUTED,
    AVERAGE_ALL_REDUCE,
    IGNITE_BACKEND,
    ITERABLE_DATASET_SHARDS,
    PROCESS_GROUP_FALLBACK,
    RAY_GPU_ACTOR,
)
