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
compares the name with an "xla" string (``== "xla"``, ``!= "xla"``, ``"xla" in device``,
``device.startswith("xla")``, ``device in ("cpu", "xla")``) already tells the two apart, and stays.

Where the check is the test of an ``if`` (or a conditional expression), the branch it takes for
"cuda" must choose the device (a "cuda" device string, ``.cuda()``) and hold no CUDA-only API
(rules/runtime_apis.py's tables, any other torch.cuda API but the availability and count
queries, cuDNN's settings, ``pin_memory_device``, CUDA tensor types): widened, the XLA run would
enter that branch and crash, where the check as written skips it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.cuda_only.rules import runtime_apis
from codemods.device.rules.widened_comparisons import EQUALITY, LISTED, MEMBERSHIP
from codemods.device.shapes import checked_for_cuda
from codemods.engine.nodes import dotted, is_cuda_device_string, method_name, parents_of, string_value, walk

if TYPE_CHECKING:
    from codemods.facts import Facts

# torch.cuda queries that run without CUDA (a test's own availability or count check).
_RUNS_WITHOUT_CUDA = frozenset(("torch.cuda.is_available", "torch.cuda.device_count"))
_CUDA_ONLY_PREFIXES = ("torch.cuda.", "torch.backends.cudnn.", "torch.backends.cuda.")


def widened_candidates(
    facts: Facts, compared: list[tuple[cst.Comparison, str, cst.SimpleString]], module: cst.Module | None
) -> dict[cst.CSTNode, str]:
    """The unproven checks the port widens: the check -> the name it compares.  ``compared``: the
    file's comparisons of a name with a string (DeviceValueAnalysis), which tell which names the
    file already compares with "xla"; ``module``: the file."""
    device = facts.device
    if not device.unproven_checks or not _rewritten_strings_reach(facts) or module is None:
        return {}
    values = facts.device_values
    theirs = {*values.asserted_choices, *values.ported_comparisons}  # XLA114 ports these
    apart = {name for _, name, literal in compared if (string_value(literal) or "").startswith("xla")}
    apart |= _told_apart(module)
    parents = parents_of(module)
    return {
        check: name
        for check, name in device.unproven_checks.items()
        if compared_string(check) == name
        and name not in apart
        and not any(node in theirs for node in walk(check))
        and _chooses_the_device(facts, check, parents)
    }


def _is_xla(node: cst.BaseExpression) -> bool:
    if (string_value(node) or "").startswith("xla"):
        return True
    return type(node) in LISTED and any(_is_xla(e.value) for e in node.elements)  # type: ignore[attr-defined]  # narrowed by type() in LISTED


def _told_apart(module: cst.Module) -> set[str]:
    """The names the file compares with an "xla" string: ``device == "xla"`` (``!=``), ``"xla" in
    device``, ``device in ("cpu", "xla")``, ``device.startswith("xla")``."""
    names: set[str | None] = set()
    for node in walk(module):
        if type(node) is cst.Comparison and len(node.comparisons) == 1:
            operator, right = type(node.comparisons[0].operator), node.comparisons[0].comparator
            if operator in EQUALITY:
                names.add(dotted(right) if _is_xla(node.left) else dotted(node.left) if _is_xla(right) else None)
            elif operator in MEMBERSHIP:
                names.add(dotted(right) if _is_xla(node.left) else dotted(node.left) if _is_xla(right) else None)
        elif type(node) is cst.Call and method_name(node) == "startswith" and node.args and _is_xla(node.args[0].value):
            names.add(dotted(node.func.value))  # type: ignore[attr-defined]  # a method call: an Attribute
    return {name for name in names if name is not None}


def _cuda_side(check: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> list[cst.CSTNode] | None:
    """The code a branch test runs when ``check`` says "cuda" (an ``if``'s body, or its ``else``
    for ``!=``/``not``); None where the check is not (part of) such a test."""
    positive = not (type(check) is cst.Comparison and type(check.comparisons[0].operator) in (cst.NotEqual, cst.NotIn))
    node = check
    while (parent := parents.get(id(node))) is not None:
        if type(parent) is cst.UnaryOperation and type(parent.operator) is cst.Not:
            positive = not positive
        elif type(parent) in (cst.If, cst.IfExp):
            if node is not parent.test:  # type: ignore[attr-defined]  # an If or IfExp
                return None
            side = parent.body if positive else parent.orelse  # type: ignore[attr-defined]  # an If or IfExp
            return [] if side is None else [side]
        elif type(parent) is not cst.BooleanOperation:
            return None
        node = parent
    return None


def _chooses_the_device(facts: Facts, check: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
    """What ``check`` guards for "cuda" chooses the device and holds no CUDA-only API (a check that
    guards no branch, returned or stored, is widened)."""
    side = _cuda_side(check, parents)
    if side is None:
        return True
    nodes = [sub for branch in side for sub in walk(branch)]
    return any(_picks_cuda(facts, node) for node in nodes) and not any(_cuda_only(facts, node) for node in nodes)


def _picks_cuda(facts: Facts, node: cst.CSTNode) -> bool:
    if node in facts.device.strings or node in facts.device.calls or is_cuda_device_string(node):
        return True
    return type(node) is cst.Call and method_name(node) == "cuda"


def _cuda_only(facts: Facts, node: cst.CSTNode) -> bool:
    """A CUDA-only API: a torch.cuda one but the availability and count queries, cuDNN's, the CUDA
    runtime tables' (XLA502, XLA506), a CUDA tensor type, ``pin_memory_device``."""
    if type(node) is cst.Arg:
        return node.keyword is not None and node.keyword.value == "pin_memory_device"
    if type(node) is cst.DictElement:
        return string_value(node.key) == "pin_memory_device"
    if type(node) not in (cst.Name, cst.Attribute):
        return False
    qualified = facts.imports.table.resolve(node)
    if qualified is None or qualified in _RUNS_WITHOUT_CUDA:
        return False
    return (
        qualified.startswith(_CUDA_ONLY_PREFIXES)
        or qualified in runtime_apis.CUDA_RUNTIME
        or qualified in apis.CUDA_TENSOR_TYPES
    )


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
    if operator in EQUALITY:
        operand = right if string_value(left) == "cuda" else left
    elif operator in MEMBERSHIP and type(right) in LISTED:
        operand = left
    else:
        return None
    name = dotted(operand)
    return None if name is None or name.endswith(".type") else name
