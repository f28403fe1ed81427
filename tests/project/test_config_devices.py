"""A device taken from a Hydra YAML config (issue 32, an RL repository): ``device: cuda`` in
config/train.yaml, ``Workspace(cfg)`` keeping the config on ``self`` and reading
``torch.device(cfg.device)``, the agent built from a class path (``hydra.utils.instantiate``)
with ``device: ${device}``.  The tool does not rewrite config files: a whole-project run and a
single-file run are an error at the read, naming the file, the key and its line; a config
whose device is "xla" or "cpu" gives none; code converted without its folder says the config
was not read."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.device.rules.config_cases import KEY_FLAGS_TRAIN
from codemods.engine.report import FileReport, Finding
from codemods.engine.rule import RuleSelection
from codemods.files import discover
from codemods.pipeline import summarise_with
from codemods.project.folder_scans import MAX_CONFIG_BYTES
from codemods.project.resolver import Project
from codemods.runner import Job, run
from tests.support.rule_cases import case_source

TARGETS = ["2.9", "sagemaker"]

TRAIN = """\
import numpy as np
import torch
import hydra
from buffer import Buffer


class Workspace:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.agent = hydra.utils.instantiate(cfg.agent)
        self.buffer = Buffer(self.device)

    def run(self):
        for step in range(self.cfg.steps):
            self.buffer.add(np.random.randn(3).astype(np.float32), np.random.randn(1).astype(np.float32))
            if step >= 10:
                self.agent.update(self.buffer, step)


@hydra.main(config_path="config", config_name="train")
def main(cfg):
    Workspace(cfg).run()


if __name__ == "__main__":
    main()
"""
BUFFER = """\
import numpy as np
import torch


class Buffer:
    def __init__(self, device):
        self.device = device
        self.obs = []

    def add(self, obs, target):
        self.obs.append(obs)

    def sample(self, n):
        idx = np.random.randint(0, len(self.obs), size=n)
        return torch.as_tensor(np.stack([self.obs[i] for i in idx]), device=self.device)
"""
LEARNER = """\
import torch
import torch.nn as nn


class Learner:
    def __init__(self, obs_dim, device):
        self.device = torch.device(device)
        self.net = nn.Linear(obs_dim, 1).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def update(self, buffer, step):
        loss = self.net(buffer.sample(16)).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
"""
CONFIG = """\
device: {device}
steps: 50
agent:
  class: agent.learner.Learner
  params:
    obs_dim: 3
    device: ${{device}}
