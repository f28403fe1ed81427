"""SM1 and SM2: SageMaker launcher scripts (estimators of the SageMaker Python SDK).

SM1 the ``distribution`` of model-parallel jobs (smdistributed modelparallel under MPI)
and the training script such a job runs; SM2 SageMaker Training Compiler.

One module per rule (its code and name); this package lists them."""

from __future__ import annotations

from codemods.launcher.rules.sm100_launcher_unresolved import LAUNCHER_UNRESOLVED
from codemods.launcher.rules.sm101_distribution_structure import DISTRIBUTION_STRUCTURE
from codemods.launcher.rules.sm102_partitions_renamed import PARTITIONS_RENAMED
from codemods.launcher.rules.sm103_model_and_data_parallel import MODEL_AND_DATA_PARALLEL
from codemods.launcher.rules.sm104_processes_per_host import PROCESSES_PER_HOST
from codemods.launcher.rules.sm105_repeated_mca_default import REPEATED_MCA_DEFAULT
from codemods.launcher.rules.sm106_efa_flags import EFA_FLAGS
from codemods.launcher.rules.sm107_smp_set_device import SMP_SET_DEVICE
from codemods.launcher.rules.sm108_own_xla_path import OWN_XLA_PATH
from codemods.launcher.rules.sm201_compiler_distribution import COMPILER_DISTRIBUTION
from codemods.launcher.rules.sm202_compiler_legacy_launch import COMPILER_LEGACY_LAUNCH
from codemods.launcher.rules.sm203_compiler_unsupported import COMPILER_UNSUPPORTED

RULES = (
    LAUNCHER_UNRESOLVED,
    DISTRIBUTION_STRUCTURE,
    PARTITIONS_RENAMED,
    MODEL_AND_DATA_PARALLEL,
    PROCESSES_PER_HOST,
    REPEATED_MCA_DEFAULT,
    EFA_FLAGS,
    SMP_SET_DEVICE,
    OWN_XLA_PATH,
    COMPILER_DISTRIBUTION,
    COMPILER_LEGACY_LAUNCH,
    COMPILER_UNSUPPORTED,
)
