"""Loops over the parts of one training step inside the iteration that makes it: ``for loss in
losses: scaler.scale(loss).backward()`` and ``for opt in optimizers: scaler.step(opt)`` in the body
of ``while True:`` that computes ``losses`` from a batch.  Each such loop backs or steps one part of
the step (a loss, an optimizer): the training loop is the loop around it, whose iteration holds
every backward pass and every step of the training step, and that iteration ends with the barrier.
A barrier of the inner loop's own would run one graph per loss and one per optimizer (the
optimizers' steps split apart) and leave the iteration that makes the step without one."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import dotted, names_in


def steps_each_part(node: cst.CSTNode) -> bool:
    """``node`` is a ``for`` whose every backward pass is of its loop variable (``loss.backward()``,
    ``scaler.scale(loss).backward()``, ``torch.autograd.backward(loss)``) and whose every step is
    of its loop variable (``opt.step()``, ``scaler.step(opt)``, ``xm.optimizer_step(opt)``), with at
    least one of either.  A loop that computes its loss (``model(x).sum().backward()``) or steps an
    optimizer it does not iterate over is a loop of steps, not of the parts of one."""
    if type(node) is not cst.For:
        return False
    names = set(names_in(node.target))
    if not names:
        return False
    found = False
    for call in _calls(node.body):
        func = call.func
        method = func.attr.value if type(func) is cst.Attribute else None
        callee = dotted(func) or ""
        if method == "backward" and type(func) is cst.Attribute:
            if not _is_part(func.value, names):
                return False
            found = True
        elif callee.endswith("autograd.backward") or callee.endswith("optimizer_step"):
            if not call.args or not _is_name(call.args[0].value, names):
                return False
            found = True
        elif method == "step" and type(func) is cst.Attribute:
            if not (_is_name(func.value, names) or (call.args and _is_name(call.args[0].value, names))):
                return False
            found = True
    return found


def _is_part(value: cst.BaseExpression, names: set[str]) -> bool:
    """``loss``, or ``scaler.scale(loss)``: the loop variable itself, scaled."""
    if _is_name(value, names):
        return True
    return (
        type(value) is cst.Call
        and type(value.func) is cst.Attribute
        and value.func.attr.value == "scale"
        and len(value.args) == 1
        and _is_name(value.args[0].value, names)
    )


def _is_name(value: cst.BaseExpression, names: set[str]) -> bool:
    return type(value) is cst.Name and value.value in names


def _calls(body: cst.CSTNode) -> list[cst.Call]:
    """The calls of ``body``, outside the functions, lambdas and classes it defines."""
    visitor = _Calls()
    body.visit(visitor)
    return visitor.found


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
