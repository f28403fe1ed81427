"""Executed: torchbeast's monobeast shape.  ``train`` saves a dict of state dicts through a nested
``def checkpoint():`` it calls; ``test`` binds ``checkpoint = torch.load(path, map_location="cpu")``
and hands ``checkpoint["model_state_dict"]`` to load_state_dict.  The tool took the name for a
pickled module (a call of ``checkpoint`` anywhere in the file) and moved the dict after the load
(``.to(torch_xla.device())``), which raises AttributeError.  Now a name the code reads as a dict is
no module: the converted script trains on XLA like the original's eager run, then loads its
checkpoint and predicts the same.  The negative control puts the old move back: the load raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, barrier_per_step_problems, eager_and_converted_runs, run_script

pytestmark = pytest.mark.executed

STEPS = 8

TRAIN = f"""\
import torch
import torch.nn as nn


def train(path):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def checkpoint():
        torch.save({{"model_state_dict": model.state_dict(), "step": step}}, path)

    for step in range({STEPS}):
        x, y = torch.randn(8, 4), torch.randn(8, 2)
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")
    checkpoint()


def test(path):
    model = nn.Linear(4, 2)
    model.eval()
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model_state_dict"])
    print("tested", checkpoint["step"], round(float(model(torch.ones(1, 4)).sum()), 4))


if __name__ == "__main__":
    train("model.tar")
    test("model.tar")
"""

LOAD = 'checkpoint = torch.load(path, map_location="cpu")\n'


def test_a_loaded_dict_named_like_a_called_function_is_not_moved(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "dict_checkpoint", {"train.py": TRAIN}, LOAD)
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    want = eager.output.split("tested", 1)[1].split("\n", 1)[0]
    assert f"tested{want}" in run.output, run.output[-2000:]
    # The negative control: the old port moved the loaded dict.
    script = run.folder / "train.py"
    moved = 'checkpoint = torch.load(path, map_location="cpu").to(torch_xla.device())\n'
    script.write_text("import torch_xla\n" + script.read_text().replace(LOAD, moved))
    failed = run_script(run.folder, "train.py", check=False)
    assert failed.returncode != 0 and "'dict' object has no attribute 'to'" in failed.stderr, failed.stderr[-2000:]
