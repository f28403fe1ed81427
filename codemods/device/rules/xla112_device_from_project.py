"""XLA112 device-from-project."""

from __future__ import annotations

from codemods.device.rules.broken_proofs import reports_broken_proofs, stepped_model
from codemods.device.rules.config_cases import config_invalid_cases, config_valid_cases, instantiated_invalid_runs
from codemods.device.rules.programs import _HYDRA_TRAIN, _PROJECT_TRAIN
from codemods.engine.rule import Expected, Rule, invalid, run, valid

DEVICE_FROM_PROJECT = Rule(
    code="XLA112",
    name="device-from-project",
    severity="error",
    summary="The device comes from another project module that leaves it off XLA (a helper that returns the CPU, a module "
    "still to convert that builds a CUDA device from a flag the port switched on), or from a config file that names CUDA",
    fixable=False,
    why="Obligation (1) across files: the device comes from a helper in another module of the project "
    "(`device = pick_device()` with `from utils.env import pick_device`), and that module's summary says the "
    "helper returns the CPU (or a CUDA or MPS device) on an XLA host, even after the port. The finding is at "
    "the move in this file and names the helper and its file. To resolve it, make the helper return the XLA "
    "device. Likewise a flag the port switches on (`args.use_gpu = torch.cuda.is_available() and args.use_gpu`) "
    "handed to a class of a module that still needs converting and picks its device with it (`Exp(args)`): "
    "there it builds a CUDA device, which fails on an XLA host; convert that module too. And a call of a callable "
    "of such a module that trains a model (`exp.train(loader)`): its device, model, batches and step stay on "
    "CUDA terms until that module is converted. A run on a single file "
    "that imports a module it cannot read says so with XLA003: running the tool on the project folder follows "
    "the helper. The same error says where a single-file run cannot follow the stepped model's device because "
    "it goes through a module this run does not convert: a device chosen with a flag of another module "
    '(`args = get_args(); torch.device("cuda:0" if args.cuda else "cpu")`), a device that a function of '
    "another module sets on its argument (`parse_gpu(args)`, then `model.to(args.device)`), or a model that "
    "another module builds and nothing in the file moves (`model = load_model(args)`), or a device read from "
    "the options another module parses (`args = get_args()`, then `model.to(args.device)`: the `--device` flag "
    "and its default are there). Each names the function and the module; to resolve it, run the tool on the "
    "project folder, which follows them (and reports there what still ends off the XLA device). A single-file "
    "run that can read that module says nothing of the options' device where the module, and what its "
    "function reaches (a module of options that a dict of modules names: `FORMATS[name].parse_args(...)`), "
    'hold no device choice that converting them would port: a `--device` flag defaulting to "cuda:0" there is '
    'an error at the read, naming the module and the default; one defaulting to "xla" is none. '
    "A device read from a YAML config that the script loads (Hydra's `@hydra.main(config_path=..., "
    "config_name=...)`, its config handed on to the classes and functions of the file, by their names, by a name "
    "assigned them or by an import of the script's own module (`from train import Workspace as W` in train.py), "
    "and kept on `self`; "
    '`OmegaConf.load("conf.yaml")`) is decided in that file, which the tool does not rewrite: a `device: cuda` '
    "there is an error at the first read of the key (`torch.device(cfg.device)`), naming the file, the key and "
    "its line; set it to `xla` (or override it on Hydra's command line, `device=xla`), with torch_xla imported. "
    "The keys of that file whose value interpolates the device key (`agent: {device: ${device}}`, handed to "
    "`hydra.utils.instantiate`) are named too: the same change reaches them. A script that reads no device "
    "itself but builds a section with `hydra.utils.instantiate(cfg.agent)` hands the class its `_target_` names "
    "the section's keys as arguments: a device key there (its own value, the key it interpolates, or the file "
    "of the config group the defaults list picks for the section) that names CUDA is an error at that call, "
    "naming the key; not a key the call sets itself (`instantiate(cfg.agent, device=device)`). "
    "A key that a function the config is handed to before the read sets itself (`cfg = setup_gpu(cfg)`, which "
    "does `cfg.device = ...`) is not the config's: a function of the file gives nothing (the device values follow "
    "it); one of another module of the project is followed there, nothing where its device ends on the XLA "
    "device once that module is ported, an error naming it where it does not or where this run does not convert "
    "that module; one of a module the run does not read is named as one that may set it. "
    'The read may be an attribute, a subscript or a `get` (`cfg.device`, `cfg["device"]`, '
    '`cfg.get("device")`); the config may also come from PyYAML (`yaml.safe_load(open(path))`, `yaml.load(f, '
    "Loader=...)` after `with open(path) as f`), its path written as a string, held by a name, or the default of "
    "an argparse flag (`--config`), or YAML text that the script writes and loads (`yaml.safe_load(TEXT)`), or "
    'from ruamel.yaml (`YAML(typ="safe").load(...)`, `ruamel.yaml.safe_load`), the file beside the script '
    '(`(Path(__file__).parent / "configs.yaml").read_text()`). A script that makes its command-line flags from '
    'the config\'s keys (`for key, value in configs["defaults"].items(): parser.add_argument(f"--{key}", '
    "default=value)`) and hands the parsed namespace on reads the config through it: `config.device` is the "
    "key's value, at the top of the file or under its `defaults` section. "
    "Hydra's defaults list is followed (`defaults: [trainer: gpu]` in the config, "
    "`device: cuda` in trainer/gpu.yaml, read as `cfg.trainer.device`): the finding names the group's file. An "
    "accelerator key read from a config (`accelerator: gpu`, `cuda` or `mps`) is an error too, where the config "
    'is read and names one. A config dict written in the script (`OmegaConf.create({"device": "cuda"})`) is '
    "no config file: its device literal is ported (XLA101). "
    "A config whose file is chosen at run time (`OmegaConf.load(args.cfg_path)`, or a config object handed in "
    "to a module that loads none itself and reads `torch.device(self.config.run_cfg.device)`) may be any of the "
    "project's YAML files: where some of them set that key to CUDA (`run: {device: cuda}`), the read is an error "
    "naming how many and one or two of them; set it to `xla` in the files the runs load, or override it where "
    "the run sets its options. "
    "A config the run cannot read (code converted without its folder, a path not written as a string, a file "
    "not there) or that holds no such key the tool can find (in it or the files its defaults list picks) is an "
    "error too, saying so; one whose device is `xla`, or `cpu` (the author's choice, an evaluation tool on the "
    "CPU), a key that the script sets itself, and a key nobody reads as a device, give none; a key the script "
    'sets only under an `if` (`if multi_gpu: config["device"] = ...`) is still read from the config on the '
    "other branch, and gives the finding at that read.",
    examples=lambda: (
        invalid(
            """
            import torch
            from helpers import pick_device

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            filename="train.py",
        ),
    ),
    valid=lambda: (
        run(
            ("train.py", _PROJECT_TRAIN),
            (
                "helpers.py",
                """
            import torch

            def pick_device():
                return "cuda" if torch.cuda.is_available() else "cpu"
            """,
            ),
        ),
        valid(
            """
            import hydra
            import torch

            @hydra.main(config_path="config", config_name="train")
            def main(cfg):
                cfg.device = "xla"
                model = torch.nn.Linear(4, 2).to(cfg.device)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-config-device-the-script-sets-itself",
        ),
        valid(
            """
            import hydra
            from transformers import AutoModelForCausalLM

            @hydra.main(config_path="config", config_name="train")
            def main(cfg):
                model = AutoModelForCausalLM.from_pretrained(cfg.model.name, device_map=cfg.model.device_map)
            """,
            note="a-device-map-from-a-hydra-config-is-no-device",
        ),
        run(("train.py", _HYDRA_TRAIN), ("train.yaml", "device: xla\nsteps: 50\n")),
        run(("train.py", _HYDRA_TRAIN), ("train.yaml", "# an evaluation run\ndevice: 'cpu'  # no GPU here\n")),
        valid(
            """
            import torch
            import torch_xla
            from options import get_args

            args = get_args()
            args.device = torch_xla.device()
            model = torch.nn.Linear(4, 2).to(args.device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="options-from-another-module-whose-device-this-file-sets",
        ),
        *config_valid_cases(),
        valid(
            """
            import torch
            from modeling import load_model

            model = load_model(args, 16).cuda()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            """,
            """
            import torch
            import torch_xla
            from modeling import load_model

            model = load_model(args, 16).to(torch_xla.device())
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            """,
            note="a-model-built-by-another-module-moved-here",
        ),
    ),
    invalid=lambda: (
        *config_invalid_cases(),
        invalid(
            """
            import torch
            from a2c_ppo_acktr.arguments import get_args
            from a2c_ppo_acktr import algo

            args = get_args()
            device = torch.device("cuda:0" if args.cuda else "cpu")
            actor_critic = Policy(envs.observation_space.shape)
            actor_critic.to(device)
            agent = algo.PPO(actor_critic, args.clip_param, lr=args.lr)
            rollouts.to(device)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from a2c_ppo_acktr.arguments import get_args
            from a2c_ppo_acktr import algo

            args = get_args()
            device = torch.device("xla" if args.cuda else "cpu")
            actor_critic = Policy(envs.observation_space.shape)
            actor_critic.to(device)
            agent = algo.PPO(actor_critic, args.clip_param, lr=args.lr)
            rollouts.to(device)
            """,
            note="a-flag-from-another-module-optimizer-elsewhere",
            findings=(
                Expected(
                    7,
                    23,
                    "`device`, where `actor_critic` goes, is chosen with what comes from another module: "
                    "`args.cuda` comes from `get_args()` in a2c_ppo_acktr/arguments.py, which this run does not read",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from arguments import get_args

            args = get_args()
            if args.cuda:
                device = torch.device("cuda")
            else:
                device = torch.device("cpu")
            policy = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            """
            import torch
            import torch_xla
            from arguments import get_args

            args = get_args()
            if args.cuda:
                device = torch_xla.device()
            else:
                device = torch.device("cpu")
            policy = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            note="a-flag-from-another-module-in-an-if-single-file",
            findings=(
                Expected(6, 4, "`args.cuda` comes from `get_args()` in arguments.py, which this run does not read"),
            ),
        ),
        invalid(
            """
            import torch
            from src.gpu import parse_gpu

            parse_gpu(args)
            model = torch.nn.Linear(4, 2)
            model.to(args.device)
            optimizer = torch.optim.AdamW(model.parameters())
            """,
            note="a-device-set-by-another-module-single-file",
            findings=(
                Expected(
                    4,
                    1,
                    "`args.device` may be set by `parse_gpu()` in src/gpu.py, which this run does not "
                    "read; a run on the project folder follows it",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from src.gpu import parse_gpu as pg

            pg(opts)
            net = th.nn.Linear(4, 2).to(opts.device)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-device-set-by-another-module-single-file-sagemaker",
            alias=True,
            findings=(Expected(4, 1, "`opts.device` may be set by `pg()` in src/gpu.py"),),
        ),
        invalid(
            """
            import hydra
            import torch

            @hydra.main(config_path="config", config_name="train")
            def main(cfg):
                device = torch.device(cfg.device)
                model = torch.nn.Linear(4, 2).to(device)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-device-read-from-a-hydra-config-this-run-did-not-read",
            findings=(
                Expected(
                    6,
                    27,
                    "`cfg.device` comes from the Hydra config config/train.yaml, which this run did not read, and "
                    "the tool does not rewrite config files: if it names CUDA (`device: cuda`)",
                ),
            ),
        ),
        invalid(
            """
            import hydra
            import torch

            class Workspace:
                def __init__(self, cfg):
                    self.cfg = cfg
                    self.device = torch.device(self.cfg.device)

            @hydra.main(config_path="config/train.yaml")
            def main(cfg):
                Workspace(cfg)
            """,
            note="a-hydra-config-kept-on-self-by-a-class-of-the-file",
            findings=(Expected(7, 36, "`self.cfg.device` comes from the Hydra config config/train.yaml"),),
        ),
        invalid(
            """
            import torch as th
            from omegaconf import OmegaConf as OC

            conf = OC.load("conf.yaml")
            net = th.nn.Linear(4, 2).to(conf.train.device)
            opt = th.optim.Adam(net.parameters())
            """,
            target="sagemaker",
            note="a-device-read-from-an-omegaconf-config-sagemaker",
            alias=True,
            findings=(
                Expected(5, 29, "`conf.train.device` comes from the config conf.yaml, which this run did not read"),
            ),
        ),
        invalid(
            """
            import sys

            import torch
            import config

            def main():
                args = config.parse_args_with_format("base", sys.argv[1:])
                model = torch.nn.Linear(4, 2).to(args.device)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for _ in range(args.steps):
                    x = torch.randn(8, 4).to(args.device)
            """,
            note="a-device-read-from-the-options-of-another-module-single-file",
            findings=(
                Expected(
                    8,
                    38,
                    "`model`, whose parameters `torch.optim.SGD` steps, goes to a device (or moves under a condition) "
                    "that comes from another module: `args.device` comes from `config.parse_args_with_format()` in "
                    "config.py, which this run does not read; a run on the project folder follows it",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from utils.options import get_opts as opts

            o = opts()
            net = th.nn.Linear(4, 2)
            net.to(o.train_device)
            opt = th.optim.Adam(net.parameters())
            """,
            target="sagemaker",
            note="a-device-read-from-the-options-of-another-module-single-file-sagemaker",
            alias=True,
            findings=(
                Expected(
                    6, 8, "`o.train_device` comes from `opts()` in utils/options.py, which this run does not read"
                ),
            ),
        ),
        invalid(
            """
            import torch
            from modeling import load_model

            model = load_model(args, 16)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            """,
            note="a-model-built-by-another-module-single-file",
            findings=(
                Expected(
                    4,
                    9,
                    "`model`, whose parameters `torch.optim.AdamW` steps, comes from `load_model()` in "
                    "modeling.py, which this run does not read, and nothing here moves it",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            import modeling as m

            net = m.load_model(args)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-model-built-by-another-module-single-file-sagemaker",
            alias=True,
            findings=(Expected(4, 7, "comes from `m.load_model()` in modeling.py"),),
        ),
        invalid(
            """
            import torch
            from arguments import get_args

            args = get_args()
            device = torch.device("cuda:0" if args.cuda else "cpu")
            policy = torch.nn.Linear(4, 2)
            policy.to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from arguments import get_args

            args = get_args()
            device = torch.device("xla" if args.cuda else "cpu")
            policy = torch.nn.Linear(4, 2)
            policy.to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            note="a-flag-from-another-module-single-file",
            findings=(
                Expected(
                    6,
                    23,
                    "`args.cuda` comes from `get_args()` in arguments.py, which this run does not read; "
                    "a run on the project folder follows it",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from utils.config import options as opts

            cfg = opts()
            dev = th.device("cuda" if not cfg.no_gpu else "cpu")
            net = th.nn.Linear(4, 2).to(dev)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from utils.config import options as opts

            cfg = opts()
            dev = th.device("xla" if not cfg.no_gpu else "cpu")
            net = th.nn.Linear(4, 2).to(dev)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-flag-from-another-module-single-file-sagemaker",
            alias=True,
            findings=(
                Expected(6, 17, "`cfg.no_gpu` comes from `opts()` in utils/config.py, which this run does not read"),
            ),
        ),
        run(
            ("train.py", _PROJECT_TRAIN),
            (
                "helpers.py",
                """
            import torch

            def pick_device():
                if torch.backends.mps.is_available():
                    return torch.device("mps")
                return torch.device("cpu")
            """,
            ),
        ),
        run(
            (
                "train.py",
                _PROJECT_TRAIN.replace("import pick_device", "import pick_device as pd").replace(
                    "= pick_device", "= pd"
                ),
            ),
            (
                "helpers.py",
                """
            import torch as th

            def pick_device():
                return th.get_default_device()
            """,
            ),
            alias=True,
        ),
        *instantiated_invalid_runs(),
    ),
)

# What the device obligations (device/obligations.py) say where a proof breaks with this rule.


def stepped_model_device_from_function(model: str, optimizer: str, why: str) -> str:
    """The stepped model goes to a device a function of a module the run does not convert returns."""
    return (
        f"{stepped_model(model, optimizer)} goes to a device that comes from {why} on an XLA host: make that function "
        "return the XLA device (torch_xla.device()), or convert that module too"
    )


def stepped_model_device_from_module(model: str, optimizer: str, why: str) -> str:
    """The stepped model's device (or the condition of its move) comes from another module."""
    return (
        f"{stepped_model(model, optimizer)} goes to a device (or moves under a condition) that comes from another "
        f"module: {why}; a run on the project folder follows it (or make sure it is the XLA device)"
    )


def device_from_module(name: str, device: str, why: str) -> str:
    """A module or tensor no optimizer of the file steps goes to a device chosen in another module."""
    return (
        f"`{device}`, where `{name}` goes, is chosen with what comes from another "
        f"module: {why}; a run on the project folder follows it (or make sure it is the "
        "XLA device)"
    )


def stepped_model_built_elsewhere(model: str, optimizer: str, func: str, where: str) -> str:
    """The stepped model is built by ``func`` of a module the run does not convert, and not moved here."""
    return (
        f"{stepped_model(model, optimizer)} comes from `{func}()` in {where}, and "
        "nothing here moves it: where it goes (and whether to the XLA device) is decided there; a run on the "
        "project folder follows it"
    )


def switched_flag_handed(flag: str, callee: str, path: str) -> str:
    """A flag the port switches on, handed to a module still to convert that picks the device with it."""
    return (
        f"`{flag}`, which the port switches on, goes to `{callee}` in {path}, which picks "
        "the device with it and still needs converting: there it builds a CUDA device; convert that "
        "module too (run the tool on the project folder)"
    )


def trains_elsewhere(callee: str, path: str) -> str:
    """A call of a function that trains in a module still to convert."""
    return (
        f"`{callee}` in {path} trains a model and still needs converting: its device, model, "
        "batches and optimizer step stay on CUDA terms there; convert that module too (run the tool "
        "on the project folder)"
    )


# Where a proof of the obligations broke with this rule (device/obligations.py), as the module is left.
reports_broken_proofs(DEVICE_FROM_PROJECT)
