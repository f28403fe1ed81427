"""Other files of the project (XLA003): setup that goes to, or comes from, a module of
the project that still needs converting is reported, naming that module's file; each
file is converted on its own terms."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.rewriter import Concern
from codemods.project.holdings import CAUSES
from codemods.project.rules import CROSS_FILE

if TYPE_CHECKING:
    from codemods.facts import Facts


_EXAMPLES = 3  # code a finding shows of what a module holds
# What converting the project does with what the modules hold, by Unported.ported.
_PROJECT_RUN = {
    (True,): "would port it",
    (False,): "would not port it: it reports it there as an error to fix by hand",
    (False, True): "would port part of it and report the rest there as errors to fix by hand",
}


class ProjectRewrite(Concern):
    facts: Facts

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        named = self.facts.obligations.named_modules  # named where the chain breaks already
        for node, unported in self.facts.project.unported_uses.items():
            for found in unported:
                if found.path in named or all(path in named for path, _, _ in found.held):
                    continue
                causes = ", ".join(CAUSES[cause][0] for cause in found.causes)
                consequences = "; ".join(CAUSES[cause][1] for cause in found.causes)
                held = "; ".join(
                    (f"`{name}`" if name else "module-level code")
                    + ("" if path == found.path else f" in {path}")
                    + f" has {what}"
                    for path, name, what in found.held[:_EXAMPLES]
                )
                more = len(found.held) - _EXAMPLES
                held += f"; and {more} more" if more > 0 else ""
                self.ctx.report(
                    CROSS_FILE,
                    node,
                    f"what this file uses of {found.path}, which this run does not convert, holds {causes} ({held}): "
                    f"on an XLA host {consequences}; converting the project (`xla-codemod convert .` at its root) "
                    + _PROJECT_RUN[found.ported],
                )
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        project = self.facts.project
        if original in project.external_training:
            callee, path = project.external_training[original]
            where = f"{path}, which still needs converting" if path else "another module of the project"
            self.ctx.report(
                CROSS_FILE,
                original,
                f"the optimizer goes to `{callee}` in {where}: convert it too (its training loop needs the step "
                "barrier and xm.optimizer_step)",
            )
        elif original in project.external_steps:
            self.ctx.report(
                CROSS_FILE,
                original,
                f"the training step runs in {project.external_steps[original]}: this loop gets the step barrier; "
                "convert that code too (its optimizer step and gradient scaler must become the XLA ones)",
            )
        elif original in project.external_loops:
            self.ctx.report(
                CROSS_FILE,
                original,
                f"`{self.ctx.code(original.func)}` runs a training loop in {project.external_loops[original]}, which "
                "still needs converting: convert it too (its loop needs the step barrier and xm.optimizer_step)",
            )
        elif original in project.external_amp:
            self.ctx.report(
                CROSS_FILE,
                original,
                f"`{self.ctx.code(original.func)}` sets up CUDA mixed precision in {project.external_amp[original]}, "
                "which still needs converting: convert it too (its gradient scaler and autocast must become the XLA ones)",
            )
        elif original in project.hidden_checks:
            star = self.ctx.code(project.hidden_checks[original])
            self.ctx.report(
                CROSS_FILE,
                original,
                f"`{self.ctx.code(original)}` names `torch`, which only `{star}` may bind, and the tool could not read "
                "that module: the CUDA check is left as written, so on an XLA host it is False and the code that branches "
                "on it stays off the XLA device; import torch by name here, or run the tool on the project folder",
            )
        elif original in project.external_devices:
            path = project.external_devices[original]
            if path:
                where, todo = f"{path}, which still needs converting", "convert it too"
            else:  # a single file, or a module that could not be read
                where = "another module of the project that this run does not read"
                todo = "run the tool on the project folder to follow it"
            self.ctx.report(
                CROSS_FILE,
                original,
                f"the device comes from `{self.ctx.code(original.func)}` in {where}: {todo}, and check it returns "
                "the XLA device",
            )
        return updated
