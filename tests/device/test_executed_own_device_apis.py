"""Executed: TorchDrug's own device API (held-out list 21), run converted on XLA (PJRT_DEVICE=CPU),
each with a negative control that runs what the port wrote before and sees it fail:
  * ``utils.cuda(batch, device=device)``, a function of the project's ``utils`` package: it stays,
    and its body moves to the XLA device (``utils.to(<xla device>)`` raised AttributeError);
  * ``Graph.to`` calling the class's own ``self.cuda(device)``: it stays (``self.to(<xla device>)``
    called ``Graph.to`` itself, without end);
  * an edgeless graph made on its own ``device`` (``edge_list.device`` or ``"cpu"``) stays where the
    code makes it, on the CPU, whatever another function hands ``.cuda(device)`` (on XLA it could
    not be concatenated with the CPU graphs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import convert_folder, run_script

pytestmark = pytest.mark.executed

HELPERS = """\
import torch


def cuda(obj, *args, **kwargs):
    if hasattr(obj, "cuda"):
        return obj.cuda(*args, **kwargs)
    return type(obj)(cuda(x, *args, **kwargs) for x in obj)
"""

TRAIN = """\
import torch
from pkg import utils

device = torch.device("cuda")
model = torch.nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    batch = utils.cuda(torch.randn(8, 4), device=device)
    loss = model(batch).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("trained on", batch.device, next(model.parameters()).device)
"""

GRAPH = """\
import torch


class Graph:
    def __init__(self, edge_list=None):
        if edge_list is not None and len(edge_list):
            edge_list = torch.as_tensor(edge_list, dtype=torch.long)
        else:
            if isinstance(edge_list, torch.Tensor):
                device = edge_list.device
            else:
                device = "cpu"
            edge_list = torch.zeros(0, 2, dtype=torch.long, device=device)
        self.edge_list = edge_list

    def cuda(self, *args, **kwargs):
        return type(self)(self.edge_list.cuda(*args, **kwargs))

    def to(self, device):
        device = torch.device(device)
        if device.type == "cpu":
            return type(self)(self.edge_list.cpu())
        return self.cuda(device)


def move(x, device):
    return x.cuda(device)


packed = torch.cat([g.edge_list for g in (Graph([[0, 1], [1, 2]]), Graph())])
print("packed", packed.shape[0], packed.device)
moved = Graph([[0, 1]]).to(torch.device("cuda"))
print("moved", moved.edge_list.device, move(torch.ones(2), torch.device("cuda")).device)
"""


def _run(script: Path, check: bool = True) -> tuple[int, str, str]:
    result = run_script(script.parent, script.name, runner=False, check=check)
    return result.returncode, result.output, result.stderr


def test_a_project_modules_cuda_function_stays_and_its_body_moves_to_xla(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "utils").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils" / "__init__.py").write_text("from .torch import cuda\n")
    (tmp_path / "pkg" / "utils" / "torch.py").write_text(HELPERS)
    (tmp_path / "train.py").write_text(TRAIN)
    convert_folder(tmp_path)
    output = (tmp_path / "train.py").read_text()
    assert "    batch = utils.cuda(torch.randn(8, 4), device=device)\n" in output
    assert "trained on xla:0 xla:0" in _run(tmp_path / "train.py")[1]
    (tmp_path / "train.py").write_text(
        output.replace("utils.cuda(torch.randn(8, 4), device=device)", "utils.to(torch_xla.device())")
    )
    returncode, _, stderr = _run(tmp_path / "train.py", check=False)
    assert returncode != 0 and "AttributeError: module 'pkg.utils' has no attribute 'to'" in stderr, stderr[-3000:]


def test_a_classs_own_cuda_and_to_and_its_own_cpu_device_run_on_xla(tmp_path: Path) -> None:
    output = convert_source(GRAPH.encode()).output
    assert isinstance(output, bytes)
    converted = output.decode()
    assert "        return self.cuda(device)\n" in converted
    assert "device=device)\n" in converted  # the edgeless graph's own device
    script = tmp_path / "graph.py"
    script.write_text(converted)
    printed = _run(script)[1]
    assert "packed 2 cpu" in printed and "moved xla:0 xla:0" in printed
    script.write_text(converted.replace("return self.cuda(device)", "return self.to(torch_xla.device())"))
    returncode, _, stderr = _run(script, check=False)
    assert returncode != 0 and "RecursionError" in stderr, stderr[-3000:]
    script.write_text(
        converted.replace("dtype=torch.long, device=device)", "dtype=torch.long, device=torch_xla.device())")
    )
    returncode, _, stderr = _run(script, check=False)
    assert returncode != 0 and "Expected all tensors" in stderr, stderr[-3000:]
