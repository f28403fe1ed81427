"""torch_xla release names: code written for another torch_xla release gets the
target's spelling (XLA901), e.g. ``xm.xrt_world_size()`` -> ``xr.world_size()`` for
2.9, and back for the sagemaker target."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.rewriter import Concern, Context
from codemods.release_names.rules import MISSING_IN_TARGET, XLA_RELEASE_NAMES
from codemods.targets import VERSIONED_CONCEPTS, spellings

if TYPE_CHECKING:
    from codemods.facts import Facts


class XlaNamesRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        self.concept_of = {
            spelling: concept
            for concept in VERSIONED_CONCEPTS
            for spelling in spellings(concept)
            if spelling != ctx.target.api(concept).qualified_name
        }

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        callee = self.ctx.resolve(original.func) or ""
        concept = self.concept_of.get(callee)
        if concept is None:
            if any(callee.startswith(module + ".") for module in self.ctx.target.missing_modules):
                self.ctx.report(
                    MISSING_IN_TARGET,
                    original,
                    f"`{self.ctx.code(original)}` does not exist in torch_xla {self.ctx.target.torch_xla_version} "
                    "(its whole module came later) and has no exact equivalent: write the value that release's way"
                    + (
                        " (xm.xrt_world_size() counts the processes of every host)"
                        if callee.endswith("_process_count")
                        else ""
                    ),
                )
            return updated
        wanted = self.ctx.target.api(concept).qualified_name
        if original.args:
            self.ctx.report(
                XLA_RELEASE_NAMES,
                original,
                f"`{self.ctx.code(original)}` is not torch_xla {self.ctx.target.torch_xla_version} API; "
                f"its arguments need a by-hand port to {wanted}",
            )
            return updated
        return self.ctx.fix_or_keep(
            updated,
            XLA_RELEASE_NAMES,
            original,
            f"{self.ctx.code(original)} -> {{new}} (torch_xla {self.ctx.target.torch_xla_version})",
            lambda: self.ctx.replace_callee(original, updated, concept),
        )
