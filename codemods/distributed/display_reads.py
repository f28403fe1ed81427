"""Environment rank reads that only decide what a process shows (XLA609 leaves them alone).

``if os.environ.get("RANK", "0") == "0": print(...)``, ``tqdm(..., disable=os.environ.get("RANK")
!= "0")``, ``should_log = os.environ.get("RANK", "0") in ranks`` tested only by such an ``if``:
under torch_xla.launch, which sets no RANK, every process takes the master's branch and prints
(or shows its progress bar). The output repeats; nothing the processes compute, save or
exchange changes, so this is no porting error.

A body shows only when each of its statements is a print or a log call (``logger.info``,
``Console().print(table)``), an assignment to plain names, a call on a name the body assigned
(``table.add_row(...)``) or a ``for`` over such statements; it has no ``else``."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods.engine.nodes import dotted, method_name, walk

_SHOWING = frozenset({"print", "master_print", "pprint", "info", "debug", "warning", "warn", "log", "_log"})
_PROGRESS_BARS = ("tqdm", "trange")


def _showing_call(node: cst.BaseExpression, local: set[str]) -> bool:
    if type(node) is not cst.Call:
        return False
    method = method_name(node)
    name = dotted(node.func)
    if method in _SHOWING or (name is not None and name.rsplit(".", 1)[-1] in _SHOWING):
        return True
    owner = dotted(node.func.value) if type(node.func) is cst.Attribute else None
    return owner is not None and owner.split(".")[0] in local


def _assigned_names(target: cst.BaseExpression) -> list[str] | None:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        names = [_assigned_names(e.value) for e in target.elements]  # type: ignore[attr-defined]  # a Tuple or a List (narrowed by type() above)
        return None if any(n is None for n in names) else [n for ns in names for n in ns or ()]
    return None


def _only_shows(statements: Sequence[cst.BaseStatement], local: set[str]) -> bool:
    for statement in statements:
        if type(statement) is cst.For:
            names = _assigned_names(statement.target)
            if names is None or statement.orelse is not None:
                return False
            local.update(names)
            if not _only_shows(getattr(statement.body, "body", ()), local):
                return False
        elif type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Expr and _showing_call(small.value, local):
                    continue
                if type(small) is cst.Assign and all(_assigned_names(t.target) is not None for t in small.targets):
                    local.update(n for t in small.targets for n in _assigned_names(t.target) or ())
                    continue
                return False
        else:
            return False
    return True


class DisplayReads:
    """What the walk saw; ``only_shows(read)`` once it is done."""

    def __init__(self) -> None:
        self.shown: set[int] = set()  # the nodes of tests of showing ifs and of progress bars' disable=
        # name = value, in a def: (name, the value's node ids, the def)
        self.assignments: list[tuple[str, set[int], cst.FunctionDef]] = []

    def saw_if(self, node: cst.If) -> None:
        if node.orelse is None and _only_shows(getattr(node.body, "body", ()), set()):
            self.shown.update(id(n) for n in walk(node.test))

    def saw_call(self, node: cst.Call) -> None:
        name = dotted(node.func)
        if name is not None and name.rsplit(".", 1)[-1] in _PROGRESS_BARS:
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "disable":
                    self.shown.update(id(n) for n in walk(arg.value))

    def saw_assign(self, node: cst.Assign, function: cst.FunctionDef | None) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if function is not None and type(target) is cst.Name:
            self.assignments.append((target.value, {id(n) for n in walk(node.value)}, function))

    def only_shows(self, read: cst.CSTNode) -> bool:
        if id(read) in self.shown:
            return True
        for name, value, function in self.assignments:
            if id(read) in value:
                uses = [n for n in walk(function) if type(n) is cst.Name and n.value == name and id(n) not in value]
                targets = [u for u in uses if id(u) not in self.shown]
                return len(targets) == 1  # the assignment's own target: every read of the name only shows
        return False
