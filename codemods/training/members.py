"""The members of a container an assignment builds, named as the code reads them: the keyword
arguments of an attribute bag (``optims = SimpleNamespace(gen=Adam(...))``: ``optims.gen``),
and the string keys of a dict (``optims = {"gen": Adam(...)}``, ``dict(gen=...)``:
``optims["gen"]``).  The training analysis follows each member's value as it follows a
name's, so an optimizer kept in a container is known as one where it is stepped."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods import apis
from codemods.engine.nodes import dotted, string_value


def member_values(
    name: str, value: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], str | None]
) -> list[tuple[str, cst.BaseExpression]]:
    """The members ``value`` binds under ``name``, each with the expression it holds."""
    if type(value) is cst.Dict:
        return [
            (keyed(name, key), element.value)
            for element in value.elements
            if type(element) is cst.DictElement and (key := _identifier(string_value(element.key))) is not None
        ]
    if type(value) is not cst.Call:
        return []
    container = resolve(value.func) or dotted(value.func)  # the builtin ``dict`` is no import
    members = [(arg.keyword.value, arg.value) for arg in value.args if arg.keyword is not None and not arg.star]
    found: list[tuple[str, cst.BaseExpression]] = []
    if container in apis.ATTRIBUTE_BAGS:
        found += [(f"{name}.{key}", held) for key, held in members]
    if container in apis.KEYED_CONTAINERS:
        found += [(keyed(name, key), held) for key, held in members]
    return found


def member_name(node: cst.BaseExpression) -> str | None:
    """``optims.gen`` as written; ``optims["gen"]`` for a string key; None for anything else."""
    if type(node) is cst.Subscript and len(node.slice) == 1 and type(index := node.slice[0].slice) is cst.Index:
        base = member_name(node.value)
        key = _identifier(string_value(index.value))
        return keyed(base, key) if base is not None and key is not None else None
    return dotted(node)


def keyed(name: str, key: str) -> str:
    return f'{name}["{key}"]'


def _identifier(key: str | None) -> str | None:
    """Keys that read back unchanged in a name (no dots, quotes or brackets)."""
    return key if key is not None and key.isidentifier() else None
