"""A single-file run says what a whole-project run says of a module it does not convert, for the
choices a tensor's own CUDA check makes there:

- ``dtype = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor`` whose CPU tensor then goes
  into ``torch.max`` with a device tensor (PyTorch_YOLOv3's yolo_layer): on XLA "Expected XLA tensor";
  the whole run reports XLA107/XLA117 there, and the single-file run holds it (XLA003);
- the same choice whose CPU tensors only meet device tensors in arithmetic and a host read
  (Towards-Realtime-MOT's loss): it runs on XLA, and neither run reports an error;
- ``if x.is_cuda: labels = labels.cuda()`` whose ``labels`` (a 1-D CPU tensor) is only iterated and
  its elements compared with device tensors (PyTorch_YOLOv3's postprocess): the skipped move runs on
  XLA, no CUDA device choice is held; a use in ``torch.cat`` with device tensors is (negative control)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project
from tests.support.tensor_choices import COMPARED, CONCATENATED, IN_ARITHMETIC, IN_MAX, LAYER, POSTPROCESS

TRAIN = """import torch

from {module} import {name}


def main(batches):
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in batches:
        out = model(x.cuda())
        {call}
        optimizer.zero_grad()
        out.sum().backward()
        optimizer.step()
"""


def _runs(
    tmp_path: Path, module: str, text: str, name: str, call: str, target: str
) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    files = {f"{module}.py": text, "train.py": TRAIN.format(module=module, name=name, call=call)}
    folder = write_project(tmp_path, "proj", files)
    single = [f for f in unfixed_findings(folder, ["train.py"], target)["train.py"] if f[0] == "XLA003"]
    whole = unfixed_findings(folder, ["train.py", f"{module}.py"], target)[f"{module}.py"]
    return single, [f for f in whole if f[0] in ("XLA107", "XLA117")]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_cpu_type_chosen_into_torch_max_is_held_as_the_whole_run_reports_it(tmp_path: Path, target: str) -> None:
    single, whole = _runs(tmp_path, "layer", LAYER.format(use=IN_MAX), "L", "L()(out)", target)
    assert sorted(code for code, _, _ in whole) == ["XLA107", "XLA117"] and {line for _, line, _ in whole} == {12}
    assert len(single) == 1 and "layer.py" in single[0][2] and "`torch.cuda.FloatTensor` (line 12)" in single[0][2]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_cpu_type_chosen_into_arithmetic_is_reported_by_neither_run(tmp_path: Path, target: str) -> None:
    assert _runs(tmp_path, "layer", LAYER.format(use=IN_ARITHMETIC), "L", "L()(out)", target) == ([], [])


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_skipped_move_whose_elements_are_compared_holds_nothing(tmp_path: Path, target: str) -> None:
    single, _ = _runs(tmp_path, "utils", POSTPROCESS.format(use=COMPARED), "postprocess", "postprocess(out)", target)
    assert single == []


def test_a_skipped_move_whose_value_is_concatenated_with_device_tensors_is_held(tmp_path: Path) -> None:
    single, _ = _runs(tmp_path, "utils", POSTPROCESS.format(use=CONCATENATED), "postprocess", "postprocess(out)", "2.9")
    assert len(single) == 1 and "`prediction.is_cuda` (line 7)" in single[0][2], single
