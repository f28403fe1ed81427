"""Devices that come from where the device values did not follow (held-out list 13): an integer
ordinal in ``torch.device(device_id)`` in a data module that builds the batches (cuda:N), and an
agent's ``config.get("device", "cuda:0")`` whose config a YAML file of the project may set, set by
the code only on one branch (``if multi_gpu: config["device"] = "cuda:" + str(rank)``).  A
whole-project run ports the ordinal and the lookup's default, and says where a config file still
sets CUDA; a single-file run of the script names the modules it does not convert (XLA003)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_executed_device_ordinals import FILES
from tests.support.executed import converted_project
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

AGENT = """\
import torch


class Agent:
    def __init__(self, config):
        if config.get("multi_gpu", False):
            self.device_name = "cuda:" + str(config["local_rank"])
            config["device"] = self.device_name
        self.device = config.get("device", "cuda:0")
        self.model = torch.nn.Linear(4, 1).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters())

    def fit(self, data):
        for x in data:
            loss = self.model(x.to(self.device)).sum()
            loss.backward()
            self.opt.step()
"""
RUN = """\
import sys

import yaml

from agent import Agent

with open(sys.argv[1]) as f:
    config = yaml.safe_load(f)
Agent(config["params"]["config"]).fit([])
"""


@pytest.mark.parametrize("target", TARGETS)
def test_the_whole_project_ports_the_ordinal_and_the_lookup_default(tmp_path: Path, target: str) -> None:
    folder = converted_project(tmp_path / "p", "ordinals", FILES) if target == "2.9" else None
    if folder is not None:
        assert "torch_xla.device() if device_id >= 0" in (folder / "data.py").read_text()
    write_project(tmp_path / "q", "ordinals", FILES)
    found = unfixed_findings(tmp_path / "q", ["run.py", "data.py", "agent.py"], target)
    assert found == {"run.py": [], "data.py": [], "agent.py": []}


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_names_the_modules_that_pick_cuda(tmp_path: Path, target: str) -> None:
    write_project(tmp_path, "ordinals", FILES)
    found = unfixed_findings(tmp_path, ["run.py"], target)["run.py"]
    assert [(rule, line) for rule, line, _ in found] == [("XLA003", 5), ("XLA003", 6)]
    assert "`torch.device(device_id)`" in found[1][2]
    assert '`"cuda:0"`' in found[0][2]


# The config taken out of a parameter (``config = params["config"]``): handed in, not made here.
PARAMS_AGENT = AGENT.replace(
    "def __init__(self, config):", 'def __init__(self, params):\n        config = params["config"]'
)
PARAMS_RUN = RUN.replace('Agent(config["params"]["config"])', 'Agent(config["params"])')


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("agent", "run", "line"), [(AGENT, RUN, 9), (PARAMS_AGENT, PARAMS_RUN, 10)])
def test_a_lookup_a_project_config_may_set_to_cuda_is_an_error_at_the_read(
    tmp_path: Path, target: str, agent: str, run: str, line: int
) -> None:
    configs = {
        "configs/pong.yaml": "params:\n  config:\n    lr: 0.1\n",
        "configs/cartpole.yaml": "params:\n  config:\n    lr: 0.1\n    device: cuda\n",
    }
    write_project(tmp_path, "agents", {"agent.py": agent, "run.py": run, **configs})
    found = unfixed_findings(tmp_path, ["run.py", "agent.py"], target)
    assert found["run.py"] == []
    ((rule, found_line, message),) = found["agent.py"]
    assert (rule, found_line) == ("XLA112", line)
    assert message.startswith("`config.device` is read from a config handed in here")
    assert "configs/cartpole.yaml" in message


def test_a_lookup_no_project_config_sets_to_cuda_gives_no_error(tmp_path: Path) -> None:
    write_project(tmp_path, "agents", {"agent.py": AGENT, "run.py": RUN, "configs/pong.yaml": "params: {}\n"})
    assert unfixed_findings(tmp_path, ["run.py", "agent.py"], "2.9") == {"run.py": [], "agent.py": []}
