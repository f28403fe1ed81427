"""Where nodes start, computed while code is generated, and only for the nodes asked about.

LibCST's PositionProvider records a full range for every node of the module; the
report needs the start of a handful of nodes.  The check that a module prints back
exactly (``print_back``) records where each statement of a block begins and nothing
else; the start of a node that carries a finding is found afterwards by printing again
only the innermost statement around it, from where that statement began.  Both build on
LibCST's codegen hooks (``CodegenState``), the same ones PositionProvider uses.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from codemods.engine.nodes import is_node_class

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
    # When set, the targets not given their syntactic start yet: generation stops once none is left.
    unplaced: set[int] | None = None

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

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node=None, end_node=None):  # type: ignore[no-untyped-def]  # libcst's record_syntactic_position is untyped; this override keeps its signature
        if not self._wanted(node):
            return _NOTHING
        if start_node is not None:
            return _BorrowedStart(self, node, start_node)
        self.starts[node] = (self.line, self.column + 1)
        if self.unplaced is not None:
            self.unplaced.discard(id(node))
            if not self.unplaced:
                raise _AllPlaced
        return _NOTHING


class _AllPlaced(Exception):
    """Every target has its start: the rest of the code need not be generated."""


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


# -- printing a module back, then finding where some of its nodes start ---------------------


# A statement of a block, the indentation it was printed at, and the index of its first token.
_Span = tuple[cst.CSTNode, tuple[str, ...], int]


class _PlainState(CodegenState):
    """LibCST's code generation, without its position hook (the base class makes it a
    generator-based context manager, entered for almost every node to do nothing), and
    with the token list's own append as ``add_token`` (no Python call per token)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]  # passes libcst CodegenState's dataclass fields through unchanged
        self.__post_init__()

    def __post_init__(self) -> None:  # dataclass subclasses call it from their own __init__
        self.add_token = self.tokens.append  # type: ignore[method-assign,assignment]  # libcst's add_token is a method: an instance attribute bound to list.append replaces it (faster)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node=None, end_node=None):  # type: ignore[no-untyped-def]  # libcst's record_syntactic_position is untyped; this override keeps its signature
        return _NOTHING


def code_of(node: cst.CSTNode) -> str:
    """``node``'s code, as ``cst.Module([]).code_for_node`` gives it (for messages)."""
    state = _PlainState(default_indent=" " * 4, default_newline="\n")
    node._codegen(state)
    return "".join(state.tokens)


