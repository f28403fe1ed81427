"""Rule cases derived from the written ones, so that a rule's module need not restate a
program with its import renamed: from each positive case (an example or an invalid case that
is not an alias case) of a Python file with a top-level ``import torch``, the same program
with ``import torch as th`` and every ``torch`` it names spelled ``th``, in the input and in
the expected output.

The finding lines are kept and the columns moved by the renames before them on their line
(on a line the fix rewrote, a column after a rename is not checked: it may count from the
input's line).
The messages are not checked: a message that quotes the code says ``th.``, one that names an
API says ``torch.`` whatever the alias, and telling the two apart would restate the message.

A case the renaming does not fit (not one top-level ``import torch`` in the input and in the
output, ``torch`` imported again inside a function, a name ``th`` already in use, ``torch``
inside an f-string, a file that is not Python) gives no derived case: it is not run twice, nor counted.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import replace

from codemods.engine.rule import Expected
from tests.support.rule_cases import CASES, Case

ALIAS = "th"
_IMPORT = "import torch"
_IMPORT_STATEMENT = re.compile(r"^\s*(import|from)\s")
_TORCH = re.compile(r"\btorch\b")


def _torch_names(code: str) -> dict[int, list[int]] | None:
    """Where ``torch`` stands as a name (line -> 0-based columns), outside imports, strings
    and attributes (``x.torch``); None where the renaming does not fit the code: not one
    top-level ``import torch``, torch imported again further in, ``th`` already a name, or
    ``torch`` inside an f-string (one string token before Python 3.12)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):  # a case that is not Python to the tokenizer
        return None
    lines = code.split("\n")
    if [line for line in lines if line.strip() == _IMPORT] != [_IMPORT]:
        return None
    names: dict[int, list[int]] = {}
    previous = ""
    for token in tokens:
        if token.type == tokenize.NAME and token.string == ALIAS:
            return None
        if token.type == tokenize.STRING and token.string.lstrip("rbRB")[:1] in "fF" and _TORCH.search(token.string):
            return None
        row, column = token.start
        if token.string == "torch" and token.type == tokenize.NAME and previous != ".":
            if not _IMPORT_STATEMENT.match(lines[row - 1]):
                names.setdefault(row, []).append(column)
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = token.string
    return names


def _renamed(code: str, names: dict[int, list[int]]) -> str:
    lines = code.split("\n")
    for row, columns in names.items():
        line = lines[row - 1]
        for column in sorted(columns, reverse=True):
            line = line[:column] + ALIAS + line[column + len("torch") :]
        lines[row - 1] = line
    return "\n".join(f"{_IMPORT} as {ALIAS}" if line == _IMPORT else line for line in lines)


def _moved(finding: Expected, names: dict[int, list[int]], rewritten: bool) -> Expected:
    """The finding without its message, its column moved by the renames before it on its
    line; 0 (not checked) on a line the fix rewrote, where the column may count from the
    input's line."""
    before = sum(1 for column in names.get(finding.line, []) if column < finding.column - 1)
    if before and rewritten:
        return replace(finding, column=0, message="")
    return replace(finding, column=finding.column - before * (len("torch") - len(ALIAS)), message="")


def with_alias(case: Case) -> Case | None:
    """The case with ``import torch as th``, or None where the renaming does not fit it."""
    if case.kind != "positive" or case.run_level or not case.filename.endswith(".py"):
        return None
    output = case.after if case.after is not None else case.before
    in_input, in_output = _torch_names(case.before), _torch_names(output)
    if in_input is None or in_output is None:
        return None
    input_lines = set(case.before.split("\n"))
    output_lines = output.split("\n")
    return replace(
        case,
        kind="alias",
        before=_renamed(case.before, in_input),
        after=None if case.after is None else _renamed(case.after, in_output),
        note=f"{case.note or 'case'}-derived-import-torch-as-{ALIAS}",
        expect=tuple(_moved(e, in_output, output_lines[e.line - 1] not in input_lines) for e in case.expect),
    )


DERIVED_CASES = [derived for case in CASES if (derived := with_alias(case)) is not None]

# Derived cases the tool does not pass yet, with why (the tests expect them to fail: strict).
KNOWN_GAPS = {
    "XLA509-alias-class-sagemaker-derived-import-torch-as-th": "cuda_only/handed_strings.py reads `torch.device(x)` "
    "by its spelling, not through the file's imports: `th.device(device)` in a class is not seen as a device use",
}
