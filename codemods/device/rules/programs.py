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
