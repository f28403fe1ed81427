"""SM106 efa-flags."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _SMP, _custom_mpi, _invalid, _launcher, _valid

EFA_FLAGS = Rule(
    code="SM106",
    name="efa-flags",
    severity="warning",
    summary="EFA instance types run model parallel fastest with `-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa "
    "-x RDMAV_FORK_SAFE=1`",
    fixable=False,
    why="On EFA-capable instances (ml.p4d.24xlarge, ml.p3dn.24xlarge, ...) these flags let MPI and NCCL use "
    "the fabric's RDMA path; without them the job runs, slower. Reported with the flags to add, never "
    "rewritten: MPI options are the user's call.",
    instead='The three flags in the job\'s MPI options, after any it already has: `mpi_options = {"enabled": True, '
    '"processes_per_host": 8, "custom_mpi_options": "-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x '
    'RDMAV_FORK_SAFE=1"}`.',
    examples=lambda: (
        _invalid(
            _launcher(smp=None, gap=False, arguments='instance_type="ml.p4d.24xlarge"'),
            findings=(Expected(3, 15, "ml.p4d.24xlarge has EFA"),),
        ),
    ),
    valid=lambda: (
        _valid(
            _launcher(
                smp=_SMP,
                mpi=_custom_mpi('"-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x RDMAV_FORK_SAFE=1"'),
                gap=False,
                arguments='instance_type="ml.p4d.24xlarge"',
            ),
            note="flags-given",
        ),
        _valid(_launcher(), note="no-efa"),
    ),
    invalid=lambda: (
        _invalid(
            _launcher(arguments='instance_type="ml.p4d.24xlarge", instance_count=2'),
            findings=(Expected(4, 15, "ml.p4d.24xlarge has EFA"),),
        ),
        _invalid(
            """
            from sagemaker.pytorch.estimator import PyTorch as Launcher

            Launcher(entry_point="train.py", instance_type="ml.p3dn.24xlarge",
                     distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                   "mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "-x FI_PROVIDER=efa"}})
            """,
            alias=True,
            findings=(Expected(5, 96, "ml.p3dn.24xlarge has EFA"),),
        ),
    ),
)
