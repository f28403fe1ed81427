"""The scalar values of a YAML config that a device may be read from (``device: cuda``,
``trainer: {device: cuda:0}`` written as a nested block), without a YAML library: the tool
reads configs only for the device a script takes from them, and needs keys, nesting by
indentation, quotes, comments and ``${key}`` interpolations (Hydra, OmegaConf), nothing more.
A value in a flow mapping or a list, an anchor or a multi-line scalar is not read (None)."""

from __future__ import annotations

import re

# ``  key: value`` (the value may be empty: a block mapping follows).
_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*)\s*:(?:\s+(?P<value>.*?))?\s*$")
_INTERPOLATION = re.compile(r"^\$\{(?P<key>[A-Za-z_][\w.]*)\}$")
_MAX_HOPS = 4  # interpolations followed in a row


def yaml_value(text: str, keys: list[str]) -> tuple[str, int] | None:
    """The scalar at ``keys`` (``["trainer", "device"]``) and its line, interpolations of
    other keys followed (``device: ${device}``); None if the config has no such scalar."""
    for _ in range(_MAX_HOPS):
        found = _scalar(text, keys)
        if found is None:
            return None
        value, line = found
        interpolated = _INTERPOLATION.match(value)
        if interpolated is None:
            return value, line
        keys = interpolated["key"].split(".")
    return None


def _scalar(text: str, keys: list[str]) -> tuple[str, int] | None:
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
        elif path == keys:
            return value, number
    return None


def _unquoted(value: str) -> str:
    """The scalar without its quotes or its trailing comment."""
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else ""
    return value.split(" #", 1)[0].strip()
