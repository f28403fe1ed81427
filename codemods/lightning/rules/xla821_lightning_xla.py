"""XLA821 lightning-xla: the accelerator, strategy and precision that select CUDA and NCCL take
the names of Lightning's XLA support (lightning/analysis.py says which release they were
checked against and what each value becomes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import of_types, on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

LIGHTNING_XLA = Rule(
    code="XLA821",
    name="lightning-xla",
    severity="error",
    summary="Lightning Trainer and Fabric arguments that select CUDA and NCCL take Lightning's XLA names: accelerator "
    '"tpu", strategy "xla" (Fabric\'s FSDP: "xla_fsdp"), 16-bit and mixed precision "bf16-true"',
    fixable=True,
    why='Lightning 2.6.6 registers its XLA accelerator as "tpu" and its XLA strategies as "xla" (and, in '
    'Fabric, "xla_fsdp"); with accelerator="gpu" and strategy="ddp" it looks for CUDA and NCCL and stops. '
    "On its XLA accelerator Lightning does the XLA work itself (MpDeviceLoader, DistributedSampler, "
    "xm.optimizer_step, step barriers, one process per device), so in a Lightning or Fabric file the tool adds "
    "none of those; device code of the script's own (.cuda(), torch.cuda.*) is ported as anywhere. Lightning's "
    'XLAPrecision takes 32-true, 16-true or bf16-true and raises on mixed precision ("16-mixed", '
    '"bf16-mixed"): 16-bit training becomes "bf16-true" (XLA_USE_BF16), the precision XLA devices compute '
    "in. The values are changed where they "
    "are written: in the call, in a name bound once, or in an argparse flag's default. A value picked by a CUDA "
    'availability check (`"gpu" if torch.cuda.is_available() else "cpu"`, False on XLA, where it would pick the '
    'CPU) becomes the XLA form of its CUDA branch as a whole (`"tpu"`), in one run; the check is not folded to '
    '"gpu", which Lightning reads as CUDA.',
    examples=lambda: (
        invalid(
            """
        import lightning as L

        trainer = L.Trainer(accelerator="gpu", devices=8, strategy="ddp", precision="16-mixed")
        """,
            """
        import lightning as L

        trainer = L.Trainer(accelerator="tpu", devices=8, strategy="xla", precision="bf16-true")
        """,
            findings=(
                Expected(3, 33, 'Trainer accelerator "gpu" -> "tpu"'),
                Expected(3, 60, 'Trainer strategy "ddp" -> "xla"'),
                Expected(3, 77, 'Trainer precision "16-mixed" -> "bf16-true"'),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import lightning as L

            trainer = L.Trainer(accelerator="tpu", devices=8, strategy="xla", precision="bf16-true")
            """,
            note="already-xla",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import lightning as L

            trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", precision="16-mixed")
            """,
            """
            import lightning as L

            trainer = L.Trainer(accelerator="tpu", devices=4, strategy="xla", precision="bf16-true")
            """,
            note="trainer",
            findings=(
                Expected(3, 33, 'Trainer accelerator "gpu" -> "tpu"'),
                Expected(3, 60, 'Trainer strategy "ddp" -> "xla"'),
                Expected(3, 77, 'Trainer precision "16-mixed" -> "bf16-true"'),
            ),
        ),
        invalid(
            """
            import argparse

            import torch
            from lightning.fabric import Fabric

            parser = argparse.ArgumentParser()
            parser.add_argument("--accelerator", default="cuda")
            args = parser.parse_args()
            STRATEGY = "fsdp"


            def train(model, optimizer, loader):
                fabric = Fabric(accelerator=args.accelerator, strategy=STRATEGY, precision=16)
                model, optimizer = fabric.setup(model, optimizer)
                for x, y in fabric.setup_dataloaders(loader):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    fabric.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            """
            import argparse

            import torch
            from lightning.fabric import Fabric

            parser = argparse.ArgumentParser()
            parser.add_argument("--accelerator", default="tpu")
            args = parser.parse_args()
            STRATEGY = "xla_fsdp"


            def train(model, optimizer, loader):
                fabric = Fabric(accelerator=args.accelerator, strategy=STRATEGY, precision="bf16-true")
                model, optimizer = fabric.setup(model, optimizer)
                for x, y in fabric.setup_dataloaders(loader):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    fabric.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="fabric-flag-and-name",
            findings=(
                Expected(
                    7, 46, 'Fabric accelerator "cuda" -> "tpu" (`args.accelerator`, given to Fabric\'s accelerator)'
                ),
                Expected(9, 12, 'Fabric strategy "fsdp" -> "xla_fsdp" (`STRATEGY`, given to Fabric\'s strategy)'),
                Expected(13, 80, 'Fabric precision 16 -> "bf16-true"'),
            ),
        ),
        # The flag's default is changed; a launcher that passes `--accelerator gpu` over it is
        # XLA822's (tests/project/test_lightning_launchers.py).
        invalid(
            """
            import argparse

            import lightning as L

            parser = argparse.ArgumentParser()
            parser.add_argument("--accelerator", type=str, default="gpu")
            args = parser.parse_args()
            trainer = L.Trainer(accelerator=args.accelerator, devices=1)
            """,
            """
            import argparse

            import lightning as L

            parser = argparse.ArgumentParser()
            parser.add_argument("--accelerator", type=str, default="tpu")
            args = parser.parse_args()
            trainer = L.Trainer(accelerator=args.accelerator, devices=1)
            """,
            note="trainer-flag",
            findings=(
                Expected(
                    6, 56, 'Trainer accelerator "gpu" -> "tpu" (`args.accelerator`, given to Trainer\'s accelerator)'
                ),
            ),
        ),
        invalid(
            """
            import pytorch_lightning as pl
            import torch


            class Model(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    opt = self.optimizers()
                    loss = self(batch).sum()
                    self.manual_backward(loss)
                    opt.step()
                    return loss


            trainer = pl.Trainer(accelerator="cuda", strategy="ddp_find_unused_parameters_true")
            """,
            """
            import pytorch_lightning as pl
            import torch


            class Model(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    opt = self.optimizers()
                    loss = self(batch).sum()
                    self.manual_backward(loss)
                    opt.step()
                    return loss


            trainer = pl.Trainer(accelerator="tpu", strategy="xla")
            """,
            note="pytorch-lightning",
            alias=True,
            findings=(
                Expected(14, 34, 'Trainer accelerator "cuda" -> "tpu"'),
                Expected(14, 50, 'Trainer strategy "ddp_find_unused_parameters_true" -> "xla"'),
            ),
        ),
        invalid(
            """
            import torch
            from lightning.fabric import Fabric


            def make(args):
                return Fabric(accelerator="cuda" if args.gpu else "cpu", strategy="ddp_spawn")
            """,
            """
            import torch
            from lightning.fabric import Fabric


            def make(args):
                return Fabric(accelerator="tpu" if args.gpu else "cpu", strategy="xla")
            """,
            note="flag-choice",
            findings=(
                Expected(6, 31, 'Fabric accelerator "cuda" -> "tpu"'),
                Expected(6, 70, 'Fabric strategy "ddp_spawn" -> "xla"'),
            ),
        ),
        # A choice by an availability check is ported whole, in one run: the device concern
        # leaves it to this rule (folded to "gpu" first, it came out "tpu" only on a second run).
        invalid(
            """
            import pytorch_lightning as pl
            import torch

            ACC = "cuda" if torch.cuda.is_available() else "cpu"
            trainer = pl.Trainer(accelerator="gpu" if torch.cuda.is_available() else "cpu", strategy="ddp")
            other = pl.Trainer(accelerator=ACC)
            """,
            """
            import pytorch_lightning as pl
            import torch

            ACC = "tpu"
            trainer = pl.Trainer(accelerator="tpu", strategy="xla")
            other = pl.Trainer(accelerator=ACC)
            """,
            note="availability-choice",
            alias=True,
            findings=(
                Expected(4, 7, 'Trainer accelerator "cuda" if torch.cuda.is_available() else "cpu" -> "tpu"'),
                Expected(5, 34, 'Trainer accelerator "gpu" if torch.cuda.is_available() else "cpu" -> "tpu"'),
                Expected(5, 50, 'Trainer strategy "ddp" -> "xla"'),
            ),
        ),
        invalid(
            """
            from lightning.pytorch.core import LightningModule
            from lightning.pytorch.trainer import Trainer


            class GAN(LightningModule):
                def training_step(self, batch):
                    opt_g, opt_d = self.optimizers()
                    self.manual_backward(self(batch).sum())
                    opt_g.step()


            trainer = Trainer(accelerator="gpu", devices=2)
            """,
            """
            from lightning.pytorch.core import LightningModule
            from lightning.pytorch.trainer import Trainer


            class GAN(LightningModule):
                def training_step(self, batch):
                    opt_g, opt_d = self.optimizers()
                    self.manual_backward(self(batch).sum())
                    opt_g.step()


            trainer = Trainer(accelerator="tpu", devices=2)
            """,
            note="module-paths",
            alias=True,
            findings=(Expected(12, 31, 'Trainer accelerator "gpu" -> "tpu"'),),
        ),
        invalid(
            """
            import lightning as L

            CONFIG = {"accelerator": "gpu", "devices": 4, "strategy": "ddp", "precision": "16-mixed"}


            def main(model):
                trainer = L.Trainer(**CONFIG, max_epochs=3)
                trainer.fit(model)
            """,
            """
            import lightning as L

            CONFIG = {"accelerator": "tpu", "devices": 4, "strategy": "xla", "precision": "bf16-true"}


            def main(model):
                trainer = L.Trainer(**CONFIG, max_epochs=3)
                trainer.fit(model)
            """,
            note="config-dict",
            findings=(
                Expected(3, 26, 'Trainer accelerator "gpu" -> "tpu" (`CONFIG`, given to Trainer\'s accelerator)'),
                Expected(3, 59, 'Trainer strategy "ddp" -> "xla" (`CONFIG`, given to Trainer\'s strategy)'),
                Expected(
                    3, 79, 'Trainer precision "16-mixed" -> "bf16-true" (`CONFIG`, given to Trainer\'s precision)'
                ),
            ),
        ),
    ),
)

# What each setting's XLA value does.
_WHAT = {
    "accelerator": "Lightning's XLA accelerator",
    "strategy": "one process per XLA device",
    "precision": "Lightning's XLA precision takes no mixed precision; bf16-true runs in bfloat16 (XLA_USE_BF16), "
    "the precision XLA devices compute in",
}
# The literal values it rewrites, by node type (the settings the analysis records).
# (and the conditionals that pick one by a CUDA availability check: ``Setting.chosen``).
LITERALS = "SimpleString Integer IfExp"


@on_facts(LIGHTNING_XLA, nodes=lambda facts: of_types(facts.lightning.settings, LITERALS))
def _to_xla_name(ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
    """A setting with an XLA form, on a target whose Lightning names the tool knows (the
    others are XLA822's)."""
    import libcst as cst

    from codemods.engine.nodes import quoted_like

    setting = ctx.facts.lightning.settings[original]
    new_value = setting.new
    if new_value is None or not ctx.target.lightning_xla_names:
        return updated
    owner = "Trainer" if setting.kind == "trainer" else "Fabric"
    source = f" (`{setting.source}`, given to {owner}'s {setting.parameter})" if setting.source else ""
    if setting.chosen:
        source += (
            f" (a choice by an availability check, which is False on XLA: the whole takes the XLA form of its CUDA "
            f"branch {setting.chosen})"
        )
    leaves = (original.body, original.orelse) if isinstance(original, cst.IfExp) else (original,)
    template = next((leaf for leaf in leaves if isinstance(leaf, cst.SimpleString)), cst.SimpleString('""'))

    def build() -> cst.BaseExpression:
        return quoted_like(template, new_value)

    return ctx.fix_or_keep(
        updated,
        LIGHTNING_XLA,
        original,
        f"{owner} {setting.parameter} {ctx.code(original)} -> {{new}}{source}: {_WHAT[setting.parameter]}",
        build,
    )
