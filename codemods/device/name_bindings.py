"""Where a name is bound, seen from a call that reads it (device/own_cuda.py: is ``utils`` of
``utils.cuda(batch)`` the project module the file imports, or a local of the call's function?).
Python's rules, for what the call can read: a binding in one of the functions enclosing the call
(a parameter, an assignment, a ``for``/``with``/``except`` target, a walrus, a nested ``def`` or
``class``) makes the name that function's local; a comprehension's target is local to that
comprehension only, but counts here as undecidable unless the call is inside it; a binding at
module level other than an import, a ``global`` declaration or an import inside a function make it
undecidable."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

import libcst as cst

from codemods.engine.nodes import target_names

Binding = Literal["local", "module", "unsure"]
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def binding_at(
    name: str, call: cst.CSTNode, functions: Sequence[cst.FunctionDef | None], module: cst.Module | None
) -> Binding:
    """How ``name`` read at ``call`` is bound: ``local`` (by a function enclosing the call, or a
    comprehension around it), ``module`` (by the module's imports only), ``unsure``."""
    defs = [function for function in functions if function is not None]
    if module is None:
        return "unsure"
    if len(defs) < len(functions):  # in a lambda: its parameters
        inner = defs[-1] if defs else module
        for node in _walk(inner):
            if isinstance(node, cst.Lambda) and any(sub is call for sub in _walk(node)):
                params = node.params
                every = (*params.posonly_params, *params.params, *params.kwonly_params)
                stars = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
                if name in {p.name.value for p in (*every, *stars)}:
                    return "local"
    unsure = False
    for function in reversed(defs):
        params = function.params
        every = (*params.posonly_params, *params.params, *params.kwonly_params)
        stars = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
        if name in {p.name.value for p in (*every, *stars)}:
            return "local"
        for kind, node in _bindings(function.body, name):
            if kind == "global":
                unsure = True
            elif kind == "comprehension":
                if any(sub is call for sub in _walk(node)):
                    return "local"
                unsure = True
            elif kind == "import":
                unsure = True
            else:
                return "local"
    for kind, node in _bindings(module, name):
        if kind == "comprehension" and not any(sub is call for sub in _walk(node)):
            continue  # (a module-level comprehension's own)
        if kind != "import":
            unsure = True
    return "unsure" if unsure else "module"


def _bindings(root: cst.CSTNode, name: str) -> Iterator[tuple[str, cst.CSTNode]]:
    """The bindings of ``name`` in ``root``'s scope (not in nested functions' or classes' bodies):
    (kind, node): ``import``, ``global``, ``comprehension`` (the comprehension), ``bound``."""
    for node in _walk(root, skip_scopes=True):
        if isinstance(node, cst.Import | cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(bound, cst.Name | cst.Attribute) and _first(bound) == name:
                    yield "import", node
        elif isinstance(node, cst.Global | cst.Nonlocal):
            if any(item.name.value == name for item in node.names):
                yield "global", node
        elif isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp):
            comp_for: cst.CompFor | None = node.for_in
            while comp_for is not None:
                if name in target_names(comp_for.target):
                    yield "comprehension", node
                    break
                comp_for = comp_for.inner_for_in
        elif name in _bound_by(node):
            yield "bound", node


def _bound_by(node: cst.CSTNode) -> list[str]:
    if isinstance(node, cst.AssignTarget | cst.For):
        return target_names(node.target)
    if isinstance(node, cst.AnnAssign | cst.AugAssign | cst.NamedExpr):
        return target_names(node.target)
    if isinstance(node, cst.WithItem | cst.ExceptHandler):
        asname = node.asname if isinstance(node, cst.WithItem) else node.name
        return target_names(asname.name) if asname is not None and isinstance(asname.name, cst.BaseExpression) else []
    if isinstance(node, cst.Del):
        return target_names(node.target)
    if isinstance(node, cst.FunctionDef | cst.ClassDef):
        return [node.name.value]
    return []


def _first(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _walk(root: cst.CSTNode, skip_scopes: bool = False) -> Iterator[cst.CSTNode]:
    """``root`` and its descendants; with ``skip_scopes``, not those inside a nested function,
    class or lambda (their own names are still yielded)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if skip_scopes and node is not root and isinstance(node, _SCOPES):
            continue
        stack.extend(reversed(node.children))
