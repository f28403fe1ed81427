"""The graphs torch_xla ran, read from its graph file, and what changed between two of them.

With ``XLA_SAVE_TENSORS_FILE`` and ``XLA_SAVE_TENSORS_FMT=stablehlo`` torch_xla appends,
for every graph it runs (compiled or cached), an entry::

    [ScheduleSyncTensorsGraph]
    TensorsGraphInfo:
      sync (/.../torch_xla/torch_xla.py:87)        <- the Python stack that ran it,
      <module> (/work/train.py:42)                    innermost first
    ...
    ## BEGIN_GRAPH
    #loc4 = /work/train.py:30:0                      <- MLIR locations; with XLA_HLO_DEBUG
    #loc9 = "<module>"(#loc4)                           they hold each operation's whole
    #loc12 = #loc9                                      Python stack (callee "at" caller)
     at #loc11
    module @IrToHlo.19 ... {
      func.func @main(%arg0: tensor<400xi64> "xla__device_data"(#loc9), ...) -> ... {
        %0 = stablehlo.slice %arg0 [10:20] : (tensor<400xi64>) -> tensor<10xi64> "xla__select"(#loc12)
        ...
    Graph Hash: b5d7e41090d681dd3d2f7d75e231ca2b
    ## END_GRAPH

Two graphs are compared by a Merkle signature of each value (its operation's text, with
locations left out and operands replaced by their signatures): a value of the newer graph
whose signature the older graph lacks has changed, and a changed value whose operands did
not change is where the change starts (a slice with other bounds, an input of another
shape).  Those are the operations the report names.

This module only reads text: it never imports torch.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

Frame = tuple[str, int, str]  # (file, line, function), as Python's tracebacks give them
IsUserFile = Callable[[str], bool]

_ENTRY = re.compile(r"^\[(\w+)\]\n", re.MULTILINE)
_STACK_LINE = re.compile(r"^  (.*) \((.*):(\d+)\)$")
_GRAPH_HASH = re.compile(r"^Graph Hash: (\w+)$", re.MULTILINE)
_LOC_DEF = re.compile(r"^(#loc\d*) = (.*)$")
_FILE_LOC = re.compile(r'^"?(.*?)"?:(\d+):(\d+)$')
_NAME_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)"(?:\((.*)\))?$')
_LOC_NAME = re.compile(r"^#loc\d*$")
_CALLSITE = re.compile(r"^(#loc\d*)\s+at\s+(#loc\d*)$")
# The location at the end of an operation: "name"(#loc3), "name", #loc3 or [unknown].
_TRAILING_LOC = re.compile(r'\s+("(?:[^"\\]|\\.)*"(?:\(#loc\d*\))?|#loc\d*|\[unknown\]|loc\(.*\))$')
_LOC_REF = re.compile(r"\(#loc\d*\)|#loc\d*")
_VALUE = re.compile(r"%([\w$.-]+)(#\d+)?")
_RESULTS = re.compile(r"^\s*((?:%[\w$.-]+(?::\d+)?)(?:\s*,\s*%[\w$.-]+(?::\d+)?)*)\s*=\s*")
_ARGUMENT = re.compile(r"%(arg\d+): (tensor<[^>]*>|[^\s,]+)((?:\s+\"[^\"]*\"(?:\(#loc\d*\))?)|\s+#loc\d*)?")
_TYPE = re.compile(r"tensor<[^>]*>")
_SCOPE = re.compile(r"^.*/|\.\d+$")  # "aten__add.1/aten__add": a scope, numbered per step
_TOKEN = re.compile(r"tensor<[^>]*>|dense<[^>]*>|array<[^>]*>|\[[^\]]*\]|[^\s,()<>{}]+")


@dataclass
class Operation:
    """One value-producing statement of the graph (or an argument: ``op == "argument"``)."""

    name: str  # its value's name in the graph: arg0, 0, cst_1 (the first, for several results)
    text: str  # the statement without its location, operand names as in the graph
    op: str  # stablehlo.slice, argument, ...
    label: str  # torch_xla's name for what made it: aten__pow, xla__select, xla__device_data
    frames: list[Frame]  # Python stack of the operation, innermost first
    operands: list[str] = field(default_factory=list)  # names of top-level values it reads
    signature: str = ""


@dataclass
class Graph:
    """One graph as torch_xla ran it."""

    stack: list[Frame]  # the Python stack that ran it, innermost first
    graph_hash: str
    operations: dict[str, Operation]  # by value name (arg0, 0, cst_1, ...)

    def signatures(self) -> set[str]:
        return {o.signature for o in self.operations.values()}


@dataclass(frozen=True)
class Change:
    """Where a newer graph starts to differ from an older one."""

    operation: Operation
    before: str | None  # the nearest operation of the older graph, if any
    kind: str  # "shape", "constant" (a value or attribute) or "structure"

    def difference(self) -> str:
        """The first tokens that differ, ``[10:20] -> [20:30]``, or ''."""
        if self.before is None:
            return ""
        old, new = _TOKEN.findall(_VALUE.sub("%", self.before)), _TOKEN.findall(_VALUE.sub("%", self.operation.text))
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
            if tag != "equal":
                return f"{' '.join(old[i1:i2]) or '(none)'} -> {' '.join(new[j1:j2]) or '(none)'}"
        return ""


def entries(text: str) -> Iterator[tuple[int, str, str]]:
    """(offset, name, body) of each entry of a graph file."""
    marks = list(_ENTRY.finditer(text))
    for mark, following in zip(marks, marks[1:] + [None]):
        end = following.start() if following else len(text)
        yield mark.start(), mark.group(1), text[mark.end() : end]


def entry_head(body: str) -> tuple[list[Frame], str]:
    """The Python stack that ran an entry's graph, and the graph's hash, without parsing it."""
    head, _, rest = body.partition("## BEGIN_GRAPH\n")
    stack = [(m.group(2), int(m.group(3)), m.group(1)) for m in map(_STACK_LINE.match, head.splitlines()) if m]
    found = _GRAPH_HASH.search(rest)
    return stack, found.group(1) if found else ""


def parse_entry(body: str) -> Graph:
    """One entry of the graph file (the text after its ``[name]`` line)."""
    stack, graph_hash = entry_head(body)
    graph_text = body.partition("## BEGIN_GRAPH\n")[2].partition("## END_GRAPH")[0]
    locations, module_lines = _split_locations(graph_text)
    operations = _operations(module_lines, locations)
    _sign(operations)
    return Graph(stack, graph_hash, operations)


def changes(before: Graph, after: Graph) -> list[Change]:
    """The operations of ``after`` where it starts to differ from ``before``.

    Where the change starts: inputs of another shape, operations whose constants or
    attributes differ (a slice's bounds), operations the older graph did not have.  An
    operation that differs only in the shape of its result (a broadcast to the new
    batch size, a constant splat, a mean's divisor) follows a shape set elsewhere: such
    operations are named only when nothing else explains the change."""
    known = before.signatures()
    changed = {name for name, op in after.operations.items() if op.signature not in known and op.op != "return"}
    starts = [
        after.operations[name]
        for name in changed
        if not any(operand in changed for operand in after.operations[name].operands)
    ]
    found = []
    for op in starts:
        counterpart = _counterpart(op, before)
        found.append(Change(op, counterpart.text if counterpart else None, _kind(op, counterpart)))
    causes = [c for c in found if c.operation.op == "argument" or (c.operation.operands and c.kind != "shape")]
    return causes or found


def consumers(graph: Graph, operation: Operation) -> list[Operation]:
    """Operations that read ``operation``'s value, nearest first (breadth-first)."""
    names = {name for name, op in graph.operations.items() if op is operation}
    seen, result = set(names), list[Operation]()
    while names:
        following = {name for name, op in graph.operations.items() if names & set(op.operands)} - seen
        seen |= following
        result.extend(graph.operations[name] for name in sorted(following, key=_order))
        names = following
    return result


def user_frame(frames: list[Frame], is_user_file: IsUserFile) -> Frame | None:
    return next((f for f in frames if is_user_file(f[0])), None)


# -- parsing ---------------------------------------------------------------------------


def _split_locations(graph_text: str) -> tuple[dict[str, str], list[str]]:
    """The ``#loc`` definitions (continuation lines joined) and the module's lines."""
    definitions: dict[str, str] = {}
    module: list[str] = []
    last: str | None = None
    for line in graph_text.splitlines():
        if line.startswith(" at #loc") and last is not None:
            definitions[last] += line
            continue
        found = _LOC_DEF.match(line)
        if found:
            last = found.group(1)
            definitions[last] = found.group(2)
        else:
            last = None
            module.append(line)
    return definitions, module


class _Locations:
    """Resolves MLIR locations to Python stacks (innermost first)."""

    def __init__(self, definitions: dict[str, str]) -> None:
        self._definitions = definitions
        self._resolved: dict[str, list[Frame]] = {}

    def frames(self, location: str) -> list[Frame]:
        location = location.strip()
        callsite = _CALLSITE.match(location)
        if callsite:
            return self.frames(callsite.group(1)) + self.frames(callsite.group(2))
        if _LOC_NAME.match(location):
            if location not in self._resolved:
                self._resolved[location] = []  # guards against a cycle
                self._resolved[location] = self.frames(self._definitions.get(location, "[unknown]"))
            return self._resolved[location]
        named = _NAME_LOC.match(location)
        if named:
            inner = self.frames(named.group(2)) if named.group(2) else []
            if inner and inner[0][2] == "":
                inner = [(inner[0][0], inner[0][1], named.group(1)), *inner[1:]]
            return inner
        at_file = _FILE_LOC.match(location)
        if at_file:
            return [(at_file.group(1), int(at_file.group(2)), "")]
        return []

    @staticmethod
    def label(location: str) -> str:
        named = _NAME_LOC.match(location.strip())
        return _SCOPE.sub("", named.group(1)) if named else ""


def _statements(lines: list[str]) -> Iterator[str]:
    """The body of ``func.func @main`` one statement at a time (regions kept whole)."""
    body = False
    pending: list[str] = []
    depth = 0
    for line in lines:
        if not body:
            if line.lstrip().startswith("func.func @main("):
                body = True
                yield line.strip()
            continue
        if not pending and line.strip().startswith("}"):
            return  # the end of @main
        pending.append(line.strip())
        depth += _balance(line)
        if depth <= 0:
            yield "\n".join(pending)
            pending, depth = [], 0


def _balance(line: str) -> int:
    unquoted = re.sub(r'"(?:[^"\\]|\\.)*"', "", line)
    return unquoted.count("(") + unquoted.count("{") - unquoted.count(")") - unquoted.count("}")


def _operations(lines: list[str], definitions: dict[str, str]) -> dict[str, Operation]:
    locations = _Locations(definitions)
    operations: dict[str, Operation] = {}
    for statement in _statements(lines):
        if statement.startswith("func.func @main("):
            header = statement.split(") ->", 1)[0]
            for found in _ARGUMENT.finditer(header):
                location = found.group(3) or ""
                operations[found.group(1)] = Operation(
                    found.group(1),
                    f"argument {found.group(2)}",
                    "argument",
                    locations.label(location),
                    locations.frames(location),
                )
            continue
        trailing = _TRAILING_LOC.search(statement)
        location = trailing.group(1) if trailing else ""
        text = statement[: trailing.start()] if trailing else statement
        results = _RESULTS.match(text)
        names = [r.split(":")[0].lstrip("%").strip() for r in results.group(1).split(",")] if results else []
        code = text[results.end() :] if results else text
        op = code.split(None, 1)[0].strip('"') if code.strip() else ""
        operands = [m.group(1) for m in _VALUE.finditer(code) if m.group(1) in operations]
        names = names or [f"#{len(operations)}"]
        operation = Operation(names[0], code, op, locations.label(location), locations.frames(location), operands)
        for name in names:
            operations[name] = operation
    return operations


def _sign(operations: dict[str, Operation]) -> None:
    """Merkle signatures in definition order (operands are always defined first)."""
    for operation in operations.values():
        if operation.signature:
            continue  # a statement with several results
        local: dict[str, str] = {}

        def operand(found: re.Match[str]) -> str:
            value = found.group(1)
            if value in operations and operations[value].signature:
                return "{" + operations[value].signature + (found.group(2) or "") + "}"
            return local.setdefault(value, f"%local{len(local)}")  # noqa: B023 - a region's own values; sub() calls it at once

        text = _LOC_REF.sub("", _VALUE.sub(operand, operation.text))
        operation.signature = hashlib.sha1(text.encode()).hexdigest()[:16]


def _order(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (-1, name)


def _counterpart(operation: Operation, graph: Graph) -> Operation | None:
    """The operation of ``graph`` most like ``operation``: an argument at the same position,
    else one of the same kind, made at the same place, with the nearest text."""
    if operation.op == "argument":
        return graph.operations.get(operation.name)
    same_kind = [o for o in graph.operations.values() if o.op == operation.op and o.label == operation.label]
    if not same_kind:
        return None
    place = operation.frames[:1]
    candidates = [o for o in same_kind if o.frames[:1] == place] or same_kind
    return max(candidates, key=lambda o: difflib.SequenceMatcher(a=o.text, b=operation.text, autojunk=False).ratio())


def _kind(operation: Operation, counterpart: Operation | None) -> str:
    """``shape`` if only tensor types differ, ``constant`` if anything else does, ``structure``
    if the older graph has no such operation."""
    if counterpart is None:
        return "structure"
    if _TYPE.sub("T", _VALUE.sub("%", counterpart.text)) == _TYPE.sub("T", _VALUE.sub("%", operation.text)):
        return "shape"
    return "constant"
