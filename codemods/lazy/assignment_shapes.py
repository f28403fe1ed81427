"""The shapes of assignments and loops the flow analysis reads: the names a target unpacks
into, the names paired with the values of a tuple assignment, a loop's integer counters, a
value that is a host number, what a formatted log reads. Plain functions of the syntax, kept out
of the analysis so that it reads as the walk it is."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import dotted, method_name, names_in, receiver, walk
from codemods.lazy.expression_kinds import reads_to_host


def is_host_number(value: cst.BaseExpression) -> bool:
    """``t.item()``, ``int(t)``, ``float(t)``, ``t.cpu()``, also rounded (``round(t.item(), 4)``): a host value."""
    if type(value) is cst.Call and dotted(value.func) == "round" and value.args:
        return reads_to_host(value.args[0].value)
    return reads_to_host(value)


def returns_host_numbers(function: cst.FunctionDef) -> bool:
    """Every return of the function gives host numbers: ``t.item()``, a tuple or list of them, or
    a list the function builds of them only (``res = []``, then ``res.append(c.mul_(100.0 /
    n).item())``: torchvision's ``accuracy``)."""
    returns = [n.value for n in walk(function.body) if type(n) is cst.Return]
    return bool(returns) and all(r is not None and _host_numbers(r, function) for r in returns)


def _host_numbers(value: cst.BaseExpression, function: cst.FunctionDef) -> bool:
    if is_host_number(value):
        return True
    if type(value) is cst.Tuple or type(value) is cst.List:
        return bool(value.elements) and all(type(e) is cst.Element and is_host_number(e.value) for e in value.elements)
    if type(value) is not cst.Name:
        return False
    name = value.value
    built = False
    for node in walk(function.body):
        if type(node) is cst.Assign and any(name in names_in(t.target) for t in node.targets):
            if not (
                all(type(t.target) is cst.Name for t in node.targets)
                and type(node.value) is cst.List
                and all(type(e) is cst.Element and is_host_number(e.value) for e in node.value.elements)
            ):
                return False  # (``res[i] = t``, or bound to something else)
            built = True
        elif type(node) is cst.AugAssign and dotted(node.target) == name:
            return False
        elif type(node) is cst.Call and dotted(receiver(node)) == name:
            if method_name(node) != "append" or len(node.args) != 1 or not is_host_number(node.args[0].value):
                return False
    return built


def unpacked(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [e for element in target.elements for e in unpacked(element.value)]
    if type(target) is cst.StarredElement:
        return unpacked(target.value)
    return [target]


def flat_names(targets: list[cst.BaseExpression]) -> list[str] | None:
    """The names of one tuple of names (``model, batcher = ...``); else None."""
    target = targets[0] if len(targets) == 1 else None
    if type(target) is not cst.Tuple and type(target) is not cst.List:
        return None
    names = [dotted(e.value) if type(e) is cst.Element else None for e in target.elements]
    return None if any(n is None for n in names) else [n for n in names if n is not None]


def loop_counters(loop: cst.For) -> list[str]:
    """The integer loop variables: ``for i in range(...)``, ``for i, x in enumerate(...)``."""
    iterator, target = loop.iter, loop.target
    if type(iterator) is not cst.Call:
        return []
    func = dotted(iterator.func)
    if func == "range":
        return [n for n in names_in(target)]
    if func == "enumerate" and type(target) is cst.Tuple and len(target.elements) == 2:
        counters = [n for n in names_in(target.elements[0].value)]
        inner = iterator.args[0].value if iterator.args else None
        if type(inner) is cst.Call and dotted(inner.func) == "range":
            counters.extend(names_in(target.elements[1].value))
        return counters
    return []


def paired_values(
    targets: list[cst.BaseExpression], value: cst.BaseExpression
) -> list[tuple[str, cst.BaseExpression]] | None:
    """One tuple of names given a tuple of as many values (``H, W = int(H), int(W)``): each
    name with its value (a host number beside a tensor is no tensor); else None."""
    target = targets[0] if len(targets) == 1 else None
    if (type(target) is not cst.Tuple and type(target) is not cst.List) or (
        type(value) is not cst.Tuple and type(value) is not cst.List
    ):
        return None
    names = [dotted(e.value) for e in target.elements]
    values = value.elements
    if (
        len(names) != len(values)
        or any(n is None for n in names)
        or any(type(e) is cst.StarredElement for e in (*target.elements, *values))
    ):
        return None
    return [(n, e.value) for n, e in zip(names, values) if n is not None]


def formatted_values(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a logged value reads: ``'loss %.3f' % (step, loss)`` formats each operand (a
    tensor's ``__format__`` reads it), so each operand is read, not the string it makes;
    any other value is read as a whole."""
    if (
        type(value) is cst.BinaryOperation
        and type(value.operator) is cst.Modulo
        and type(value.left) in (cst.SimpleString, cst.ConcatenatedString)
    ):
        right = value.right
        if type(right) is cst.Tuple:
            return [element.value for element in right.elements if type(element) is cst.Element]
        return [right]
    return [value]
