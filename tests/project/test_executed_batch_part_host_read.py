"""Executed: a training loop whose batch is a pair of graph objects (PyG's `Data` shape: tensor
attributes, a `.to(device)` of its own), unpacked in the loop (`data, data_aug = data`), one part
moved and the other read on the host (`data_aug.edge_index.numpy()`), edited, and only then moved,
on torch_xla 2.9 (CPU), with the checks of tests/support/executed.py.  The port does not wrap the
loader in a device loader (XLA302): the loop keeps its own moves and gets the step barrier, and
trains like the original in eager mode (same losses), one graph per step.

Negative control: the loader wrapped in `pl.MpDeviceLoader` (as XLA302 did) moves `data_aug`
through its `__dict__` too, and the host read crashes ("can't convert xla:0 device type tensor
to numpy")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, eager_and_converted_runs, run_script, training_problems

pytestmark = pytest.mark.executed

TRAIN = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Graph:
    def __init__(self, x, edge_index):
        self.x = x
        self.edge_index = edge_index

    def to(self, device):
        return Graph(self.x.to(device), self.edge_index.to(device))


class Pairs(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, index):
        return index


def collate(indices):
    generator = torch.Generator().manual_seed(indices[0])
    x = torch.randn(6, 4, generator=generator)
    edge_index = torch.randint(0, 6, (2, 8), generator=generator)
    return Graph(x, edge_index), Graph(x * 0.5, edge_index.flip(0))


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = nn.Linear(4, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(Pairs(), batch_size=1, collate_fn=collate)
    for step, data in enumerate(loader):
        data, data_aug = data
        data = data.to(device)
        edge_idx = data_aug.edge_index.numpy()
        order = edge_idx[0].argsort(kind="stable")
        data_aug.edge_index = torch.tensor(edge_idx[:, order])
        data_aug = data_aug.to(device)
        optimizer.zero_grad()
        out, out_aug = model(data.x), model(data_aug.x)
        loss = (out[data.edge_index[0]] - out_aug[data_aug.edge_index[1]]).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    main()
"""

FILES = {"train.py": TRAIN}
LOOP = "    for step, data in enumerate(loader):\n"
CASE = Executed("train.py")


def test_a_batch_part_read_on_the_host_before_its_move_keeps_the_loader(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "batch-part-host-read", FILES, LOOP)
    ported = (run.folder / "train.py").read_text()
    assert "MpDeviceLoader" not in ported and "torch_xla.sync()" in ported, ported
    assert len(eager.losses) == 10
    problems = training_problems(run, eager, CASE)
    assert not problems, problems


def test_the_loader_wrapped_in_a_device_loader_crashes_at_the_host_read(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "wrapped", "batch-part-host-read", FILES)
    script = folder / "train.py"
    script.write_text(
        script.read_text()
        .replace("import torch_xla\n", "import torch_xla\nimport torch_xla.distributed.parallel_loader as pl\n", 1)
        .replace(LOOP, "    for step, data in enumerate(pl.MpDeviceLoader(loader, device)):\n")
    )
    run = run_script(folder, "train.py", check=False)
    assert run.returncode != 0
    assert "can't convert xla:0 device type tensor to numpy" in run.stderr, run.stderr[-2000:]
