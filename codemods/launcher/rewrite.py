"""Launcher scripts: check each SageMaker estimator's job configuration (SM1, SM2) and a
model-parallel training script's GPU pinning (SM107); fix what has one right answer.

The checks run once, on the launcher facts, before the traversal: reports are recorded
at once, fixes are planned per node and applied as the traversal leaves that node (the
same dict literal may feed several estimators: it is edited once).  Fixes: the
``partitions`` key renamed, the flat ``{"smdistributed": smp_options}`` wrapped,
``processes_per_host`` lowered to the instance's GPUs, the repeated default MCA flag
removed, ``distribution={"pytorchxla": ...}`` added, ``set_device`` after ``smp.init()``.
EFA flags are only suggested (README: "Launchers and containers").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.positions import code_of
from codemods.engine.rewriter import Concern, Context
from codemods.engine.rule import Rule
from codemods.launcher import instances
from codemods.launcher.analysis import (
    SET_DEVICE,
    SMP_TORCH,
    Constant,
    Construct,
    Entry,
    Estimator,
    LauncherFacts,
    Mapping,
    SmpScript,
    Unknown,
    Value,
)
from codemods.launcher.rules.sm100_launcher_unresolved import LAUNCHER_UNRESOLVED
from codemods.launcher.rules.sm101_distribution_structure import DISTRIBUTION_STRUCTURE
from codemods.launcher.rules.sm102_partitions_renamed import PARTITIONS_RENAMED
from codemods.launcher.rules.sm103_model_and_data_parallel import MODEL_AND_DATA_PARALLEL
from codemods.launcher.rules.sm104_processes_per_host import PROCESSES_PER_HOST
from codemods.launcher.rules.sm105_repeated_mca_default import REPEATED_MCA_DEFAULT
from codemods.launcher.rules.sm106_efa_flags import EFA_FLAGS
from codemods.launcher.rules.sm107_smp_set_device import SMP_SET_DEVICE
from codemods.launcher.rules.sm201_compiler_distribution import COMPILER_DISTRIBUTION
from codemods.launcher.rules.sm202_compiler_legacy_launch import COMPILER_LEGACY_LAUNCH
from codemods.launcher.rules.sm203_compiler_unsupported import COMPILER_UNSUPPORTED

if TYPE_CHECKING:
    from codemods.facts import Facts

_MCA_DEFAULT = re.compile(r"(?<!\S)--?mca\s+btl_vader_single_copy_mechanism\s+(\S+)")
_EFA_SETTINGS = ("FI_EFA_USE_DEVICE_RDMA=1", "FI_PROVIDER=efa", "RDMAV_FORK_SAFE=1")
# Training Compiler's pytorchxla runtime: the first PyTorch release it supports, per estimator.
_PYTORCHXLA_SINCE = {"PyTorch": (1, 12), "HuggingFace": (1, 11)}
_VERSION_KEYWORD = {"PyTorch": "framework_version", "HuggingFace": "pytorch_version"}
_LEGACY_TRANSFORMERS = (4, 17)
_STRATEGIES = ("modelparallel", "dataparallel")
_UNSET = object()


@dataclass
class _Edit:
    rule: Rule
    message: str
    build: Callable[[cst.CSTNode], cst.CSTNode]
    anchor: Callable[[cst.CSTNode], cst.CSTNode] | None = None


class LauncherRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts], launcher: LauncherFacts) -> None:
        super().__init__(ctx)
        self.edits: dict[int, list[_Edit]] = defaultdict(list)
        self.reported: set[tuple[str, int, str]] = set()
        for estimator in launcher.estimators:
            _EstimatorCheck(self, estimator).run()
        if launcher.smp_script is not None:
            self._check_smp_script(launcher.smp_script)

    # -- recording ------------------------------------------------------------------

    def report(self, rule: Rule, node: cst.CSTNode, message: str) -> None:
        key = (rule.code, id(node), message)
        if key not in self.reported:
            self.reported.add(key)
            self.ctx.report(rule, node, message)

    def unknown(self, value: Unknown, what: str) -> None:
        self.report(LAUNCHER_UNRESOLVED, value.node, f"could not check {what}: {value.why}")

    def plan(self, node: cst.CSTNode, edit: _Edit) -> None:
        planned = self.edits[id(node)]
        if all(e.rule is not edit.rule for e in planned):
            planned.append(edit)

    def _apply(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        for edit in self.edits.get(id(original), ()):
            current = updated
            new = self.ctx.fix(edit.rule, original, edit.message, lambda: edit.build(current), result=edit.anchor)  # noqa: B023 - fix() calls it at once
            if new is not None:
                updated = new
        return updated

    leave_SimpleString = leave_ConcatenatedString = leave_Integer = _apply
    leave_Name = leave_Dict = leave_Call = leave_SimpleStatementLine = _apply

    # -- SM107: the training script of a model-parallel job ------------------------------

    def _check_smp_script(self, script: SmpScript) -> None:
        if any(pinned for _, pinned in script.set_device_calls):
            return
        if script.set_device_calls:
            call = script.set_device_calls[0][0]
            self.report(
                SMP_SET_DEVICE,
                call,
                f"`{self.ctx.code(call)}`: under model parallel each process pins its own GPU "
                "with `torch.cuda.set_device(smp.local_rank())`",
            )
            return
        set_device = self.ctx.facts.imports.table.local_name_for(SET_DEVICE)
        local_rank = self.ctx.facts.imports.table.local_name_for(f"{SMP_TORCH}.local_rank")
        message = "torch.cuda.set_device(smp.local_rank()) pins each process to its own GPU"
        if not script.init_statements or set_device is None or local_rank is None:
            self.report(
                SMP_SET_DEVICE,
                script.import_statement,
                f"no {message.replace(' pins', ': it pins', 1)}: add it right after smp.init()",
            )
            return
        statement = cst.parse_statement(f"{set_device}({local_rank}())\n")

        def insert(line: cst.CSTNode) -> cst.CSTNode:
            return cst.FlattenSentinel([line, statement])  # type: ignore[return-value]  # _Edit's build returns a node; a FlattenSentinel (the line and the statement after it) is what libcst expands in its place

        self.plan(
            script.init_statements[0],
            _Edit(
                SMP_SET_DEVICE,
                f"smp.init() -> {{new}}: {message.split(' ', 1)[1]}",
                insert,
                lambda flat: flat.nodes[1],  # type: ignore[attr-defined]  # the replacement is the FlattenSentinel made by insert above
            ),
        )


class _EstimatorCheck:
    """The checks of one estimator call."""

    def __init__(self, owner: LauncherRewrite, estimator: Estimator) -> None:
        self.owner = owner
        self.estimator = estimator
        self._instance: object = _UNSET

    def run(self) -> None:
        distribution = self.estimator.value("distribution")
        if isinstance(distribution, Unknown):
            self.owner.unknown(distribution, "`distribution`")
        elif isinstance(distribution, Mapping):
            self.distribution(distribution)
        compiler = self.estimator.value("compiler_config")
        if isinstance(compiler, Unknown):
            self.owner.unknown(compiler, "the Training Compiler settings (`compiler_config`)")
        elif isinstance(compiler, Construct) and _constant(compiler.keywords.get("enabled"), True) is not False:
            TrainingCompilerCheck(self).run(distribution)

    # -- what the estimator runs on ----------------------------------------------------

    def instance(self) -> tuple[str, instances.InstanceType] | None:
        """The instance type and its table entry; None (reported once) when unknown."""
        if self._instance is not _UNSET:
            return self._instance  # type: ignore[return-value]  # _instance is the _UNSET sentinel or the cached result: typed object for the sentinel
        self._instance = None
        purpose = "what depends on `instance_type` (GPUs, EFA)"
        value = self.estimator.value("instance_type")
        if isinstance(value, Unknown):
            self.owner.unknown(value, purpose)
            return None
        name = value.value if isinstance(value, Constant) else None
        if not isinstance(value, Constant) or not isinstance(name, str):
            if value is None and self.estimator.hidden is None and "instance_groups" not in self.estimator.arguments:
                self.owner.report(
                    LAUNCHER_UNRESOLVED,
                    self.estimator.call,
                    f"could not check {purpose}: the estimator has no instance_type",
                )
            return None
        entry = instances.lookup(name)
        if entry is None:
            self.owner.report(
                LAUNCHER_UNRESOLVED,
                value.node,
                f"could not check {purpose}: {name!r} is not in the tool's table of SageMaker instance types",
            )
            return None
        self._instance = (name, entry)
        return self._instance

    def instance_count(self) -> int | Unknown | None:
        value = self.estimator.value("instance_count")
        if value is None:
            return 1
        if isinstance(value, Unknown):
            return value
        return value.value if isinstance(value, Constant) and isinstance(value.value, int) else None

    # -- SM1: distribution ----------------------------------------------------------------

    def distribution(self, distribution: Mapping) -> None:
        smdistributed = distribution.entries.get("smdistributed")
        mpi = distribution.get("mpi")
        if smdistributed is None:
            if isinstance(mpi, Mapping):
                self.mca(mpi)
            return
        strategies = smdistributed.value
        if isinstance(strategies, Unknown):
            self.owner.unknown(strategies, '`"smdistributed"`')
            return
        if not isinstance(strategies, Mapping):
            self.owner.report(
                DISTRIBUTION_STRUCTURE,
                smdistributed.written,
                '"smdistributed" takes a dict: {"modelparallel": {...}} or {"dataparallel": {...}}',
            )
            return
        if "enabled" in strategies.entries or "parameters" in strategies.entries:
            self.flat_form(smdistributed)
            model_parallel: Value | None = strategies
        else:
            model_parallel = strategies.get("modelparallel")
            for key, entry in strategies.entries.items():
                if key not in _STRATEGIES:
                    self.owner.report(
                        DISTRIBUTION_STRUCTURE,
                        entry.key_node,
                        f'"smdistributed" has no strategy {key!r}: use "modelparallel" or "dataparallel"',
                    )
            if model_parallel is not None and "dataparallel" in strategies.entries:
                # The SDK refuses a second "smdistributed" key, switched off or not.
                data_parallel = strategies.entries["dataparallel"]
                switched_off = _constant(_get(data_parallel.value, "enabled"), True) is False
                self.owner.report(
                    MODEL_AND_DATA_PARALLEL,
                    data_parallel.key_node,
                    (
                        '"dataparallel" is switched off, but the SDK still refuses it beside "modelparallel" '
                        '(one "smdistributed" key per job): remove it'
                    )
                    if switched_off
                    else (
                        '"modelparallel" and "dataparallel" cannot be used in one job: for data parallelism '
                        'across model replicas set "ddp": True (PyTorch) or "horovod": True (TensorFlow) in the '
                        "modelparallel parameters"
                    ),
                )
        if model_parallel is None:
            if isinstance(mpi, Mapping):
                self.mca(mpi)
            return
        if isinstance(model_parallel, Unknown):
            self.owner.unknown(model_parallel, '`"modelparallel"`')
        elif isinstance(model_parallel, Mapping):
            if not self.model_parallel(model_parallel):
                return  # switched off
        degree = _get(_get(model_parallel, "parameters"), "pipeline_parallel_degree") or _get(
            _get(model_parallel, "parameters"), "partitions"
        )
        if mpi is None:
            self.owner.report(
                DISTRIBUTION_STRUCTURE,
                distribution.node,
                'model parallel runs under MPI: add "mpi": {"enabled": True, '
                '"processes_per_host": <GPUs per instance>} to the distribution',
            )
        elif isinstance(mpi, Unknown):
            self.owner.unknown(mpi, '`"mpi"`')
        elif isinstance(mpi, Mapping):
            self.mpi(mpi, degree)

    def flat_form(self, smdistributed: Entry) -> None:
        key = smdistributed.key_node

        def wrap(written: cst.CSTNode) -> cst.CSTNode:
            name = _string_like(key, "modelparallel")
            return cst.Dict([cst.DictElement(name, written)])  # type: ignore[arg-type]  # _Edit's build takes any node: the one planned here is the written value, an expression

        self.owner.plan(
            smdistributed.written,
            _Edit(
                DISTRIBUTION_STRUCTURE,
                f"{_code(smdistributed.written)} -> {{new}}: the model-parallel settings go under "
                '"smdistributed" -> "modelparallel"',
                wrap,
            ),
        )

    def model_parallel(self, config: Mapping) -> bool:
        """Checks ``enabled`` and ``parameters``; False when the library is switched off."""
        enabled = config.get("enabled")
        if isinstance(enabled, Unknown):
            self.owner.unknown(enabled, '`"enabled"` of modelparallel')
        elif enabled is None and config.hidden is None:
            self.owner.report(
                DISTRIBUTION_STRUCTURE,
                config.node,
                'modelparallel has no "enabled": True (required): without it the '
                "job runs without the model-parallel library",
            )
        elif _constant(enabled, True) is False:
            return False
        parameters = config.get("parameters")
        if parameters is None:
            if config.hidden is None:
                self.owner.report(
                    DISTRIBUTION_STRUCTURE,
                    config.node,
                    'modelparallel has no "parameters" (required), with at least "pipeline_parallel_degree"',
                )
        elif isinstance(parameters, Unknown):
            self.owner.unknown(parameters, '`"parameters"` of modelparallel')
        elif isinstance(parameters, Mapping):
            self.parameters(parameters)
        return True

    def parameters(self, parameters: Mapping) -> None:
        partitions = parameters.entries.get("partitions")
        if partitions is None:
            if "pipeline_parallel_degree" not in parameters.entries and parameters.hidden is None:
                self.owner.report(
                    DISTRIBUTION_STRUCTURE,
                    parameters.node,
                    "modelparallel parameters have no "
                    '"pipeline_parallel_degree" (required): the number of model partitions',
                )
            return
        if "pipeline_parallel_degree" in parameters.entries:
            self.owner.report(
                PARTITIONS_RENAMED,
                partitions.key_node,
                '"partitions" and "pipeline_parallel_degree" both given: '
                'remove "partitions" (renamed in smdistributed-modelparallel 1.6.0)',
            )
            return
        key = partitions.key_node

        def rename(node: cst.CSTNode) -> cst.CSTNode:
            if isinstance(node, cst.Name):
                return node.with_changes(value="pipeline_parallel_degree")
            return _string_like(node, "pipeline_parallel_degree")

        new = "pipeline_parallel_degree" if isinstance(key, cst.Name) else _code(rename(key))
        self.owner.plan(
            key,
            _Edit(PARTITIONS_RENAMED, f"{_code(key)} -> {new}: renamed in smdistributed-modelparallel 1.6.0", rename),
        )

    def mpi(self, mpi: Mapping, degree: Value | None) -> None:
        enabled = mpi.get("enabled")
        if isinstance(enabled, Unknown):
            self.owner.unknown(enabled, '`"enabled"` of mpi')
        elif _constant(enabled, True) is not True and not (enabled is None and mpi.hidden is not None):
            self.owner.report(
                DISTRIBUTION_STRUCTURE,
                mpi.node,
                'mpi needs "enabled": True (required): the model-parallel library runs its processes under MPI',
            )
        self.processes_per_host(mpi, degree)
        self.mca(mpi)
        self.efa(mpi)

    def processes_per_host(self, mpi: Mapping, degree: Value | None) -> None:
        value = mpi.get("processes_per_host")
        if value is None:
            if mpi.hidden is None:
                instance = self.instance()
                hint = f" ({instance[1].gpus} on {instance[0]})" if instance and instance[1].gpus else ""
                self.owner.report(
                    PROCESSES_PER_HOST,
                    mpi.node,
                    f'mpi has no "processes_per_host" (required): set it to the GPUs per instance{hint}',
                )
            return
        if isinstance(value, Unknown):
            self.owner.unknown(value, '`"processes_per_host"`')
            return
        processes = value.value if isinstance(value, Constant) else None
        if not isinstance(processes, int):
            return
        instance = self.instance()
        if instance is None:
            return
        name, entry = instance
        if entry.gpus == 0:
            self.owner.report(PROCESSES_PER_HOST, value.node, f"{name} has no GPU: model parallel needs GPU instances")
            return
        if processes <= entry.gpus:
            return
        why = f"{name} has {entry.gpus} GPUs, one per process"
        pipeline = _constant_int(degree)
        if not isinstance(value.node, cst.Integer) or (pipeline and entry.gpus % pipeline):
            reason = f" (the pipeline degree {pipeline} does not divide {entry.gpus})" if pipeline else ""
            self.owner.report(
                PROCESSES_PER_HOST, value.node, f'"processes_per_host" {processes} is above the GPUs: {why}{reason}'
            )
            return
        self.owner.plan(
            value.node,
            _Edit(
                PROCESSES_PER_HOST,
                f"processes_per_host {processes} -> {entry.gpus}: {why}",
                lambda node: node.with_changes(value=str(entry.gpus)),
            ),
        )

    def mca(self, mpi: Mapping) -> None:
        options = mpi.get("custom_mpi_options")
        if isinstance(options, Unknown):
            self.owner.unknown(options, '`"custom_mpi_options"`')
            return
        text = options.value if isinstance(options, Constant) else None
        if not isinstance(options, Constant) or not isinstance(text, str):
            return
        repeats = list(_MCA_DEFAULT.finditer(text))
        if not repeats:
            return
        if any(m.group(1) != "none" for m in repeats) or not isinstance(options.node, cst.SimpleString):
            self.owner.report(
                REPEATED_MCA_DEFAULT,
                options.node,
                "custom_mpi_options sets btl_vader_single_copy_mechanism, which "
                "SageMaker already passes (`--mca btl_vader_single_copy_mechanism none`): Open MPI fails "
                "on a parameter listed twice; remove it",
            )
            return
        kept = _without(text, repeats)
        self.owner.plan(
            options.node,
            _Edit(
                REPEATED_MCA_DEFAULT,
                f"custom_mpi_options -> {_code(_string_like(options.node, kept))}: SageMaker already passes "
                "`--mca btl_vader_single_copy_mechanism none`, and Open MPI fails on a parameter listed twice",
                lambda node: _string_like(node, kept),
            ),
        )

    def efa(self, mpi: Mapping) -> None:
        instance = self.instance()
        if instance is None or not instance[1].efa:
            return
        options = mpi.get("custom_mpi_options")
        if isinstance(options, Unknown):
            return  # reported by the MCA check
        text = options.value if isinstance(options, Constant) and isinstance(options.value, str) else ""
        exported = set(re.findall(r"(?<!\S)-x\s+(\S+)", text))
        missing = [flag for flag in _EFA_SETTINGS if flag not in exported and flag.split("=")[0] not in exported]
        if missing:
            where = options.node if isinstance(options, Constant) else mpi.node
            flags = " ".join(f"-x {flag}" for flag in missing)
            self.owner.report(
                EFA_FLAGS,
                where,
                f"{instance[0]} has EFA: add `{flags}` to custom_mpi_options for the best inter-node performance",
            )


class TrainingCompilerCheck:
    """SM2: an estimator with ``compiler_config=TrainingCompilerConfig()``."""

    def __init__(self, check: _EstimatorCheck) -> None:
        self.check = check
        self.owner = check.owner
        self.estimator = check.estimator

    def run(self, distribution: Value | None) -> None:
        kind = self.estimator.kind
        if kind not in _PYTORCHXLA_SINCE or isinstance(distribution, Unknown):
            return
        image = self.estimator.value("image_uri")
        if image is not None and not (isinstance(image, Constant) and image.value is None):
            self.owner.report(
                COMPILER_UNSUPPORTED,
                self.estimator.arguments["image_uri"].node,
                "Training Compiler does not take "
                "image_uri: give the framework versions and let the SDK pick its compiler container",
            )
        since = _PYTORCHXLA_SINCE[kind]
        version = self.version(_VERSION_KEYWORD[kind])
        pytorchxla = _get(distribution, "pytorchxla") if isinstance(distribution, Mapping) else None
        if pytorchxla is not None:
            if _constant(_get(pytorchxla, "enabled"), True) is True and isinstance(version, tuple) and version < since:
                where = self.estimator.arguments["distribution"].node
                self.owner.report(
                    COMPILER_UNSUPPORTED,
                    where,
                    f"the pytorchxla runtime needs PyTorch >= {_dotted(since)} with "
                    f"Training Compiler ({_dotted(version)} given)",
                )
            return
        if isinstance(distribution, Mapping) and distribution.entries:
            if isinstance(version, tuple) and version >= since:
                self.owner.report(
                    COMPILER_UNSUPPORTED,
                    self.estimator.arguments["distribution"].node,
                    'with Training Compiler the only distribution is {"pytorchxla": {"enabled": True}}',
                )
            return
        if distribution is not None and _constant(distribution, None) is not None:
            return
        if not self.several_gpus():
            return
        if version is None or isinstance(version, Unknown):
            if isinstance(version, Unknown):
                self.owner.unknown(version, "how the compiled job is distributed: the PyTorch version")
            return
        if version < since or self.legacy_transformers():
            self.legacy_launch()
            return
        self.add_pytorchxla()

    def version(self, keyword: str) -> tuple[int, ...] | Unknown | None:
        value = self.estimator.value(keyword)
        if isinstance(value, Unknown):
            return value
        return _version(value.value) if isinstance(value, Constant) and isinstance(value.value, str) else None

    def legacy_transformers(self) -> bool:
        transformers = self.version("transformers_version")
        return isinstance(transformers, tuple) and transformers <= _LEGACY_TRANSFORMERS

    def several_gpus(self) -> bool:
        count = self.check.instance_count()
        if isinstance(count, Unknown):
            self.owner.unknown(count, "whether the compiled job spans several instances: `instance_count`")
            return False
        if isinstance(count, int) and count > 1:
            return True
        instance = self.check.instance()
        return instance is not None and instance[1].gpus > 1

    def legacy_launch(self) -> None:
        hyperparameters = self.estimator.value("hyperparameters")
        if isinstance(hyperparameters, Unknown):
            self.owner.unknown(hyperparameters, "the launcher arrangement of a compiled job: `hyperparameters`")
            return
        if isinstance(hyperparameters, Mapping) and (
            "training_script" in hyperparameters.entries or hyperparameters.hidden is not None
        ):
            return
        entry_point = self.estimator.value("entry_point")
        script = entry_point.value if isinstance(entry_point, Constant) else "your training script"
        self.owner.report(
            COMPILER_LEGACY_LAUNCH,
            self.estimator.call,
            "transformers <= 4.17 / PyTorch <= 1.10.2: Training Compiler "
            "runs a distributed job through a launcher script: pass it as entry_point and the training "
            f"script as hyperparameters['training_script'] ({script!r} now runs as a single process)",
        )

    def add_pytorchxla(self) -> None:
        call = self.estimator.call
        if self.estimator.hidden is not None or "distribution" in self.estimator.arguments:
            self.owner.report(
                COMPILER_DISTRIBUTION,
                call,
                'compiler_config on several GPUs needs distribution={"pytorchxla": '
                '{"enabled": True}}: without it the compiled job uses one GPU per instance',
            )
            return
        value = cst.parse_expression('{"pytorchxla": {"enabled": True}}')
        argument = cst.Arg(
            value,
            keyword=cst.Name("distribution"),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            ),
        )
        self.owner.plan(
            call,
            _Edit(
                COMPILER_DISTRIBUTION,
                'compiler_config on several GPUs -> distribution={"pytorchxla": {"enabled": True}}: '
                "starts one compiled process per GPU",
                lambda node: _append_argument(node, argument),  # type: ignore[arg-type]  # _Edit's build takes any node: the one planned here is ``call``, a Call
                lambda node: node.args[-1],  # type: ignore[attr-defined]  # the replacement is _append_argument's Call: _Edit's anchor takes any node
            ),
        )


def _get(value: Value | None, key: str) -> Value | None:
    return value.get(key) if isinstance(value, Mapping) else None


def _constant(value: Value | None, default: object) -> object:
    """The constant's value; ``default`` for a missing value; None when not a constant."""
    if value is None:
        return default
    return value.value if isinstance(value, Constant) else None


