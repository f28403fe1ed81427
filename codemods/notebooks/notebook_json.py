"""A notebook file's JSON text: read and validated (nbformat), with where each cell's
``source`` value and the notebook's ``metadata`` lie in it; new sources written back in
the layout the old ones had (every other byte kept); and the file line that holds a line
of a cell."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codemods.conversion import ConversionError


@dataclass(frozen=True)
class Notebook:
    text: str
    data: dict[str, Any]
    sources: list[tuple[int, int] | None]  # span of each cell's source value in text


def read_notebook(raw: bytes) -> Notebook:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConversionError(f"not a notebook: byte {error.start} is not UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConversionError(f"not a notebook: invalid JSON ({error.msg})", error.lineno, error.colno) from None
    try:
        import nbformat
    except ImportError:
        raise ConversionError("reading notebooks needs nbformat (pip install nbformat); left alone") from None
    if not isinstance(data, dict) or data.get("nbformat") != 4:
        found = data.get("nbformat") if isinstance(data, dict) else None
        raise ConversionError(
            f"not a version 4 notebook (nbformat {found!r}): open and save it in Jupyter first; left alone"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbformat warns of what it would normalise: not our business
        try:
            nbformat.validate(nbformat.from_dict(data))  # a copy: validating may normalise it
        except nbformat.ValidationError as error:
            where = "/".join(str(p) for p in error.absolute_path) if hasattr(error, "absolute_path") else ""
            message = str(getattr(error, "message", error)).splitlines()[0]
            raise ConversionError(f"not a valid notebook: {message}{f' (at {where})' if where else ''}") from None
    sources, _ = source_spans(text)
    return Notebook(text, data, sources)


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def source_spans(text: str) -> tuple[list[tuple[int, int] | None], tuple[int, int] | None]:
    """Where each cell's ``source`` value, and the notebook's ``metadata``, lie in the
    JSON text (the text has been parsed already: it is well formed)."""
    top, _ = _members(text, _skip(text, 0))
    spans: list[tuple[int, int] | None] = []
    metadata = None
    for key, start, end in top:
        if key == "metadata":
            metadata = (start, end)
        elif key == "cells":
            for cell_start, _ in _items(text, start):
                cell, _ = _members(text, cell_start)
                spans.append(next(((s, e) for k, s, e in cell if k == "source"), None))
    return spans, metadata


_DECODER = json.JSONDecoder()


def _skip(text: str, at: int) -> int:
    match = _WHITESPACE.match(text, at)
    assert match is not None  # ``\s*`` matches at any index
    return match.end()


def _members(text: str, at: int) -> tuple[list[tuple[str, int, int]], int]:
    """(key, value start, value end) of each member of the object at ``at``; and its end."""
    members = []
    at = _skip(text, at + 1)
    while text[at] != "}":
        key, at = _DECODER.raw_decode(text, at)
        at = _skip(text, _skip(text, at) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, at)
        members.append((key, at, end))
        at = _skip(text, end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return members, at + 1


def _items(text: str, at: int) -> list[tuple[int, int]]:
    """(start, end) of each item of the array at ``at``."""
    items = []
    at = _skip(text, at + 1)
    while text[at] != "]":
        _, end = _DECODER.raw_decode(text, at)
        items.append((at, end))
        at = _skip(text, end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return items


def write_sources(notebook: Notebook, new_sources: dict[int, str]) -> str:
    """The notebook text with the new sources in place of the old, in the old layout."""
    text = notebook.text
    ascii_only = text.isascii() and _NON_ASCII_ESCAPE.search(text) is not None
    pieces = []
    at = 0
    for number, source in sorted(new_sources.items()):
        span = notebook.sources[number - 1]
        if span is None:
            raise ConversionError(f"cell {number} has no source to write back; left alone")
        start, end = span
        pieces += [text[at:start], _source_value(text, start, end, source, ascii_only)]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})[0-9a-fA-F]")


def _source_value(text: str, start: int, end: int, source: str, ascii_only: bool) -> str:
    """``source`` as a JSON value laid out like the one at text[start:end]: one string,
    or a list of lines (as nbformat splits them) with the same separators."""
    old = text[start:end]

    def dumped(s: str) -> str:
        return json.dumps(s, ensure_ascii=ascii_only)

    if old.startswith('"'):
        return dumped(source)
    lines = source.splitlines(True)
    if not lines:
        return "[]"
    items = _items(old, 0)
    if items:
        opener = old[1 : items[0][0]]
        closer = old[items[-1][1] : -1]
        separator = old[items[0][1] : items[1][0]] if len(items) > 1 else "," + opener
    else:  # was empty: one level deeper than the "source" key, in the file's indentation
        line_start = text.rfind("\n", 0, start) + 1
        rest = text[line_start:]
        key_indent = rest[: len(rest) - len(rest.lstrip(" \t"))]
        unit = re.search(r"\n([ \t]+)\S", text)
        step = unit.group(1) if unit else " "
        opener, closer = "\n" + key_indent + step, "\n" + key_indent
        separator = "," + opener
    return "[" + opener + separator.join(dumped(line) for line in lines) + closer + "]"


def file_lines(text: str, notebook: Notebook, new_sources: dict[int, str]) -> Callable[[int, int], int | None]:
    """The line of the written file that holds line ``line`` of cell ``cell`` (a list of
    lines, one per file line, as Jupyter writes them; else the source's first line)."""
    starts: dict[int, list[int]] = {}
    if new_sources:
        # Spans moved with the rewritten sources: find them again in the new text.
        spans, _ = source_spans(text)
    else:
        spans = notebook.sources

    def line_of(cell: int, line: int) -> int | None:
        span = spans[cell - 1] if cell - 1 < len(spans) else None
        if span is None:
            return None
        if cell not in starts:
            value = text[span[0] : span[1]]
            items = _items(value, 0) if value.startswith("[") else []
            first = text.count("\n", 0, span[0]) + 1
            starts[cell] = [first + value.count("\n", 0, s) for s, _ in items] or [first]
        rows = starts[cell]
        return rows[min(line, len(rows)) - 1]

    return line_of
