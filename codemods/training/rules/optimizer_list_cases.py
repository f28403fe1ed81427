"""A program XLA201 and XLA301 both read: a class that steps each optimizer of a list (no training
loop) next to a wrapper that steps the optimizer it holds."""

from __future__ import annotations

# A wrapper stepping each optimizer of a list (``for op in self.optimizers: op.step()``) beside
# a wrapper whose own step is ported: the loop is one step of several optimizers, taken in
# whatever training loop calls it, and gets no barrier of its own.
OPTIMIZER_LIST_STEP = """
from torch import optim


class Several:
    def __init__(self, optimizers):
        self.optimizers = optimizers

    def step(self):
        for op in self.optimizers:
            op.step()


class Scheduled:
    def __init__(self, params):
        self._optimizer = optim.Adam(params)

    def step(self):
        self._optimizer.step()
"""
