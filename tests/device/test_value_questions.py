"""The device-value analysis asks each question once: a value that feeds back into itself
(``DEVICE = get_device(DEVICE)``, a helper comparing its parameter with several names) once
took minutes on one 170-line file, the questions branching at every level down to the depth
bound.  Counted in questions, not seconds: ``_open`` (the conditions of one binding) runs
once per binding a question reaches."""

from __future__ import annotations

import textwrap

import pytest

from codemods import convert_source
from codemods.device import values
from codemods.device.where import Binding
from tests.support.fixtures import output_text

# The helper is asked about its parameter, which is the name its own result is bound to.
SELF_FED_DEVICE = textwrap.dedent(
    """
    import torch

    DEVICE = "auto"


    def get_device(name):
        if name == "auto":
            if torch.cuda.is_available():
                return torch.device("cuda")
            elif torch.backends.mps.is_available():
                return torch.device("mps")
            else:
                return torch.device("cpu")
        elif name == "cuda":
            return torch.device("cuda")
        elif name == "mps":
            return torch.device("mps")
        else:
            return torch.device("cpu")


    DEVICE = get_device(DEVICE)
    x = torch.zeros(3, device=DEVICE)
    """
).lstrip()


def test_self_fed_device_is_answered_in_few_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = 0
    open_conditions = values.DeviceValueAnalysis._open

    def counting_open(self: values.DeviceValueAnalysis, binding: Binding) -> object:
        nonlocal opened
        opened += 1
        return open_conditions(self, binding)

    monkeypatch.setattr(values.DeviceValueAnalysis, "_open", counting_open)
    conversion = convert_source(SELF_FED_DEVICE)
    # Six returns and two bindings of DEVICE, each reached from a handful of questions (94
    # today).  Without remembered answers and the cut of a question asked inside itself, the
    # count grows about elevenfold per four levels of the depth bound (40): 1,062 at a bound
    # of 8, 11,710 at 12, 128,838 at 16 (measured on the analysis before the change).
    assert opened < 300, opened
    text = output_text(conversion)
    # The "auto" branch (the one the script takes) now returns the XLA device.
    assert 'if name == "auto":\n        return torch_xla.device()' in text
    assert {f.rule for f in conversion.findings if f.severity == "error"} <= {"XLA101", "XLA104"}
