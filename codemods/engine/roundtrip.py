"""Byte identity as a checked invariant, not a hope.

LibCST 1.9 does not print every module back exactly as it read it: comment lines at
the end of a file whose indentation matches no block lose the blank lines and comments
before them (``x = 1\\n\\n\\n  # c`` comes back as ``x = 1\\n  # c``), with or without a
final newline, with LF or CRLF; and it cannot read some valid files whose last line is
a backslash continuation.  Such a tail holds no code, so it is set aside before parsing
and put back, as it was, after the conversion; a file that still does not come back
exactly is refused rather than damaged.
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from typing import TypeVar

import libcst as cst

from codemods.engine.positions import Printed, print_back

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


def parse_exactly(source: Source) -> tuple[cst.Module, Source, str, Printed]:
    """``source`` parsed into a module that prints back exactly ``source`` minus a tail
    of comment and blank lines; that tail (empty when LibCST reproduces the whole
    file); the file's encoding; and the module as printed by the check (with where
    each node starts, for findings, and the text of each statement, for the output).

    Raises what ``cst.parse_module`` raises for a file that is not valid Python, and
    NotReproduced when no such module can be made."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        if not _python_accepts(source):
            raise
        encoding = _encoding(source)
        rescued = _without_tail(source, _text(source, encoding))
        if rescued is None:
            raise
        module, tail, printed = rescued
        return module, tail, encoding, printed
    printed = print_back(module)
    if _same(printed, source):
        return module, source[:0], module.encoding, printed
    text = _text(source, module.encoding)
    rescued = _without_tail(source, text)
    if rescued is None:
        raise NotReproduced(_first_lost_line(printed.code, text))
    module, tail, printed = rescued
    return module, tail, module.encoding, printed


def _without_tail(source: Source, text: str) -> tuple[cst.Module, Source, Printed] | None:
    """The module of ``source`` without the comment and blank lines after its code, if
    LibCST reads and prints that part exactly, and those lines."""
    code_lines = _lines_of_code(text)
    cut = None if code_lines is None else _start_of_line(source, code_lines + 1)
    if cut is None or cut >= len(source):
        return None
    head = source[:cut]
    try:
        module = cst.parse_module(head)
    except cst.ParserSyntaxError:
        return None
    printed = print_back(module)
    return (module, source[cut:], printed) if _same(printed, head) else None


def _same(printed: Printed, source: str | bytes) -> bool:
    """Whether the module printed ``source`` (in its encoding, for bytes)."""
    return (printed.code.encode(printed.module.encoding) if isinstance(source, bytes) else printed.code) == source


def _text(source: str | bytes, encoding: str) -> str:
    return source if isinstance(source, str) else source.decode(encoding)


def _encoding(source: str | bytes) -> str:
    return "utf-8" if isinstance(source, str) else tokenize.detect_encoding(io.BytesIO(source).readline)[0]


def _python_accepts(source: str | bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        try:
            ast.parse(source)
        except (SyntaxError, ValueError):
            return False
    return True


def _lines_of_code(text: str) -> int | None:
    """How many lines of ``text`` hold code, up to the end of its last logical line (the
    rest are comments and blank lines); None when the tokenizer cannot tell."""
    last = 0
    after_code = False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NEWLINE and after_code:
                last, after_code = token.end[0], False  # a backslash may carry it to a later line
            elif token.type not in _NOT_CODE and not (token.type == tokenize.ERRORTOKEN and not token.string.strip()):
                last, after_code = token.end[0], True
    except tokenize.TokenError:
        pass  # the file ends inside a continuation: what came before stands
    except SyntaxError:
        return None
    return last


def _start_of_line(source: str | bytes, line: int) -> int | None:
    """Where ``line`` (1-based) of ``source`` starts, lines ending at LF as the
    tokenizer reads them; None past the end."""
    newline = "\n" if isinstance(source, str) else b"\n"
    offset = 0
    for _ in range(line - 1):
        found = source.find(newline, offset)  # type: ignore[arg-type]  # newline has the type of source (str or bytes, chosen on the line above): mypy does not pair them
        if found < 0:
            return None
        offset = found + 1
    return offset


def _first_lost_line(printed: str, text: str) -> int:
    for number, (got, want) in enumerate(zip(printed.splitlines(True), text.splitlines(True)), start=1):
        if got != want:
            return number
    return min(len(printed.splitlines()), len(text.splitlines())) + 1
