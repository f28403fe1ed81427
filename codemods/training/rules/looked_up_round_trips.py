"""XLA203's cases for a module looked up on the instance by a name built at run time (``net =
getattr(self, 'net' + name)``, CUT's ``save_networks``) and moved to the CPU and back while the
class's optimizers step its attributes: the lookup may be any of them (training/round_trips.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# The networks' state kept on the host for a checkpoint, each network moved there and back.
LOOKED_UP = """
import torch
import torch_xla


class Model:
    def __init__(self):
        self.device = torch_xla.device()
        self.model_names = ["G", "D"]
        self.netG = torch.nn.Linear(4, 4).to(self.device)
        self.netD = torch.nn.Linear(4, 1).to(self.device)
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-3)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-3)

    def host_states(self):
        states = {}
        for name in self.model_names:
            net = getattr(self, "net" + name)
            states[name] = net.cpu().state_dict()
            net.to(self.device)
        return states
"""


def _on_sagemaker(program: str) -> str:
    """``program`` as the sagemaker target ports it (torch_xla 2.1 has no ``torch_xla.device()``)."""
    return program.replace("import torch_xla\n", "import torch_xla.core.xla_model as xm\n").replace(
        "torch_xla.device()", "xm.xla_device()"
    )


_WRAPPED = (
    LOOKED_UP.replace("import torch\n", "import torch as th\n")
    .replace("torch.nn", "th.nn")
    .replace("torch.optim", "th.optim")
    .replace('getattr(self, "net" + name)', 'getattr(self, f"net{name}")')
    .replace("states[name] = net.cpu().state_dict()", "states[name] = net.module.cpu().state_dict()")
    .replace("th.nn.Linear(4, 4).to(self.device)", "th.nn.DataParallel(th.nn.Linear(4, 4)).to(self.device)")
)
_SAVED_WITHOUT_A_MOVE = LOOKED_UP.replace("net.cpu().state_dict()", "net.state_dict()").replace(
    "            net.to(self.device)\n", ""
)


def looked_up_round_trip_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            LOOKED_UP,
            note="module-looked-up-by-a-built-name-moved-to-the-cpu-and-back",
            findings=(
                Expected(
                    18,
                    28,
                    '`net.cpu()` moves `net` (`getattr(self, "net" + name)`, which may be `self.netG` or '
                    "`self.netD`), whose parameters `self.optimizer_G` steps, off the XLA device, and "
                    "`net.to(self.device)` moves it back",
                ),
            ),
        ),
        invalid(
            _WRAPPED,
            _on_sagemaker(_WRAPPED),
            target="sagemaker",
            alias=True,
            note="f-string-lookup-submodule-moved-back-through-the-wrapper",
            findings=(
                Expected(
                    18,
                    28,
                    '`net.module.cpu()` moves `net.module` (`getattr(self, f"net{name}")`, which may be '
                    "`self.netG` or `self.netD`), whose parameters `self.optimizer_G` steps, off the XLA device",
                ),
            ),
        ),
    )


def looked_up_round_trip_valid() -> tuple[Valid, ...]:
    return (
        valid(
            LOOKED_UP.replace('getattr(self, "net" + name)', 'getattr(self, "ema_" + name)'),
            note="a-lookup-whose-prefix-names-no-stepped-module",
        ),
        valid(
            _SAVED_WITHOUT_A_MOVE,
            _on_sagemaker(_SAVED_WITHOUT_A_MOVE),
            target="sagemaker",
            note="a-looked-up-module-saved-without-moving-it",
        ),
    )
