"""XLA822 lightning-manual: Lightning settings with no XLA form, or that the tool cannot follow
(computed values, Lightning 1.x arguments), are reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import of_types, on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.lightning.rules.xla821_lightning_xla import LITERALS

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

LIGHTNING_MANUAL = Rule(
    code="XLA822",
    name="lightning-manual",
    severity="error",
    summary="Lightning settings with no XLA form (DeepSpeed, DataParallel, the Trainer's FSDP, Transformer Engine) or "
    "that the tool cannot follow",
    fixable=False,
    why="Lightning raises on them with its XLA accelerator, or they keep selecting CUDA: choose the XLA "
    "strategy and precision by hand.",
    examples=lambda: (
        invalid(
            """
        import lightning as L

        trainer = L.Trainer(accelerator="tpu", strategy="deepspeed_stage_2")
        """,
            findings=(Expected(3, 49, 'Trainer(strategy="deepspeed_stage_2") has no XLA form'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import lightning as L

            trainer = L.Trainer(accelerator="auto", devices="auto")
            """,
            note="auto",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import lightning as L

            trainer = L.Trainer(accelerator="gpu", strategy="deepspeed_stage_2", precision="transformer-engine")
            """,
            """
            import lightning as L

            trainer = L.Trainer(accelerator="tpu", strategy="deepspeed_stage_2", precision="transformer-engine")
            """,
            note="no-xla-form",
            findings=(
                Expected(3, 49, 'Trainer(strategy="deepspeed_stage_2") has no XLA form'),
                Expected(3, 80, 'Trainer(precision="transformer-engine") has no XLA form'),
            ),
        ),
        invalid(
            """
            from lightning.pytorch import Trainer


            def fit(model, config):
                trainer = Trainer(strategy=config["strategy"])
                trainer.fit(model)
            """,
            note="computed",
            alias=True,
            findings=(Expected(5, 23, '`strategy=config["strategy"]`'),),
        ),
        invalid(
            """
            import pytorch_lightning as pl

            trainer = pl.Trainer(gpus=4, precision=16)
            """,
            """
            import pytorch_lightning as pl

            trainer = pl.Trainer(gpus=4, precision="bf16-true")
            """,
            note="lightning-1",
            findings=(Expected(3, 22, "`gpus=` is Lightning 1.x's (Lightning 2 raises on it)"),),
        ),
        invalid(
            """
            import lightning as L

            trainer = L.Trainer(accelerator="gpu", strategy="ddp")
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(
                Expected(3, 33, 'Trainer(accelerator="gpu") is a CUDA setting'),
                Expected(3, 49, 'Trainer(strategy="ddp") is a CUDA setting'),
            ),
        ),
    ),
)


@on_facts(LIGHTNING_MANUAL, nodes=lambda facts: of_types(facts.lightning.settings, LITERALS))
def _no_xla_form(ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
    """A setting with no XLA form, or one whose XLA form the tool does not know for the target."""
    setting = ctx.facts.lightning.settings[original]
    target = ctx.target
    if setting.new is not None and target.lightning_xla_names:
        return updated  # XLA821's
    owner = "Trainer" if setting.kind == "trainer" else "Fabric"
    source = f" (`{setting.source}`, given to {owner}'s {setting.parameter})" if setting.source else ""
    setting_code = f"{owner}({setting.parameter}={ctx.code(original)}){source}"
    if setting.new is None:
        ctx.report(LIGHTNING_MANUAL, original, f"{setting_code} has no XLA form: {setting.why}")
    else:
        ctx.report(
            LIGHTNING_MANUAL,
            original,
            f"{setting_code} is a CUDA setting: set the XLA one of the Lightning release that goes with torch_xla "
            f"{target.torch_xla_version} by hand (the tool knows Lightning 2.6.6's, for torch_xla 2.9)",
        )
    return updated


@on_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.legacy)
def _legacy(ctx: Context[Facts], original: cst.Arg, updated: cst.Arg) -> cst.Arg:
    name = original.keyword.value  # type: ignore[union-attr]  # the analysis records legacy keyword arguments only: keyword is not None
    ctx.report(
        LIGHTNING_MANUAL,
        original,
        f'`{name}=` is Lightning 1.x\'s (Lightning 2 raises on it): on XLA pass accelerator="tpu" and '
        "devices= the number of XLA devices",
    )
    return updated


@on_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.unknown)
def _unknown(ctx: Context[Facts], original: cst.Arg, updated: cst.Arg) -> cst.Arg:
    ctx.report(
        LIGHTNING_MANUAL,
        original,
        f"`{ctx.code(original).rstrip(',')}`: the tool cannot tell which {ctx.facts.lightning.unknown[original]} this "
        'selects; on XLA Lightning takes accelerator="tpu", strategy="xla" (Fabric: "xla_fsdp" too) and precision '
        '"32-true" or "bf16-true"',
    )
    return updated
