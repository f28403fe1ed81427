"""Distributed training, what each process does (XLA602, XLA605): it reads its rank and size from
the XLA runtime and drops DataParallel.

What each construct becomes is decided by the analyses (distributed/facts.py lists them); this
module only writes it:
  * ranks and sizes are read from the runtime in the launched processes (XLA602);
  * ``nn.DataParallel`` goes, with the ``.module`` accesses of what it wrapped (XLA605);
  * ranks read in the process that starts the others are reported (XLA609).
DistributedDataParallel, which stays without ``device_ids``/``output_device`` (XLA604), the
training data's DistributedSampler (XLA606), the gradients' all-reduce of a mixed-precision
step without DDP (XLA607), the iterable-style data sets that take no sampler (XLA617), the
master process's prints (XLA610), the reduce ops the xla process group refuses (XLA615) and
the process group fallbacks (XLA618) are their rules' hooks' (rules/), as is how the processes
start and join their group (XLA601, XLA603, XLA609, with the launcher checks of XLA602).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.rules.xla116_batch_off_xla import BATCH_OFF_XLA
from codemods.device.rules.xla118_scattering_data_parallel import SCATTERING_DATA_PARALLEL
from codemods.distributed.rules.edits import entry_from_spawn, replaced
from codemods.distributed.rules.xla602_xla_ranks import XLA_RANKS
from codemods.distributed.rules.xla605_data_parallel import DATA_PARALLEL
from codemods.distributed.rules.xla609_distributed_manual import DISTRIBUTED_MANUAL
from codemods.engine.nodes import walk
from codemods.engine.rewriter import Concern, Context

if TYPE_CHECKING:
    from codemods.facts import Facts

_CONCEPT_WORDS = {
    "global_ordinal": "global rank",
    "local_ordinal": "local rank",
    "world_size": "world size",
    "local_process_count": "processes on this host",
}


class ParallelRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        self.part = part = self.facts.distributed
        # What a spawning main guard that becomes _mp_fn reads runs in the workers.
        in_guard = {id(n) for n in walk(part.spawn_guard)} if entry_from_spawn(ctx) else set()  # type: ignore[arg-type]  # entry_from_spawn(ctx) is True only when spawn_guard is not None (distributed/rules/edits.py)
        self.worker_reads = {
            node: concept
            for node, concept in (*part.parent_reads.items(), *part.launcher_counts.items())
            if id(node) in in_guard
        }

    # -- ranks and sizes (XLA602) -----------------------------------------------------------

    def _runtime_read(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        concept = self.part.runtime_reads.get(original) or self.worker_reads[original]
        why = f"the {_CONCEPT_WORDS[concept]} from the XLA runtime" + self._per_host_caveat([concept])
        return replaced(self.ctx, XLA_RANKS, original, updated, why, lambda: self.ctx.call(concept))

    def _per_host_caveat(self, concepts: list[str]) -> str:
        """A release without a per-host process count writes its world size for it: right on
        one host only (torch_xla 1.13's xm.xrt_world_size() counts hosts x devices)."""
        target = self.ctx.target
        if "local_process_count" not in concepts or target.api("local_process_count") != target.api("world_size"):
            return ""
        return (
            f"; torch_xla {target.torch_xla_version} has no per-host count: "
            f"{target.api('world_size').spelled}() counts the devices of every host (hosts x devices), so this is "
            "right on one host only: on a multi-instance job divide it by the number of hosts"
        )

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """Workers that received a CUDA device count from the launching process read
        the XLA one when they start."""
        rereads = self.part.rereads.get(original)
        if not rereads or not isinstance(updated.body, cst.IndentedBlock):
            return updated

        def build() -> cst.FunctionDef | None:
            lines: list[cst.BaseStatement] = []
            for param, concept in rereads:
                call = self.ctx.call(concept)
                if call is None:
                    return None
                lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(param))], call)]))
            body = list(updated.body.body)
            at = 1 if body and _is_docstring(body[0]) else 0  # type: ignore[arg-type]  # updated.body is an IndentedBlock (checked above): the narrowing does not reach into build()
            return updated.with_changes(body=updated.body.with_changes(body=[*body[:at], *lines, *body[at:]]))

        names = ", ".join(f"`{param}`" for param, _ in rereads)
        fixed = self.ctx.fix(
            XLA_RANKS,
            original,
            f"{names} read from the XLA runtime when `{original.name.value}` starts: the launching process "
            "passed a CUDA device count" + self._per_host_caveat([concept for _, concept in rereads]),
            build,
        )
        return fixed if fixed is not None else updated

    # -- DataParallel (XLA605) ----------------------------------------

    def _scattered_inputs(self, original: cst.Call) -> None:
        """Tensors handed to a model whose wrapper moved them to the GPU, which the port
        removes (DataParallel) or stops from moving anything (DDP without device_ids)."""
        why, inputs = self.part.scattered_inputs[original]
        listed = ", ".join(f"`{name}`" for name in inputs)
        self.ctx.report(
            BATCH_OFF_XLA,
            original,
            f"{listed} {'reaches' if len(inputs) == 1 else 'reach'} `{self.ctx.code(original.func)}` on the CPU: "
            f"{why}; move {'it' if len(inputs) == 1 else 'each'} to the device first if it is a tensor "
            f"(`{inputs[0]}.to(device)`), or iterate `pl.MpDeviceLoader(loader, device)`",
        )

    def _scattering_wrap(self, original: cst.Call) -> None:
        wrapper, module = self.part.scattering_wraps[original]
        if original in self.part.fed_scattering_wraps:
            self.ctx.report(
                DATA_PARALLEL,
                original,
                f"`{wrapper}` (a DataParallel subclass of {module or 'this file'}) stays: its own `scatter` never "
                "runs on XLA (without CUDA devices DataParallel calls the wrapped module directly), and every call "
                "of it here gets inputs already on the device (moved, or batches of an iterable handed the device); "
                "it changes nothing on XLA (one process drives one device: more devices mean more processes)",
            )
            return
        self.ctx.report(
            SCATTERING_DATA_PARALLEL,
            original,
            f"`{wrapper}` (a DataParallel subclass of {module or 'this file'}) moves the batches in its own `scatter`, "
            "which never runs on XLA: without CUDA devices DataParallel calls the wrapped module directly, with the "
            "inputs as the loader gives them (on the CPU, not split per device); remove the wrapper (one process "
            "drives one XLA device) and move each batch to the XLA device, in the form the module takes, before "
            "the forward",
        )

    def _kept_because(self, original: cst.Call) -> tuple[str, str] | None:
        """Why a DataParallel wrapper stays, and how to remove it (or nothing to say), or None
        where it goes."""
        if (load := self.part.state_dict_loads.get(original)) is not None:
            return (
                f"this file loads a state dict into the model it wraps (`{self.ctx.code(load.func)}(...)`): a "
                "checkpoint saved through the wrapper carries `module.` keys, which the bare model would refuse "
                "(missing and unexpected keys)",
                ". To remove it, strip the `module.` prefix when loading: "
                '`{k.replace("module.", "", 1): v for k, v in state.items()}`',
            )
        if (leaves := self.part.kept_data_parallel.get(original)) is not None:
            return (
                f"the model it wraps leaves this file ({leaves}), where `.module` uses, or a flag saying it is "
                "wrapped, cannot all be followed (they would fail on the bare model)",
                "",
            )
        return None

    def _data_parallel(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if (kept := self._kept_because(original)) is not None:
            why, removal = kept
            self.ctx.report(
                DATA_PARALLEL,
                original,
                f"`{self.ctx.code(original.func)}` kept: {why}; without CUDA devices DataParallel calls the model "
                f"directly, so it changes nothing on XLA{removal}",
            )
            return updated
        if not self.part.data_parallel[original]:
            self.ctx.report(
                DATA_PARALLEL,
                original,
                f"`{self.ctx.code(original.func)}` drives several GPUs from one process: "
                "remove it (and its `.module` accesses) and start one process per device",
            )
            return updated
        wrapped = updated.args[0].value if updated.args else None
        if wrapped is None:
            return updated
        fixed = self.ctx.fix(
            DATA_PARALLEL,
            original,
            f"{self.ctx.code(original)} -> {{new}}: one process drives one XLA device (DataParallel has no XLA meaning)",
            lambda: wrapped,
        )
        if fixed is None:
            return updated
        self.ctx.forget_fixes_inside(original)
        self.ctx.imports.discard(original.func)
        return fixed

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        part = self.part
        if original in part.dp_statements:
            fixed = self.ctx.fix(
                DATA_PARALLEL,
                original,
                f"removed `{self.ctx.code(original.with_changes(leading_lines=()))}`: one process "
                "drives one XLA device "
                "(DataParallel has no XLA meaning)",
                lambda: cst.RemovalSentinel.REMOVE,
            )
            if fixed is not None:
                self.ctx.forget_removed(original, original)
                self.ctx.drop_statement(updated)
                return updated
        return updated

    def _module_access(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        fixed = self.ctx.fix(
            DATA_PARALLEL,
            original,
            f"{self.ctx.code(original)} -> {{new}}: the model is no longer wrapped in DataParallel",
            lambda: updated.value,
        )
        return fixed if fixed is not None else updated

    # -- dispatch ------------------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        part = self.part
        if original in part.runtime_reads or original in self.worker_reads:
            return self._runtime_read(original, updated)
        if original in part.per_process_counts:
            return replaced(
                self.ctx,
                XLA_RANKS,
                original,
                updated,
                "the devices this process drives: one XLA device per process (the count guards a DataParallel wrap, "
                f"which goes; the processes on the host are {self.ctx.target.api('local_process_count').spelled}())",
                lambda: cst.Integer("1"),
            )
        if original in part.scattering_wraps:
            self._scattering_wrap(original)
        if original in part.scattered_inputs:
            self._scattered_inputs(original)
        if original in part.data_parallel:
            return self._data_parallel(original, updated)
        if original in part.launcher_counts:
            # A CUDA count that only feeds the workers, which read the XLA one themselves
            # (XLA602): nothing to report on it.
            self.ctx.forget_removed(original, updated)
        elif original in part.parent_reads:
            self._parent_read(original)
        return updated

    def _parent_read(self, original: cst.CSTNode) -> None:
        concept = self.part.parent_reads[original]
        self.ctx.report(
            DISTRIBUTED_MANUAL,
            original,
            f"`{self.ctx.code(original)}` reads the {_CONCEPT_WORDS[concept]} in the "
            "process that starts the others: the XLA runtime may not be used there; read it in the workers",
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original in self.part.runtime_reads or original in self.worker_reads:
            return self._runtime_read(original, updated)
        if original in self.part.module_accesses:
            return self._module_access(original, updated)
        if original in self.part.parent_reads:
            self._parent_read(original)
        return updated

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
        return self._runtime_read(original, updated) if original in self.part.runtime_reads else updated


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
