"""A string flag in the environment compared with strings (``os.getenv("DEVICE", "cuda") ==
"cuda"``, ``os.environ["DEVICE"] != "cpu"``): the port writes no value into the environment and
leaves the strings compared as they are, so such a comparison asks after the port what it asked
before: it is no CUDA check that is False on an XLA host.  It is one only where the file sets the
variable from a value the port changes (``os.environ["DEVICE"] = device`` after ``device = "cuda"``
became "xla"): the device values decide that (values.py)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods.engine.nodes import string_value

# The calls that read a variable of the environment, its name first.
_READS = frozenset({"os.getenv", "os.environ.get"})
# The calls that set one: its name, then its value.
_SETS = frozenset({"os.environ.setdefault", "os.putenv"})

Resolve = Callable[[cst.BaseExpression], "str | None"]


def read_key(node: cst.BaseExpression, resolve: Resolve) -> str | None:
    """The variable ``node`` reads (``os.getenv("DEVICE", "cuda")``, ``os.environ["DEVICE"]``), if any."""
    if type(node) is cst.Call and node.args and resolve(node.func) in _READS:
        return string_value(node.args[0].value)
    return subscript_key(node, resolve)


def subscript_key(node: cst.BaseExpression, resolve: Resolve) -> str | None:
    """``KEY`` of ``os.environ["KEY"]``."""
    if type(node) is not cst.Subscript or len(node.slice) != 1 or resolve(node.value) != "os.environ":
        return None
    index = node.slice[0].slice
    return string_value(index.value) if type(index) is cst.Index else None


def set_by_call(node: cst.Call, resolve: Resolve) -> tuple[str, cst.BaseExpression] | None:
    """``os.environ.setdefault("DEVICE", value)``: the variable and its value."""
    if len(node.args) < 2 or resolve(node.func) not in _SETS:
        return None
    key = string_value(node.args[0].value)
    return None if key is None else (key, node.args[1].value)


def compared_variable(comparison: cst.Comparison, resolve: Resolve) -> str | None:
    """The variable of the environment that ``comparison`` compares with strings alone, if any."""
    operands = [comparison.left, *(c.comparator for c in comparison.comparisons)]
    keys = [key for o in operands if (key := read_key(o, resolve)) is not None]
    if len(keys) != 1:
        return None
    others = [o for o in operands if read_key(o, resolve) is None]
    return keys[0] if all(_strings(o) for o in others) else None


def _strings(node: cst.BaseExpression) -> bool:
    if string_value(node) is not None:
        return True
    if type(node) in (cst.Tuple, cst.List, cst.Set):
        return all(_strings(e.value) for e in node.elements)  # type: ignore[attr-defined]  # narrowed by type(node) in (...) above: mypy does not narrow on type()
    return False
