"""Launcher scripts: the driver of the launcher rules' checks (SM1, SM2), which run once,
on the launcher facts, before the traversal.  Each rule's module holds its checks and
their messages; this module walks each estimator's ``distribution`` and Training Compiler
settings to the checks that apply, and applies the fixes they planned as the traversal
leaves each node (``rules/job.py`` records them).  Fixes: the ``partitions`` key renamed,
the flat ``{"smdistributed": smp_options}`` wrapped, ``processes_per_host`` lowered to the
instance's GPUs, the repeated default MCA flag removed, ``distribution={"pytorchxla": ...}``
added, ``set_device`` after ``smp.init()``.  EFA flags are only suggested (README:
"Launchers and containers").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from codemods.engine.rewriter import Concern, Context
from codemods.launcher.facts import Construct, LauncherFacts, Mapping, Unknown, Value
from codemods.launcher.rules.job import Findings, Job, constant, entry_value
from codemods.launcher.rules.sm101_distribution_structure import (
    check_mpi_enabled,
    check_pipeline_degree,
    check_strategy_names,
    fix_flat_form,
    model_parallel_enabled,
    model_parallel_parameters,
    mpi_of,
    strategies_of,
)
from codemods.launcher.rules.sm102_partitions_renamed import check_partitions
from codemods.launcher.rules.sm103_model_and_data_parallel import check_beside_model_parallel
from codemods.launcher.rules.sm104_processes_per_host import check_processes_per_host
from codemods.launcher.rules.sm105_repeated_mca_default import check_mca
from codemods.launcher.rules.sm106_efa_flags import check_efa
from codemods.launcher.rules.sm107_smp_set_device import check_smp_script
from codemods.launcher.rules.sm108_own_xla_path import check_own_xla_path
from codemods.launcher.rules.sm201_compiler_distribution import add_pytorchxla
from codemods.launcher.rules.sm202_compiler_legacy_launch import check_legacy_launch
from codemods.launcher.rules.sm203_compiler_unsupported import (
    check_image_uri,
    check_pytorchxla_release,
    report_other_distribution,
)

if TYPE_CHECKING:
    import libcst as cst

    from codemods.facts import Facts

# Training Compiler's pytorchxla runtime: the first PyTorch release it supports, per estimator.
_PYTORCHXLA_SINCE = {"PyTorch": (1, 12), "HuggingFace": (1, 11)}
_VERSION_KEYWORD = {"PyTorch": "framework_version", "HuggingFace": "pytorch_version"}
_LEGACY_TRANSFORMERS = (4, 17)


class LauncherRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts], launcher: LauncherFacts) -> None:
        super().__init__(ctx)
        self.findings = Findings(ctx)
        for estimator in launcher.estimators:
            _check_estimator(Job(self.findings, estimator))
        if launcher.smp_script is not None:
            check_smp_script(self.findings, launcher.smp_script)
            check_own_xla_path(self.findings, launcher.smp_script, ctx.facts.imports.xla_optional)

    def _apply(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        for edit in self.findings.edits.get(id(original), ()):
            current = updated
            new = self.ctx.fix(edit.rule, original, edit.message, lambda: edit.build(current), result=edit.anchor)  # noqa: B023 - fix() calls it at once
            if new is not None:
                updated = new
        return updated

    leave_SimpleString = leave_ConcatenatedString = leave_Integer = _apply
    leave_Name = leave_Dict = leave_Call = leave_SimpleStatementLine = _apply


def _check_estimator(job: Job) -> None:
    distribution = job.estimator.value("distribution")
    if isinstance(distribution, Unknown):
        job.findings.unknown(distribution, "`distribution`")
    elif isinstance(distribution, Mapping):
        _check_distribution(job, distribution)
    compiler = job.estimator.value("compiler_config")
    if isinstance(compiler, Unknown):
        job.findings.unknown(compiler, "the Training Compiler settings (`compiler_config`)")
    elif isinstance(compiler, Construct) and constant(compiler.keywords.get("enabled"), True) is not False:
        _check_compiled_job(job, distribution)


# -- SM1: distribution ----------------------------------------------------------------------


def _check_distribution(job: Job, distribution: Mapping) -> None:
    """smdistributed's strategies, the model-parallel settings and the MPI they run under;
    without model parallel, only the MCA flags of a plain MPI job."""
    smdistributed = distribution.entries.get("smdistributed")
    plain_mpi = distribution.get("mpi")
    if smdistributed is None:
        if isinstance(plain_mpi, Mapping):
            check_mca(job, plain_mpi)
        return
    strategies = strategies_of(job, smdistributed)
    if strategies is None:
        return
    if "enabled" in strategies.entries or "parameters" in strategies.entries:
        fix_flat_form(job, smdistributed)
        model_parallel: Value | None = strategies
    else:
        model_parallel = strategies.get("modelparallel")
        check_strategy_names(job, strategies)
        if model_parallel is not None and "dataparallel" in strategies.entries:
            check_beside_model_parallel(job, strategies.entries["dataparallel"])
    if model_parallel is None:
        if isinstance(plain_mpi, Mapping):
            check_mca(job, plain_mpi)
        return
    if isinstance(model_parallel, Unknown):
        job.findings.unknown(model_parallel, '`"modelparallel"`')
    elif isinstance(model_parallel, Mapping):
        if not model_parallel_enabled(job, model_parallel):
            return  # switched off
        parameters = model_parallel_parameters(job, model_parallel)
        if parameters is not None:
            check_pipeline_degree(job, parameters)
            check_partitions(job, parameters)
    parameters_value = entry_value(model_parallel, "parameters")
    degree = entry_value(parameters_value, "pipeline_parallel_degree") or entry_value(parameters_value, "partitions")
    mpi = mpi_of(job, distribution)
    if mpi is not None:
        check_mpi_enabled(job, mpi)
        check_processes_per_host(job, mpi, degree)
        check_mca(job, mpi)
        check_efa(job, mpi)


# -- SM2: Training Compiler ---------------------------------------------------------------


def _check_compiled_job(job: Job, distribution: Value | None) -> None:
    """An estimator with ``compiler_config=TrainingCompilerConfig()``: its container, its
    distribution, and how a job on several GPUs starts its processes."""
    kind = job.estimator.kind
    if kind not in _PYTORCHXLA_SINCE or isinstance(distribution, Unknown):
        return
    check_image_uri(job)
    since = _PYTORCHXLA_SINCE[kind]
    version = _version_of(job, _VERSION_KEYWORD[kind])
    pytorchxla = entry_value(distribution, "pytorchxla")
    if pytorchxla is not None:
        if constant(entry_value(pytorchxla, "enabled"), True) is True and isinstance(version, tuple):
            check_pytorchxla_release(job, version, since)
        return
    if isinstance(distribution, Mapping) and distribution.entries:
        if isinstance(version, tuple) and version >= since:
            report_other_distribution(job)
        return
    if distribution is not None and constant(distribution, None) is not None:
        return
    if not _on_several_gpus(job):
        return
    if version is None or isinstance(version, Unknown):
        if isinstance(version, Unknown):
            job.findings.unknown(version, "how the compiled job is distributed: the PyTorch version")
        return
    if version < since or _legacy_transformers(job):
        check_legacy_launch(job)
        return
    add_pytorchxla(job)


def _version_of(job: Job, keyword: str) -> tuple[int, ...] | Unknown | None:
    value = job.estimator.value(keyword)
    if isinstance(value, Unknown):
        return value
    text = constant(value, None)
    match = re.match(r"(\d+(?:\.\d+)*)", text) if isinstance(text, str) else None
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _legacy_transformers(job: Job) -> bool:
    transformers = _version_of(job, "transformers_version")
    return isinstance(transformers, tuple) and transformers <= _LEGACY_TRANSFORMERS


def _on_several_gpus(job: Job) -> bool:
    count = job.instance_count()
    if isinstance(count, Unknown):
        job.findings.unknown(count, "whether the compiled job spans several instances: `instance_count`")
        return False
    if isinstance(count, int) and count > 1:
        return True
    instance = job.instance
    return instance is not None and instance[1].gpus > 1
