"""Executed: a model on the XLA device and a DataLoader handed to an evaluation function of
another module whose loop feeds the model one part of each batch unmoved (`x`: on CUDA the
model's DataParallel scattered it) and reads another on the host (`meta["center"].numpy()`),
on torch_xla 2.9 (CPU), with the checks of tests/support/executed.py.  The port does not wrap
the loader in a device loader, which would move `meta` too: it reports XLA116 at the call.
With the move the finding asks for (the model's inputs, in the function), the project trains
like the original in eager mode (same losses, same evaluation), one graph per step.

Negative control: the loader wrapped in `pl.MpDeviceLoader` where it is handed (as XLA302 did)
crashes at the host read ("can't convert xla:0 device type tensor to numpy")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.executed import Executed, Run, converted_project, run_script, training_problems
from tests.support.projects import unfixed_findings, write_project

pytestmark = pytest.mark.executed

LIB = """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Points(Dataset):
    def __init__(self, count):
        generator = torch.Generator().manual_seed(1)
        self.x = torch.randn(count, 4, generator=generator)
        self.y = torch.randn(count, 1, generator=generator)
        self.center = torch.randn(count, 2, generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index], {"center": self.center[index]}


def validate(loader, model):
    model.eval()
    with torch.no_grad():
        for x, y, meta in loader:
            out = model(x)
            centers = meta["center"].numpy()
            error = (out.cpu() - y).abs().mean().item()
            print(f"val {error:.6f} {np.abs(centers).sum():.6f}")
"""

MAIN = """\
import torch
import torch.nn as nn

from lib import Points, validate


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = nn.DataParallel(nn.Linear(4, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_set = Points(80)
    for step in range(10):
        x, y = train_set.x[step * 8 : step * 8 + 8].to(device), train_set.y[step * 8 : step * 8 + 8].to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")
    val_loader = torch.utils.data.DataLoader(Points(12), batch_size=4)
    validate(val_loader, model)


if __name__ == "__main__":
    main()
"""

FILES = {"lib.py": LIB, "main.py": MAIN}
FORWARD = "            out = model(x)\n"
MOVED_FORWARD = "            out = model(x.to(next(model.parameters()).device))\n"
HANDED = "    validate(val_loader, model)\n"
VAL_LINE = re.compile(r"^val (\S+) (\S+)$", re.MULTILINE)


def _eager(tmp_path: Path) -> Run:
    return run_script(write_project(tmp_path / "eager", "host-reads", FILES), "main.py", on_xla=False)


def test_a_loader_whose_batch_parts_are_read_on_the_host_is_reported_not_wrapped(tmp_path: Path) -> None:
    eager = _eager(tmp_path)
    folder = converted_project(tmp_path / "ported", "host-reads", FILES)
    ported = (folder / "main.py").read_text()
    assert "MpDeviceLoader" not in ported and HANDED in ported
    found = unfixed_findings(eager.folder, ["main.py", "lib.py"], "2.9")["main.py"]
    assert any(
        rule == "XLA116" and line == 21 and 'reads parts of each batch on the host (`meta["center"].numpy()`)' in text
        for rule, line, text in found
    ), found
    lib = folder / "lib.py"
    assert FORWARD in lib.read_text()
    lib.write_text(lib.read_text().replace(FORWARD, MOVED_FORWARD))  # what the finding asks for
    run = run_script(folder, "main.py")
    problems = training_problems(run, eager, Executed("main.py"))
    assert not problems, problems
    assert len(VAL_LINE.findall(eager.output)) == 3
    assert [float(v) for line in VAL_LINE.findall(run.output) for v in line] == pytest.approx(
        [float(v) for line in VAL_LINE.findall(eager.output) for v in line], rel=1e-3, abs=1e-5
    )


def test_the_loader_wrapped_in_a_device_loader_crashes_at_the_host_read(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "wrapped", "host-reads", FILES)
    main = folder / "main.py"
    main.write_text(
        main.read_text()
        .replace("import torch_xla\n", "import torch_xla\nimport torch_xla.distributed.parallel_loader as pl\n", 1)
        .replace(HANDED, "    validate(pl.MpDeviceLoader(val_loader, device), model)\n")
    )
    run = run_script(folder, "main.py", check=False)
    assert run.returncode != 0
    assert "can't convert xla:0 device type tensor to numpy" in run.stderr, run.stderr[-2000:]
