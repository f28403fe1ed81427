"""Programs and helpers the device rules' cases share."""

from __future__ import annotations

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
