"""XLA112's cases of a device read from a config the script loads (issue 32): subscript reads
(``cfg["device"]``, ``cfg.get("device")``), PyYAML's loaders (``yaml.safe_load(open(path))``,
``yaml.load(f, Loader=...)`` after ``with open(path) as f``, the path an argparse default),
Hydra's defaults list (``defaults: [trainer: gpu]``), an accelerator key (``accelerator: gpu``),
and what gives nothing: a config dict written in the script (its device literal is ported), a key
nobody reads as a device, a config whose device is the CPU."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Run, Valid, invalid, run, valid

_YAML_TRAIN = """
import argparse

import torch
import yaml

parser = argparse.ArgumentParser()
parser.add_argument("--config", default="configs/run.yaml")
args = parser.parse_args()
with open(args.config) as f:
    cfg = yaml.load(f, Loader=yaml.SafeLoader)
model = torch.nn.Linear(4, 2).to(cfg["device"])
optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
"""

# A Hydra script whose device Hydra composes from a config group (conf/trainer/<option>.yaml).
_HYDRA_GROUP_TRAIN = """
import hydra
import torch

@hydra.main(config_path="conf", config_name="config")
def main(cfg):
    model = torch.nn.Linear(4, 2).to(cfg.trainer.get("device"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

# A runner handed a config whose file the command line names (``OmegaConf.load(sys.argv[1])``).
HANDED_IN_TRAIN = """
import sys

import torch
from omegaconf import OmegaConf


class Runner:
    def __init__(self, cfg):
        self.config = cfg

    def train(self):
        model = torch.nn.Linear(4, 2).to(torch.device(self.config.run.device))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


Runner(OmegaConf.load(sys.argv[1])).train()
"""

# A Hydra script that reads no device itself: ``hydra.utils.instantiate(cfg.agent)`` hands the
# agent class the keys of its section, ``device: ${device}`` among them.
_INSTANTIATE_TRAIN = """
import hydra
import numpy as np


@hydra.main(config_path="cfgs", config_name="config")
def main(cfg):
    agent = hydra.utils.instantiate(cfg.agent)
    for step in range(10):
        agent.update(np.zeros((8, 4), dtype=np.float32))
"""

_INSTANTIATED_AGENT = """
import torch


class Agent:
    def __init__(self, device, lr):
        self.net = torch.nn.Linear(4, 2).to(device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr)
"""

_AGENT_SECTION = "agent:\n  _target_: agent.Agent\n  device: ${device}\n  lr: 0.1\n"


def instantiated_invalid_runs() -> tuple[Run, ...]:
    """The device of a section that Hydra instantiates: in the section (through an interpolation
    of the top-level key), or in the file of the config group the defaults list picks for it."""
    return (
        run(
            ("train.py", _INSTANTIATE_TRAIN),
            ("agent.py", _INSTANTIATED_AGENT),
            ("cfgs/config.yaml", "device: cuda\n" + _AGENT_SECTION),
        ),
        run(
            (
                "train.py",
                _INSTANTIATE_TRAIN.replace(
                    "import hydra\n", "import hydra\nfrom hydra.utils import instantiate as build\n"
                ).replace("hydra.utils.instantiate(", "build("),
            ),
            ("agent.py", _INSTANTIATED_AGENT),
            ("cfgs/config.yaml", "defaults:\n  - agent: sac\n  - _self_\n"),
            ("cfgs/agent/sac.yaml", "_target_: agent.Agent\ndevice: cuda:0\nlr: 0.1\n"),
            alias=True,
        ),
    )


def instantiated_valid_runs() -> tuple[Run, ...]:
    """Nothing where the device is the XLA device, or where the call hands the device itself."""
    return (
        run(
            ("train.py", _INSTANTIATE_TRAIN),
            ("agent.py", _INSTANTIATED_AGENT),
            ("cfgs/config.yaml", "device: xla\n" + _AGENT_SECTION),
        ),
        run(
            ("train.py", _INSTANTIATE_TRAIN.replace("instantiate(cfg.agent)", 'instantiate(cfg.agent, device="xla")')),
            ("agent.py", _INSTANTIATED_AGENT),
            ("cfgs/config.yaml", "device: cuda\n" + _AGENT_SECTION),
        ),
    )


# The XLA device as each target writes it.
_XLA_IMPORT = {"2.9": "torch_xla", "sagemaker": "torch_xla.core.xla_model as xm"}
_XLA_DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}


def config_invalid_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import hydra
            import torch

            @hydra.main(config_path="conf", config_name="config")
            def main(cfg):
                model = torch.nn.Linear(4, 2).to(cfg["trainer"]["device"])
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-subscript-read-of-a-hydra-config-this-run-did-not-read",
            findings=(
                Expected(
                    6,
                    38,
                    "`cfg.trainer.device` comes from the Hydra config conf/config.yaml, which this run did not read",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            import yaml as y

            conf = y.safe_load(open("configs/train.yaml"))
            net = th.nn.Linear(4, 2).to(conf.get("device"))
            opt = th.optim.Adam(net.parameters())
            """,
            target="sagemaker",
            note="a-device-read-from-a-yaml-loaded-dict-sagemaker",
            alias=True,
            findings=(
                Expected(5, 29, "`conf.device` comes from the config configs/train.yaml, which this run did not read"),
            ),
        ),
        invalid(
            _YAML_TRAIN,
            note="a-device-read-from-a-yaml-config-an-argparse-flag-names",
            findings=(
                Expected(
                    11,
                    34,
                    "`cfg.device` comes from the config configs/run.yaml, which this run did not read, and the tool "
                    "does not rewrite config files: if it names CUDA (`device: cuda`)",
                ),
            ),
        ),
        invalid(
            _YAML_TRAIN,
            target="sagemaker",
            note="a-device-read-from-a-yaml-config-an-argparse-flag-names-sagemaker",
            findings=(Expected(11, 34, "`cfg.device` comes from the config configs/run.yaml"),),
        ),
        invalid(
            """
            import torch
            from omegaconf import OmegaConf

            CONFIG = "conf/run.yaml"
            cfg = OmegaConf.load(CONFIG)
            model = torch.nn.Linear(4, 2).to(cfg.train["device"])
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-device-read-from-an-omegaconf-config-a-name-holds-the-path-of-sagemaker",
            findings=(Expected(6, 34, "`cfg.train.device` comes from the config conf/run.yaml"),),
        ),
        *_yaml_text_cases(),
        *_key_flag_cases(),
        *_handed_on_cases(),
    )


# A Hydra config handed to a class of the file through a name assigned it, and to a helper of a
# module of the project first (``setup_gpu(cfg)``), which may set the device key itself.
HANDED_ON_TRAIN = """
import hydra
import torch


class Workspace:
    def __init__(self, cfg):
        self.device = torch.device(cfg.device)
        self.model = torch.nn.Linear(4, 2).to(self.device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)


@hydra.main(config_path="cfgs", config_name="config")
def main(cfg):
    W = Workspace
    workspace = W(cfg)
"""
# The same, the device key set by a helper of another module before the class reads it.
SET_BY_A_HELPER_TRAIN = HANDED_ON_TRAIN.replace(
    "import torch\n", "import torch\n\nfrom pkg.options import setup_gpu\n"
).replace("    W = Workspace\n", "    cfg = setup_gpu(cfg)\n    W = Workspace\n")


def _handed_on_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            HANDED_ON_TRAIN,
            note="a-hydra-config-handed-to-a-class-through-a-name-assigned-it",
            findings=(
                Expected(
                    7,
                    36,
                    "`cfg.device` comes from the Hydra config cfgs/config.yaml, which this run did not read",
                ),
            ),
        ),
        invalid(
            """
            import hydra as hy
            import torch as th

            class Agent:
                def __init__(self, conf):
                    self.net = th.nn.Linear(4, 2).to(conf["device"])
                    self.opt = th.optim.Adam(self.net.parameters())

            Learner = Agent

            @hy.main(config_path="cfgs", config_name="config")
            def run(conf):
                Learner(conf)
            """,
            target="sagemaker",
            alias=True,
            note="a-hydra-config-handed-to-a-class-through-a-name-assigned-it-sagemaker",
            findings=(Expected(6, 42, "`conf.device` comes from the Hydra config cfgs/config.yaml"),),
        ),
        *(
            invalid(
                SET_BY_A_HELPER_TRAIN,
                target=target,
                note=f"a-hydra-config-device-a-helper-of-an-unread-module-may-set-{target}",
                findings=(
                    Expected(
                        9,
                        36,
                        "; `setup_gpu()` in pkg/options.py, handed the config before the read, may set it itself: "
                        "this run does not read that module, a run on the project folder follows it",
                    ),
                    Expected(16, 11, "`cfg.device` may be set by `setup_gpu()` in pkg/options.py"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
    )


def _yaml_text_cases() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            """
            import torch
            import yaml

            DEFAULTS = \"\"\"
            device: cuda
            lr: 0.1
            \"\"\"
            cfg = yaml.safe_load(DEFAULTS)
            model = torch.nn.Linear(4, 2).to(cfg["device"])
            optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
            """,
            target=target,
            note=f"a-device-read-from-yaml-text-the-script-writes-{target}",
            findings=(Expected(9, 34, "`cfg.device` is `cuda` in the YAML text that the script loads"),),
        )
        for target in ("2.9", "sagemaker")
    )


# A script that makes its command-line flags from a YAML config's keys (ruamel.yaml's loader,
# the file beside the script), the device under the config's defaults section.
KEY_FLAGS_TRAIN = """
import argparse
import pathlib

from ruamel.yaml import YAML
import torch


def main(config):
    model = torch.nn.Linear(4, 2).to(config.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)


if __name__ == "__main__":
    configs = YAML(typ="safe").load((pathlib.Path(__file__).parent / "configs.yaml").read_text())
    parser = argparse.ArgumentParser()
    for key, value in configs["defaults"].items():
        parser.add_argument(f"--{key}", type=type(value), default=value)
    main(parser.parse_args())
"""


def _key_flag_cases() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            KEY_FLAGS_TRAIN,
            target=target,
            alias=True,
            note=f"a-device-flag-made-from-a-yaml-configs-keys-{target}",
            findings=(
                Expected(
                    9,
                    38,
                    "`config.device` comes from the config configs.yaml, which this run did not read",
                ),
            ),
        )
        for target in ("2.9", "sagemaker")
    )


