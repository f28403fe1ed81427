"""What the rules of the device obligations share: where a proof broke (device/obligations.py:
the stepped model and each batch on the XLA device), the rule it broke says so (XLA111, XLA112,
XLA115, XLA116, XLA121), with what the obligations found, as the rewrite leaves the module.  What it
says is that rule module's: its message functions, which the obligations call with the names
and places they found."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_nodes

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.engine.rule import Rule
    from codemods.facts import Facts


def reports_broken_proofs(rule: Rule) -> None:
    """``rule``'s hook on the module: each proof that broke with ``rule`` is reported at the node
    the obligations name (one of a module that reaches the XLA device only through torch_xla's
    FSDP where the target ports FSDP), in the order the obligations found them."""

    @on_nodes(rule, types="Module")
    def report(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
        if ctx.facts.distributed.hogwild is not None:
            return updated  # a Hogwild script is only reported (concerns.py): it keeps its devices
        obligations = ctx.facts.obligations
        sharded = obligations.broken_if_sharded.items() if "fsdp" in ctx.target.apis else ()
        for node, (broken, message) in (*obligations.broken.items(), *sharded):
            if broken is rule:
                ctx.report(rule, node, ctx.target.advice(message))
        return updated


def stepped_model(model: str, optimizer: str) -> str:
    """How the findings of obligation (1) name the model (XLA111, XLA112, XLA115)."""
    return f"`{model}`, whose parameters `{optimizer}` steps,"


def broken_proof(goes: str, comes_from: str, advice: str, *, which: bool = True) -> str:
    """How a finding of a broken proof reads (XLA111, XLA116, XLA121): what goes where (``goes``:
    ```x` goes to `device```, ```batch` reaches `model` (on the XLA device) on the CPU``), where that
    comes from (``comes_from``) and what to do (``advice``).  A device value is said to be one that
    ``comes_from`` (``..., which comes from ...: advice``); a batch, after a colon (``...: comes_from;
    advice``)."""
    if which:
        return f"{goes}, which {comes_from}: {advice}"
    return f"{goes}: {comes_from}; {advice}"
