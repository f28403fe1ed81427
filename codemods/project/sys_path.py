"""The folders a module puts on ``sys.path`` by hand, where the tool can compute them.

Older training repositories make their package folder importable themselves: a script
imports ``_init_paths``, whose ``add_path(osp.join(osp.dirname(__file__), 'lib'))`` inserts
``lib`` into ``sys.path``, or the script writes ``sys.path.insert(0, os.path.join(
os.path.dirname(__file__), 'lib'))``, ``sys.path.append('..')``, ``sys.path.insert(0,
str(Path(__file__).resolve().parent / 'src'))``.  The values followed are string literals
(relative to the module's folder: the resolver takes a script to run from its own folder),
``__file__``, ``os.path``'s ``join``, ``dirname``, ``abspath``, ``realpath`` and ``normpath``
(as ``os.path``, an alias of it such as ``osp``, or names imported from it), ``pathlib.Path``
with ``/``, ``.parent``, ``.parents[n]``, ``.resolve()`` and ``.absolute()``, ``str()`` and
``os.fspath()``, names assigned such a value earlier at module level, and a function of the
module whose body inserts or appends one of its parameters.  The folder the script runs from
(``os.getcwd()``, ``Path.cwd()``: YOLOv6's ``ROOT = os.getcwd(); sys.path.append(str(ROOT))`` in
``tools/train.py``, run from the repository's root) is followed too, as a relative path (``.``,
or ``lib`` for ``os.path.join(os.getcwd(), 'lib')``): the resolver (project/resolver.py) finds
which folder above the script it is, by the imports it must make work.  Statements at module level are
read, and those in their ``if``, ``try`` and ``with`` blocks; anything else (a value from the
command line, the environment) is not a folder the tool knows, and is left out.  A module that
never names ``sys.path`` is not parsed.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

_OS_PATH_CALLS = {"join", "dirname", "abspath", "realpath", "normpath"}
_PATH_METHODS = {"resolve", "absolute"}
_CWD_CALLS = {"os.getcwd", "pathlib.Path.cwd"}
# The folder the script runs from, as the values below write it (every other folder is absolute).
CWD = "."


def added_folders(path: Path, data: bytes) -> tuple[Path, ...]:
    """The folders the module at ``path`` (its text: ``data``) puts on ``sys.path``, in order: a
    relative one is relative to the folder the script runs from (``os.getcwd()``)."""
    if b"sys.path" not in data:
        return ()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):  # not Python this tool reads: nothing followed
        return ()
    reader = _Reader(path)
    found: list[Path] = []
    for statement in module_statements(tree.body):
        for value in reader.read(statement):
            if value not in found:
                found.append(value)
    return tuple(found)


def module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, with those of their ``if``, ``try`` and ``with`` blocks."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If):
            yield from module_statements(statement.body)
            yield from module_statements(statement.orelse)
        elif isinstance(statement, ast.Try):
            yield from module_statements(statement.body)
            for handler in statement.handlers:
                yield from module_statements(handler.body)
            yield from module_statements(statement.orelse)
            yield from module_statements(statement.finalbody)
        elif isinstance(statement, ast.With):
            yield from module_statements(statement.body)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _inserted(call: ast.Call, names: dict[str, str]) -> ast.expr | None:
    """The value ``sys.path.insert(i, value)`` or ``sys.path.append(value)`` adds."""
    callee = _dotted(call.func)
    if callee is None or "." not in callee:
        return None
    owner, _, method = callee.rpartition(".")
    if _qualified(owner, names) != "sys.path":
        return None
    if method == "insert" and len(call.args) == 2:
        return call.args[1]
    if method == "append" and len(call.args) == 1:
        return call.args[0]
    return None


def _qualified(name: str, names: dict[str, str]) -> str:
    """``name`` with its head replaced by what the module imported under it."""
    head, dot, rest = name.partition(".")
    return names.get(head, head) + dot + rest


class _Reader:
    """One module's imports, helpers and folder values, read statement by statement."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: dict[str, str] = {}  # local name -> what it was imported as (``osp`` -> ``os.path``)
        self.values: dict[str, str] = {"__file__": str(path)}
        self.helpers: dict[str, int] = {}  # function -> the position of the parameter it puts on sys.path

    def read(self, statement: ast.stmt) -> list[Path]:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname is not None:
                    self.names[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    self.names[head] = head
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                self.names[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
        elif isinstance(statement, ast.FunctionDef):
            self._helper(statement)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                value = self.value(statement.value)
                if value is None:
                    self.values.pop(target.id, None)
                else:
                    self.values[target.id] = value
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            added = self.added(statement.value)
            return [] if added is None else [Path(added)]
        return []

    def _helper(self, function: ast.FunctionDef) -> None:
        parameters = [argument.arg for argument in function.args.args]
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and isinstance(value := _inserted(node, self.names), ast.Name):
                if value.id in parameters:
                    self.helpers[function.name] = parameters.index(value.id)
                    return
        self.helpers.pop(function.name, None)

    def added(self, call: ast.Call) -> str | None:
        """The folder a call puts on sys.path (None: none, or none the tool can compute)."""
        value = _inserted(call, self.names)
        if value is not None:
            return self.value(value)
        if isinstance(call.func, ast.Name) and (position := self.helpers.get(call.func.id)) is not None:
            if position < len(call.args):
                return self.value(call.args[position])
        return None

    def value(self, node: ast.expr) -> str | None:
        """The absolute folder an expression names, or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return os.path.normpath(os.path.join(self.path.parent, node.value))
        if isinstance(node, ast.Name):
            return self.values.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.value(node.left), self._part(node.right)
            return None if left is None or right is None else os.path.normpath(os.path.join(left, right))
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = self.value(node.value)
            return None if inner is None else _parent(inner)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parents"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
        ):
            inner = self.value(node.value.value)
            if inner is None:
                return None
            for _ in range(node.slice.value + 1):
                inner = _parent(inner)
            return inner
        if isinstance(node, ast.Call):
            return self._called(node)
        return None

    def _part(self, node: ast.expr) -> str | None:
        """A part joined to a folder: a literal as written, or a folder value."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return self.value(node)

    def _called(self, call: ast.Call) -> str | None:
        if isinstance(call.func, ast.Attribute) and call.func.attr in _PATH_METHODS and not call.args:
            inner = self.value(call.func.value)
            return None if inner is None else os.path.normpath(inner)
        callee = _dotted(call.func)
        if callee is None or call.keywords:
            return None
        qualified = _qualified(callee, self.names)
        module, _, function = qualified.rpartition(".")
        if qualified in _CWD_CALLS and not call.args:
            return CWD
        if qualified in ("str", "os.fspath", "pathlib.Path") and len(call.args) == 1:
            return self.value(call.args[0])
        if module != "os.path" or function not in _OS_PATH_CALLS or not call.args:
            return None
        if function == "join":
            first = self.value(call.args[0])
            rest = [self._part(argument) for argument in call.args[1:]]
            parts = [part for part in rest if part is not None]
            if first is None or len(parts) != len(rest):
                return None
            return os.path.normpath(os.path.join(first, *parts))
        if len(call.args) != 1:
            return None
        inner = self.value(call.args[0])
        if inner is None:
            return None
        return _parent(inner) if function == "dirname" else os.path.normpath(inner)


def _parent(folder: str) -> str:
    """The folder above ``folder`` (``..`` above the folder the script runs from)."""
    return os.path.dirname(folder) if os.path.isabs(folder) else os.path.normpath(os.path.join(folder, ".."))
