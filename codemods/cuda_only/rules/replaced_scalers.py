"""timm's ``NativeScaler()`` builds ``torch.cuda.amp.GradScaler()`` as its ``_scaler``; code that
replaces it (``loss_scaler._scaler = torch.cuda.amp.GradScaler(enabled=...)``, which the port
makes XLA's scaler, XLA205) before anything steps through it never steps the CUDA one, which
without CUDA is only built disabled.  XLA004 says nothing of such a ``NativeScaler()`` (imported when
XLA004's hook runs: a rule module loads no LibCST when it is imported)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from codemods.apis import CUDA_GRAD_SCALERS, TORCH_GRAD_SCALERS, XLA_GRAD_SCALERS
from codemods.engine.nodes import parents_of, walk

_SCALERS = CUDA_GRAD_SCALERS | TORCH_GRAD_SCALERS | XLA_GRAD_SCALERS
# What a disabled GradScaler does without CUDA (torch 2.9: returns at once, or its empty state).
_HARMLESS = frozenset({"state_dict", "load_state_dict"})


def scaler_replaced(ancestors: Sequence[cst.CSTNode], resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    """The reference (the last of ``ancestors``) is the class of ``name = NativeScaler()``, and every
    use of ``name`` in its scope but its state's save and load comes after ``name._scaler = <a
    GradScaler>`` in a block around that use."""
    if len(ancestors) < 3:
        return False
    call, assign = ancestors[-2], ancestors[-3]
    if not isinstance(call, cst.Call) or not isinstance(assign, cst.Assign) or assign.value is not call:
        return False
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    scope = next((a for a in reversed(ancestors) if isinstance(a, cst.FunctionDef)), ancestors[0])
    parent = parents_of(scope)
    stores = [
        line
        for node in walk(scope)
        if isinstance(node, cst.Assign)
        and isinstance(node.value, cst.Call)
        and resolve(node.value.func) in _SCALERS
        and any(_is_scaler_of(t.target, name) for t in node.targets)
        and isinstance(line := parent.get(id(node)), cst.SimpleStatementLine)
    ]
    if not stores:
        return False
    for node in walk(scope):
        if not isinstance(node, cst.Name) or node.value != name or node is assign.targets[0].target:
            continue
        above = parent.get(id(node))
        if isinstance(above, cst.Attribute) and above.value is node:
            if above.attr.value in _HARMLESS or (
                above.attr.value == "_scaler" and isinstance(parent.get(id(above)), cst.AssignTarget)
            ):
                continue
        if not any(_after(store, node, parent) for store in stores):
            return False
    return True


def _is_scaler_of(target: cst.BaseExpression, name: str) -> bool:
    return (
        isinstance(target, cst.Attribute)
        and target.attr.value == "_scaler"
        and isinstance(target.value, cst.Name)
        and target.value.value == name
    )


def _after(store: cst.CSTNode, use: cst.CSTNode, parent: dict[int, cst.CSTNode]) -> bool:
    """``store`` is a statement of a block around ``use``, before the statement ``use`` is in."""
    block = parent.get(id(store))
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return False
    child: cst.CSTNode = use
    while (above := parent.get(id(child))) is not None and above is not block:
        child = above
    if above is None:
        return False
    statements = list(block.body)
    return statements.index(store) < statements.index(child)  # type: ignore[arg-type]  # both statements of the block
