"""SM106 efa-flags."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _SMP, _custom_mpi, _invalid, _launcher, _valid

if TYPE_CHECKING:
    from codemods.launcher.facts import Mapping
    from codemods.launcher.rules.job import Job


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


# What an EFA instance's MPI processes export for the best inter-node performance.
_EFA_SETTINGS = ("FI_EFA_USE_DEVICE_RDMA=1", "FI_PROVIDER=efa", "RDMAV_FORK_SAFE=1")


def check_efa(job: Job, mpi: Mapping) -> None:
    """The EFA settings ``custom_mpi_options`` does not export on an instance with EFA (suggested only)."""
    from codemods.launcher.facts import Constant, Unknown

    instance = job.instance
    if instance is None or not instance[1].efa:
        return
    options = mpi.get("custom_mpi_options")
    if isinstance(options, Unknown):
        return  # reported by the MCA check (SM105)
    text = options.value if isinstance(options, Constant) and isinstance(options.value, str) else ""
    exported = set(re.findall(r"(?<!\S)-x\s+(\S+)", text))
    missing = [flag for flag in _EFA_SETTINGS if flag not in exported and flag.split("=")[0] not in exported]
    if missing:
        where = options.node if isinstance(options, Constant) else mpi.node
        flags = " ".join(f"-x {flag}" for flag in missing)
        job.findings.report(
            EFA_FLAGS,
            where,
            f"{instance[0]} has EFA: add `{flags}` to custom_mpi_options for the best inter-node performance",
        )
