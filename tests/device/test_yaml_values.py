"""The YAML reader behind a device taken from a config (codemods/device/yaml_values.py): keys
nested by indentation, quotes and comments, Hydra's ``${key}`` interpolations; what it does not
read gives None, never a wrong value."""

from __future__ import annotations

import pytest

from codemods.device.yaml_values import yaml_value

CONFIG = """\
# training
device: cuda  # the GPU
steps: 50
agent:
  class: agent.learner.Learner
  params:
    obs_dim: 3
    device: ${device}
eval:
  device: "cpu"
other: {device: mps}
runs:
  - device: cuda:1
"""


@pytest.mark.parametrize(
    "keys,expected",
    [
        (["device"], ("cuda", 2)),
        (["agent", "params", "device"], ("cuda", 2)),  # through ${device}
        (["eval", "device"], ("cpu", 10)),
        (["agent", "device"], None),
        (["other", "device"], None),  # a flow mapping: not read
        (["runs", "device"], None),  # a list: not read
        (["missing"], None),
    ],
)
def test_values(keys: list[str], expected: tuple[str, int] | None) -> None:
    assert yaml_value(CONFIG, keys) == expected


def test_an_interpolation_of_a_key_the_config_lacks_is_none() -> None:
    assert yaml_value("device: ${trainer.device}\n", ["device"]) is None


def test_interpolations_that_loop_end() -> None:
    assert yaml_value("a: ${b}\nb: ${a}\n", ["a"]) is None
