"""Where nodes start, computed while the code is generated.

LibCST's PositionProvider records a full range for every node of the module; the
report needs the start of a handful of nodes.  This codegen state records only those,
and yields the module's code from the same pass, so the converted text and the
positions of its findings cost one code generation.  It builds on LibCST's codegen
hooks (``CodegenState``), the same ones PositionProvider uses.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from contextlib import nullcontext
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")
_NOTHING = nullcontext()


@dataclass
class _StartRecordingState(CodegenState):
    target_ids: set[int] | None = None  # None: every node (ids: CSTNode.__hash__ is slow)
    line: int = 1
    column: int = 0
    starts: dict[cst.CSTNode, tuple[int, int]] = field(default_factory=dict)
    # Nodes whose start another node borrows (an indented block starts at its first statement).
    lenders: set[int] = field(default_factory=set)

    def _wanted(self, node: cst.CSTNode) -> bool:
        return self.target_ids is None or id(node) in self.target_ids or id(node) in self.lenders

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        # Where the node's code begins, whitespace included; nodes with a syntactic
        # position (almost all) overwrite it below, as in PositionProvider.
        if self._wanted(node):
            self.starts[node] = (self.line, self.column + 1)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node=None, end_node=None):  # type: ignore[no-untyped-def,override]
        if not self._wanted(node):
            return _NOTHING
        if start_node is not None:
            return _BorrowedStart(self, node, start_node)
        self.starts[node] = (self.line, self.column + 1)
        return _NOTHING


class _BorrowedStart:
    """Gives ``node`` the start of ``lender``, once the lender has been generated."""

    def __init__(self, state: _StartRecordingState, node: cst.CSTNode, lender: cst.CSTNode) -> None:
        self.state, self.node, self.lender = state, node, lender

    def __enter__(self) -> None:
        self.state.lenders.add(id(self.lender))

    def __exit__(self, *exc: object) -> None:
        self.state.starts[self.node] = self.state.starts[self.lender]


def code_and_starts(
    module: cst.Module, targets: Collection[cst.CSTNode] | None
) -> tuple[str, dict[cst.CSTNode, tuple[int, int]]]:
    """The module's code, and the 1-based (line, column) where each target starts."""
    state = _StartRecordingState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        target_ids=None if targets is None else {id(node) for node in targets},
    )
    module._codegen(state)
    return "".join(state.tokens), state.starts


# -- printing a converted module again, reusing the text of the statements it kept ---------


@dataclass
class _StatementRecordingState(_StartRecordingState):
    """Also records the tokens each statement of a block printed, and at what
    indentation: from its first token to the first of the statement after it (the
    last statement of a block is not recorded: no hook has to run after each node)."""

    members: set[int] = field(default_factory=set)  # ids of the statements of the blocks met
    previous: dict[int, int] = field(default_factory=dict)  # id of a statement -> the one before it
    spans: dict[int, tuple[tuple[str, ...], int]] = field(default_factory=dict)  # id -> (indents, first token)
    ends: dict[int, int] = field(default_factory=dict)  # id -> past its last token

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts[node] = (self.line, self.column + 1)  # every node (target_ids is None)
        kind = type(node)
        if kind is cst.Module or kind is cst.IndentedBlock:
            body = node.body  # type: ignore[attr-defined]
            self.members.update(id(statement) for statement in body)
            for before, after in zip(body, body[1:]):
                self.previous[id(after)] = id(before)
        elif (key := id(node)) in self.members:
            at = len(self.tokens)
            self.spans[key] = (tuple(self.indent_tokens), at)
            before = self.previous.get(key)
            if before is not None:
                self.ends[before] = at


@dataclass
class Printed:
    """A module's code, where its nodes start, and the tokens each statement of a block
    printed (for ``code_reusing``).  Valid while the module lives (nodes go by id)."""

    module: cst.Module
    code: str
    starts: dict[cst.CSTNode, tuple[int, int]]
    _tokens: list[str]
    _spans: dict[int, tuple[tuple[str, ...], int]]
    _ends: dict[int, int]

    def verbatim(self, statement: cst.CSTNode) -> _Verbatim | None:
        span = self._spans.get(id(statement))
        if span is None:
            return None
        end = self._ends.get(id(statement))
        if end is None:  # the last of its block
            return None
        indents, start = span
        return _Verbatim(statement, indents, self._tokens[start:end])


def print_back(module: cst.Module) -> Printed:
    """The module printed as LibCST prints it, with the start of every node."""
    state = _StatementRecordingState(
        default_indent=module.default_indent, default_newline=module.default_newline, target_ids=None
    )
    module._codegen(state)
    return Printed(module, "".join(state.tokens), state.starts, state.tokens, state.spans, state.ends)


class _Verbatim:
    """Stands for a statement in a block: prints the tokens it printed before, if the
    indentation around it is the same (else the statement itself)."""

    __slots__ = ("statement", "indents", "tokens")

    def __init__(self, statement: cst.CSTNode, indents: tuple[str, ...], tokens: list[str]) -> None:
        self.statement, self.indents, self.tokens = statement, indents, tokens

    def _codegen(self, state: CodegenState) -> None:
        if tuple(state.indent_tokens) == self.indents:
            state.tokens.extend(self.tokens)
        else:
            self.statement._codegen(state)


# Nodes whose fields of these names hold blocks, or nodes holding blocks (else, except...).
_SUITE_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")
_HOLDERS = frozenset(
    kind
    for kind in vars(cst).values()
    if isinstance(kind, type)
    and issubclass(kind, (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally,
                          cst.MatchCase))
)


def code_reusing(module: cst.Module, before: Printed) -> str:
    """The code of ``module``, a conversion of ``before.module``: the statements it kept
    as they were (the same nodes: the rewrites never entered them) are not printed again
    but take the tokens they printed before.  Same text as ``module.code``."""
    if (module.default_indent, module.default_newline) != (before.module.default_indent, before.module.default_newline):
        return module.code
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    _with_verbatim(module, before)._codegen(state)
    return "".join(state.tokens)


def _with_verbatim(node: cst.CSTNode, before: Printed) -> cst.CSTNode:
    kind = type(node)
    if kind is cst.Module or kind is cst.IndentedBlock:
        body = [before.verbatim(statement) or _with_verbatim(statement, before) for statement in node.body]  # type: ignore[attr-defined]
        same = all(new is old for new, old in zip(body, node.body))  # type: ignore[attr-defined]
        return node if same else node.with_changes(body=body)
    if kind not in _HOLDERS:
        return node
    changes: dict[str, object] = {}
    for name in _SUITE_FIELDS:
        value = getattr(node, name, None)
        if isinstance(value, (list, tuple)):
            items = [_with_verbatim(item, before) for item in value]
            if any(new is not old for new, old in zip(items, value)):
                changes[name] = items
        elif isinstance(value, cst.CSTNode):
            new = _with_verbatim(value, before)
            if new is not value:
                changes[name] = new
    return node.with_changes(**changes) if changes else node
