"""XLA307's programs of training steps run by a library that does not run them on XLA, beyond an
optimizer built in the file and handed to a call: a method of a library object handed the optimizer
(torchnet's ``Engine().train(h, loader, epochs, optimizer)``), Composer's Trainer with and without its
TPU device, and a library that builds the optimizer itself (coqui's ``trainer.Trainer``); and the
scheduler factories and wrappers that step nothing.  Kept apart from the rule so that its module holds
the rule, its messages and its hooks (an optimizer a helper of another module builds: the project test
tests/project/test_library_steppers.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# An optimizer handed to a package the tool does not follow, stepped by it alone (library_steppers.py).
POUTYNE = """
import torch
from poutyne import Model

network = Net()
optimizer = torch.optim.SGD(network.parameters(), lr=0.01)
model = Model(network, optimizer, "cross_entropy")
model.fit_generator(train_loader, epochs=5)
"""
# ignite's trainer steps with the XLA barrier itself when handed the XLA device (library_steppers.py).
IGNITE = """
import torch
from ignite.engine import create_supervised_trainer

device = torch.device("cuda")
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
trainer = create_supervised_trainer(model, optimizer, torch.nn.functional.nll_loss, device=device)
trainer.run(train_loader, max_epochs=5)
"""
IGNITE_PORTED = substituted(
    IGNITE,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    ('torch.device("cuda")', "torch_xla.device()"),
)
_STEPS = "a package the tool does not follow) is handed the optimizer `optimizer`, which no code the tool sees steps"
# torchnet's Engine (pytorch/tnt torchnet/engine/engine.py): train(network, iterator, maxepoch, optimizer) calls
# ``optimizer.zero_grad()`` and ``optimizer.step(closure)`` for each sample, with no barrier.
_TORCHNET = """
import torch
from torchnet.engine import Engine

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
engine = Engine()
engine.hooks["on_forward"] = on_forward
engine.train(h, loader, 10, optimizer)
"""
# Composer's Trainer (mosaicml/composer): with no ``device=``, get_device(None) is DeviceGPU if CUDA is
# available, else DeviceCPU; ``device="tpu"`` moves the model to the XLA device and loads each batch
# through ``pl.MpDeviceLoader``.
_COMPOSER = """
import torch
from composer import Trainer

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
trainer = Trainer(model=model, train_dataloader=loader, optimizers=optimizer, max_duration="1ep")
trainer.fit()
"""
_COMPOSER_TPU = substituted(
    _COMPOSER,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    ("optimizer = ", "model = model.to(torch_xla.device())\noptimizer = "),
    ('max_duration="1ep")', 'max_duration="1ep", device="tpu")'),
)
# coqui's Trainer (the ``trainer`` package) builds and steps the optimizer itself: no optimizer in the file.
_COQUI = """
from trainer import Trainer, TrainerArgs

model = setup_model(config)
trainer = Trainer(TrainerArgs(), config, output_path, model=model, train_samples=train, eval_samples=evals)
trainer.fit()
"""
# A loop that steps an optimizer handed to a scheduler factory; one wrapped by an unfollowed library.
_SCHEDULED = """
import torch
from timm.scheduler import create_scheduler
from transformers import get_linear_schedule_with_warmup

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scheduler = get_linear_schedule_with_warmup(optimizer, 100, 1000)
lr_scheduler, _ = create_scheduler(args, optimizer)
for batch in loader:
    loss = model(batch).sum()
    loss.backward()
    optimizer.step()
    scheduler.step()
"""
_LOOKAHEAD = """
import torch
import torch_optimizer

base = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = torch_optimizer.Lookahead(base, k=5, alpha=0.5)
for x, y in loader:
    loss_fn(model(x), y).backward()
    optimizer.step()
