"""Executed: code the port used to break itself, run converted on XLA (PJRT_DEVICE=CPU), each
with a negative control that runs what the port wrote before (or the port without the part
that makes it run) and sees it fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import (
    Executed,
    barrier_per_step_problems,
    convert_folder,
    converted_project,
    free_port,
    run_script,
)
from tests.support.projects import write_project

pytestmark = pytest.mark.executed


def _converted(source: str, target: str = "2.9") -> str:
    output = convert_source(source.encode(), target=target).output
    assert isinstance(output, bytes)
    return output.decode()


def _printed(script: Path, *args: str) -> str:
    """What ``script`` prints run as it is on torch_xla (CPU); it must succeed."""
    return run_script(script.parent, script.name, *args, runner=False).output


def _fails(script: Path, error: str, *args: str) -> None:
    result = run_script(script.parent, script.name, *args, runner=False, check=False)
    assert result.returncode != 0 and error in result.stderr, result.stderr[-3000:]


RESUME = """\
import os
import torch
import torch.nn as nn

model = nn.Linear(4, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
if not os.path.isfile("ckpt.pth"):
    torch.save({"state_dict": model.state_dict(), "optimizer": opt.state_dict()}, "ckpt.pth")
saved = torch.load("ckpt.pth", map_location="cpu")["state_dict"]["weight"]
checkpoint = torch.load("ckpt.pth", map_location=lambda storage, loc: storage.cuda())
model.load_state_dict(checkpoint["state_dict"])
opt.load_state_dict(checkpoint["optimizer"])
assert torch.equal(model.weight.detach().cpu(), saved)
for step in range(3):
    loss = model(torch.randn(8, 4).cuda()).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
print("resumed on", model.weight.device)
"""


def test_a_map_location_that_moves_each_storage_to_cuda_loads_on_the_cpu(tmp_path: Path) -> None:
    """``lambda storage, loc: storage.cuda()`` becomes "cpu" (XLA403): the checkpoint loads, and
    load_state_dict copies it onto the model on the XLA device.  The lambda the port used to write
    (``storage.to(<xla device>)``) raises: a storage's ``to`` takes its device by keyword only."""
    output = _converted(RESUME)
    assert 'map_location="cpu")\n' in output and "storage" not in output
    script = tmp_path / "resume.py"
    script.write_text(output)
    _printed(script)
    assert "resumed on xla:0" in _printed(script)
    script.write_text(
        output.replace('map_location="cpu")\n', "map_location=lambda storage, loc: storage.to(torch_xla.device()))\n")
    )
    _fails(script, "TypeError")


MOVE_HELPER = """\
import torch


def cuda(xs):
    if torch.cuda.is_available():
        if not isinstance(xs, (list, tuple)):
            return xs.cuda()
        return [x.cuda() for x in xs]
    return xs
"""

GAN = """\
import torch
import torch.nn as nn
import utils

G = nn.Linear(4, 4)
D = nn.Linear(4, 1)
utils.cuda([G, D])
opt = torch.optim.Adam(list(G.parameters()) + list(D.parameters()), lr=1e-3)
for step in range(3):
    z, real = utils.cuda([torch.randn(8, 4), torch.randn(8, 4)])
    loss = D(G(z)).mean() - D(real).mean()
    opt.zero_grad(); loss.backward(); opt.step()
print("ran on", G.weight.device, z.device)
"""


def test_a_project_function_named_cuda_is_called_as_it_is_and_moves_to_xla(tmp_path: Path) -> None:
    """``utils.cuda([G, D])`` calls a function of the project's ``utils`` module: the call stays
    (XLA102 is for a tensor's or a module's ``.cuda()``) and the function's body moves to the XLA
    device.  The call the port used to write, ``utils.to(<xla device>)``, raises AttributeError."""
    (tmp_path / "utils.py").write_text(MOVE_HELPER)
    (tmp_path / "train.py").write_text(GAN)
    convert_folder(tmp_path)
    output = (tmp_path / "train.py").read_text()
    assert "utils.cuda([G, D])" in output and "utils.cuda([torch.randn(8, 4), torch.randn(8, 4)])" in output
    assert "ran on xla:0 xla:0" in _printed(tmp_path / "train.py")
    (tmp_path / "train.py").write_text(output.replace("utils.cuda([G, D])", "utils.to(torch_xla.device())"))
    _fails(tmp_path / "train.py", "AttributeError: module 'utils' has no attribute 'to'")


DIST_URL = """\
import argparse
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456", type=str)
parser.add_argument("--dist-backend", default="nccl", type=str)
parser.add_argument("--world-size", default=-1, type=int)
parser.add_argument("--rank", default=-1, type=int)


def worker(gpu, ngpus, args):
    args.rank = args.rank * ngpus + gpu
    dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                            world_size=args.world_size, rank=args.rank)
    torch.cuda.set_device(gpu)
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 2).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(8, 4).cuda(gpu, non_blocking=True)
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    print("rank", dist.get_rank(), "of", dist.get_world_size(), "trained on", next(model.parameters()).device)


if __name__ == "__main__":
    args = parser.parse_args()
    ngpus = torch.cuda.device_count()
    args.world_size = ngpus * args.world_size
    mp.spawn(worker, nprocs=ngpus, args=(ngpus, args))
"""


def test_a_dist_url_flag_given_tcp_on_the_command_line_still_joins_the_xla_group(tmp_path: Path) -> None:
    """``init_method=args.dist_url`` stays (its default made xla://), and the README's launch line
    still passes ``--dist-url tcp://...``: the xla process group gets the rank and world size
    from the runtime (XLA601), which tcp:// needs and xla:// ignores; both URLs train on XLA.  The
    group the port used to write (no rank) fails the tcp:// rendezvous."""
    output = _converted(DIST_URL)
    assert "rank=xr.global_ordinal(), world_size=xr.world_size())" in output
    script = tmp_path / "train.py"
    script.write_text(output)
    tcp = ("--dist-url", f"tcp://127.0.0.1:{free_port()}", "--world-size", "1", "--rank", "0")
    for args in (tcp, ()):
        assert "rank 0 of 1 trained on xla:0" in _printed(script, *args)
    script.write_text(output.replace(", rank=xr.global_ordinal(), world_size=xr.world_size())", ")"))
    _fails(script, "rank parameter missing", *tcp)


ENCODER = """\
import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)

    def is_cuda(self):
        return self.lstm.bias_hh_l0.data.is_cuda

    def forward(self, x):
        idx = torch.from_numpy(np.arange(x.size(0))).cuda() if self.is_cuda() else torch.from_numpy(np.arange(x.size(0)))
        return self.lstm(x.index_select(0, idx))[0].mean(1)


enc = Encoder()
if torch.cuda.is_available():
    enc = enc.cuda()
out = enc(torch.randn(3, 5, 4).cuda() if torch.cuda.is_available() else torch.randn(3, 5, 4))
print("encoded on", out.device)
"""


def test_a_modules_own_is_cuda_method_asks_its_weights_on_xla(tmp_path: Path) -> None:
    """``self.is_cuda()`` is the module's own method: the call stays (the port used to make it
    ``(self.device.type == "xla")()``, an AttributeError), and the weight's ``.is_cuda`` it returns
    becomes ``.device.type == "xla"`` (XLA117), so the index moves with the batch.  With that check
    left as it was, the index stays on the CPU and index_select fails."""
    output = _converted(ENCODER)
    assert "if self.is_cuda() else" in output and 'bias_hh_l0.data.device.type == "xla"' in output
    script = tmp_path / "encoder.py"
    script.write_text(output)
    assert "encoded on xla:0" in _printed(script)
    script.write_text(output.replace('bias_hh_l0.data.device.type == "xla"', "bias_hh_l0.data.is_cuda"))
    _fails(script, "Expected XLA tensor")


TIMED = """\
import time
import torch
import torch.nn as nn


def train(steps):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(steps)]
    elapsed = 0.0
    for step, (x, y) in enumerate(data):
        if device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
        else:
            start = time.time()
        x, y = x.to(device), y.to(device)
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if device.type == "cuda":
            end.record()
            torch.cuda.synchronize()
            elapsed += start.elapsed_time(end) / 1000
        else:
            elapsed += time.time() - start
        print(f"step {step} loss {loss.item():.6f}")
    print("timed", elapsed > 0)


train(10)
"""


def test_cuda_event_timing_checks_before_and_after_a_step_stay_together(tmp_path: Path) -> None:
    """A ``device.type == "cuda"`` check that times the step with CUDA events, and its partner after
    the step, both with an ``else`` that times with ``time.time()``: both stay (False on XLA, the
    ``else`` branches time the step), and the script trains like the eager original, one graph per
    step.  The port used to rewrite only the second check to ``== "xla"``: its branch then reads
    ``end``, which only the first check's branch binds (UnboundLocalError)."""
    eager = run_script(write_project(tmp_path / "eager", "timed", {"main.py": TIMED}), "main.py", on_xla=False)
    assert len(eager.losses) == 10
    ported = converted_project(tmp_path / "ported", "timed", {"main.py": TIMED})
    output = (ported / "main.py").read_text()
    assert output.count('if device.type == "cuda":') == 2 and "torch_xla.device()" in output
    run = run_script(ported, "main.py")
    problems = barrier_per_step_problems(run, eager, Executed("main.py"), 10)
    assert not problems, problems
    assert run.stepped_devices == ("xla",) and "timed True" in run.output
    second = output.rindex('if device.type == "cuda":')
    (ported / "main.py").write_text(output[:second] + output[second:].replace('"cuda"', '"xla"', 1))
    _fails(ported / "main.py", "UnboundLocalError")


# A stand-in for a third-party compiled op (BasicSR's basicsr/ops/fused_act: its built C++/CUDA
# extension runs every tensor that is not on the CPU), written by the test: the extension takes
# no XLA tensor.
_COMPILED_OP = """\
import torch


class FusedLeakyReLU(torch.nn.Module):
    def __init__(self, channel):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(channel))

    def forward(self, x):
        if x.device.type != "cpu":
            raise RuntimeError(f"fused_bias_act: compiled CUDA op handed a {x.device.type} tensor")
        return torch.nn.functional.leaky_relu(x + self.bias.view(1, -1, 1, 1), 0.2) * 2**0.5
"""
GPU_ONLY_TEST = """\
import torch
from basicsr.ops.fused_act import FusedLeakyReLU


def test_fused_act():
    if torch.cuda.is_available():
        net = FusedLeakyReLU(4).cuda()
        out = net(torch.rand(1, 4, 8, 8).cuda())
        assert out.shape == (1, 4, 8, 8)
    print("test done")


test_fused_act()
"""


def test_a_gpu_only_test_of_a_compiled_op_stays_skipped(tmp_path: Path) -> None:
    """GFPGAN's tests skip their body, which runs BasicSR's compiled ops, without CUDA: the check
    stays (XLA104), so the converted test passes on XLA as on any host without CUDA.  The port
    used to drop it: the body then ran the op on the XLA device, which raised."""
    for folder in ("basicsr", "basicsr/ops"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "basicsr/ops/fused_act.py").write_text(_COMPILED_OP)
    output = _converted(GPU_ONLY_TEST)
    assert "    if torch.cuda.is_available():\n" in output
    script = tmp_path / "test_arch.py"
    script.write_text(output)
    assert "test done" in _printed(script)
    script.write_text(output.replace("    if torch.cuda.is_available():\n", "    if True:\n"))
    _fails(script, "compiled CUDA op handed a xla tensor")