"""


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, device: str) -> Path:
    repo = tmp_path / "proj"
    (repo / "agent").mkdir(parents=True)
    (repo / "config").mkdir()
    (repo / "train.py").write_text(TRAIN)
    (repo / "buffer.py").write_text(BUFFER)
    (repo / "agent" / "__init__.py").write_text("")
    (repo / "agent" / "learner.py").write_text(LEARNER)
    (repo / "config" / "train.yaml").write_text(CONFIG.format(device=device))
    monkeypatch.chdir(repo)
    return repo


def _config_errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule == "XLA112"]


def _lint(repo: Path, target: str) -> list[FileReport]:
    reports = run([(str(path), Job("lint", target, RuleSelection())) for path in discover((str(repo),))])
    assert not any(r.error for r in reports), reports
    return reports


@pytest.mark.parametrize("target", TARGETS)
def test_a_project_run_is_an_error_at_the_read_naming_the_file_and_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "cuda")
    fired = [(r.path, f) for r in _lint(repo, target) for f in _config_errors(r.findings)]
    ((path, finding),) = fired
    assert path.endswith("train.py") and (finding.line, finding.col) == (10, 36)  # torch.device(cfg.device)
    assert finding.message.startswith(
        "`cfg.device` is `cuda` in the Hydra config config/train.yaml (`device`, line 1), which the tool does not "
        "rewrite"
    )
    assert "set `device: xla` there (or run the script with `device=xla`)" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_reads_the_config_beside_the_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "cuda:0")
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "train.py"])
    conversion = convert_source(
        (repo / "train.py").read_bytes(), target=target, imports=project.imports_of(repo / "train.py")
    )
    (finding,) = _config_errors(conversion.findings)
    assert "`cfg.device` is `cuda:0` in the Hydra config config/train.yaml (`device`, line 1)" in finding.message


@pytest.mark.parametrize("device", ["xla", "cpu", "'xla:0'"])
def test_a_config_whose_device_is_no_cuda_device_gives_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, device: str
) -> None:
    repo = _project(tmp_path, monkeypatch, device)
    assert [f for r in _lint(repo, "2.9") for f in _config_errors(r.findings)] == []


def test_code_converted_without_its_folder_says_the_config_was_not_read() -> None:
    (finding,) = _config_errors(convert_source(TRAIN).findings)
    assert finding.message.startswith(
        "`cfg.device` comes from the Hydra config config/train.yaml, which this run did not read"
    )


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(textwrap.dedent(text).lstrip("\n"))


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_that_hydra_composes_from_a_config_group_is_an_error_naming_the_group_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``defaults: [trainer: gpu]`` in conf/config.yaml, ``device: cuda`` in conf/trainer/gpu.yaml,
    read as ``cfg.trainer["device"]``."""
    monkeypatch.chdir(tmp_path)
    _write(
        tmp_path,
        {
            "train.py": case_source("a-subscript-read-of-a-hydra-config-this-run-did-not-read"),
            "conf/config.yaml": "defaults: [trainer: gpu, _self_]\nsteps: 5\n",
            "conf/trainer/gpu.yaml": "# @package trainer\nbatch_size: 8\ndevice: cuda\n",
            "conf/trainer/tpu.yaml": "device: xla\n",
        },
    )
    ((path, finding),) = [(r.path, f) for r in _lint(tmp_path, target) for f in _config_errors(r.findings)]
    assert path.endswith("train.py") and (finding.line, finding.col) == (6, 38)
    assert finding.message.startswith(
        "`cfg.trainer.device` is `cuda` in the Hydra config conf/trainer/gpu.yaml (`device`, line 3), which the "
        "defaults list of conf/config.yaml picks (`trainer: gpu`), and which the tool does not rewrite"
    )
    assert "set `device: xla` there (or run the script with `trainer.device=xla`)" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_yaml_config_an_argparse_default_names_is_read_for_its_device_and_accelerator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    train = case_source("a-device-read-from-a-yaml-config-an-argparse-flag-names")
    _write(
        tmp_path,
        {
            "train.py": train + 'trainer = Trainer(accelerator=cfg.get("accelerator"), precision=cfg["precision"])\n',
            "configs/run.yaml": "device: cuda:0\nlr: 0.1\nprecision: 16  # a key nobody reads as a device\n"
            "accelerator: gpu\n",
        },
    )
    fired = [(f.line, f.message) for r in _lint(tmp_path, target) for f in _config_errors(r.findings)]
    assert [line for line, _ in fired] == [11, 13]
    assert fired[0][1].startswith("`cfg.device` is `cuda:0` in the config configs/run.yaml (`device`, line 1)")
    assert fired[1][1].startswith("`cfg.accelerator` is `gpu` in the config configs/run.yaml (`accelerator`, line 4)")


@pytest.mark.parametrize("accelerator", ["tpu", "auto", "cpu"])
def test_an_accelerator_that_names_no_cuda_device_gives_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, accelerator: str
) -> None:
    monkeypatch.chdir(tmp_path)
    train = case_source("a-device-read-from-a-yaml-config-an-argparse-flag-names")
    _write(
        tmp_path,
        {
            "train.py": train + 'trainer = Trainer(accelerator=cfg["accelerator"])\n',
            "configs/run.yaml": f"device: xla\naccelerator: {accelerator}\n",
        },
    )
    assert [f for r in _lint(tmp_path, "2.9") for f in _config_errors(r.findings)] == []


_KEY_FLAGS_OLD_API = (
    KEY_FLAGS_TRAIN.replace("from ruamel.yaml import YAML\n", "import sys\n\nimport ruamel.yaml as yaml\n")
    .replace('YAML(typ="safe").load(', "yaml.safe_load(")
    .replace("pathlib.Path(__file__)", "pathlib.Path(sys.argv[0])")
)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("train", [KEY_FLAGS_TRAIN, _KEY_FLAGS_OLD_API], ids=["yaml-object", "safe-load"])
def test_a_device_flag_made_from_a_yaml_configs_keys_is_an_error_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, train: str
) -> None:
    """Flags made from the keys of a YAML config that ruamel.yaml loads (``for key, value in
    configs["defaults"].items(): parser.add_argument(f"--{key}", default=value)``), the
    namespace handed to ``main``: its device, under the config's defaults section, is read."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"train.py": train, "configs.yaml": "defaults:\n  lr: 0.1\n  device: 'cuda:0'\n"})
    fired = [(f.line, f.message) for r in _lint(tmp_path, target) for f in _config_errors(r.findings)]
    assert len(fired) == 1, fired
    line, message = fired[0]
    written = (tmp_path / "train.py").read_text().splitlines()
    assert line == written.index("    model = torch.nn.Linear(4, 2).to(config.device)") + 1
    assert message.startswith(
        "`config.device` is `cuda:0` in the config configs.yaml (`defaults.device`, line 3), which the tool does not "
        "rewrite"
    )
    _write(tmp_path, {"configs.yaml": "defaults:\n  lr: 0.1\n  device: xla\n"})
    assert [f for r in _lint(tmp_path, target) for f in _config_errors(r.findings)] == []


# An RL workspace (issue 32): ``main`` imports the script's own class under another name
# (``from train import Workspace as W``) and hands it the Hydra config, whose agent section
# interpolates the device (``device: ${device}``).
SELF_IMPORT_TRAIN = """\
import hydra
import torch


