"""Executed: deep_gcns_torch's ogbn_proteins shape (tests/project/test_string_index_namespaces.py):
``--device`` an int, ``torch.device("cuda:" + str(args.device))`` in train.py, ``.to(args.device)`` in
model.py's ``Net.__init__``.  Converted as a project and run on torch_xla 2.9 (CPU) with
``--use_gpu``, the model trains like the original run eagerly on the CPU (its CUDA device made the
CPU by hand: the original fails on a host without CUDA), with no new graph after the warm-up.  The
negative control is the port without the fix (model.py's ``.to(args.device)`` left as it was): ``.to(0)`` is cuda:0, which raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_string_index_namespaces import STEPS, files
from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed


def _eager_files() -> dict[str, str]:
    """The original with its CUDA device made the CPU (the reference run)."""
    original = files()
    return {
        **original,
        "model.py": original["model.py"].replace(".to(args.device)", '.to("cpu")'),
        "train.py": original["train.py"].replace('torch.device("cuda:" + str(args.device))', 'torch.device("cpu")'),
    }


def test_converted_as_a_project_the_model_trains_on_xla_like_the_original(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "strindex", _eager_files()), "train.py", on_xla=False)
    assert len(eager.losses) == STEPS
    ported = converted_project(tmp_path / "ported", "strindex", files())
    assert ".to(torch_xla.device())" in (ported / "model.py").read_text()
    run = run_script(ported, "train.py", "--use_gpu")
    assert run.losses == pytest.approx(eager.losses, rel=1e-4)
    assert run.stepped_devices == ("xla",)
    problems = training_problems(run, eager, Executed("train.py", args=("--use_gpu",)))
    assert not problems, problems


def test_negative_control_the_integer_device_left_in_the_model_raises(tmp_path: Path) -> None:
    ported = converted_project(tmp_path / "ported", "strindex", files())
    model = ported / "model.py"
    model.write_text(model.read_text().replace(".to(torch_xla.device())", ".to(args.device)"))
    result = run_script(ported, "train.py", "--use_gpu", check=False)
    assert result.returncode != 0 and "step 0 loss" not in result.output
    assert "Found no NVIDIA driver" in result.stderr, result.stderr[-2000:]
