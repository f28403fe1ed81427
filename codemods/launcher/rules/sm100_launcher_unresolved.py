"""SM100 launcher-unresolved."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _PT, _SMP, _invalid, _launcher, _valid

# What the checks of the instance's GPUs and EFA could not check when the instance type is not known.
INSTANCE_DEPENDENTS = "what depends on `instance_type` (GPUs, EFA)"


def could_not_check(what: str, why: str) -> str:
    """The finding of a value the checks need and the file does not fix: ``why`` says what hides it."""
    return f"could not check {what}: {why}"


LAUNCHER_UNRESOLVED = Rule(
    code="SM100",
    name="launcher-unresolved",
    severity="info",
    summary="A launcher value the checks need is not fixed in the file (read from elsewhere, computed): could not check",
    fixable=False,
    why="The checks read the estimator's arguments statically; a value that only exists when the launcher "
    "runs is reported instead of guessed, so the job's configuration still needs a look.",
    instead="Values the launcher writes itself: a `distribution` dict literal (or names bound once, in the same file, to "
    'dict literals, such as `smp_options` and `mpi_options`) and a literal `instance_type` (`"ml.p3.16xlarge"`). '
    "Where a value must stay computed (read from a config file, passed in as an argument), check what the job "
    "gets against the SM1 rules by hand.",
    examples=lambda: (
        _invalid(
            _PT + 'PyTorch(entry_point="train.py", distribution=load_config())\n',
            findings=(Expected(3, 46, "could not check `distribution`"),),
        ),
    ),
    valid=lambda: (_valid(_launcher(), note="all-in-the-file"),),
    invalid=lambda: (
        _invalid(
            """
            from sagemaker.pytorch import PyTorch

            import json

            distribution = json.load(open("dist.json"))
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", distribution=distribution)
            """,
            note="from-a-config-file",
            findings=(Expected(5, 16, "could not check `distribution`"),),
        ),
        _invalid(
            _launcher(smp=_SMP, gap=False, arguments="instance_type=args.instance_type"),
            note="instance-type-passed-in",
            findings=(Expected(5, 47, "could not check what depends on `instance_type` (GPUs, EFA)"),),
        ),
        _invalid(
            _launcher(arguments='instance_type="ml.x9.99xlarge"'),
            note="unknown-instance-type",
            findings=(Expected(6, 47, "could not check what depends on `instance_type` (GPUs, EFA)"),),
        ),
        _invalid(
            """
            from sagemaker.pytorch import PyTorch

            mpi_options = {"enabled": True, "processes_per_host": 8}
            mpi_options["custom_mpi_options"] = flags
            PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                    distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                  "mpi": mpi_options})
            """,
            note="changed-after-it-is-built",
            findings=(Expected(7, 30, 'could not check `"mpi"`'),),
        ),
        _invalid(
            """
            import sagemaker.pytorch

            sagemaker.pytorch.PyTorch(entry_point="train.py", distribution=make_distribution())
            """,
            alias=True,
            findings=(Expected(3, 64, "could not check `distribution`"),),
        ),
    ),
)