@dataclass
class _StatementRecordingState(_PlainState):
    """Prints as LibCST prints, and records the tokens each statement of a block
    printed, and at what indentation: from its first token to the first of the
    statement after it (the last statement of a block has no end: no hook has to run
    after each node).  Records no position: that costs a hook per token."""

    members: set[int] = field(default_factory=set)  # ids of the statements of the blocks met
    previous: dict[int, int] = field(default_factory=dict)  # id of a statement -> the one before it
    spans: dict[int, _Span] = field(default_factory=dict)  # id of a statement -> where it printed
    ends: dict[int, int] = field(default_factory=dict)  # id -> past its last token

    def before_codegen(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.Module or kind is cst.IndentedBlock:
            # ``kind`` is the node's type: the assert says so to mypy (for blocks alone).
            assert type(node) is cst.Module or type(node) is cst.IndentedBlock
            body = node.body
            self.members.update(id(statement) for statement in body)
            for statement, following in zip(body, body[1:]):
                self.previous[id(following)] = id(statement)
        elif (key := id(node)) in self.members:
            at = len(self.tokens)
            self.spans[key] = (node, tuple(self.indent_tokens), at)
            before = self.previous.get(key)
            if before is not None:
                self.ends[before] = at


@dataclass
class Printed:
    """A module's code, and the tokens each statement of a block printed (for
    ``code_reusing`` and ``Positions``).  Valid while the module lives (nodes go by id)."""

    module: cst.Module
    code: str
    _tokens: list[str]
    _spans: dict[int, _Span]
    _ends: dict[int, int]

    def verbatim(self, statement: cst.CSTNode) -> _Verbatim | None:
        span = self._spans.get(id(statement))
        if span is None:
            return None
        end = self._ends.get(id(statement))
        if end is None:  # the last of its block
            return None
        _, indents, start = span
        return _Verbatim(statement, indents, self._tokens[start:end])

    def text_of(self, statement: cst.CSTNode) -> str | None:
        """The text a statement of a block printed (None: not such a statement)."""
        span = self._spans.get(id(statement))
        if span is None:
            return None
        return "".join(self._tokens[span[2] : self._ends.get(id(statement))])

    def positions(self, parents: Mapping[int, int | None]) -> Positions:
        """Where the module's nodes start, found when asked; ``parents`` maps the id of
        a node to the id of its parent (the analysis walk's, which skips punctuation)."""
        return Positions(self.module, self._tokens, self._spans, parents)


def print_back(module: cst.Module) -> Printed:
    """The module printed as LibCST prints it, with the text of each statement."""
    state = _StatementRecordingState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return Printed(module, "".join(state.tokens), state.tokens, state.spans, state.ends)


class Positions:
    """The 1-based (line, column) where nodes of a printed module start, as
    PositionProvider gives them.  A node is found from the innermost statement of a
    block around it (``spans``: where such statements were printed, among ``tokens``):
    that statement is printed again from where it began, and only until the nodes asked
    about are reached.  (Nodes outside any such statement, or that the parent map does
    not hold, are found by printing the module again.)"""

    def __init__(
        self, module: cst.Module, tokens: list[str], spans: Mapping[int, _Span], parents: Mapping[int, int | None]
    ) -> None:
        self.module, self.tokens, self.spans, self.parents = module, tokens, spans, parents
        self.starts: dict[int, tuple[int, int]] = {}  # by node id
        self.unknown: set[int] = set()  # ids of nodes the module does not hold

    def get(self, node: cst.CSTNode | None) -> tuple[int, int] | None:
        if node is None:
            return None
        if id(node) not in self.starts:
            self.locate([node])
        return self.starts.get(id(node))

    def locate(self, nodes: Iterable[cst.CSTNode | None]) -> None:
        """Find the starts of ``nodes`` (all at once: statements are printed once each)."""
        spans, parents = self.spans, self.parents
        by_statement: dict[int, list[cst.CSTNode]] = {}
        elsewhere: list[cst.CSTNode] = []
        for node in nodes:
            if node is None or id(node) in self.starts or id(node) in self.unknown:
                continue
            key: int | None = id(node)
            while key is not None and key not in spans:
                key = parents.get(key)
            if key is None:
                elsewhere.append(node)
            else:
                by_statement.setdefault(key, []).append(node)
        module = self.module
        firsts = _line_and_column(self.tokens, sorted(spans[key][2] for key in by_statement))
        for key, targets in by_statement.items():
            statement, indents, at = spans[key]
            line, column = firsts[at]
            state = _StartRecordingState(
                default_indent=module.default_indent,
                default_newline=module.default_newline,
                target_ids={id(n) for n in targets},
                line=line,
                column=column,
                unplaced={id(n) for n in targets},
            )
            state.indent_tokens = list(indents)
            try:
                statement._codegen(state)
            except _AllPlaced:
                pass
            self.starts.update((id(node), start) for node, start in state.starts.items())
        if elsewhere:
            self.starts.update((id(node), start) for node, start in code_and_starts(module, elsewhere)[1].items())
            self.unknown.update(id(node) for node in elsewhere if id(node) not in self.starts)


def _line_and_column(tokens: list[str], indices: list[int]) -> dict[int, tuple[int, int]]:
    """The line (1-based) and column (0-based) at each of the sorted token ``indices``."""
    found: dict[int, tuple[int, int]] = {}
    line, column, done = 1, 0, 0
    for at in indices:
        text = "".join(tokens[done:at])
        newlines = text.count("\n") + text.count("\r") - text.count("\r\n")
        if newlines:
            line += newlines
            column = len(text) - max(text.rfind("\n"), text.rfind("\r")) - 1
        else:
            column += len(text)
        found[at], done = (line, column), at
    return found


# -- printing a converted module again, reusing the text of the statements it kept ---------


class _Verbatim:
    """Stands for a statement in a block: prints the tokens it printed before, if the
    indentation around it is the same (else the statement itself)."""

    __slots__ = ("statement", "indents", "tokens")

    def __init__(self, statement: cst.CSTNode, indents: tuple[str, ...], tokens: list[str]) -> None:
        self.statement, self.indents, self.tokens = statement, indents, tokens

    def _codegen(self, state: CodegenState) -> None:
        if tuple(state.indent_tokens) == self.indents:
            start = len(state.tokens)
            state.tokens.extend(self.tokens)
            if isinstance(state, _ReusingState):
                state.reused.append((start, len(state.tokens), self.indents))
                state.kept[id(self.statement)] = (self.statement, self.indents, start)
        else:
            self.statement._codegen(state)


@dataclass
class _ReusingState(_PlainState):
    # The token ranges printed from the input, with their indentation.
    reused: list[tuple[int, int, tuple[str, ...]]] = field(default_factory=list)
    # The statements taken from the input, where they start among the tokens.
    kept: dict[int, _Span] = field(default_factory=dict)
    # Nodes to locate (by id), and the index of the token each starts at once printed.
    wanted: frozenset[int] = frozenset()
    found: dict[cst.CSTNode, int] = field(default_factory=dict)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node=None, end_node=None):  # type: ignore[no-untyped-def]  # libcst's record_syntactic_position is untyped; this override keeps its signature
        if start_node is None and id(node) in self.wanted:  # (a borrowed start is left to a whole print)
            self.found[node] = len(self.tokens)
        return _NOTHING


