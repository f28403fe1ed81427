"""Executed: a script the device rules cannot port runs as it was, with the checks of
tests/support/executed.py, and a script whose inputs only DataParallel moved fails as XLA116
says.  The fixtures the device rules port are trained in tests/end_to_end/test_executed.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import (
    RUN_TIMEOUT,
    XLA_RUNNER,
    Executed,
    loss_problems,
    run_command,
    run_eager,
    run_environment,
    run_xla,
)
from tests.support.paths import FIXTURES

pytestmark = pytest.mark.executed


def test_a_script_without_a_device_is_left_on_the_cpu_as_its_finding_says(tmp_path: Path) -> None:
    """No half port: the device-less L-BFGS script comes back unchanged with one finding
    (XLA005), and run through the XLA runner it still trains like the original, on the
    CPU: no graph is compiled."""
    case = Executed("lbfgs_no_device.py")
    conversion = convert_source((FIXTURES / case.script).read_bytes())
    assert not conversion.changed
    assert [f.rule for f in conversion.findings] == ["XLA005"]
    eager = run_eager(case, tmp_path)
    xla = run_xla(case, tmp_path)
    assert len(eager.losses) == 10 and not loss_problems(xla, eager)
    assert xla.compiles[-1] == 0, xla.compiles


HOST_HELPER = """\
import torch
import torch.nn as nn


def to_gpu(x):
    return x.cuda() if torch.cuda.is_available() else x


def to_host(x):
    if torch.cuda.is_available():
        return x.cpu()
    return x


model = to_gpu(nn.Linear(4, 3))
with torch.no_grad():
    top = to_host(model(to_gpu(torch.randn(8, 4))).topk(2)[1]).detach().numpy()
print("top", top.shape)
"""


def test_a_move_to_the_host_under_an_accelerator_check_reaches_numpy_on_xla(tmp_path: Path) -> None:
    """The check around ``x.cpu()`` goes (XLA104): the XLA tensor reaches the host, and
    ``.numpy()`` after it no longer raises (TypeError: can't convert xla:0 device type tensor)."""
    output = convert_source(HOST_HELPER.encode()).output
    assert isinstance(output, bytes) and b"is_available" not in output
    script = tmp_path / "host_helper.py"
    script.write_bytes(output)
    printed = run_command([sys.executable, str(script)], tmp_path, run_environment(PJRT_DEVICE="CPU"))
    assert "top (8, 2)" in printed


SCATTERED = """\
import torch
import torch.nn as nn


class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.embed = nn.Linear(5, 4)

    def forward(self, inputs):
        img, annot = inputs
        return ((self.backbone(img) - self.embed(annot)) ** 2).mean()


def main():
    torch.manual_seed(0)
    model = Det()
    if torch.cuda.is_available():
        model = nn.DataParallel(model).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        img, annot = torch.randn(8, 4), torch.randn(8, 5)
        if torch.cuda.is_available():
            img = img.cuda()
        loss = model([img, annot])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
"""


def test_an_input_only_data_parallel_moved_stays_on_the_cpu_as_xla116_says(tmp_path: Path) -> None:
    """The port removes DataParallel, whose scatter moved ``annot`` to the GPU: converted, the
    script's forward fails on the CPU tensor (XLA116 names it at the call); the original
    runs on the CPU.  (Elementwise ops take a CPU tensor with an XLA one, copying it to the
    device; a layer does not: 'Expected XLA tensor'.)"""
    script = tmp_path / "main.py"
    script.write_text(SCATTERED)
    assert "step 2 loss" in run_command([sys.executable, str(script)], tmp_path, run_environment())
    conversion = convert_source(SCATTERED)
    (finding,) = [f for f in conversion.findings if f.rule == "XLA116"]
    assert finding.message.startswith("`annot` reaches `model` on the CPU: `nn.DataParallel` scattered")
    assert isinstance(conversion.output, str)
    script.write_text(conversion.output)
    result = subprocess.run(
        [sys.executable, str(XLA_RUNNER), str(script)],
        cwd=tmp_path,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode != 0 and "step 0 loss" not in result.stdout
    assert "Expected XLA tensor" in result.stderr, result.stderr[-2000:]
