"""Programs and helpers the device rules' cases share."""

from __future__ import annotations

from codemods.engine.rule import substituted

_PROJECT_TRAIN = """
import torch
from helpers import pick_device

def main():
    device = pick_device()
    model = torch.nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

# A Hydra script whose config (train.yaml, beside it) holds the device.
_HYDRA_TRAIN = """
import hydra
import torch

@hydra.main(config_path=".", config_name="train")
def main(cfg):
    model = torch.nn.Linear(4, 2).to(torch.device(cfg.device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""


# A CUDA device chosen by an environment flag compared with strings (``os.getenv("DEVICE", "cuda") ==
# "cuda"``): the port moves the device and leaves the test as it is (XLA105 and XLA509 alike).
ENVIRONMENT_FLAG = """
import os
import torch


def table(n):
    device = torch.device("cuda") if os.getenv("DEVICE", "cuda") == "cuda" else torch.device("cpu")
    return torch.arange(n, device=device)
"""
ENVIRONMENT_FLAG_PORTED = substituted(
    ENVIRONMENT_FLAG,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    ('device = torch.device("cuda") if', "device = torch_xla.device() if"),
)
