"""Executed: a flag that picks the device and also sets a CUDA choice for code the tool cannot see
(SEAL's Python/Main.py: ``args.cuda = not args.no_cuda and torch.cuda.is_available()``, then
``cmd_args.mode = 'gpu' if args.cuda else 'cpu'`` on the ``cmd_args`` of ``from main import *``, a
module cloned beside the project whose loop moves each batch with ``.cuda()`` when the mode is
'gpu').  The port leaves the flag as written (XLA104, an error that says why; XLA307 reports the
loop the tool cannot find): on torch_xla 2.9 (PJRT_DEVICE=CPU, no CUDA) the converted script runs as
the original does there, on the CPU, and trains.

Negative control: with the flag's check dropped (the port as it was), the mode is 'gpu' and the
library's ``.cuda()`` raises before the first step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, run_script

pytestmark = pytest.mark.executed

MAIN = """\
import os
import sys

import torch
sys.path.append(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "ext_lib"))
from main import *

use_cuda = torch.cuda.is_available()
cmd_args.mode = "gpu" if use_cuda else "cpu"
torch.manual_seed(0)
classifier = Classifier()
if cmd_args.mode == "gpu":
    classifier = classifier.cuda()
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(5)]
for epoch in range(2):
    loop_dataset(batches, classifier, optimizer=optimizer)
"""
# The module outside the project (pytorch_DGCNN's main.py, in short).
LIBRARY = """\
import argparse

import torch

cmd_args = argparse.Namespace(mode="cpu")


class Classifier(torch.nn.Linear):
    def __init__(self):
        super().__init__(4, 2)


def loop_dataset(batches, classifier, optimizer=None):
    for step, (x, y) in enumerate(batches):
        if cmd_args.mode == "gpu":
            x, y = x.cuda(), y.cuda()
        loss = (classifier(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.6f}")
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "ext_lib").mkdir()
    (tmp_path / "ext_lib" / "main.py").write_text(LIBRARY)
    return converted_project(tmp_path / "seal", "seal", {"Python/Main.py": MAIN})


def test_the_flag_is_left_and_the_script_runs_as_the_original_does_on_an_xla_host(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    assert (tmp_path / "ext_lib" / "main.py").read_text() == LIBRARY  # outside the project: not converted
    ported = (folder / "Python" / "Main.py").read_text()
    assert "use_cuda = torch.cuda.is_available()" in ported
    run = run_script(folder / "Python", "Main.py", runner=False)
    assert len(run.losses) == 10


def test_with_the_check_dropped_the_librarys_cuda_call_raises(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    script = folder / "Python" / "Main.py"
    script.write_text(script.read_text().replace("use_cuda = torch.cuda.is_available()", "use_cuda = True"))
    run = run_script(folder / "Python", "Main.py", runner=False, check=False)
    assert run.returncode != 0
    assert "x.cuda()" in run.stderr and "RuntimeError" in run.stderr
    assert "step 0 loss" not in run.output


# The check picks a device string itself for the unread module (the reviewed regression): the port
# makes it "xla", and the module's own moves (``.to(cfg.device)``) take the batches to the XLA device.
DEVICE_MAIN = """\
import os
import sys

import torch
sys.path.append(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "ext_lib"))
from main import *

cfg.device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
classifier = Classifier().to(cfg.device)
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(5)]
for epoch in range(2):
    loop_dataset(batches, classifier, optimizer=optimizer)
"""
DEVICE_LIBRARY = LIBRARY.replace(
    'cmd_args = argparse.Namespace(mode="cpu")', 'cfg = argparse.Namespace(device="cpu")'
).replace(
    """        if cmd_args.mode == "gpu":
            x, y = x.cuda(), y.cuda()
""",
    """        x, y = x.to(cfg.device), y.to(cfg.device)
        print(f"batch on {x.device.type}")
""",
)
# The check sets the mode word itself (no flag): left as is, with an error.
CHECKED_MAIN = MAIN.replace("use_cuda = torch.cuda.is_available()\n", "").replace(
    '"gpu" if use_cuda', '"gpu" if torch.cuda.is_available()'
)


def _device_project(tmp_path: Path) -> Path:
    (tmp_path / "ext_lib").mkdir()
    (tmp_path / "ext_lib" / "main.py").write_text(DEVICE_LIBRARY)
    return converted_project(tmp_path / "seal", "seal", {"Python/Main.py": DEVICE_MAIN})


def test_a_device_string_the_check_picks_goes_to_the_unread_module_as_xla(tmp_path: Path) -> None:
    folder = _device_project(tmp_path)
    ported = (folder / "Python" / "Main.py").read_text()
    assert 'cfg.device = "xla"\n' in ported
    run = run_script(folder / "Python", "Main.py", runner=False)
    assert len(run.losses) == 10
    assert run.output.count("batch on xla") == 10


def test_with_the_check_kept_around_the_ported_string_the_batches_stay_on_the_cpu(tmp_path: Path) -> None:
    """Negative control: the half port the review found (``"xla" if torch.cuda.is_available() else
    "cpu"``) trains on the CPU on an XLA host."""
    folder = _device_project(tmp_path)
    script = folder / "Python" / "Main.py"
    script.write_text(
        script.read_text().replace('cfg.device = "xla"', 'cfg.device = "xla" if torch.cuda.is_available() else "cpu"')
    )
    run = run_script(folder / "Python", "Main.py", runner=False)
    assert len(run.losses) == 10
    assert run.output.count("batch on cpu") == 10 and "batch on xla" not in run.output


def test_a_mode_word_the_check_sets_itself_is_left_and_the_script_runs_as_the_original_does(tmp_path: Path) -> None:
    (tmp_path / "ext_lib").mkdir()
    (tmp_path / "ext_lib" / "main.py").write_text(LIBRARY)
    folder = converted_project(tmp_path / "seal", "seal", {"Python/Main.py": CHECKED_MAIN})
    script = folder / "Python" / "Main.py"
    assert 'cmd_args.mode = "gpu" if torch.cuda.is_available() else "cpu"' in script.read_text()
    run = run_script(folder / "Python", "Main.py", runner=False)
    assert len(run.losses) == 10
    script.write_text(script.read_text().replace('"gpu" if torch.cuda.is_available() else "cpu"', '"gpu"'))
    failed = run_script(folder / "Python", "Main.py", runner=False, check=False)  # the check folded: .cuda() raises
    assert failed.returncode != 0 and "RuntimeError" in failed.stderr
