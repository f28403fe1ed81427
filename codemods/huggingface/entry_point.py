"""Entry point (XLA803): Hugging Face Trainer scripts get ``def _mp_fn(index): main()``
right after ``main`` when they have none: SageMaker's pytorchxla launcher (and
``torch_xla.launch``) starts each process by calling it.  One-device runs never do,
so the script runs as before."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.distributed.entry import ENTRY_FUNCTION
from codemods.engine.rewriter import Concern, Context
from codemods.huggingface.rules.xla803_mp_fn_entry_point import MP_FN_ENTRY_POINT

if TYPE_CHECKING:
    from codemods.facts import Facts


class EntryRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        ctx.track([self.facts.entry.main])

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        entry = self.facts.entry
        if not self.facts.huggingface.trainer_script or entry.mp_fn is not None:
            return updated
        if entry.main is None:
            self.ctx.report(
                MP_FN_ENTRY_POINT,
                self.facts.huggingface.trainers[0],
                f"no `main()` to call: add `def {ENTRY_FUNCTION}(index):` that runs the training, for the "
                "distributed XLA launchers",
            )
            return updated
        main = self.ctx.result_of(entry.main)
        body = list(updated.body)
        if main not in body:
            return updated
        function = cst.parse_statement(f"def {ENTRY_FUNCTION}(index):\n    main()\n")
        function = function.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        new = self.ctx.fix(
            MP_FN_ENTRY_POINT,
            entry.main,
            f"`def {ENTRY_FUNCTION}(index): main()` added: the distributed XLA launchers call it in each process",
            lambda: function,
            result=lambda node: node,
        )
        if new is None:
            return updated
        body.insert(body.index(main) + 1, new)  # type: ignore[arg-type]  # main is an item of body (checked above) and new the FunctionDef parsed above: typed CSTNode and BaseStatement
        return updated.with_changes(body=body)