"""

_KEYWORD_LOOKAHEAD = substituted(_LOOKAHEAD, ("Lookahead(base, k=5", "Lookahead(optimizer=base, k=5"))


def _stepped(program: str, last: str) -> str:
    """``program`` as the port leaves its loop: ``optimizer`` stepped by torch_xla, the barrier after ``last``."""
    at = last[: len(last) - len(last.lstrip())]
    return substituted(
        program,
        ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
        (last, f"{last}{at}torch_xla.sync()\n"),
        ("optimizer.step()", "xm.optimizer_step(optimizer)"),
    )


def library_stepper_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _TORCHNET,
            note="a-library-objects-method-handed-the-optimizer",
            findings=(Expected(7, 1, f"`engine.train` (torchnet, {_STEPS}: the library runs its steps"),),
        ),
        invalid(
            substituted(
                _TORCHNET,
                ("from torchnet.engine import Engine", "import torchnet as tnt"),
                ("engine = Engine()", "engine = tnt.engine.Engine()"),
                ('engine.hooks["on_forward"] = on_forward\nengine.train(', "tnt.engine.Engine().train("),
            ),
            target="sagemaker",
            alias=True,
            note="a-method-of-a-library-object-built-in-place-through-a-module-alias-sagemaker",
            findings=(
                Expected(
                    6,
                    1,
                    f"`tnt.engine.Engine().train` (torchnet, {_STEPS}: the library runs its steps, on a device it "
                    "chooses and with no step barrier, which the port can neither add nor prove: port that loop by "
                    "hand (xm.optimizer_step(optimizer) and xm.mark_step() each step",
                ),
            ),
        ),
        invalid(
            """
            from torch.optim import SGD
            from torchnet.engine import Engine

            def main(params, h, loader, epochs):
                def create_optimizer(lr):
                    return SGD([v for v in params.values() if v.requires_grad], lr, momentum=0.9)

                optimizer = create_optimizer(0.1)
                engine = Engine()
                engine.train(h, loader, epochs, optimizer)
            """,
            note="an-optimizer-a-helper-of-the-file-returns-handed-to-a-library-objects-method",
            findings=(Expected(10, 5, f"`engine.train` (torchnet, {_STEPS}"),),
        ),
        invalid(
            """
            from composer import Trainer

            def train(cfg, model, loader):
                optimizer_cfg = cfg.optimizer
                optimizer = REGISTRY[cfg.name](model.parameters(), **optimizer_cfg)
                trainer = Trainer(model=model, train_dataloader=loader, optimizers=optimizer)
                trainer.fit()
                return trainer
            """,
            note="an-optimizer-of-a-registry-handed-by-keyword-to-a-trainer-run-and-returned",
            findings=(Expected(6, 15, f"`Trainer` (composer, {_STEPS}"),),
        ),
        invalid(
            _COMPOSER,
            note="composers-trainer-without-its-tpu-device",
            findings=(
                Expected(
                    5,
                    11,
                    f"`Trainer` (composer, {_STEPS}: the library runs its steps, on a device it chooses and with no "
                    "step barrier, which the port can neither add nor prove: port that loop by hand "
                    "(xm.optimizer_step(optimizer) and torch_xla.sync() each step, the model and each batch on "
                    "torch_xla.device()) or use a framework that runs on XLA (Lightning, Accelerate, the "
                    "Transformers Trainer); Composer's Trainer runs on XLA when handed device='tpu'",
                ),
            ),
        ),
        invalid(
            _COQUI,
            note="a-library-trainer-that-builds-its-own-optimizer",
            findings=(
                Expected(
                    4,
                    11,
                    "`Trainer` (coqui trainer): it moves the model and every batch to CUDA only when "
                    "torch.cuda.is_available() (never on an XLA host: both stay on the CPU), builds the optimizer "
                    "itself and steps it in fit() with no step barrier: train the model in a loop of the project's "
                    "own (the model on torch_xla.device() before its optimizer is built, each batch on that device, "
                    "torch_xla.sync() after each optimizer step)",
                ),
            ),
        ),
        invalid(
            substituted(
                _COQUI,
                ("from trainer import Trainer, TrainerArgs", "from trainer.trainer import Trainer as CoquiTrainer"),
                ("trainer = Trainer(TrainerArgs()", "trainer = CoquiTrainer(args"),
            ),
            target="sagemaker",
            alias=True,
            note="coquis-trainer-through-an-alias-sagemaker",
            findings=(
                Expected(
                    4,
                    11,
                    "`CoquiTrainer` (coqui trainer): it moves the model and every batch to CUDA only when "
                    "torch.cuda.is_available() (never on an XLA host: both stay on the CPU), builds the optimizer "
                    "itself and steps it in fit() with no step barrier: train the model in a loop of the project's "
                    "own (the model on xm.xla_device() before its optimizer is built, each batch on that device, "
                    "xm.mark_step() after each optimizer step)",
                ),
            ),
        ),
    )


def library_stepper_valid() -> tuple[Valid, ...]:
    return (
        valid(
            _SCHEDULED,
            _stepped(_SCHEDULED, "    scheduler.step()\n"),
            note="a-stepped-optimizer-handed-to-scheduler-factories",
        ),
        valid(
            _LOOKAHEAD,
            _stepped(_LOOKAHEAD, "    optimizer.step()\n"),
            note="an-optimizer-wrapped-by-an-unfollowed-library-and-stepped",
        ),
        valid(_COMPOSER_TPU, note="composers-trainer-on-its-tpu-device"),
        valid(
            _KEYWORD_LOOKAHEAD,
            _stepped(_KEYWORD_LOOKAHEAD, "    optimizer.step()\n"),
            note="an-optimizer-handed-by-keyword-to-a-wrapper-the-file-steps",
        ),
        valid(
            """
            import torch
            from torchnet.engine import Engine

            def create_optimizer(model, lr):
                return torch.optim.SGD(model.parameters(), lr)

            def run(model, h, loader):
                optimizer = create_optimizer(model, 0.1)
                Engine().train(h, loader, 10, optimizer)
                return optimizer
            """,
            note="an-optimizer-a-helper-of-the-file-returns-handed-back-by-its-caller",
        ),
        valid(
            substituted(
                _COMPOSER_TPU,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
                ('device="tpu"', "device=DeviceTPU()"),
                ("from composer ", "from composer.devices import DeviceTPU\nfrom composer "),
            ),
            target="sagemaker",
            note="composers-trainer-on-its-tpu-device-object-sagemaker",
        ),
        valid(
            substituted(
                _TORCHNET,
                (
                    "from torchnet.engine import Engine\n",
                    "\n\nclass Engine:\n    def train(self, h, loader, epochs, optimizer):\n        print(h, loader, epochs, optimizer)\n\n",
                ),
            ),
            note="a-method-of-an-object-of-the-files-own-class",
        ),
        valid(
            substituted(_TORCHNET, ("engine.train(h, loader, 10, optimizer)", "engine.save_state(optimizer)")),
            note="a-library-objects-method-that-only-saves",
        ),
    )