class Workspace:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.net = torch.nn.Linear(4, 2).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)


@hydra.main(config_path="cfgs", config_name="config")
def main(cfg):
    from train import Workspace as W

    workspace = W(cfg)


if __name__ == "__main__":
    main()
"""
SELF_IMPORT_CONFIG = """\
seed: 1
device: {device}
agent:
  _target_: agent.Agent
  device: ${{device}}
  lr: 1e-4
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_config_handed_to_the_scripts_own_class_through_a_self_import_is_an_error_at_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"train.py": SELF_IMPORT_TRAIN, "cfgs/config.yaml": SELF_IMPORT_CONFIG.format(device="cuda")})
    fired = [(r.path, f) for r in _lint(tmp_path, target) for f in _config_errors(r.findings)]
    ((path, finding),) = fired
    assert path.endswith("train.py") and (finding.line, finding.col) == (8, 36)  # torch.device(cfg.device)
    assert finding.message.startswith(
        "`cfg.device` is `cuda` in the Hydra config cfgs/config.yaml (`device`, line 2), which the tool does not "
        "rewrite"
    )
    assert "set `device: xla` there (or run the script with `device=xla`)" in finding.message
    assert finding.message.endswith(
        "; `agent.device` (line 5) interpolates it (`${device}`), so the same change reaches it"
    )
    # A single-file run reads the config beside the script too.
    project = Project(tmp_path, summarise_with(target, RuleSelection(), None), in_run=[tmp_path / "train.py"])
    conversion = convert_source(
        (tmp_path / "train.py").read_bytes(), target=target, imports=project.imports_of(tmp_path / "train.py")
    )
    assert [(f.line, f.col) for f in _config_errors(conversion.findings)] == [(8, 36)]
    # The XLA device in the config: nothing.
    _write(tmp_path, {"cfgs/config.yaml": SELF_IMPORT_CONFIG.format(device="xla")})
    assert [f for r in _lint(tmp_path, target) for f in _config_errors(r.findings)] == []


def test_a_module_of_the_scripts_name_elsewhere_in_the_project_is_not_the_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``from train import Workspace`` in scripts/train.py, where the project's root holds a
    package ``train`` with a class of that name: that class is what runs, not the script's."""
    monkeypatch.chdir(tmp_path)
    _write(
        tmp_path,
        {
            "scripts/train.py": SELF_IMPORT_TRAIN,
            "scripts/cfgs/config.yaml": SELF_IMPORT_CONFIG.format(device="cuda"),
            "train/__init__.py": "class Workspace:\n    def __init__(self, cfg):\n        self.cfg = cfg\n",
        },
    )
    assert [f for r in _lint(tmp_path, "2.9") for f in _config_errors(r.findings)] == []


# A helper of the project that sets the device on the config before the script's class reads it
# (``cfg = setup_gpu(cfg)``): what is read is what the helper sets, not the config's key.
SET_BY_HELPER_TRAIN = """\
import hydra
import torch

from pkg.options import setup_gpu


class Trainer:
    def __init__(self, cfg):
        self.net = torch.nn.Linear(4, 2).to(cfg.device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)


@hydra.main(config_path="conf", config_name="train")
def main(cfg):
    cfg = setup_gpu(cfg)
    Trainer(cfg)
    print("trained on", cfg.device)


if __name__ == "__main__":
    main()
"""
SETS_FROM_CUDA = """\
import torch


def setup_gpu(cfg):
    if cfg.local_rank == -1 or cfg.no_cuda:
        device = str(torch.device("cuda" if torch.cuda.is_available() and not cfg.no_cuda else "cpu"))
    else:
        torch.cuda.set_device(cfg.local_rank)
        device = str(torch.device("cuda", cfg.local_rank))
    cfg.device = device
    return cfg
"""


