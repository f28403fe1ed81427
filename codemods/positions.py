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
