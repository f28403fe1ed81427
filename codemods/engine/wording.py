"""A fix's message in the voice of the run that reports it.

A rule writes the message of a fix once, as what the fix does, in the form an in-place
``convert`` prints after making it: ``X -> Y: why``, ``removed `X`: why``, ``X moved into
a step closure: why``.  Where nothing was written (``lint``, ``convert --check`` and
``--diff``) the report says what the fix would do instead, and ``would()`` derives that
form from the same text, so no rule carries two messages:

- ``removed `X`: why``             -> ``would remove `X`: why``
- ```X` added: why``                -> ``would add `X`: why`` (the verb ends the first clause)
- ``X -> Y: why``                   -> ``would replace X with Y: why`` (the arrow in the first clause,
  after a name for the code, not a sentence: no ", " before it)
- ``...: its check is dropped``     -> ``...: its check would be dropped``; ``...: removed`` -> ``...: would be removed``
- anything else (a message about the state the fix makes, ``training loop: sync() ends every
  iteration``) -> ``would fix: training loop: ...``.

Code between backticks is never reworded.  DEVELOPERS.md tells rule authors which shapes
these are.
"""

from __future__ import annotations

import re

# The verbs of fix messages, as written (done) and as the would-form takes them.
DONE_VERBS = {
    "added": "add",
    "deleted": "delete",
    "dropped": "drop",
    "inserted": "insert",
    "moved": "move",
    "removed": "remove",
    "renamed": "rename",
    "replaced": "replace",
    "wrapped": "wrap",
}
_VERB = "|".join(DONE_VERBS)
_ARROW = " -> "
# Code spans, kept as they are.
_CODE = re.compile(r"`[^`]*`")
_PASSIVE = re.compile(rf"\b(?:is|are) ({_VERB})\b")
_CLAUSE_END = re.compile(rf"(^|: )((?:[a-z][\w-]* )?)({_VERB})(?=$|[:;,.(])")


def would(message: str) -> str:
    """``message`` (a fix's text, as after the fix) as what the fix would do."""
    masked = _mask(message)
    head_end = _first_clause_end(masked)
    head = masked[:head_end]
    leading = re.match(rf"({_VERB})\b", masked)
    if leading:
        return f"would {DONE_VERBS[leading.group(1)]}{message[leading.end() :]}"
    inner = re.search(rf" ({_VERB})\b", head)
    if inner and _ARROW not in head[: inner.start()]:
        subject = message[: inner.start()]
        return f"would {DONE_VERBS[inner.group(1)]} {subject}{message[inner.end() :]}"
    arrow = head.find(_ARROW)
    if arrow > 0 and ", " not in _outside_brackets(head[:arrow]):
        return f"would replace {message[:arrow]} with {message[arrow + len(_ARROW) :]}"
    reworded = _reword_passives(message, masked)
    return reworded if reworded != message else f"would fix: {message}"


def _mask(message: str) -> str:
    """The message with its code spans blanked out (same length, so indexes match)."""
    return _CODE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", message)


def _outside_brackets(masked: str) -> str:
    """The text outside brackets (a call's arguments hold commas that are not the sentence's)."""
    depth, kept = 0, []
    for char in masked:
        depth += char in "([{"
        if depth == 0:
            kept.append(char)
        depth = max(depth - (char in ")]}"), 0)
    return "".join(kept)


def _first_clause_end(masked: str) -> int:
    """Where the first clause ends: the first ": " (or a closing ":") outside code spans and
    brackets."""
    depth = 0
    for mark in _CLAUSE_MARKS.finditer(masked):
        char = mark.group()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            return mark.start()
    return len(masked)


# What _first_clause_end looks at: brackets, and a colon before a space or at the end.
_CLAUSE_MARKS = re.compile(r"[()\[\]{}]|:(?= |\Z)")


def _reword_passives(message: str, masked: str) -> str:
    """``is dropped`` -> ``would be dropped``; a clause that is only a verb (``: removed``,
    ``: check dropped``) -> ``: would be removed``, ``: check would be dropped``."""
    edits: list[tuple[int, int, str]] = []
    for match in _PASSIVE.finditer(masked):
        edits.append((match.start(), match.end(), f"would be {match.group(1)}"))
    for match in _CLAUSE_END.finditer(masked):
        start = match.start(3)
        if not any(s <= start < e for s, e, _ in edits):
            edits.append((start, match.end(3), f"would be {match.group(3)}"))
    for start, end, text in sorted(edits, reverse=True):
        message = message[:start] + text + message[end:]
    return message
