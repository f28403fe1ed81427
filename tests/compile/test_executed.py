"""Executed: a training script that compiles its model by default (``compile = True``,
as nanoGPT has it) runs converted, compiled by dynamo with the openxla backend, on
torch_xla 2.9 (CPU), and trains like the original run in eager mode
(``--compile=False``: no compiler at all).  The checks are tests/support/executed.py's
(losses, ran on XLA, steady state), plus: dynamo captured one graph, with openxla, so
the model was compiled once and never again.  The negative control converts it without
XLA721: the default inductor backend fails on the XLA device."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    loss_problems,
    run_eager,
    run_unported,
    run_xla,
    steady_problems,
    xla_problems,
)

pytestmark = pytest.mark.executed

CASE = Executed("nanogpt_compile.py")
EAGER = ("--compile=False",)


def dynamo_graphs(output: str) -> tuple[int, list[str]]:
    found = re.search(r"^DYNAMO_GRAPHS (\d+)((?: \S+)*)$", output, re.MULTILINE)
    return (int(found.group(1)), found.group(2).split()) if found else (0, [])


def test_compiled_script_trains_with_openxla_like_its_eager_run(tmp_path: Path) -> None:
    eager = run_eager(replace(CASE, args=EAGER), tmp_path)
    xla = run_xla(CASE, tmp_path)
    assert 'model = torch.compile(model, backend="openxla")' in (xla.folder / CASE.script).read_text()
    assert len(eager.losses) >= 8, eager.output
    problems = [*loss_problems(xla, eager), *xla_problems(xla), *steady_problems(xla, CASE)]
    graphs, backends = dynamo_graphs(xla.output)
    if (graphs, backends) != (1, ["openxla"]):
        problems.append(f"dynamo compiled {graphs} graph(s) with {backends}, expected one with openxla")
    assert not problems, "\n".join(problems)


def test_without_the_openxla_backend_the_converted_script_fails(tmp_path: Path) -> None:
    folder, result = run_unported(CASE, tmp_path / "xla", "XLA721")
    assert "torch.compile(model)" in (folder / CASE.script).read_text()
    assert result.returncode != 0 and "InductorError" in result.stderr, result.stderr[-3000:]
