"""The device obligations' reports: where a proof broke, the finding says so (XLA111, XLA112,
XLA115, XLA116), as the rewrite leaves the module.  The ports the proofs lead to are their
rules' hooks (XLA113, XLA114; the loaders handed to a function that feeds them unmoved,
XLA302)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.rewriter import Concern

if TYPE_CHECKING:
    from codemods.facts import Facts


class ObligationRewrite(Concern):
    facts: Facts

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        obligations = self.facts.obligations
        sharded = obligations.broken_if_sharded.items() if "fsdp" in self.ctx.target.apis else ()
        for node, (rule, message) in (*obligations.broken.items(), *sharded):
            self.ctx.report(rule, node, self.ctx.target.advice(message))
        return updated
