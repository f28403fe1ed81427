"""XLA822 lightning-manual: Lightning settings with no XLA form, or that the tool cannot follow
(computed values, Lightning 1.x arguments), are reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import of_types, on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.lightning.rules.prebuilt_optimizer_cases import prebuilt_optimizer_invalid, prebuilt_optimizer_valid
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
    "that the tool cannot follow, and optimizers built before Lightning moves the module",
    fixable=False,
    why="Lightning raises on them with its XLA accelerator, or they keep selecting CUDA: choose the XLA "
    "strategy and precision by hand. The Trainer arguments Lightning 2 removed (`gpus=`, `tpu_cores=`, "
    "`distributed_backend=`...) are reported with advice in the terms of the API the call is written for: a "
    "call that passes arguments only Lightning 0.x takes (`early_stop_callback=`, `distributed_backend=`, "
    "`train_percent_check=`...) gets Lightning 0.7's TPU switch, `num_tpu_cores=` (`tpu_cores=` from 0.8), as "
    "that Trainer has no accelerator=; any other gets Lightning 1.5's and 2's accelerator=\"tpu\" and devices=. "
    "`Trainer.from_argparse_args(args)` (Lightning 1.x; Lightning 2 removed it) without an `accelerator=` of its own "
    "takes the accelerator from the command line: the launch must pass `--accelerator tpu` (the launcher scripts "
    "that name the file and pass an accelerator are named: those in its folder, the project's root and the `scripts/` folder of each). "
    "When those arguments come from a dict the script edits (`opt = argparse.Namespace(**config)` after "
    '`config["accelerator"] = "ddp"` and `del config["accelerator"]` unless `--gpus` is given), the command line\'s '
    "accelerator does not reach the Trainer: the finding names the edits, and the script must set the accelerator "
    'to "tpu" after them. '
    "An optimizer built over a module's parameters before Lightning moves the module (`opt = "
    "Adam(model.parameters()); System(model, opt)`) and returned by the LightningModule's `configure_optimizers` "
    "(`return self.optimizer`, the class in the file or in another module of the project) is reported where it is "
    "built: on XLA moving a module makes new Parameter objects (on CUDA it keeps them) and Lightning moves only the "
    "optimizer's state, so the optimizer steps the old CPU tensors and the XLA weights never change; build it in "
    "`configure_optimizers` from `self.parameters()`. The class may keep it through a tuple or list assignment "
    "(`self.net, self.opt = net, opt`). A module the script moves itself first (`net.cuda()`, or where it is "
    "built: `net = Net().cuda()`) is not reported. "
    "A LightningModule's `training_step(self, batch, batch_idx, optimizer_idx)` is Lightning 1.x's automatic "
    "optimization over several optimizers, which Lightning 2 refuses when `fit` starts: it is reported at the "
    "parameter for torch_xla 2.9 (torch_xla 1.13 goes with Lightning 1.x, which takes it).",
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
        *prebuilt_optimizer_valid(),
        valid(
            """
            import torch
            import lightning as L


            class GAN(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.automatic_optimization = False

                def training_step(self, batch, batch_idx):
                    opt_g, opt_d = self.optimizers()


            class Helper:
                def training_step(self, batch, batch_idx, optimizer_idx):
                    return batch
            """,
            note="manual optimization, and a training_step of a class that is no LightningModule",
        ),
        valid(
            """
            import pytorch_lightning as pl


            class VQModel(pl.LightningModule):
                def training_step(self, batch, batch_idx, optimizer_idx):
                    return batch
            """,
            target="sagemaker",
            note="optimizer_idx on sagemaker: torch_xla 1.13 goes with Lightning 1.x, which takes it",
        ),
        valid(
            """
            import lightning as L

            trainer = L.Trainer(accelerator="auto", devices="auto")
            """,
            note="auto",
        ),
        valid(
            """
            from argparse import ArgumentParser

            from pytorch_lightning import Trainer

            parser = Trainer.add_argparse_args(ArgumentParser())
            trainer = Trainer.from_argparse_args(parser.parse_args(), accelerator="tpu", precision="bf16-true")
            """,
            note="argparse-trainer-with-its-accelerator-set",
        ),
        # The optimizer is built from the module's own parameters when Lightning asks for it
        # (after the move), or over a module the script moved itself first (moved again, it is kept).
        valid(
            """
            import pytorch_lightning as pl
            import torch


            class System(pl.LightningModule):
                def __init__(self, model, lr):
                    super().__init__()
                    self.model, self.lr = model, lr

                def configure_optimizers(self):
                    return torch.optim.Adam(self.parameters(), lr=self.lr)


            class Held(pl.LightningModule):
                def __init__(self, model, optimizer):
                    super().__init__()
                    self.model, self.optimizer = model, optimizer

                def configure_optimizers(self):
                    return self.optimizer


            def main(device):
                model = torch.nn.Linear(2, 2)
                System(model, 1e-3)
                model.to(device)
                Held(model, torch.optim.SGD(model.parameters(), lr=0.1))
            """,
            note="optimizer-built-after-the-move",
        ),
    ),
    invalid=lambda: (
        *prebuilt_optimizer_invalid(),
        invalid(
            """
            import pytorch_lightning as pl


            class VQModel(pl.LightningModule):
                def training_step(self, batch, batch_idx, optimizer_idx):
                    return batch
            """,
            note="a training_step taking optimizer_idx (Lightning 1.x, several optimizers)",
            findings=(
                Expected(
                    5,
                    47,
                    "`VQModel.training_step` takes `optimizer_idx`: Lightning 1.x's automatic optimization over "
                    "several optimizers, which Lightning 2 (the release that goes with torch_xla 2.9) refuses at fit",
                ),
            ),
        ),
        invalid(
            """
            from lightning.pytorch import LightningModule as Module


            class VQModel(Module):
                def training_step(self, batch, batch_idx, optimizer_idx=0):
                    return batch
            """,
            alias=True,
            note="a training_step taking optimizer_idx, through an alias",
            findings=(Expected(5, 47, "refuses at fit"),),
        ),
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
        *(
            invalid(
                """
                from argparse import ArgumentParser

                from pytorch_lightning import Trainer

                parser = ArgumentParser()
                parser.add_argument("--micro_bsz", default=4, type=int)
                parser = Trainer.add_argparse_args(parser)
                args = parser.parse_args()
                trainer = Trainer.from_argparse_args(args)
                """,
                note=f"argparse-trainer-{target}",
                target=target,
                findings=(
                    Expected(
                        9,
                        11,
                        "`Trainer.from_argparse_args(args)` takes the Trainer's accelerator, devices and precision from "
                        "the command line (no launcher script that names it passes `--accelerator`): on XLA the launch must "
                        "pass `--accelerator tpu`",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        # An optimizer built over the module's parameters before Lightning moves the module, and
        # returned by configure_optimizers: on XLA the move makes new Parameters (issue 32, O2).
        *(
            invalid(
                """
                import pytorch_lightning as pl
                import torch


                class System(pl.LightningModule):
                    def __init__(self, model, optimizer):
                        super().__init__()
                        self.model, self.opt = model, optimizer
                        self.optimizer = optimizer

                    def training_step(self, batch, batch_idx):
                        return self.model(batch).sum()

                    def configure_optimizers(self):
                        return self.optimizer


                def main(loader):
                    model = torch.nn.Linear(2, 2)
                    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
                    pl.Trainer(max_epochs=1).fit(System(model, optimizer=opt), loader)
                """,
                note=f"prebuilt-optimizer-{target}",
                target=target,
                findings=(
                    Expected(
                        20,
                        11,
                        "`torch.optim.Adam(model.parameters(), lr=1e-3)` builds the optimizer that "
                        "`System.configure_optimizers` returns (`self.optimizer`) over the module's parameters before "
                        "Lightning moves the module to the device: on XLA that move makes new Parameter objects",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            from lightning import LightningModule
            from torch.optim import SGD


            class Wrapped(LightningModule):
                def __init__(self, net, opt):
                    super().__init__()
                    self.net = net
                    self.held = opt

                def configure_optimizers(self):
                    return {"optimizer": self.held}


            def build(net):
                return Wrapped(net, SGD(net.parameters(), lr=0.1))
            """,
            note="prebuilt-optimizer-inline",
            alias=True,
            findings=(Expected(16, 25, "`SGD(net.parameters(), lr=0.1)` builds the optimizer that"),),
        ),
        # The Trainer's arguments come from a dict the script edits: a `--accelerator tpu` on the
        # command line is dropped there, so the advice names the edits (latent-diffusion's shape).
        *(
            invalid(
                """
                import argparse

                import pytorch_lightning as pl


                def main(opt, cfg):
                    cfg["accelerator"] = "ddp"
                    cfg.update(vars(opt))
                    if "gpus" not in cfg:
                        del cfg["accelerator"]
                    trainer_opt = argparse.Namespace(**cfg)
                    return pl.Trainer.from_argparse_args(trainer_opt)
                """,
                note=f"argparse-trainer-edited-dict-{target}",
                target=target,
                alias=True,
                findings=(
                    Expected(
                        12,
                        12,
                        "takes the Trainer's accelerator, devices and precision from `cfg`, which the script edits (no "
                        'launcher script that names it passes `--accelerator`): `cfg["accelerator"] = "ddp"`, then `del '
                        'cfg["accelerator"]` (when `"gpus" not in cfg`); so a `--accelerator tpu` on the command line '
                        'does not reach the Trainer: on XLA make the script set `cfg["accelerator"] = "tpu"` after those '
                        "edits",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import argparse

            from pytorch_lightning import Trainer


            def main(cfg):
                cfg["max_epochs"] = 3
                return Trainer.from_argparse_args(argparse.Namespace(**cfg))
            """,
            note="argparse-trainer-dict-not-edited",
            findings=(
                Expected(
                    8,
                    12,
                    "from the command line (no launcher script that names it passes `--accelerator`): on XLA the launch must pass `--accelerator tpu`",
                ),
            ),
        ),
        invalid(
            """
            import pytorch_lightning as pl


            def main(args):
                trainer = pl.Trainer.from_argparse_args(args, strategy="ddp")
                trainer.fit(model)
            """,
            """
            import pytorch_lightning as pl


            def main(args):
                trainer = pl.Trainer.from_argparse_args(args, strategy="xla")
                trainer.fit(model)
            """,
            alias=True,
            note="argparse-trainer-through-an-alias-with-overrides",
            findings=(Expected(5, 15, '`pl.Trainer.from_argparse_args(args, strategy="ddp")` takes the Trainer\'s'),),
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
            import argparse

            import lightning as L

            parser = argparse.ArgumentParser()
            parser.add_argument("--accelerator", type=str, default="gpu")
            args = parser.parse_args()
            trainer = L.Trainer(accelerator=args.accelerator, devices=1)
            """,
            target="sagemaker",
            note="trainer-flag-sagemaker",
            findings=(
                Expected(
                    6,
                    56,
                    'Trainer(accelerator="gpu") (`args.accelerator`, given to Trainer\'s accelerator) is a CUDA setting',
                ),
            ),
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
        # The choice is left whole where the tool does not know the Lightning names: the
        # device concern does not fold it to "gpu" (Lightning's CUDA accelerator).
        invalid(
            """
            import lightning as L
            import torch

            trainer = L.Trainer(accelerator="gpu" if torch.cuda.is_available() else "cpu")
            """,
            target="sagemaker",
            note="sagemaker-availability-choice",
            findings=(
                Expected(4, 33, 'Trainer(accelerator="gpu" if torch.cuda.is_available() else "cpu") is a CUDA setting'),
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


@reports_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.legacy)
def _legacy(ctx: Context[Facts], original: cst.Arg) -> str:
    """A Trainer argument Lightning 2 removed, with advice in the terms of the API the call is
    written for: Lightning 0.x (it passes arguments only 0.x takes), else 1.x."""
    assert original.keyword is not None  # the analysis records legacy keyword arguments only
    name = original.keyword.value
    old = ctx.facts.lightning.legacy[original]
    if old:
        shows = ", ".join(f"`{k}=`" for k in old)
        message = (
            f"`{name}=`: this Trainer call is written for Lightning 0.x ({shows}), whose Trainer has no "
            "accelerator= or devices= (on an XLA host `gpus=` leaves the training on the CPU): drop `gpus=` and "
            "`distributed_backend=` and pass `num_tpu_cores=8` (or 1; Lightning 0.7's TPU switch, `tpu_cores=` "
            "from 0.8): Lightning then starts one process per TPU core itself"
        )
    else:
        message = (
            f'`{name}=` is Lightning 1.x\'s (Lightning 2 raises on it): on XLA pass accelerator="tpu" and '
            "devices= the number of XLA devices (Lightning 1.5 and later; on any 1.x `tpu_cores=` does it too)"
        )
    return message


@on_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.optimizer_indices)
def _optimizer_index(ctx: Context[Facts], original: cst.Param, updated: cst.Param) -> cst.Param:
    """Only where the target's torch_xla goes with Lightning 2 (torch_xla 1.13 goes with 1.x,
    which takes ``optimizer_idx``)."""
    if not ctx.target.torch_xla_version.startswith("1."):
        ctx.report(
            LIGHTNING_MANUAL,
            original,
            f"`{ctx.facts.lightning.optimizer_indices[original]}.training_step` takes `optimizer_idx`: Lightning "
            f"1.x's automatic optimization over several optimizers, which Lightning 2 (the release that goes with "
            f"torch_xla {ctx.target.torch_xla_version}) refuses at fit (RuntimeError: training with multiple "
            "optimizers is only supported with manual optimization); set `self.automatic_optimization = False` and "
            "step each optimizer of `self.optimizers()` in `training_step`",
        )
    return updated


@reports_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.unknown)
def _unknown(ctx: Context[Facts], original: cst.Arg) -> str:
    return (
        f"`{ctx.code(original).rstrip(',')}`: the tool cannot tell which {ctx.facts.lightning.unknown[original]} this "
        'selects; on XLA Lightning takes accelerator="tpu", strategy="xla" (Fabric: "xla_fsdp" too) and precision '
        '"32-true" or "bf16-true"'
    )


@reports_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.prebuilt_optimizers)
def _prebuilt_optimizer(ctx: Context[Facts], original: cst.Call) -> str:
    """An optimizer built before Lightning moves the module, that the module returns from
    ``configure_optimizers``: on XLA it keeps the CPU parameters."""
    name, attr = ctx.facts.lightning.prebuilt_optimizers[original]
    return (
        f"`{ctx.code(original)}` builds the optimizer that `{name}.configure_optimizers` returns (`{attr}`) over the "
        "module's parameters before Lightning moves the module to the device: on XLA that move makes new Parameter "
        "objects (on CUDA it keeps them), so the optimizer steps the old CPU tensors and the XLA weights never change; "
        f"build the optimizer in `{name}.configure_optimizers` from `self.parameters()`"
    )


@reports_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.from_command_line)
def _from_command_line(ctx: Context[Facts], original: cst.Call) -> str:
    """``Trainer.from_argparse_args(args)``: the accelerator is the launch's to choose; the
    launchers that name the file and pass one are named."""
    launched = ctx.facts.lightning.from_command_line[original]
    passed = "; ".join(f"{path} passes `{flags}`" for path, flags in launched)
    source = f" ({passed})" if passed else " (no launcher script that names it passes `--accelerator`)"
    lightning_2 = (
        ' and a precision Lightning 2 takes there ("32-true" or "bf16-true"); and `Trainer.from_argparse_args` is '
        f"Lightning 1.x's: Lightning 2, the release that goes with torch_xla {ctx.target.torch_xla_version}, removed "
        "it and `Trainer.add_argparse_args` (build `Trainer(accelerator=args.accelerator, ...)` from flags of your own)"
        if ctx.target.lightning_xla_names
        else ""
    )
    edited = ctx.facts.lightning.edited_accelerator.get(original)
    if edited is not None:
        config, edits = edited
        return (
            f"`{ctx.code(original)}` takes the Trainer's accelerator, devices and precision from `{config}`, which the "
            f"script edits{source}: {', then '.join(edits)}; so a `--accelerator tpu` "
            f'on the command line does not reach the Trainer: on XLA make the script set `{config}["accelerator"] = '
            f'"tpu"` after those edits (Lightning\'s XLA accelerator; a CUDA one raises there){lightning_2}'
        )
    return (
        f"`{ctx.code(original)}` takes the Trainer's accelerator, devices and precision from the command line"
        f"{source}: on XLA the launch must pass `--accelerator tpu` (Lightning's XLA accelerator; a CUDA one raises "
        f"there){lightning_2}"
    )


# What a launch passes on XLA, by parameter (Lightning 2.6.6's names; analysis.py).
_XLA_VALUES = {
    "accelerator": "`tpu` (Lightning's XLA accelerator)",
    "strategy": "`xla` (Fabric's FSDP: `xla_fsdp`)",
    "precision": "`bf16-true` or `32-true` (Lightning's XLAPrecision takes no mixed precision)",
}


@reports_facts(LIGHTNING_MANUAL, nodes=lambda facts: facts.lightning.launched)
def _launched_over(ctx: Context[Facts], original: cst.Arg) -> str:
    """``Trainer(accelerator=args.accelerator)``: the flag's default is the port's to change, but
    a launcher that names the file passes a CUDA value over it."""
    launched = ctx.facts.lightning.launched[original]
    assert original.keyword is not None  # the analysis records keyword arguments only
    parameter = original.keyword.value
    passed = "; ".join(f"{path} passes `{flags}`" for path, flags in launched)
    return (
        f"`{ctx.code(original).rstrip(',')}` comes from the command line, and {passed}: that value replaces the "
        f"flag's default on the launch, so the Trainer still gets a CUDA {parameter} there (Lightning raises on it on "
        f"an XLA host): on XLA the launch must pass {_XLA_VALUES[parameter]}"
    )
