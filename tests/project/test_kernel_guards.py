"""A GPU-only test (``if torch.cuda.is_available():``) that builds a model of another project
module whose code runs a third-party compiled CUDA op (GFPGAN's tests build ``StyleGAN2GeneratorSFT``,
whose module uses BasicSR's ``FusedLeakyReLU``): the check stays (XLA104 names the op and the
module), since dropped the test would run the op on the XLA device, which raises there.  A test of
pure torch modules still loses its check."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

ARCH = """\
import torch
from basicsr.ops.fused_act import FusedLeakyReLU


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = FusedLeakyReLU(4)

    def forward(self, x):
        return self.act(x)
"""
# The arch module imported through an alias of the module.
TESTS = """\
import torch

import net_arch as arch


def test_net():
    if torch.cuda.is_available():
        net = arch.Net().cuda()
        net(torch.rand(1, 4, 8, 8).cuda())


def test_plain():
    if torch.cuda.is_available():
        lin = torch.nn.Linear(2, 2).cuda()
        lin(torch.rand(1, 2).cuda())
"""


def _findings(folder: Path, target: str, mode: str) -> list[tuple[str, int, str]]:
    job = Job(mode, target, RuleSelection())  # type: ignore[arg-type]
    reports = run([(str(folder / name), job) for name in ("net_arch.py", "test_net.py")], workers=1)
    return [(f.rule, f.line, f.message) for r in reports if r.path.endswith("test_net.py") for f in r.findings]


@pytest.mark.parametrize("target", TARGETS)
def test_a_gpu_only_test_of_a_model_that_runs_a_compiled_op_keeps_its_check(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_project(tmp_path / "p", "p", {"net_arch.py": ARCH, "test_net.py": TESTS})
    monkeypatch.chdir(folder)
    checks = [(line, message) for rule, line, message in _findings(folder, target, "check") if rule == "XLA104"]
    assert [line for line, _ in checks] == [7, 13]
    assert checks[0][1] == (
        "`torch.cuda.is_available()` guards code that runs `arch.Net`, whose code in net_arch.py runs "
        "`basicsr.ops.fused_act.FusedLeakyReLU`, which calls compiled CUDA kernels with no XLA implementation: left "
        "as is, so on XLA (no CUDA) the code under it is skipped, as on any host without CUDA (dropped, it would run "
        "on the XLA device and raise there); to run it on XLA, replace those ops with torch operations"
    )
    assert checks[1][1].endswith("so the code under it always runs: check dropped")
    _findings(folder, target, "write")
    converted = (folder / "test_net.py").read_text()
    assert converted.count("if torch.cuda.is_available():") == 1
    assert "    if torch.cuda.is_available():\n        net = arch.Net().to(" in converted
    _findings(folder, target, "write")
    assert (folder / "test_net.py").read_text() == converted


# BasicSR's StyleGAN2 layers (third_party.CUDA_KERNEL_LAYERS): a subclass of its generator runs its ops; a
# ConvLayer without activation or downsampling is an EqualConv2d (torch operations).
LAYERS = """\
import torch
from basicsr.archs.stylegan2_arch import ConvLayer, StyleGAN2Generator


class Generator(StyleGAN2Generator):
    pass


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = ConvLayer(3, 8, 1, bias=False, activate=False)
"""
LAYER_TESTS = """\
import torch

from net_arch import Generator, Plain


def test_generator():
    if torch.cuda.is_available():
        Generator(out_size=32).cuda()


def test_plain():
    if torch.cuda.is_available():
        Plain().cuda()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_subclass_of_a_library_layer_on_compiled_ops_keeps_the_check(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_project(tmp_path / "p", "p", {"net_arch.py": LAYERS, "test_net.py": LAYER_TESTS})
    monkeypatch.chdir(folder)
    checks = [(line, message) for rule, line, message in _findings(folder, target, "check") if rule == "XLA104"]
    assert [line for line, _ in checks] == [7, 12]
    assert checks[0][1].startswith(
        "`torch.cuda.is_available()` guards code that runs `Generator`, whose code in net_arch.py runs "
        "`basicsr.archs.stylegan2_arch.StyleGAN2Generator`, which calls compiled CUDA kernels"
    )
    assert checks[1][1].endswith("so the code under it always runs: check dropped")
