"""Lightning and Fabric (XLA821, XLA822): the accelerator, strategy and precision that
select CUDA and NCCL take the names of Lightning's XLA support (lightning/analysis.py
says which release they were checked against); what has no XLA form is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import quoted_like
from codemods.engine.rewriter import Concern
from codemods.lightning.facts import Setting
from codemods.lightning.rules import LIGHTNING_MANUAL, LIGHTNING_XLA

if TYPE_CHECKING:
    from codemods.facts import Facts

_WHAT = {
    "accelerator": "Lightning's XLA accelerator",
    "strategy": "one process per XLA device",
    "precision": "Lightning's XLA precision takes no mixed precision; bf16-true runs in bfloat16 (XLA_USE_BF16), "
    "the precision XLA devices compute in",
}


class LightningRewrite(Concern):
    facts: Facts

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.BaseExpression:
        setting = self.facts.lightning.settings.get(original)
        return updated if setting is None else self._setting(original, updated, setting)

    def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.BaseExpression:
        setting = self.facts.lightning.settings.get(original)
        return updated if setting is None else self._setting(original, updated, setting)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        old = self.facts.lightning.legacy.get(original)
        if old is not None:
            self._legacy(original, old)
        parameter = self.facts.lightning.unknown.get(original)
        if parameter is not None:
            self.ctx.report(
                LIGHTNING_MANUAL,
                original,
                f"`{self.ctx.code(original).rstrip(',')}`: the tool cannot tell which {parameter} this selects; on XLA "
                'Lightning takes accelerator="tpu", strategy="xla" (Fabric: "xla_fsdp" too) and precision '
                '"32-true" or "bf16-true"',
            )
        return updated

    def _legacy(self, original: cst.Arg, old: tuple[str, ...]) -> None:
        """A Trainer argument Lightning 2 removed, with advice in the terms of the API the
        call is written for: Lightning 0.x (it passes arguments only 0.x takes), else 1.x."""
        name = original.keyword.value  # type: ignore[union-attr]  # the analysis records keyword arguments only
        if old:
            shows = ", ".join(f"`{k}=`" for k in old)
            message = (
                f"`{name}=`: this Trainer call is written for Lightning 0.x ({shows}), whose Trainer has no "
                "accelerator= or devices= (on an XLA host `gpus=` leaves the training on the CPU): drop `gpus=` and "
                "`distributed_backend=` and pass `num_tpu_cores=8` (or 1; Lightning 0.7's TPU switch, `tpu_cores=` "
                "from 0.8): Lightning then starts one process per TPU core itself"
            )
        else:
            message = (
                f'`{name}=` is Lightning 1.x\'s (Lightning 2 raises on it): on XLA pass accelerator="tpu" and '
                "devices= the number of XLA devices (Lightning 1.5 and later; on any 1.x `tpu_cores=` does it too)"
            )
        self.ctx.report(LIGHTNING_MANUAL, original, message)

    def _setting(
        self, original: cst.BaseExpression, updated: cst.BaseExpression, setting: Setting
    ) -> cst.BaseExpression:
        owner = "Trainer" if setting.kind == "trainer" else "Fabric"
        source = f" (`{setting.source}`, given to {owner}'s {setting.parameter})" if setting.source else ""
        if setting.new is None:
            self.ctx.report(
                LIGHTNING_MANUAL,
                original,
                f"{owner}({setting.parameter}={self.ctx.code(original)}){source} has no XLA form: {setting.why}",
            )
            return updated
        new_value = setting.new
        target = self.ctx.target
        if not target.lightning_xla_names:
            self.ctx.report(
                LIGHTNING_MANUAL,
                original,
                f"{owner}({setting.parameter}={self.ctx.code(original)}){source} is a CUDA setting: set the XLA one of "
                f"the Lightning release that goes with torch_xla {target.torch_xla_version} by hand (the tool knows "
                "Lightning 2.6.6's, for torch_xla 2.9)",
            )
            return updated

        def build() -> cst.BaseExpression:
            template = original if isinstance(original, cst.SimpleString) else cst.SimpleString('""')
            return quoted_like(template, new_value)

        return self.ctx.fix_or_keep(
            updated,
            LIGHTNING_XLA,
            original,
            f"{owner} {setting.parameter} {self.ctx.code(original)} -> {{new}}{source}: {_WHAT[setting.parameter]}",
            build,
        )
