"""Byte identity as a checked invariant, not a hope.

LibCST 1.9 does not print every module back exactly as it read it: comment lines at
the end of a file whose indentation matches no block lose the blank lines and comments
before them (``x = 1\\n\\n\\n  # c`` comes back as ``x = 1\\n  # c``), with or without a
final newline, with LF or CRLF.  Such a tail holds no code, so it is set aside before
parsing and put back, as it was, after the conversion; a file that still does not come
back exactly is refused rather than damaged.
"""

from __future__ import annotations

import io
import tokenize
from typing import TypeVar

import libcst as cst

Source = TypeVar("Source", str, bytes)

# Tokens that carry no code: a tail made of these alone can be set aside.
_NOT_CODE = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
)


class NotReproduced(Exception):
    """LibCST cannot give this file back exactly; ``line`` is the first line it loses."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def exact_module(module: cst.Module, source: Source, text: str) -> tuple[cst.Module, Source]:
    """A module that prints back exactly ``source`` minus a tail of comment and blank
    lines, and that tail (empty when LibCST reproduces the whole file).

    ``module`` is ``source`` parsed, ``text`` its decoded text.  Raises NotReproduced
    when no such module can be made."""
    if _printed(module, source) == source:
        return module, source[:0]
    code_lines = _lines_of_code(text)
    cut = None if code_lines is None else _start_of_line(source, code_lines + 1)
    if cut is not None and cut < len(source):
        head = source[:cut]
        try:
            head_module = cst.parse_module(head)
        except cst.ParserSyntaxError:
            head_module = None
        if head_module is not None and _printed(head_module, head) == head:
            return head_module, source[len(head) :]
    raise NotReproduced(_first_lost_line(module.code, text))


def _printed(module: cst.Module, source: str | bytes) -> str | bytes:
    return module.bytes if isinstance(source, bytes) else module.code


def _lines_of_code(text: str) -> int | None:
    """How many lines of ``text`` hold code (the rest are comments and blank lines);
    None when the tokenizer cannot tell."""
    last = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in _NOT_CODE and not (token.type == tokenize.ERRORTOKEN and not token.string.strip()):
                last = token.end[0]
    except (tokenize.TokenError, SyntaxError):
        return None
    return last


def _start_of_line(source: str | bytes, line: int) -> int | None:
    """Where ``line`` (1-based) of ``source`` starts, lines ending at LF as the
    tokenizer reads them; None past the end."""
    newline = "\n" if isinstance(source, str) else b"\n"
    offset = 0
    for _ in range(line - 1):
        found = source.find(newline, offset)  # type: ignore[arg-type]
        if found < 0:
            return None
        offset = found + 1
    return offset


def _first_lost_line(printed: str, text: str) -> int:
    for number, (got, want) in enumerate(zip(printed.splitlines(True), text.splitlines(True)), start=1):
        if got != want:
            return number
    return min(len(printed.splitlines()), len(text.splitlines())) + 1
