"""XLA203 on a module moved to the CPU and back inside the training loop (a checkpoint every N
steps), run converted on torch_xla 2.9 with PJRT_DEVICE=CPU through the runner that counts its
graphs.  Each step prints how far it moved the weights.  Every run ran on XLA (a graph compiled, one
run per step at least).

* Rebuilt once, under an ``if`` beside the save's: the tool reports the round trip (the rebuild
  does not follow every move back), and the converted script does stop training after each
  round trip that no rebuild follows: the steps between move the weights by nothing.
* The negative control, rebuilt right after every move back: no finding, every step trains, and
  once the first round trip has compiled its graphs, no step compiles a new one.
* Scripted with ``torch.jit.script`` after the move: the optimizer holds the device parameters
  (no XLA203 at the optimizer, no rewrite there), the steps before the first round trip train,
  and the round trip stops them (reported).  A script that strands its optimizer is not held to a
  steady state: a step that steps the stale parameters computes something else, so the first round
  trips each compile new graphs, as part of the fault the tool reports."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import Executed, Run, run_script, steady_problems, xla_problems
from tests.support.fixtures import output_text

pytestmark = pytest.mark.executed

SCRIPT = """\
import torch
from torch import nn

torch.manual_seed(0)
device = torch.device("cuda")
model = nn.Linear(4, 1).to(device)
SCRIPTED
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(12):
    before = model.weight.detach().cpu().clone()
    x = torch.randn(8, 4).to(device)
    loss = (model(x) ** 2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} moved {(model.weight.detach().cpu() - before).norm().item():.6f}")
    if step % 4 == 3:
        model.cpu()
        torch.save(model.state_dict(), "model.pt")
        model.to(device)
REBUILT_AFTER
    if step == 5:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

MOVED = re.compile(r"^step (\d+) moved (\S+)$", re.MULTILINE)
# A round trip every 4 steps, as an epoch for steady_problems: the first compiles the trip's graphs,
# then a warm-up, then no step may compile.
EVERY_TRIP = Executed("train.py", steps_per_epoch=4)
ROUND_TRIP = "`model.cpu()` moves `model`, whose parameters `optimizer` steps, off the XLA device"


def _variant(scripted: bool, rebuilt_after_every_trip: bool) -> str:
    script = SCRIPT.replace("SCRIPTED\n", "model = torch.jit.script(model)\n" if scripted else "")
    every = "        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    script = script.replace("REBUILT_AFTER\n", every if rebuilt_after_every_trip else "")
    if rebuilt_after_every_trip:
        script = script.replace(
            "    if step == 5:\n        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n", ""
        )
    return script


def _run(source: str, folder: Path) -> Run:
    """``source`` run on XLA: its ``losses`` are how far each step moved the weights, and it ran on XLA."""
    folder.mkdir()
    (folder / "train.py").write_text(source)
    run = run_script(folder, "train.py")
    moved = MOVED.findall(run.output)
    assert [int(step) for step, _ in moved] == list(range(len(moved))), run.output
    run = replace(run, losses=[float(value) for _, value in moved])
    assert not xla_problems(run), (xla_problems(run), run.output)
    return run


def _xla203(script: str) -> tuple[str, list[tuple[int, str, bool]]]:
    conversion = convert_source(script)
    return output_text(conversion), [(f.line, f.message, f.fixed) for f in conversion.findings if f.rule == "XLA203"]


def test_a_rebuild_once_beside_the_round_trips_leaves_the_later_steps_training_nothing(tmp_path: Path) -> None:
    converted, findings = _xla203(_variant(scripted=False, rebuilt_after_every_trip=False))
    # (lines of the converted script: XLA515 seeds the device after torch.manual_seed, line 4)
    assert [(line, fixed) for line, _, fixed in findings] == [(20, False)]
    assert ROUND_TRIP in findings[0][1]
    moved = _run(converted, tmp_path / "once").losses
    assert len(moved) == 12
    # Steps 0-3 train; after the trip at step 3 the optimizer steps the old parameters (4, 5);
    # the rebuild at the end of step 5 holds the new ones (6, 7); the trip at step 7 strands it again.
    assert all(moved[s] > 1e-4 for s in (0, 1, 2, 3, 6, 7)), moved
    assert all(moved[s] == 0.0 for s in (4, 5, 8, 9, 10, 11)), moved


def test_a_rebuild_after_every_round_trip_trains_every_step(tmp_path: Path) -> None:
    """The negative control: no finding, and no step is lost."""
    converted, findings = _xla203(_variant(scripted=False, rebuilt_after_every_trip=True))
    assert findings == []
    run = _run(converted, tmp_path / "every")
    assert len(run.losses) == 12 and all(v > 1e-4 for v in run.losses), run.losses
    assert not steady_problems(run, EVERY_TRIP), steady_problems(run, EVERY_TRIP)


def test_a_scripted_module_keeps_its_place_and_its_round_trip_is_reported(tmp_path: Path) -> None:
    converted, findings = _xla203(_variant(scripted=True, rebuilt_after_every_trip=False))
    assert "model.to(torch_xla.device()).parameters()" not in converted  # (the no-op rewrite of before)
    assert [(line, fixed) for line, _, fixed in findings] == [(21, False)]
    moved = _run(converted, tmp_path / "scripted").losses
    assert all(moved[s] > 1e-4 for s in (0, 1, 2, 3)), moved  # the optimizer holds the device parameters
    assert moved[4] == 0.0 and moved[5] == 0.0, moved  # and the round trip strands it
