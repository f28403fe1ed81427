"""A Hydra script that reads no device itself: ``hydra.utils.instantiate(cfg.agent)`` builds the
agent class its section's ``_target_`` names with the section's keys, ``device: ${device}`` among
them, and the config's top-level ``device: cuda`` reaches the agent's moves (the script names no
torch at all). XLA112 at the call names the key and its line, in a whole run and when the script
is converted alone; nothing where the device is ``xla`` or the call hands the device itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TRAIN = """import hydra
import numpy as np


@hydra.main(config_path="cfgs", config_name="config")
def main(cfg):
    agent = hydra.utils.instantiate({section})
    for step in range(10):
        agent.update(np.zeros((8, 4), dtype=np.float32))


if __name__ == "__main__":
    main()
"""

AGENT = """import torch


class Agent:
    def __init__(self, device, lr):
        self.device = device
        self.net = torch.nn.Linear(4, 2).to(device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr)

    def update(self, batch):
        x = torch.as_tensor(batch, device=self.device)
        loss = self.net(x).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
"""

CONFIG = """seed: 1
device: {device}
lr: 1e-4

agent:
  _target_: agent.Agent
  device: ${{device}}
  lr: ${{lr}}
"""


def _xla112(root: Path, section: str, device: str, target: str, alone: bool) -> list[tuple[int, str]]:
    files = {
        "train.py": TRAIN.format(section=section),
        "agent.py": AGENT,
        "cfgs/config.yaml": CONFIG.format(device=device),
    }
    write_project(root, "agent", files)
    found = unfixed_findings(root, ["train.py"] if alone else ["train.py", "agent.py"], target)
    return [(line, message) for rule, line, message in found.get("train.py", []) if rule == "XLA112"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("alone", [False, True])
def test_a_device_only_in_an_instantiated_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, alone: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _xla112(tmp_path, "cfg.agent", "cuda", target, alone)
    assert [line for line, _ in found] == [7], found
    assert found[0][1].startswith(
        "`hydra.utils.instantiate(cfg.agent)` builds `agent.Agent` with the keys of `cfg.agent` as arguments: "
        "`cfg.agent.device` is `cuda` in the Hydra config cfgs/config.yaml (`agent.device`, which is `${device}`: "
        "`device`, line 2)"
    ), found
    assert "set `device: xla` there" in found[0][1]


@pytest.mark.parametrize(
    ("section", "device"),
    [("cfg.agent", "xla"), ('cfg.agent, device="xla"', "cuda"), ("cfg.agent", "cpu")],
)
def test_the_xla_device_or_one_the_call_hands_gives_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section: str, device: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _xla112(tmp_path, section, device, "2.9", False) == []
