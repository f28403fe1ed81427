"""XLA404 guarded-xla-save: an ``xm.save`` under a rank check hangs on torch_xla 1.13, where it
waits for every process (the sagemaker target); a ``torch.save`` there is XLA401's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

GUARDED_XLA_SAVE = Rule(
    code="XLA404",
    name="guarded-xla-save",
    severity="error",
    summary="An `xm.save` only the master process reaches hangs on torch_xla 1.13 (sagemaker target)",
    fixable=False,
    why="torch_xla 1.13's `xm.save` ends with a rendezvous of every process "
    "(`rendezvous('torch_xla.core.xla_model.save')`), so under a rank check (`if xm.is_master_ordinal():`, "
    "`if rank == 0:`, `if accelerator.is_main_process:`) the master waits for processes that never come. Call "
    "it in every process: it writes from the master only. torch_xla 2.9's `xm.save` has no rendezvous (it "
    "writes on each host's master, checked in its source), so the same code runs there and is not reported.",
    instead="`xm.save(obj, path)` in every process, outside the rank check (it writes from the master only)",
    examples=lambda: (
        invalid(
            """
            import torch_xla.core.xla_model as xm

            if xm.is_master_ordinal():
                xm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            findings=(Expected(4, 5, "`xm.save` under a rank check: in torch_xla 1.13 it waits for every process"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch_xla.core.xla_model as xm

            if xm.is_master_ordinal():
                xm.save(model.state_dict(), "model.pt")
            """,
            note="2.9-save-has-no-rendezvous",
        ),
        valid(
            """
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            note="every-process-saves",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch_xla.core.xla_model as xm


            def checkpoint(rank):
                if rank == 0:
                    xm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            note="rank-zero",
            findings=(Expected(6, 9, "`xm.save` under a rank check"),),
        ),
        invalid(
            """
            import torch_xla.core.xla_model as xmm


            def checkpoint(accelerator):
                if accelerator.is_main_process:
                    xmm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            note="main-process",
            alias=True,
            findings=(Expected(6, 9, "`xmm.save` under a rank check"),),
        ),
    ),
)


@on_facts(GUARDED_XLA_SAVE, nodes=lambda facts: facts.distributed.guarded_saves)
def _report(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """A save only the master reaches (the distributed facts' ``guarded_saves``) that is no
    ``torch.save`` (those are in the checkpoint facts' ``saves``): an xm.save already there."""
    if not ctx.target.save_waits_for_all or original in ctx.facts.checkpoint.saves:
        return updated
    ctx.report(
        GUARDED_XLA_SAVE,
        original,
        f"`{ctx.code(original.func)}` under a rank check: in torch_xla {ctx.target.torch_xla_version} it waits "
        "for every process (a rendezvous), so the master waits forever; call it in every process, outside the "
        "check (it writes from the master only)",
    )
    return updated
