"""XLA821-XLA822: Lightning and Fabric (rewrite.py; names checked against
Lightning 2.6.6)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
    "are written: in the call, in a name bound once, or in an argparse flag's default.",
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

LIGHTNING_MANUAL = Rule(
    code="XLA822",
    name="lightning-manual",
    severity="error",
    summary="Lightning settings with no XLA form (DeepSpeed, DataParallel, the Trainer's FSDP, Transformer Engine) or "
    "that the tool cannot follow",
    fixable=False,
    why="Lightning raises on them with its XLA accelerator, or they keep selecting CUDA: choose the XLA "
    "strategy and precision by hand. The Trainer arguments Lightning 2 removed (`gpus=`, `tpu_cores=`, "
    "`distributed_backend=`...) are reported with advice in the terms of the API the call is written for: a "
    "call that passes arguments only Lightning 0.x takes (`early_stop_callback=`, `distributed_backend=`, "
    "`train_percent_check=`...) gets Lightning 0.7's TPU switch, `num_tpu_cores=` (`tpu_cores=` from 0.8), as "
    "that Trainer has no accelerator=; any other gets Lightning 1.5's and 2's accelerator=\"tpu\" and devices=.",
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
        *(
            invalid(
                """
                from pytorch_lightning import Trainer


                def main(hparams, system):
                    trainer = Trainer(
                        max_epochs=hparams.num_epochs,
                        early_stop_callback=None,
                        gpus=hparams.num_gpus,
                        distributed_backend="ddp" if hparams.num_gpus > 1 else None,
                    )
                    trainer.fit(system)
                """,
                target=target,
                note=f"lightning-0-{target}",
                findings=(
                    Expected(
                        8,
                        9,
                        "`gpus=`: this Trainer call is written for Lightning 0.x (`early_stop_callback=`, "
                        "`distributed_backend=`), whose Trainer has no accelerator= or devices=",
                    ),
                    Expected(9, 9, "pass `num_tpu_cores=8` (or 1; Lightning 0.7's TPU switch, `tpu_cores=` from 0.8)"),
                ),
            )
            for target in ("2.9", "sagemaker")
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

RULES = (LIGHTNING_XLA, LIGHTNING_MANUAL)
