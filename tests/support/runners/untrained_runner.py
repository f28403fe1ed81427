"""Runs a script with every optimizer step undone: ``python untrained_runner.py SCRIPT``
(in eager mode, or on XLA when the script uses torch_xla).

Same seeds, same data, same forward passes, but no parameter changes: the checkpoints
it writes hold the weights the script starts from, its losses those of the untrained
model.  The executed tests measure the training updates against them (trained minus
untrained), so that untrained or stale weights cannot pass for trained ones.
"""

from __future__ import annotations

import runpy
import sys

import torch
from in_process import run_launchers_in_process
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

_before: dict[int, list[tuple[torch.Tensor, torch.Tensor]]] = {}


def _remember(optimizer: torch.optim.Optimizer, args: object, kwargs: object) -> None:
    _before[id(optimizer)] = [(p, p.detach().clone()) for group in optimizer.param_groups for p in group["params"]]


def _undo(optimizer: torch.optim.Optimizer, args: object, kwargs: object) -> None:
    with torch.no_grad():
        for parameter, value in _before.pop(id(optimizer), []):
            parameter.copy_(value)


def main() -> None:
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, script.rpartition("/")[0] or ".")
    register_optimizer_step_pre_hook(_remember)
    run_launchers_in_process()
    register_optimizer_step_post_hook(_undo)
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