def _set_by_helper(tmp_path: Path, options: str) -> None:
    _write(
        tmp_path,
        {
            "train.py": SET_BY_HELPER_TRAIN,
            "pkg/__init__.py": "",
            "pkg/options.py": options,
            "conf/train.yaml": "device:\nlocal_rank: -1\nno_cuda: false\n",
        },
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_key_a_helper_of_the_project_sets_is_not_the_configs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """A whole-project run ports the helper (its devices become the XLA device): nothing is said of
    the config; a single-file run says the helper, which it does not convert, sets the key."""
    monkeypatch.chdir(tmp_path)
    _set_by_helper(tmp_path, SETS_FROM_CUDA)
    assert [f for r in _lint(tmp_path, target) for f in _config_errors(r.findings)] == []
    project = Project(tmp_path, summarise_with(target, RuleSelection(), None), in_run=[tmp_path / "train.py"])
    conversion = convert_source(
        (tmp_path / "train.py").read_bytes(), target=target, imports=project.imports_of(tmp_path / "train.py")
    )
    at_read = [f for f in _config_errors(conversion.findings) if (f.line, f.col) == (9, 45)]
    (finding,) = at_read
    assert finding.message == (
        "`cfg.device` is set by `setup_gpu()` in pkg/options.py before it is read, not by the config, and this run "
        "does not convert that module: the device it sets there is not ported; convert it too (a run on the project "
        "folder ports it)"
    )
    assert not any("Hydra config" in f.message for f in conversion.findings)
    assert len([f for f in conversion.findings if "before it is read" in f.message]) == 1  # once per helper and key


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_that_sets_the_cpu_on_the_config_is_an_error_naming_the_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _set_by_helper(
        tmp_path, 'import torch\n\n\ndef setup_gpu(cfg):\n    cfg.device = torch.device("cpu")\n    return cfg\n'
    )
    fired = [f for r in _lint(tmp_path, target) for f in _config_errors(r.findings) if r.path.endswith("train.py")]
    assert [(f.line, f.col) for f in fired if "pkg/options.py" in f.message][:1] == [(9, 45)]
    assert fired[0].message.startswith(
        "`cfg.device` is set by `setup_gpu()` in pkg/options.py before it is read, not by the config"
    )
    assert 'it ends on "cpu" (the CPU), off the XLA device; make it the XLA device there' in fired[0].message
    assert not any("Hydra config" in f.message for f in fired)


# A runner of one module handed the config that another loads from the path its command line
# names (``--cfg-path``): the project's config files are what it may read.
RUNTIME_TRAIN = """\
import argparse

from proj.config import Config
from proj.runner import Runner

parser = argparse.ArgumentParser()
parser.add_argument("--cfg-path", required=True)
Runner(cfg=Config(parser.parse_args())).train()
"""
RUNTIME_CONFIG = """\
from omegaconf import OmegaConf


class Config:
    def __init__(self, args):
        self.config = OmegaConf.load(args.cfg_path)

    @property
    def run_cfg(self):
        return self.config.run
"""
RUNTIME_RUNNER = """\
import torch


class Runner:
    def __init__(self, cfg):
        self.config = cfg

    @property
    def device(self):
        return torch.device(self.config.run_cfg.device)

    def train(self):
        model = torch.nn.Linear(4, 2).to(self.device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = model(torch.randn(8, 4).to(self.device)).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def _runtime_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, devices: dict[str, str], runner: str) -> Path:
    monkeypatch.chdir(tmp_path)
    files = {"train.py": RUNTIME_TRAIN, "proj/__init__.py": "", "proj/config.py": RUNTIME_CONFIG}
    files["proj/runner.py"] = runner
    for name, device in devices.items():
        files[f"proj/configs/{name}.yaml"] = f"model:\n  arch: tiny\nrun:\n  device: {device}\n  lr: 0.1\n"
    _write(tmp_path, files)
    return tmp_path


@pytest.mark.parametrize("target", TARGETS)
def test_a_config_whose_file_is_chosen_at_run_time_is_an_error_naming_the_project_configs_that_set_cuda(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    devices = {"caption": '"cuda"', "eval": "xla", "retrieval": "cuda:0", "vqa": "'cuda'"}
    repo = _runtime_project(tmp_path, monkeypatch, devices, RUNTIME_RUNNER)
    fired = [(r.path, f) for r in _lint(repo, target) for f in _config_errors(r.findings)]
    ((path, finding),) = fired
    assert path.endswith("proj/runner.py") and (finding.line, finding.col) == (10, 29)
    assert finding.message.startswith(
        "`self.config.run_cfg.device` is read from a config handed in here, whose file is chosen at run time"
    )
    assert (
        "3 of the project's config files set `device` to a CUDA device (proj/configs/caption.yaml: `run.device: "
        "cuda`, line 4; proj/configs/retrieval.yaml: `run.device: cuda:0`, line 4, among others)"
    ) in finding.message
    assert "set `device: xla` in the config files the runs load" in finding.message


@pytest.mark.parametrize(
    ("devices", "runner"),
    [
        ({"caption": "xla", "eval": "cpu"}, RUNTIME_RUNNER),  # no config file names CUDA
        ({}, RUNTIME_RUNNER),  # no config files
        ({"caption": "cuda"}, RUNTIME_RUNNER.replace("self.config.run_cfg.device", "self.args.device")),  # no config
        (
            {"caption": "cuda"},
            RUNTIME_RUNNER.replace(
                "self.config = cfg", "self.config = cfg\n        self.config.run_cfg.device = 'xla'"
            ),
        ),  # the code sets the key
        (
            {"caption": "cuda"},
            RUNTIME_RUNNER.replace("self.config = cfg", 'self.config = torch.load("last.pt")["config"]'),
        ),  # a config the file makes (a checkpoint's), not one handed in
    ],
)
def test_a_config_chosen_at_run_time_gives_nothing_where_no_project_config_sets_cuda_or_no_config_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, devices: dict[str, str], runner: str
) -> None:
    repo = _runtime_project(tmp_path, monkeypatch, devices, runner)
    assert [f for r in _lint(repo, "2.9") for f in _config_errors(r.findings)] == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_config_the_script_loads_from_a_flags_path_names_the_project_configs_that_set_cuda(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    train = RUNTIME_TRAIN.replace("from proj.config import Config\nfrom proj.runner import Runner\n", "")
    train = train.replace(
        "Runner(cfg=Config(parser.parse_args())).train()",
        "cfg = OmegaConf.load(parser.parse_args().cfg_path)\nmodel = torch.nn.Linear(4, 2).to(cfg.run.device)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
    )
    _write(tmp_path, {"train.py": "import torch\nfrom omegaconf import OmegaConf\n" + train})
    _write(tmp_path, {"configs/caption.yaml": "run:\n  device: cuda\n"})
    (finding,) = [f for r in _lint(tmp_path, target) for f in _config_errors(r.findings)]
    assert finding.message.startswith(
        "`cfg.run.device` comes from the config whose file is chosen at run time (a path not written in the code), "
        "and 1 of the project's config files sets `device` to a CUDA device (configs/caption.yaml: `run.device: "
        "cuda`, line 2)"
    )
    _write(tmp_path, {"configs/caption.yaml": "run:\n  device: xla\n"})
    (finding,) = [f for r in _lint(tmp_path, target) for f in _config_errors(r.findings)]
    assert "which this run did not read" in finding.message  # what it was: the tool cannot tell


def test_a_config_a_module_names_is_read_as_the_project_scan_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One reader of the project's YAML files: a config a module names comes from the run's scan
    once that has read it (the file's text as the scan found it), else is read with the scan's
    limit (MAX_CONFIG_BYTES)."""
    repo = _project(tmp_path, monkeypatch, "cuda")
    (repo / "config" / "data.yaml").write_text("x: 1\n" * (MAX_CONFIG_BYTES // 5 + 1))
    project = Project(repo, summarise_with("2.9", RuleSelection(), None), in_run=[repo / "train.py"])
    imports = project.imports_of(repo / "agent" / "learner.py")
    assert imports.config_file("../config/train.yaml") == ("config/train.yaml", CONFIG.format(device="cuda"))
    assert imports.config_file("../config/data.yaml") is None  # larger than a config: not read
    assert project.config_files == (("config/train.yaml", CONFIG.format(device="cuda")),)
    (repo / "config" / "train.yaml").write_text(CONFIG.format(device="xla"))
    assert imports.config_file("../config/train.yaml") == ("config/train.yaml", CONFIG.format(device="cuda"))
