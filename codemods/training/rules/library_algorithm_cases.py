"""XLA307's programs of torch_ac's algorithms (``PPOAlgo``, ``A2CAlgo``: rl-starter-files), which build
and step their own optimizer over the model the script hands them, and of torch_ac's names that run no
training loop (its model mixins, its DictList).  Kept apart from the rule so that its module holds the
rule, its messages and its hooks."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_DOES = (
    "(torch_ac): it moves the model to the device it is handed and builds its own optimizer over the model's "
    "parameters (`.optimizer`), and its update_parameters() steps that optimizer for every epoch and batch with "
    "no step barrier: on XLA the lazy graph grows across every step: "
)
# rl-starter-files' scripts/train.py, reduced: the script moves the model and hands it to the algorithm,
# whose update_parameters() the driver loop calls; no code of the file steps an optimizer.
_PPO = """
import torch
import torch_ac

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
acmodel = ACModel(obs_space, action_space)
acmodel.to(device)
algo = torch_ac.PPOAlgo(envs, acmodel, device, 128, 0.99, 0.001)
num_frames = 0
while num_frames < 10**7:
    exps, logs1 = algo.collect_experiences()
    logs2 = algo.update_parameters(exps)
    num_frames += logs2["num_frames"]
"""
_PPO_PORTED = substituted(
    _PPO,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
)
# The algorithm built in a function of a file that names no torch, through an alias of its module path.
_A2C = """
from torch_ac.algos import A2CAlgo as A2C


def train(envs, acmodel, device, updates):
    algo = A2C(envs, acmodel, device)
    for update in range(updates):
        exps, _ = algo.collect_experiences()
        algo.update_parameters(exps)
"""


def torch_ac_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _PPO,
            _PPO_PORTED,
            note="torch-ac-algorithm-handed-the-moved-model",
            findings=(
                Expected(
                    8,
                    8,
                    f"`torch_ac.PPOAlgo` {_DOES}hand it torch_xla.device() and, after building it, end each of its "
                    "steps with a barrier",
                ),
            ),
        ),
        invalid(
            _PPO,
            substituted(
                _PPO,
                ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
                ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "xm.xla_device()"),
            ),
            target="sagemaker",
            note="torch-ac-algorithm-handed-the-moved-model-sagemaker",
            findings=(
                Expected(
                    8,
                    8,
                    f"`torch_ac.PPOAlgo` {_DOES}hand it xm.xla_device() and, after building it, end each of its "
                    "steps with a barrier (torch 1.13 has no step hooks): `step = algo.optimizer.step`, then "
                    "`algo.optimizer.step = lambda *args, **kwargs: (step(*args, **kwargs), xm.mark_step())[0]`",
                ),
            ),
        ),
        *(
            invalid(
                _A2C,
                target=target,
                alias=True,
                note=f"torch-ac-algorithm-through-an-alias-in-a-file-without-torch-{target}",
                findings=(Expected(5, 12, f"`A2C` {_DOES}hand it {advice}"),),
            )
            for target, advice in (
                (
                    "2.9",
                    "torch_xla.device() and, after building it, end each of its steps with a barrier: "
                    "`algo.optimizer.register_step_post_hook(lambda *args: torch_xla.sync())`",
                ),
                ("sagemaker", "xm.xla_device() and, after building it, end each of its steps with a barrier (torch"),
            )
        ),
        invalid(
            substituted(
                _PPO, ("import torch_ac\n", "import torch_ac as tac\n"), ("torch_ac.PPOAlgo", "tac.algos.ppo.PPOAlgo")
            ),
            substituted(
                _PPO_PORTED,
                ("import torch_ac\n", "import torch_ac as tac\n"),
                ("torch_ac.PPOAlgo", "tac.algos.ppo.PPOAlgo"),
            ),
            alias=True,
            note="torch-ac-algorithm-through-its-module-path",
            findings=(Expected(8, 8, f"`tac.algos.ppo.PPOAlgo` {_DOES}"),),
        ),
    )


def torch_ac_valid() -> tuple[Valid, ...]:
    # torch_ac's model mixins and its DictList run no training loop.
    mixins = """
import torch.nn as nn
import torch_ac


class ACModel(nn.Module, torch_ac.RecurrentACModel):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(4, 2)


exps = torch_ac.DictList({"obs": obs})
"""
    own = """
class PPOAlgo:
    def __init__(self, envs, acmodel, device):
        self.acmodel = acmodel


algo = PPOAlgo(envs, acmodel, device)
algo.update_parameters(exps)
"""
    return tuple(
        valid(program, target=target, note=f"{note}-{target}")
        for program, note in ((mixins, "torch-ac-models-and-dictlist"), (own, "a-class-named-like-torch-acs-algorithm"))
        for target in ("2.9", "sagemaker")
    )
