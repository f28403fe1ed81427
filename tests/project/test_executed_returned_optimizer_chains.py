"""Executed: a factory builds a model and an optimizer over it through a chain of helpers
(``get_optimizer(model)`` groups the parameters with ``param_groups(model)`` and builds the
optimizer with ``grouped_optimizer(groups, lr)``), bound through a conditional (``optimizer =
get_optimizer(...) if not inference_only else None``), and returns both; the caller moves the
model afterwards. XLA203 moves the model before the optimizer is built, and the converted script
trains on XLA with the eager original's losses, one graph per step. The negative control, the
same conversion without XLA203, steps the stale CPU copies: the model trains nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

TRAIN = """\
import torch
from torch import nn


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = torch.optim.AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    groups = param_groups(model, 0.01)
    return grouped_optimizer(groups, lr)


def build(lr, inference_only=False):
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = get_optimizer(model, lr) if not inference_only else None
    return "tokenizer", model, optimizer


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok, model, optimizer = build(0.05)
    model.to(device)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for step in range(10):
        optimizer.zero_grad()
        loss = (model(x.to(device)) - y.to(device)).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")
    print(f"weights on {next(model.parameters()).device.type}")


if __name__ == "__main__":
    main()
"""

CASE = Executed(script="train.py")


def test_an_optimizer_built_through_helpers_and_returned_trains_on_xla(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "chains", {"train.py": TRAIN}), "train.py", on_xla=False)
    folder = converted_project(tmp_path / "xla", "chains", {"train.py": TRAIN})
    converted = (folder / "train.py").read_text()
    assert "get_optimizer(model.to(torch_xla.device()), lr) if not inference_only else None" in converted, converted
    run = run_script(folder, "train.py")
    assert training_problems(run, eager, CASE) == []
    assert "weights on xla" in run.output


def test_without_xla203_the_optimizer_steps_stale_cpu_copies(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "chains", {"train.py": TRAIN}), "train.py", on_xla=False)
    folder = converted_project(tmp_path / "xla", "chains", {"train.py": TRAIN}, RuleSelection(ignore=("XLA203",)))
    run = run_script(folder, "train.py")
    assert training_problems(run, eager, CASE) != []
    assert len(set(run.losses)) == 1, run.losses  # the model on the device never changes
