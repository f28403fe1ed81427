"""Which classes of a dict of project classes an instance may be at a call (for project/reach.py):
``model = model_config[config['algo_name']](config)`` under ``if config['algo_name'].lower() in
['itemknn', 'slim']:`` is one of the classes those keys give, in that branch (daisyRec's test.py),
not any class of the dict.  ``analysis`` is the file's ProjectAnalysis (not imported here: that
module imports reach.py, which imports this one)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from codemods.engine.nodes import dotted, string_value
from codemods.engine.positions import code_of

__all__ = ["branch_classes", "dict_keys"]


def dict_keys(value: cst.Dict) -> tuple[str | None, ...]:
    """The string keys of a dict literal, in order (None: a key that is no string)."""
    return tuple(string_value(element.key) if type(element) is cst.DictElement else None for element in value.elements)


def branch_classes(analysis: Any, call: cst.Call, head: str) -> list[tuple[str, str]] | None:
    """The (module, class) that ``head`` may be at ``call``, where ``head`` is bound to an instance of
    a class looked up in a dict of this file by a key that a test of an ``if`` around ``call`` limits
    (``key in [...]``, ``key.lower() in [...]``, ``key == '...'``); None where no such test limits it."""
    built = analysis.built_calls.get(head)
    if built is None or type(built.func) is not cst.Subscript or len(built.func.slice) != 1:
        return None
    index = built.func.slice[0].slice
    table = dotted(built.func.value)
    if type(index) is not cst.Index or table is None or table not in analysis.part.table_keys:
        return None
    key = code_of(index.value)
    allowed: set[str] | None = None
    ancestors = _ancestors(analysis.walk.parents, call)
    for cond in analysis.call_conds.get(call, ()):
        if type(cond) is cst.If and id(cond.body) in ancestors and (keys := _keys_of(cond.test, key)) is not None:
            allowed = keys if allowed is None else allowed & keys
    if allowed is None:
        return None
    written = [w for k, w in zip(analysis.part.table_keys[table], analysis.part.name_tables[table]) if k in allowed]
    project_names = analysis.facts.imports.project_names
    found: list[tuple[str, str]] = []
    for name in written:
        first, _, rest = name.partition(".")
        if first in project_names:
            module, imported = project_names[first]
            found.append((module, ".".join(p for p in (imported, rest) if p)))
    return found


def _ancestors(parents: dict[int, int | None], node: cst.CSTNode) -> set[int]:
    found: set[int] = set()
    key: int | None = id(node)
    while key is not None and key not in found:
        found.add(key)
        key = parents.get(key)
    return found


def _keys_of(test: cst.BaseExpression, key: str) -> set[str] | None:
    """The keys ``test`` lets through, where it tests ``key`` (None: it does not)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    tested, target = test.left, test.comparisons[0]
    if type(tested) is cst.Call and not tested.args and type(tested.func) is cst.Attribute:
        if tested.func.attr.value in ("lower", "strip"):
            tested = tested.func.value  # (the dict's keys are written as the test compares them)
    if code_of(tested) != key:
        return None
    if type(target.operator) is cst.In and type(target.comparator) in (cst.List, cst.Tuple, cst.Set):
        values = [string_value(e.value) for e in target.comparator.elements]  # type: ignore[attr-defined]  # a List, Tuple or Set
        return {v for v in values if v is not None} if all(v is not None for v in values) else None
    if type(target.operator) is cst.Equal and (value := string_value(target.comparator)) is not None:
        return {value}
    return None
