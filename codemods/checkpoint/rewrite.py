"""Checkpoints: ``torch.save`` becomes ``xm.save`` (XLA401), which moves device tensors
to the CPU before pickling and writes once per host (on torch_xla 1.13 it also waits
for every process: under a rank check it is reported instead); saving a whole module is
reported (XLA402): its device tensors are pickled as they are.  ``torch.load`` onto a
CUDA or XLA device loads on the CPU instead (XLA403)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.checkpoint.analysis import XLA_SAVE_KEYWORDS
from codemods.checkpoint.rules import GUARDED_XLA_SAVE, LOAD_MAP_LOCATION, SAVE_WHOLE_MODULE, XLA_SAVE
from codemods.engine.nodes import arg_value, quoted_like, with_keyword
from codemods.engine.rewriter import Concern

if TYPE_CHECKING:
    from codemods.facts import Facts


class CheckpointRewrite(Concern):
    facts: Facts

    def _map_location(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        if original in self.facts.checkpoint.unported_map_locations:
            self.ctx.report(
                LOAD_MAP_LOCATION,
                original,
                f"map_location `{self.ctx.code(original)}` names CUDA devices: load on the CPU "
                "(map_location='cpu'); load_state_dict copies to the XLA device",
            )
            return updated
        if original not in self.facts.checkpoint.map_locations:
            return updated
        new = self.ctx.fix(
            LOAD_MAP_LOCATION,
            original,
            f"map_location {self.ctx.code(original)} -> {{new}}: XLA cannot load straight onto its device; "
            "load_state_dict copies the tensors over"
            + (f" (`{original.value}` may now be unused)" if isinstance(original, cst.Name) else ""),
            lambda: quoted_like(original, "cpu"),
        )
        if new is not None:
            self.ctx.forget_removed(original, updated)
        return new if new is not None else updated

    leave_SimpleString = _map_location
    leave_FormattedString = _map_location
    leave_Name = _map_location
    leave_Attribute = _map_location
    leave_IfExp = _map_location
    leave_Dict = _map_location
    leave_BinaryOperation = _map_location

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original in self.facts.checkpoint.map_locations:
            return self._map_location(original, updated)
        if original in self.facts.checkpoint.unlocated_loads:
            return self.ctx.fix_or_keep(
                updated,
                LOAD_MAP_LOCATION,
                original,
                'torch.load(...) -> map_location="cpu": a checkpoint the CUDA runs of this script saved holds CUDA '
                "storages, which load nowhere without CUDA; load_state_dict copies the tensors to the device",
                lambda: updated.with_changes(
                    args=with_keyword(list(updated.args), "map_location", cst.SimpleString('"cpu"'))
                ),
                result=lambda call: call.args[-1],
            )
        if original not in self.facts.checkpoint.saves:
            # Not a torch.save: an xm.save already there.
            if self.ctx.target.save_waits_for_all and original in self.facts.distributed.guarded_saves:
                self.ctx.report(
                    GUARDED_XLA_SAVE,
                    original,
                    f"`{self.ctx.code(original.func)}` under a rank check: in torch_xla "
                    f"{self.ctx.target.torch_xla_version} it waits for every process (a rendezvous), so the master "
                    "waits forever; call it in every process, outside the check (it writes from the master only)",
                )
            return updated
        if original in self.facts.checkpoint.whole_module_saves:
            saved = self.ctx.code(arg_value(original, 0, "obj"))  # type: ignore[arg-type]  # a whole-module save's obj argument names a model (how it is recorded), so arg_value finds it
            self.ctx.report(
                SAVE_WHOLE_MODULE,
                original,
                f"`{saved}` is a whole module: save `{saved}.state_dict()` so the checkpoint holds CPU tensors "
                "and loads without torch_xla",
            )
        problem = self.facts.checkpoint.saves[original]
        if problem is None and self.ctx.target.save_waits_for_all and original in self.facts.distributed.guarded_saves:
            return self._guarded_save(original, updated)
        if problem is not None:
            distributed = self.facts.distributed
            if original in distributed.guarded_saves or not distributed.multi_process:
                # One process writes, and torch.save pickles XLA tensors through the CPU: it
                # runs as it did (the file loads where torch_xla is installed).
                return updated
            self.ctx.report(
                XLA_SAVE,
                original,
                f"`{self.ctx.code(original.func)}` stays ({problem}, so it cannot become xm.save) and no rank check "
                "guards it: every process of this multi-process run writes the same file at once; save from the "
                "master only (under a rank check, or with xm.save)",
            )
            return updated

        def build() -> cst.Call | None:
            call = self.ctx.replace_callee(original, updated, "save")
            if call is None:
                return None
            renamed = [
                a.with_changes(keyword=cst.Name(XLA_SAVE_KEYWORDS[a.keyword.value])) if a.keyword else a
                for a in call.args
            ]
            return call.with_changes(args=renamed)

        return self.ctx.fix_or_keep(
            updated,
            XLA_SAVE,
            original,
            f"{self.ctx.code(original.func)} -> {{new}}: moves device tensors to the CPU before saving",
            build,
            result=lambda call: call.func,
        )

    def _guarded_save(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """A torch.save under a rank check, where xm.save ends in a rendezvous of every process
        (torch_xla 1.13: the master alone would wait forever): it stays, and saves its state
        moved to the CPU the way xm.save moves it, without the rendezvous."""
        to_cpu = self.ctx.target.api("to_cpu").spelled
        why = (
            f"xm.save in torch_xla {self.ctx.target.torch_xla_version} waits for every process, so the master "
            "alone would wait forever"
        )
        index = next(
            (
                i
                for i, a in enumerate(original.args)
                if (a.keyword is None and not a.star and i == 0) or (a.keyword is not None and a.keyword.value == "obj")
            ),
            None,
        )
        if index is None:
            self.ctx.report(
                XLA_SAVE,
                original,
                f"`{self.ctx.code(original.func)}` stays under a rank check ({why}): it pickles each XLA tensor "
                f"through the CPU, and the file loads only where torch_xla is installed; save `{to_cpu}(state)`",
            )
            return updated
        state = updated.args[index]
        given = original.args[index].value
        if type(given) is cst.Call and self.ctx.resolve(given.func) == self.ctx.target.api("to_cpu").qualified_name:
            return updated  # ported already

        def build() -> cst.Call | None:
            moved = self.ctx.call("to_cpu", [cst.Arg(state.value)])
            if moved is None:
                return None
            args = list(updated.args)
            args[index] = state.with_changes(value=moved)
            return updated.with_changes(args=args)

        return self.ctx.fix_or_keep(
            updated,
            XLA_SAVE,
            original,
            f"`{self.ctx.code(original.func)}` under a rank check stays ({why}) and saves its state through "
            f"`{to_cpu}`: the device tensors go to the CPU first, as xm.save moves them, so the file loads "
            "without torch_xla",
            build,
            result=lambda call: call.args[index].value,
        )
