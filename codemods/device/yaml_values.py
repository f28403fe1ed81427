"""The scalar values of a YAML config that a device may be read from (``device: cuda``,
``trainer: {device: cuda:0}`` written as a nested block), without a YAML library: the tool
reads configs only for the device a script takes from them, and needs keys, nesting by
indentation, quotes, comments and ``${key}`` interpolations (Hydra, OmegaConf), nothing more.
A value in a flow mapping or a list, an anchor or a multi-line scalar is not read (None)."""

from __future__ import annotations

import re
from collections.abc import Iterator

# ``  key: value`` (the value may be empty: a block mapping follows).
_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*)\s*:(?:\s+(?P<value>.*?))?\s*$")
_INTERPOLATION = re.compile(r"^\$\{(?P<key>[A-Za-z_][\w.]*)\}$")
_MAX_HOPS = 4  # interpolations followed in a row
_GLOBAL = re.compile(r"^#\s*@package\s+_global_\s*$", re.MULTILINE)


def yaml_value(text: str, keys: list[str]) -> tuple[str, int] | None:
    """The scalar at ``keys`` (``["trainer", "device"]``) and its line, interpolations of
    other keys followed (``device: ${device}``); None if the config has no such scalar."""
    found = yaml_source(text, keys)
    return None if found is None else found[:2]


def yaml_source(text: str, keys: list[str]) -> tuple[str, int, list[str]] | None:
    """``yaml_value``, and the keys of the scalar that holds the value: those of another key
    where ``keys`` interpolates it (``agent: {device: ${device}}`` read at ``agent.device``
    is ``device``'s value, set at ``["device"]``)."""
    for _ in range(_MAX_HOPS):
        found = _scalar(text, keys)
        if found is None:
            return None
        value, line = found
        interpolated = _INTERPOLATION.match(value)
        if interpolated is None:
            return value, line, keys
        keys = interpolated["key"].split(".")
    return None


def hydra_defaults(text: str) -> list[tuple[str | None, str, int]]:
    """The entries of a Hydra config's ``defaults:`` list, as a block (``- trainer: gpu``) or
    a flow list (``defaults: [trainer: gpu, base]``): (the config group, None for a config of
    the same folder; the option; its line).  ``_self_``, ``null`` options and ``optional`` /
    ``override`` markers are left out or stripped; a group's ``@package`` is dropped."""
    entries: list[tuple[str | None, str, int]] = []
    in_list = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.split(" #", 1)[0].strip()
        if line.startswith("defaults:"):
            flow = stripped.removeprefix("defaults:").strip()
            if flow.startswith("[") and flow.endswith("]"):
                entries.extend(e for item in flow[1:-1].split(",") if (e := _default_entry(item, number)))
                return entries
            in_list = True
        elif in_list and stripped.startswith("- "):
            if (entry := _default_entry(stripped[2:], number)) is not None:
                entries.append(entry)
        elif in_list and stripped and not line.startswith(" "):
            break
    return entries


def _default_entry(item: str, line: int) -> tuple[str | None, str, int] | None:
    group, _, option = item.partition(":")
    group, option = _unquoted(group.strip()), _unquoted(option.strip())
    for marker in ("optional ", "override "):
        group = group.removeprefix(marker)
    if not option:
        return None if group in ("_self_", "") else (None, group, line)
    if option in ("null", "???"):
        return None
    return group.split("@", 1)[0].strip(), option, line


def is_global_package(text: str) -> bool:
    """The config puts its keys at the root of the composed config (``# @package _global_``)."""
    return _GLOBAL.search(text) is not None


def interpolations_of(text: str, keys: list[str]) -> list[tuple[str, int]]:
    """The keys whose value is ``keys``' own (``agent: {device: ${device}}`` for ``["device"]``),
    dotted, and their lines."""
    wanted = "${" + ".".join(keys) + "}"
    return [(".".join(path), number) for path, value, number in _scalars(text) if value == wanted]


def scalars_at(text: str, key: str) -> Iterator[tuple[list[str], str, int]]:
    """The scalars whose own key (the last of their keys) is ``key``: their keys, value, line."""
    if key in text:
        yield from ((path, value, number) for path, value, number in _scalars(text) if path[-1] == key)


def yaml_scalars(text: str) -> list[tuple[list[str], str, int]]:
    """Each scalar of the config's block mappings: its keys, its value (as written: an
    interpolation is not followed), its line."""
    return list(_scalars(text))


def _scalar(text: str, keys: list[str]) -> tuple[str, int] | None:
    return next(((value, number) for path, value, number in _scalars(text) if path == keys), None)


def _scalars(text: str) -> Iterator[tuple[list[str], str, int]]:
    """Each scalar of the block mappings: its keys, its value, its line."""
    open_keys: list[tuple[int, str]] = []  # the mappings around the line: (indent, key)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith(("#", "-", "---")):
            continue
        found = _KEY.match(line)
        if found is None:
            continue
        indent = len(found["indent"])
        while open_keys and open_keys[-1][0] >= indent:
            open_keys.pop()
        path = [key for _, key in open_keys] + [found["key"]]
        value = _unquoted(found["value"] or "")
        if not value:
            open_keys.append((indent, found["key"]))
        else:
            yield path, value, number


def _unquoted(value: str) -> str:
    """The scalar without its quotes or its trailing comment."""
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else ""
    return value.split(" #", 1)[0].strip()
