"""Executed: a script the device rules cannot port runs as it was, with the checks of
tests/support/executed.py.  The fixtures the device rules port are trained in
tests/end_to_end/test_executed.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import Executed, loss_problems, run_eager, run_xla
from tests.support.paths import FIXTURES

pytestmark = pytest.mark.executed


def test_a_script_without_a_device_is_left_on_the_cpu_as_its_finding_says(tmp_path: Path) -> None:
    """No half port: the device-less L-BFGS script comes back unchanged with one finding
    (XLA005), and run through the XLA runner it still trains like the original, on the
    CPU: no graph is compiled."""
    case = Executed("lbfgs_no_device.py")
    conversion = convert_source((FIXTURES / case.script).read_bytes())
    assert not conversion.changed
    assert [f.rule for f in conversion.findings] == ["XLA005"]
    eager = run_eager(case, tmp_path)
    xla = run_xla(case, tmp_path)
    assert len(eager.losses) == 10 and not loss_problems(xla, eager)
    assert xla.compiles[-1] == 0, xla.compiles