def _constant_int(value: Value | None) -> int | None:
    return value.value if isinstance(value, Constant) and isinstance(value.value, int) and value.value > 0 else None


def _version(text: str) -> tuple[int, ...] | None:
    match = re.match(r"(\d+(?:\.\d+)*)", text)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def _without(text: str, repeats: list[re.Match[str]]) -> str:
    """``text`` minus the matched flags, the other options kept as they were written."""
    for match in reversed(repeats):
        before, after = text[: match.start()].rstrip(), text[match.end() :].lstrip()
        text = f"{before} {after}" if before and after else before or after
    return text


def _code(node: cst.CSTNode) -> str:
    return code_of(node).strip()


def _string_like(template: cst.CSTNode, text: str) -> cst.SimpleString:
    """A string literal holding ``text`` with the prefix and quotes of ``template``."""
    prefix, quote = ("", '"')
    if isinstance(template, cst.SimpleString):
        prefix, quote = template.prefix, template.quote
    if "\\" in text or "\n" in text or quote[0] in text:
        literal = repr(text)
    else:
        literal = f"{prefix}{quote}{text}{quote}"
    return cst.SimpleString(literal, lpar=getattr(template, "lpar", ()), rpar=getattr(template, "rpar", ()))


def _append_argument(call: cst.Call, argument: cst.Arg) -> cst.Call:
    """``call`` with ``argument`` last, laid out like the arguments before it (one per
    line stays one per line; a trailing comma stays trailing)."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[argument])
    last = args[-1]
    separator = (
        args[-2].comma
        if len(args) > 1 and isinstance(args[-2].comma, cst.Comma)
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    if isinstance(last.comma, cst.Comma):
        args[-1] = last.with_changes(comma=separator)
        return call.with_changes(args=[*args, argument.with_changes(comma=last.comma)])
    args[-1] = last.with_changes(comma=separator)
    return call.with_changes(args=[*args, argument])
