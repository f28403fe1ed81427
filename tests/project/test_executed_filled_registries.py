"""Executed: the driver loop of tests/project/test_filled_registries.py (a learner built from a
registry filled by item assignments, whose ``train`` takes the optimizer step), converted as a
project and run on torch_xla 2.9 (CPU): the barrier the port puts in the driver's loop makes it
train like the original in eager mode (same losses, XLA parameters stepped, no new graph after the
warm-up).  Negative control: the same converted project with that barrier taken out (as the port
left it before it followed the registry) compiles a new, bigger graph at every step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_filled_registries import files
from tests.support.executed import (
    Executed,
    eager_and_converted_project,
    run_script,
    step_ends,
    training_problems,
    unbarriered_problems,
)

pytestmark = pytest.mark.executed

CASE = Executed("train.py")
PORTED, UNBARRIERED = step_ends("        ")


def _renamed(project: dict[str, str]) -> dict[str, str]:
    """The project with its driver as ``train.py`` (what the executed helpers run)."""
    return {("train.py" if name == "run.py" else name): source for name, source in project.items()}


def test_the_driver_loop_trains_on_xla_with_one_graph_per_step(tmp_path: Path) -> None:
    eager, converted, run = eager_and_converted_project(tmp_path, "registry", _renamed(files()))
    assert PORTED in converted, converted
    problems = training_problems(run, eager, CASE)
    assert not problems, problems


def test_without_the_barrier_each_step_compiles_a_bigger_graph(tmp_path: Path) -> None:
    eager, converted, _ = eager_and_converted_project(tmp_path, "registry", _renamed(files()))
    script = tmp_path / "xla" / "train.py"
    script.write_text(converted.replace(PORTED, UNBARRIERED))
    problems = unbarriered_problems(run_script(script.parent, "train.py"), eager, CASE)
    assert not problems, problems