@dataclass
class Reprinted:
    """A converted module's code, what of it was taken from the input as printed, and
    where the nodes asked about start in it."""

    module: cst.Module
    code: str
    _tokens: list[str]
    _reused: list[tuple[int, int, tuple[str, ...]]]
    _kept: dict[int, _Span]
    _targets: Collection[cst.CSTNode]
    _found: dict[cst.CSTNode, int]

    def starts(self, parents: Mapping[int, int | None]) -> dict[cst.CSTNode, tuple[int, int]]:
        """The 1-based (line, column) of each node asked about that the code holds.  Those
        inside a statement taken from the input are found from it, as ``Positions`` does
        (``parents``: the parent map of the input's nodes)."""
        at = _line_and_column(self._tokens, sorted(set(self._found.values())))
        starts = {node: (at[index][0], at[index][1] + 1) for node, index in self._found.items()}
        missing = [node for node in self._targets if node not in starts]
        if missing:
            positions = Positions(self.module, self._tokens, self._kept, parents)
            positions.locate(missing)
            starts.update((node, found) for node in missing if (found := positions.starts.get(id(node))) is not None)
        return starts

    def new_parts(self) -> str:
        """The code with each statement taken from the input replaced by ``pass`` at its
        indentation: Python's grammar reads the statements of a block independently, so
        if this parses, so does the code (the input's statements parsed where they are)."""
        parts, done = [], 0
        for start, end, indents in self._reused:
            parts.append("".join(self._tokens[done:start]))
            parts.append("".join(indents) + "pass\n")
            done = end
        parts.append("".join(self._tokens[done:]))
        return "".join(parts)


# Nodes whose fields of these names hold blocks, or nodes holding blocks (else, except...).
_SUITE_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")
_HOLDERS = frozenset(
    kind
    for kind in vars(cst).values()
    if isinstance(kind, type)
    and is_node_class(
        kind,
        (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase),
    )
)


def code_reusing(module: cst.Module, before: Printed, targets: Collection[cst.CSTNode] = ()) -> Reprinted:
    """The code of ``module``, a conversion of ``before.module``: the statements it kept
    as they were (the same nodes: the rewrites came back with them unchanged) are not
    printed again but take the tokens they printed before.  Same text as ``module.code``.
    ``targets``: nodes to locate in it (``Reprinted.starts``)."""
    wanted = frozenset(id(node) for node in targets)
    state = _ReusingState(default_indent=module.default_indent, default_newline=module.default_newline, wanted=wanted)
    if (module.default_indent, module.default_newline) != (before.module.default_indent, before.module.default_newline):
        module._codegen(state)
    else:
        _with_verbatim(module, before)._codegen(state)
    return Reprinted(module, "".join(state.tokens), state.tokens, state.reused, state.kept, targets, state.found)


def _with_verbatim(node: cst.CSTNode, before: Printed) -> cst.CSTNode:
    kind = type(node)
    if type(node) is cst.Module or type(node) is cst.IndentedBlock:
        body = [before.verbatim(statement) or _with_verbatim(statement, before) for statement in node.body]
        same = all(new is old for new, old in zip(body, node.body))
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
