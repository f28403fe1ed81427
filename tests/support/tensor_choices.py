"""Modules whose tensors a tensor's own CUDA check places (a CPU tensor type chosen, a move skipped
on XLA), each with a use that runs beside XLA tensors and one that raises there: what the project
tests of a single-file run and their executed counterpart share."""

from __future__ import annotations

LAYER = """import numpy as np
import torch
import torch.nn as nn


class L(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        dtype = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor
        t = dtype(np.zeros((x.shape[0], 4)))
        return {use}
"""
IN_MAX = "torch.max(self.lin(x), t).sum()"
IN_ARITHMETIC = "(self.lin(x) * t).sum() + float(t.numpy().sum())"

POSTPROCESS = """import torch


def postprocess(prediction):
    kept = []
    labels = prediction[:, -1].cpu().unique()
    if prediction.is_cuda:
        labels = labels.cuda()
    for c in labels:
        {use}
    return kept
"""
COMPARED = "kept.append(prediction[prediction[:, -1] == c])"
CONCATENATED = "kept.append(torch.cat([prediction[0], labels]))"
