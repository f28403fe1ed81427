"""XLA822's cases for an optimizer built over a module's parameters outside a LightningModule and
handed to it, which keeps it through a tuple assignment (``self.net, self.opt = net, opt``) and
returns it from ``configure_optimizers``: Lightning's XLA strategies move the module
(``model_to_device``) before ``setup_optimizers``, and on XLA that move makes new Parameter
objects, so the optimizer steps the stale CPU ones (s3prl's train_with_lightning, held-out list 23)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

HANDED_THROUGH_A_TUPLE = """
import lightning.pytorch as pl
import torch


class Wrap(pl.LightningModule):
    def __init__(self, net, opt):
        super().__init__()
        self.net, self.opt = net, opt

    def training_step(self, batch, batch_idx):
        return self.net(batch).sum()

    def configure_optimizers(self):
        return self.opt


net = torch.nn.Linear(4, 1)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
pl.Trainer(accelerator="tpu", devices=1, max_steps=10).fit(Wrap(net, opt), loader)
"""

# The module is moved where it is built (``.cuda()`` on the constructor's result): Lightning's move
# to the same device keeps its parameters, so the optimizer holds the ones that train.
MOVED_WHERE_BUILT = substituted(
    HANDED_THROUGH_A_TUPLE, ("net = torch.nn.Linear(4, 1)\n", "net = torch.nn.Linear(4, 1).cuda()\n")
)

_MESSAGE = (
    "`torch.optim.Adam(net.parameters(), lr=1e-3)` builds the optimizer that `Wrap.configure_optimizers` returns "
    "(`self.opt`) over the module's parameters before Lightning moves the module to the device"
)


# The same, kept by a plain assignment: the shape XLA822 reported before it followed tuples.
MOVED_WHERE_BUILT_PLAIN = substituted(
    MOVED_WHERE_BUILT, ("self.net, self.opt = net, opt", "self.net = net\n        self.opt = opt")
)


def prebuilt_optimizer_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(
            program,
            substituted(
                program,
                ("import torch\n", f"import torch\nimport {module}\n"),
                ("torch.nn.Linear(4, 1).cuda()", f"torch.nn.Linear(4, 1).to({device})"),
            ),
            target=target,
            note=f"an-optimizer-handed-{kept}-over-a-module-moved-where-it-is-built-{target}",
        )
        for target, module, device in (
            ("2.9", "torch_xla", "torch_xla.device()"),
            ("sagemaker", "torch_xla.core.xla_model as xm", "xm.xla_device()"),
        )
        for kept, program in (("through-a-tuple", MOVED_WHERE_BUILT), ("plainly", MOVED_WHERE_BUILT_PLAIN))
    )


def prebuilt_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        *(
            invalid(
                HANDED_THROUGH_A_TUPLE,
                target=target,
                note=f"an-optimizer-handed-to-a-lightning-module-that-keeps-it-through-a-tuple-{target}",
                findings=(Expected(18, 7, _MESSAGE),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                substituted(
                    HANDED_THROUGH_A_TUPLE,
                    ("net = torch.nn.Linear(4, 1)\n", f"net = torch.nn.Linear(4, 1).to({cast})\n"),
                ),
                note=f"an-optimizer-handed-over-a-module-cast-or-kept-on-the-cpu-where-it-is-built-{name}",
                findings=(Expected(18, 7, _MESSAGE),),
            )
            for name, cast in (("dtype", "dtype=torch.bfloat16"), ("float64", "torch.float64"), ("cpu", '"cpu"'))
        ),
        invalid(
            substituted(
                HANDED_THROUGH_A_TUPLE,
                ("import lightning.pytorch as pl\n", "from lightning import LightningModule as LM, Trainer\n"),
                ("class Wrap(pl.LightningModule):", "class Wrap(LM):"),
                ("self.net, self.opt = net, opt", "[self.net, self.opt] = [net, opt]"),
                ("pl.Trainer(", "Trainer("),
            ),
            alias=True,
            note="an-optimizer-handed-to-a-lightning-module-that-keeps-it-through-a-list-aliased",
            findings=(Expected(18, 7, _MESSAGE),),
        ),
    )
