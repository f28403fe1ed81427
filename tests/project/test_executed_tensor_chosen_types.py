"""Executed: what a single-file run holds (XLA003), or not, of a module it leaves unconverted whose
tensors a tensor's own CUDA check places (tests/project/test_tensor_chosen_types.py), run on
torch_xla 2.9 (PJRT_DEVICE=CPU) beside train.py converted alone.  Not held, it runs: the CPU type's
tensor met in arithmetic and ``.item()``; a skipped move whose 1-D CPU tensor is iterated and its
elements compared with device tensors.  Held (the negative controls), it raises "Expected XLA tensor":
the CPU type's tensor in ``torch.max`` with a device tensor; the skipped move's tensor in ``torch.cat``."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import run_script
from tests.support.fixtures import output_bytes
from tests.support.projects import write_project
from tests.support.tensor_choices import COMPARED, CONCATENATED, IN_ARITHMETIC, IN_MAX, LAYER, POSTPROCESS

pytestmark = pytest.mark.executed

TRAIN = """import torch

from layer import L
from utils import postprocess


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4).cuda()
    head = L().cuda()
    optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
    for step in range(3):
        out = model(torch.randn(2, 4).cuda())
        loss = head(out)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")
    print("kept", len(postprocess(torch.tensor([[1.0, 0.0], [2.0, 1.0]]).cuda())))


if __name__ == "__main__":
    main()
"""


def _run(tmp_path: Path, layer_use: str, postprocess_use: str) -> tuple[int, str, str]:
    files = {
        "layer.py": LAYER.format(use=layer_use),
        "utils.py": POSTPROCESS.format(use=postprocess_use),
        "train.py": TRAIN,
    }
    folder = write_project(tmp_path, "proj", files)
    train = folder / "train.py"
    train.write_bytes(output_bytes(convert_source(train.read_bytes())))  # train.py alone: the others stay
    assert "torch_xla" in train.read_text() and "is_cuda" in (folder / "utils.py").read_text()
    run = run_script(folder, "train.py", check=False)
    return run.returncode, run.output, run.stderr


def test_what_the_single_file_run_does_not_hold_runs_on_xla(tmp_path: Path) -> None:
    code, output, stderr = _run(tmp_path, IN_ARITHMETIC, COMPARED)
    assert code == 0 and "step 2 loss" in output and "kept 2" in output, stderr[-2000:]


@pytest.mark.parametrize(
    ("layer_use", "postprocess_use"), [(IN_MAX, COMPARED), (IN_ARITHMETIC, CONCATENATED)], ids=["max", "cat"]
)
def test_what_it_holds_raises_on_xla(tmp_path: Path, layer_use: str, postprocess_use: str) -> None:
    code, _, stderr = _run(tmp_path, layer_use, postprocess_use)
    assert code != 0 and "Expected" in stderr and "XLA tensor" in stderr, stderr[-2000:]
