"""A CUDA gradient scaler runs on XLA tensors (why XLA205 is a warning and timm's NativeScaler no
XLA004 error): torch disables ``torch.cuda.amp.GradScaler()`` / ``torch.amp.GradScaler("cuda")``
only when neither CUDA nor torch_xla is importable, and it creates its scale on the loss's device.
On torch_xla 2.9 (PJRT_DEVICE=CPU) it stays enabled, its scale lives on the XLA device, an
inf batch skips the step and halves the scale, and SGD and syncfree AdamW end with the weights
of an eager CPU run under torch's CPU scaler.  Negative control: a disabled scaler steps on
the inf batch and ruins the weights, which the same checks catch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.executed

_SCRIPT = r"""
import copy, json, sys
import torch, torch.nn as nn
import torch_xla
from torch_xla.amp import syncfree

spelling, enabled = sys.argv[1], sys.argv[2] == "1"
dev = torch_xla.device()
torch.manual_seed(0)
base = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
xs = [torch.randn(5, 8) for _ in range(4)]
ys = [torch.randn(5, 4) for _ in range(4)]
xs[1][0, 0] = float("inf")


def scaler_for(device):
    if device == "cpu":
        return torch.amp.GradScaler("cpu")
    if spelling == "cuda.amp":
        return torch.cuda.amp.GradScaler(enabled=enabled)
    return torch.amp.GradScaler("cuda", enabled=enabled)


def run(device, kind):
    model = copy.deepcopy(base).to(device)
    if kind == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    elif device == "cpu":
        opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    else:
        opt = syncfree.AdamW(model.parameters(), lr=0.01)
    scaler = scaler_for(device)
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = ((model(x.to(device)) - y.to(device)) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if device != "cpu":
            torch_xla.sync()
    return model, scaler


out = {}
for kind in ("sgd", "adamw"):
    on_xla, scaler = run(dev, kind)
    eager, cpu_scaler = run("cpu", kind)
    out[kind] = {
        "enabled": scaler.is_enabled(),
        "scale_device": str(scaler._scale.device) if getattr(scaler, "_scale", None) is not None else None,
        "scale": scaler.get_scale(),
        "eager_scale": cpu_scaler.get_scale(),
        "finite": all(bool(torch.isfinite(p.cpu()).all()) for p in on_xla.parameters()),
        "diff": max(float((a.cpu() - b).abs().max()) for a, b in zip(on_xla.parameters(), eager.parameters())),
        "moved": max(float((a.cpu() - b).abs().max()) for a, b in zip(on_xla.parameters(), base.parameters())),
    }
print("RESULT " + json.dumps(out))
"""


def _run(spelling: str, enabled: bool) -> dict[str, dict[str, object]]:
    pytest.importorskip("torch_xla")
    env = {**os.environ, "PJRT_DEVICE": "CPU"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, spelling, "1" if enabled else "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    result: dict[str, dict[str, object]] = json.loads(line.removeprefix("RESULT "))
    return result


def _problems(result: dict[str, dict[str, object]]) -> list[str]:
    wrong = []
    for kind, run in result.items():
        if not run["enabled"]:
            wrong.append(f"{kind}: the scaler is disabled")
        if run["scale_device"] != "xla:0":
            wrong.append(f"{kind}: scale on {run['scale_device']}")
        if run["scale"] != run["eager_scale"] or run["scale"] != 2.0**15:
            wrong.append(f"{kind}: scale {run['scale']} (eager {run['eager_scale']}), not halved once by the inf batch")
        if not run["finite"]:
            wrong.append(f"{kind}: the inf batch reached the weights")
        if not float(run["diff"]) <= 1e-5:  # type: ignore[arg-type]
            wrong.append(f"{kind}: weights {run['diff']} from the eager run")
        if not float(run["moved"]) > 1e-3:  # type: ignore[arg-type]
            wrong.append(f"{kind}: the weights did not change")
    return wrong


@pytest.mark.parametrize("spelling", ["cuda.amp", "amp-cuda"])
def test_a_cuda_grad_scaler_trains_on_xla_like_eager(spelling: str) -> None:
    assert _problems(_run(spelling, enabled=True)) == []


def test_the_checks_catch_a_disabled_scaler() -> None:
    problems = _problems(_run("cuda.amp", enabled=False))
    assert any("disabled" in p for p in problems)
    assert any("inf batch reached the weights" in p for p in problems)