# A helper of the project that sets the device on the config (from CUDA's availability, which the
# port makes the XLA device) before the class of the script reads it.
SETS_DEVICE_OPTIONS = """
import torch


def setup_gpu(cfg):
    if cfg.no_cuda:
        device = "cpu"
    else:
        device = str(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    cfg.device = device
    return cfg
"""


def config_valid_cases() -> tuple[Valid | Run, ...]:
    return tuple(
        case
        for target in ("2.9", "sagemaker")
        for case in (
            valid(
                """
                import torch
                from omegaconf import OmegaConf

                cfg = OmegaConf.create({"train": {"device": "cuda", "lr": 0.1}})
                model = torch.nn.Linear(4, 2).to(cfg.train["device"])
                optimizer = torch.optim.SGD(model.parameters(), lr=cfg.train.lr)
                """,
                """
                import torch
                import torch_xla  # noqa: F401  (registers the "xla" device)
                from omegaconf import OmegaConf

                cfg = OmegaConf.create({"train": {"device": "xla", "lr": 0.1}})
                model = torch.nn.Linear(4, 2).to(cfg.train["device"])
                optimizer = torch.optim.SGD(model.parameters(), lr=cfg.train.lr)
                """,
                target=target,
                note=f"a-config-dict-written-in-the-script-has-its-device-ported-{target}",
            ),
            valid(
                f"""
                import torch
                import {_XLA_IMPORT[target]}
                import yaml

                with open("configs/run.yaml") as f:
                    cfg = yaml.safe_load(f)
                cfg["device"] = {_XLA_DEVICE[target]}
                model = torch.nn.Linear(4, 2).to(cfg["device"])
                optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
                """,
                target=target,
                note=f"a-yaml-config-device-the-script-sets-itself-{target}",
            ),
            valid(
                """
                import hydra
                import torch

                def use_the_xla_device(options):
                    options.device = "xla"

                class Workspace:
                    def __init__(self, cfg):
                        self.net = torch.nn.Linear(4, 2).to(torch.device(cfg.device))

                @hydra.main(config_path="cfgs", config_name="config")
                def main(cfg):
                    use_the_xla_device(cfg)
                    W = Workspace
                    W(cfg)
                """,
                target=target,
                note=f"a-hydra-config-device-a-function-of-the-file-sets-on-its-parameter-{target}",
            ),
            valid(
                HANDED_IN_TRAIN,
                target=target,
                note=f"a-config-handed-in-whose-file-is-chosen-at-run-time-without-a-project-{target}",
            ),
            valid(
                """
                import torch
                import yaml

                cfg = yaml.safe_load("device: cpu  # an evaluation tool\\nlr: 0.1\\n")
                model = torch.nn.Linear(4, 2).to(cfg["device"])
                """,
                target=target,
                note=f"yaml-text-the-script-writes-naming-the-cpu-{target}",
            ),
        )
    ) + (
        run(("train.py", _YAML_TRAIN), ("configs/run.yaml", "device: cpu\nlr: 0.1\n")),
        run(("train.py", _YAML_TRAIN), ("configs/run.yaml", "device: 'xla'  # the port's device\nlr: 0.1\n")),
        run(
            ("train.py", _HYDRA_GROUP_TRAIN),
            ("conf/config.yaml", "defaults:\n  - trainer: tpu\n  - _self_\n"),
            ("conf/trainer/tpu.yaml", "device: xla\n"),
            ("conf/trainer/gpu.yaml", "device: cuda\n"),
        ),
        run(("train.py", KEY_FLAGS_TRAIN), ("configs.yaml", "defaults:\n  device: cpu\n  lr: 0.1\n")),
        run(
            ("train.py", _YAML_TRAIN.replace('cfg["device"]', '"xla"')),
            ("configs/run.yaml", "device: cuda\nlr: 0.1\n"),
        ),
        run(
            ("train.py", SET_BY_A_HELPER_TRAIN),
            ("pkg/__init__.py", ""),
            ("pkg/options.py", SETS_DEVICE_OPTIONS),
            ("cfgs/config.yaml", "device:\nno_cuda: false\n"),
        ),
        run(
            (
                "train.py",
                SET_BY_A_HELPER_TRAIN.replace("setup_gpu", "sg").replace("import sg", "import setup_gpu as sg"),
            ),
            ("pkg/__init__.py", ""),
            ("pkg/options.py", SETS_DEVICE_OPTIONS),
            ("cfgs/config.yaml", "device: cuda\nno_cuda: false\n"),
        ),
        *instantiated_valid_runs(),
        run(("train.py", HANDED_IN_TRAIN), ("configs/caption.yaml", "run:\n  device: xla\n  lr: 0.1\n")),
        run(("train.py", HANDED_IN_TRAIN), ("configs/caption.yaml", "run:\n  device_map: cuda\n")),
        run(
            ("train.py", HANDED_ON_TRAIN),
            ("cfgs/config.yaml", "device: xla\n"),
        ),
    )
