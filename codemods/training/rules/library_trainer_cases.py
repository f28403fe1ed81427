"""XLA307's programs of detectron2's trainers (AdelaiDet's tools/train_net.py: ``class
Trainer(DefaultTrainer)``, ``Trainer(cfg).train()``), which build, move and step the model and the
optimizer in detectron2's code, and of detectron2's names that run no training.  Kept apart from the
rule so that its module holds the rule, its messages and its hooks."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_DEFAULT = (
    '(detectron2): it moves the model to torch.device(cfg.MODEL.DEVICE), "cuda" by default (no CUDA on an XLA '
    "host: the move fails), builds the optimizer itself and trains through SimpleTrainer (AMPTrainer with "
    "SOLVER.AMP.ENABLED, which asserts torch.cuda.is_available()), whose run_step steps the optimizer with no step "
    "barrier: build the model on the XLA device and train it in a loop of the project's own (each batch on the XLA "
    "device, {sync} after each optimizer step); detectron2 has no XLA support"
)
_SIMPLE = (
    "(detectron2): its run_step steps the optimizer with a plain optimizer.step() and its train() ends no step "
    "with a barrier: on XLA the lazy graph grows with every iteration: register a hook whose after_step calls "
    "{sync} (a detectron2.engine.HookBase subclass, trainer.register_hooks([...])), with the model on the XLA "
    "device (and each batch: run_step hands the model the batch as the loader made it)"
)
_AMP = (
    "(detectron2): its run_step asserts torch.cuda.is_available() (an AssertionError on an XLA host), then runs "
    "CUDA autocast and steps through a CUDA GradScaler: train with detectron2's SimpleTrainer (no CUDA autocast) "
    "and a hook whose after_step calls {sync}"
)
_SYNC = {"2.9": "torch_xla.sync()", "sagemaker": "xm.mark_step()"}
# AdelaiDet's tools/train_net.py, reduced: a subclass of DefaultTrainer (its own loop over detectron2's
# run_step), built and run in the function detectron2's launch calls; the file names no torch.
_SUBCLASS = """
from detectron2.config import get_cfg
from detectron2.engine import DefaultTrainer, launch


class Trainer(DefaultTrainer):
    def train_loop(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.before_step()
            self.run_step()
            self.after_step()


def main(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    return Trainer(cfg).train()


launch(main, 1, args=(args,))
"""
# detectron2's own loop, built over a model and an optimizer the file makes.
_SIMPLE_TRAINER = """
import torch
from detectron2.engine import SimpleTrainer

model = build_model(cfg)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
trainer = SimpleTrainer(model, loader, optimizer)
trainer.train(0, 1000)
"""


def detectron2_invalid() -> tuple[Invalid, ...]:
    return (
        *(
            invalid(
                _SUBCLASS,
                target=target,
                note=f"detectron2-default-trainer-subclassed-{target}",
                findings=(Expected(5, 15, f"`DefaultTrainer` {_DEFAULT.format(sync=_SYNC[target])}"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                substituted(
                    _SUBCLASS,
                    ("from detectron2.engine import DefaultTrainer, launch", "import detectron2.engine.defaults as d2"),
                    ("class Trainer(DefaultTrainer):", "class Trainer(d2.DefaultTrainer):"),
                    ("\n\nlaunch(main, 1, args=(args,))", ""),
                ),
                target=target,
                alias=True,
                note=f"detectron2-default-trainer-through-its-module-path-{target}",
                findings=(Expected(5, 15, f"`d2.DefaultTrainer` {_DEFAULT.format(sync=_SYNC[target])}"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                _SIMPLE_TRAINER,
                target=target,
                note=f"detectron2-simple-trainer-{target}",
                findings=(Expected(6, 11, f"`SimpleTrainer` {_SIMPLE.format(sync=_SYNC[target])}"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                substituted(
                    _SIMPLE_TRAINER,
                    (
                        "from detectron2.engine import SimpleTrainer",
                        "from detectron2.engine.train_loop import AMPTrainer as AMP",
                    ),
                    ("SimpleTrainer(model", "AMP(model"),
                ),
                target=target,
                alias=True,
                note=f"detectron2-amp-trainer-through-an-alias-{target}",
                findings=(Expected(6, 11, f"`AMP` {_AMP.format(sync=_SYNC[target])}"),),
            )
            for target in ("2.9", "sagemaker")
        ),
    )


def detectron2_valid() -> tuple[Valid, ...]:
    # Evaluation only: the trainer's class methods build and test a model; nothing is trained.
    evaluation = """
from detectron2.config import get_cfg
from detectron2.engine import DefaultTrainer, default_setup

cfg = get_cfg()
model = DefaultTrainer.build_model(cfg)
results = DefaultTrainer.test(cfg, model)
"""
    # A project's own class of the same name (its code is converted and checked as such).
    own = """
class DefaultTrainer:
    def __init__(self, cfg):
        self.cfg = cfg

    def train(self):
        return self.cfg


DefaultTrainer(cfg).train()
"""
    return tuple(
        valid(program, target=target, note=f"{note}-{target}")
        for program, note in (
            (evaluation, "detectron2-trainer-used-only-to-evaluate"),
            (own, "a-class-named-like-detectron2s-trainer"),
        )
        for target in ("2.9", "sagemaker")
    )
