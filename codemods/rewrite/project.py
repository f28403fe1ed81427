"""Other files of the project (XLA003): setup that comes from, or goes to, code defined
in another file is reported; each file is converted on its own terms, so that file must
be converted too."""

from __future__ import annotations

import libcst as cst

from codemods.rewrite.base import Concern


class ProjectRewrite(Concern):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        project = self.facts.project
        if original in project.external_training:
            self.ctx.report(
                "XLA003",
                original,
                f"the optimizer goes to {project.external_training[original]} in another file: convert that file "
                "too (its training loop needs the step barrier and xm.optimizer_step)",
            )
        elif original in project.external_wrappers:
            self.ctx.report(
                "XLA003",
                original,
                f"`{self.ctx.code(original.func)}` takes the loss and the optimizer ({project.external_wrappers[original]}): "
                "it runs the backward pass and the optimizer step, so this loop gets the step barrier; convert the "
                "code that defines it too (its gradient scaler must become the XLA one)",
            )
        elif original in project.external_devices:
            self.ctx.report(
                "XLA003",
                original,
                f"the device comes from {project.external_devices[original]} in another file: "
                "convert that file too, and check it returns the XLA device",
            )
        return updated
