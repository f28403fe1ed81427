"""Recompilation sources (XLA711-XLA714) and evaluation loops that carry device state
(XLA704).

Device data sliced at a per-step offset is the one source the tool fixes, where the
file builds the data: ``data.to(device)`` becomes ``data`` (it stays on the host) and
each slice ``source[i:i+n]`` becomes ``source[i:i+n].to(device)``, so every step feeds
the same graph fresh input.  The others are reported at the operation's line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import receiver
from codemods.engine.rewriter import Concern
from codemods.lazy.rules.xla704_carried_state_barrier import CARRIED_STATE_BARRIER
from codemods.lazy.rules.xla711_sliced_device_data import SLICED_DEVICE_DATA
from codemods.lazy.rules.xla712_step_varying_shape import STEP_VARYING_SHAPE
from codemods.lazy.rules.xla713_dynamic_shape import DYNAMIC_SHAPE
from codemods.lazy.rules.xla714_short_last_batch import SHORT_LAST_BATCH
from codemods.training.loops import with_barriers

if TYPE_CHECKING:
    from codemods.facts import Facts


class RecompilationRewrite(Concern):
    # -- device data sliced per step ----------------------------------------------------

    facts: Facts

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        sliced = self.facts.recompilation.sliced_data.get(original)
        if sliced is None:
            self._dynamic_shape(original)
            return updated
        code = self.ctx.code(original)
        if sliced.device is None:
            self.ctx.report(
                SLICED_DEVICE_DATA,
                original,
                f"`{code}` slices a device tensor at a per-step offset: every step compiles a new graph; "
                f"keep `{sliced.name}` on the host and move each slice to the device (not fixed: {sliced.reason})",
            )
            return updated
        device = sliced.device
        why = (
            "sliced on the host, then moved: a device slice at a per-step offset is a new graph every step"
            if sliced.varying
            else f"`{sliced.name}` now stays on the host"
        )
        return self.ctx.fix_or_keep(
            updated,
            SLICED_DEVICE_DATA,
            original,
            f"{code} -> {{new}}: {why}",
            lambda: cst.Call(
                func=cst.Attribute(value=updated, attr=cst.Name("to")), args=[cst.Arg(device.deep_clone())]
            ),
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        lazy = self.facts.recompilation
        names = lazy.host_data_moves.get(original)
        if names is not None:
            new = self.ctx.fix(
                SLICED_DEVICE_DATA,
                original,
                f"{self.ctx.code(original)} -> {{new}}: `{names}` {'stay' if ',' in names else 'stays'} on the host "
                "and each slice moves to the device",
                lambda: receiver(updated),
            )
            if new is not None:
                self.ctx.imports.discard(original)
            return new if new is not None else updated
        self._static_argument(original)
        self._dynamic_shape(original)
        if original in lazy.short_last_batch:
            self.ctx.report(
                SHORT_LAST_BATCH,
                original,
                "this training DataLoader keeps a short last batch (no drop_last=True): its shape "
                "compiles a second graph; pass drop_last=True if dropping the remainder is fine",
            )
        return updated

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
        self._static_argument(original)
        return updated

    def _static_argument(self, original: cst.CSTNode) -> None:
        name = self.facts.recompilation.static_arguments.get(original)
        if name is not None:
            self.ctx.report(
                STEP_VARYING_SHAPE,
                original,
                f"`{self.ctx.code(original)}`: `{name}` changes every step and is compiled into the "
                "graph (a shape or static argument), so every step compiles a new graph; keep it fixed (pad to a maximum)",
            )

    def _dynamic_shape(self, original: cst.CSTNode) -> None:
        operation = self.facts.recompilation.dynamic_shapes.get(original)
        if operation is not None:
            self.ctx.report(
                DYNAMIC_SHAPE,
                original,
                f"`{self.ctx.code(original)}`: {operation} has a data-dependent shape (a host read and "
                "a new graph per size); keep the shape: multiply by the mask, or torch.where(mask, x, 0)",
            )

    # -- evaluation loops that carry device state ----------------------------------------

    def _carried(self, original: cst.For | cst.While, updated: cst.For | cst.While) -> cst.BaseStatement:
        names = self.facts.host_reads.carried_state.get(original)
        if names is None:
            return updated
        carried = ", ".join(f"`{n}`" for n in names)
        return with_barriers(
            self.ctx,
            CARRIED_STATE_BARRIER,
            original,
            updated,
            f"evaluation loop carries {carried} across iterations on the device: {{new}} ends every iteration "
            "(a host read materializes only what it reads; the carried graph keeps growing)",
        )

    leave_For = _carried
    leave_While = _carried
