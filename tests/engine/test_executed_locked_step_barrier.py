"""Executed: two learner threads (torchbeast's monobeast shape) each run a loop whose ``learn()``
takes the optimizer step under its default ``threading.Lock()``, on torch_xla 2.9 (CPU).  The
port puts the step barrier inside the lock, right after the step: both threads finish every
step, one graph run per step.  The negative control, the port as it used to be written (the
barrier at the end of the thread's loop, outside the lock): one thread's ``torch_xla.sync()``
runs while the other is inside its step, and that thread fails (``RuntimeError: Check failed:
data()->tensor_data``).  Measured before writing this test: 14 of 14 runs of the old port failed
(30 steps per thread, also 6 runs at once on 2 cores), 0 of 7 with the barrier inside the lock;
the control still runs up to three times and asks for one failure, so a scheduler that happens
to keep the threads apart once does not fail the suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import convert_folder, run_script

pytestmark = pytest.mark.executed

STEPS = 30
THREADED = f"""\
import threading

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = torch.nn.Linear(16, 4).to(device)
optimizer = torch.optim.RMSprop(model.parameters())
errors = []


def learn(x, lock=threading.Lock()):
    with lock:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def batch_and_learn(i):
    try:
        for _ in range({STEPS}):
            learn(torch.randn(8, 16).to(device))
    except RuntimeError as e:
        errors.append(str(e).splitlines()[0])
    print("thread", i, "finished")


threads = [threading.Thread(target=batch_and_learn, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("thread errors", errors)
if errors:
    raise SystemExit(1)
"""
INSIDE = "        xm.optimizer_step(optimizer)\n        torch_xla.sync()\n"
LOOP_END = "            learn(torch.randn(8, 16).to(device))\n"


def _ported(folder: Path) -> str:
    folder.mkdir(parents=True)
    (folder / "train.py").write_text(THREADED)
    convert_folder(folder)
    return (folder / "train.py").read_text()


def test_the_barrier_inside_the_lock_lets_both_threads_step(tmp_path: Path) -> None:
    ported = _ported(tmp_path / "ported")
    assert INSIDE in ported, ported
    assert ported.count("torch_xla.sync()") == 1, ported  # none at the end of the thread's loop
    run = run_script(tmp_path / "ported", "train.py")
    assert "thread errors []" in run.output, run.output + run.stderr
    assert run.executions == 2 * STEPS, run.output  # one graph per step of each thread


def test_the_old_barrier_outside_the_lock_races_with_the_other_threads_step(tmp_path: Path) -> None:
    """The negative control: the port as c233071b wrote it (the barrier ends the thread's loop)."""
    ported = _ported(tmp_path / "ported")
    old = ported.replace(INSIDE, "        xm.optimizer_step(optimizer)\n").replace(
        LOOP_END, LOOP_END + "            torch_xla.sync()\n"
    )
    assert old != ported
    (tmp_path / "ported" / "train.py").write_text(old)
    outputs = []
    for _ in range(3):
        run = run_script(tmp_path / "ported", "train.py", check=False)
        outputs.append(run.output + run.stderr)
        if run.returncode != 0:
            break
    assert run.returncode != 0, outputs
    assert "tensor_data" in outputs[-1], outputs[-1]
