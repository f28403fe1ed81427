"""``convert --annotate``: a ``# TODO(xla-codemod): CODE message`` comment above each
statement that needs a person, so the follow-ups travel with the code.

Comments go on lines of their own, above the first line of the statement (its logical
line, as Python's tokenizer sees it), indented like it: never inside a string or a
bracket, and nothing else in the file changes.  A statement that already carries a
TODO for a rule (in the comments right above it) gets no second one, so running the
tool again adds nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable

MARK = "# TODO(xla-codemod): "
# Python's own line ends (str.splitlines also splits on form feeds and others).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_NOT_CODE = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def add_todos(code: str, todos: Iterable[tuple[int, str, str]]) -> tuple[str, Callable[[int], int]]:
    """``code`` with a TODO comment for each (line, rule, message), and the function
    that moves a line of ``code`` to where it is in the result."""
    lines = _LINES.findall(code)
    starts = _statement_starts(code)
    if starts is None:
        return code, lambda line: line
    comments: dict[int, list[str]] = {}
    tags: set[tuple[int, str]] = set()
    for line, rule, message in todos:
        start = starts.get(line, line)
        tag = f"{MARK}{rule}"
        if not 1 <= start <= len(lines) or (start, tag) in tags:
            continue
        tags.add((start, tag))
        if any(tag in text for text in _comments_above(lines, start)):
            continue
        statement_line = lines[start - 1]
        indent = statement_line[: len(statement_line) - len(statement_line.lstrip(" \t"))]
        newline = _newline(lines[start - 1]) or _newline(lines[0]) or "\n"
        comments.setdefault(start, []).append(f"{indent}{tag} {' '.join(message.split())}{newline}")
    if not comments:
        return code, lambda line: line
    out: list[str] = []
    for number, text in enumerate(lines, 1):
        out.extend(comments.get(number, ()))
        out.append(text)
    counts = sorted((start, len(added)) for start, added in comments.items())
    return "".join(out), lambda line: line + sum(n for start, n in counts if start <= line)


def _statement_starts(code: str) -> dict[int, int] | None:
    """First line of the logical line (statement, or compound statement header) that
    holds each physical line of code; None if the code does not tokenize."""
    starts: dict[int, int] = {}
    first: int | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(code, newline="").readline):
            if token.type not in _NOT_CODE and first is None:
                first = token.start[0]
            elif token.type == tokenize.NEWLINE and first is not None:
                for line in range(first, token.end[0] + 1):
                    starts[line] = first
                first = None
    except (tokenize.TokenError, SyntaxError):
        return None
    return starts


def _comments_above(lines: list[str], start: int) -> Iterable[str]:
    number = start - 1
    while number >= 1 and lines[number - 1].lstrip().startswith("#"):
        yield lines[number - 1]
        number -= 1


def _newline(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]
