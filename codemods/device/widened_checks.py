"""Comparisons of a device string with "cuda" that the port widens (XLA123): the port writes
"xla" where the project wrote the "cuda" device string (XLA101: ``def __init__(self,
device="cuda")`` -> ``device="xla"``), and a helper that compares such a string with "cuda"
(LibRecommender's ``device_config``: ``if device == "cuda" and torch.cuda.is_available(): return
torch.device("cuda")``, which XLA104 makes ``if device == "cuda": return torch_xla.device()``)
would then take its CPU branch for every value the port wrote.  After the port "cuda" and "xla"
both name the accelerator, so the comparison accepts both: ``device in ("cuda", "xla")``.

Only a comparison whose name the file does not show holding the XLA device (the device facts'
``unproven_checks``), of the name itself (a string, not ``x.type`` nor ``str(x)``), where the run
may hand it a rewritten string: this file rewrites a "cuda" device string, or another file of the
run imports this one (the run converts it, and its "cuda" strings become "xla").  A file that
compares the name with an "xla" string already tells the two apart, and stays."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.shapes import checked_for_cuda
from codemods.engine.nodes import dotted, string_value, walk

if TYPE_CHECKING:
    from codemods.facts import Facts

_EQUALITY = (cst.Equal, cst.NotEqual)
_MEMBERSHIP = (cst.In, cst.NotIn)
_LISTED = (cst.Tuple, cst.List, cst.Set)


def widened_candidates(
    facts: Facts, compared: list[tuple[cst.Comparison, str, cst.SimpleString]]
) -> dict[cst.CSTNode, str]:
    """The unproven checks the port widens: the check -> the name it compares.  ``compared``: the
    file's comparisons of a name with a string (DeviceValueAnalysis), which tell which names the
    file already compares with "xla"."""
    device = facts.device
    if not device.unproven_checks or not _rewritten_strings_reach(facts):
        return {}
    values = facts.device_values
    theirs = {*values.asserted_choices, *values.ported_comparisons}  # XLA114 ports these
    apart = {name for _, name, literal in compared if (string_value(literal) or "").startswith("xla")}
    return {
        check: name
        for check, name in device.unproven_checks.items()
        if compared_string(check) == name and name not in apart and not any(node in theirs for node in walk(check))
    }


def _rewritten_strings_reach(facts: Facts) -> bool:
    """The run may hand this file's comparisons a string it rewrote from "cuda" to "xla"."""
    if facts.device.strings or facts.device.cuda_defaults:
        return True
    context = facts.project.context
    return context.converted() and context.imported_in_run()


def compared_string(check: cst.CSTNode) -> str | None:
    """The name a CUDA check compares as a string (``device == "cuda"``, ``device in ("cuda",
    "cpu")``, ``device.startswith("cuda")``): not ``x.type`` nor ``str(x)``, which XLA110 reads."""
    if checked_for_cuda(check) is None:
        return None
    if type(check) is cst.Call:
        return dotted(check.func.value) if type(check.func) is cst.Attribute else None
    if type(check) is not cst.Comparison:
        return None
    operator = type(check.comparisons[0].operator)
    left, right = check.left, check.comparisons[0].comparator
    if operator in _EQUALITY:
        operand = right if string_value(left) == "cuda" else left
    elif operator in _MEMBERSHIP and type(right) in _LISTED:
        operand = left
    else:
        return None
    name = dotted(operand)
    return None if name is None or name.endswith(".type") else name
