"""Tensors a tensor's own CUDA check leaves on the CPU where the tensor is on the XLA device
(``FT = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor``, ``if x.is_cuda: t = t.cuda()``
left as it is), and whether every use of them in the function runs with XLA tensors as well.

What torch_xla 2.9 does with a CPU tensor beside an XLA tensor (checked on PJRT_DEVICE=CPU): the
arithmetic operators (``+ - * / **``, and their augmented forms) upload it, whatever its shape (an
XLA result, with an XLA grad); ``.item()``, ``.tolist()``, ``.numpy()`` and ``.cpu()`` read it on the
host; an assignment into it (``t[i] = v``) takes an XLA value. Other operations raise "Expected XLA
tensor. Got: torch.FloatTensor": ``torch.max(a, t)``, ``torch.where``, ``torch.cat``, ``a @ t``,
``a == t``, ``a > t``, a call that hands it on. A 0-dim CPU tensor (an element of a 1-D tensor met
by iteration) also passes in comparisons and ``torch.max``."""

from __future__ import annotations

import re

import libcst as cst

from codemods.engine.nodes import children, dotted, method_name, parents_of

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)
_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign, cst.PowerAssign)
_HOST_READS = frozenset({"item", "tolist", "numpy", "cpu"})
# Calls whose tensor is 1-D: iterating it gives 0-dim tensors.
_FLAT = frozenset({"unique", "flatten", "ravel"})
_CUDA_TYPE = re.compile(r"(^|\.)cuda\.[A-Za-z0-9]+Tensor$")


def is_cuda_type_choice(choice: cst.IfExp) -> bool:
    """``torch.cuda.FloatTensor if ... else torch.FloatTensor``: a CUDA tensor type in the branch taken on CUDA."""
    name = dotted(choice.body)
    return name is not None and _CUDA_TYPE.search(name) is not None


def _bound(target: cst.BaseExpression) -> list[cst.Name]:
    if type(target) is cst.Name:
        return [target]
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in _bound(element.value)]  # type: ignore[attr-defined]  # a Tuple or a List (checked above)
    return []


class _Function:
    """One function's names as it binds and reads them (no scope metadata: its whole subtree)."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self.parents = parents_of(function)
        self.stored: set[int] = set()
        self.assigned: dict[str, list[cst.BaseExpression | None]] = {}  # name -> values (None: unknown)
        for node in _subtree(function):
            if type(node) is cst.Assign:
                for target in node.targets:
                    names = _bound(target.target)
                    values = _unpacked(target.target, node.value, len(names))
                    for name, value in zip(names, values, strict=True):
                        self.stored.add(id(name))
                        self.assigned.setdefault(name.value, []).append(value)
            elif isinstance(node, (cst.For, cst.AnnAssign, cst.Param)):
                for name in _bound(node.name if isinstance(node, cst.Param) else node.target):
                    self.stored.add(id(name))
                    self.assigned.setdefault(name.value, []).append(None)

    def loads(self, name: str, outside: cst.CSTNode | None = None) -> list[cst.Name]:
        """The reads of ``name`` (not inside ``outside``)."""
        skipped = {id(sub) for sub in _subtree(outside)} if outside is not None else set()
        found = []
        for node in _subtree(self.function):
            if type(node) is not cst.Name or node.value != name or id(node) in self.stored or id(node) in skipped:
                continue
            parent = self.parents.get(id(node))
            if (type(parent) is cst.Attribute and parent.attr is node) or (
                type(parent) is cst.Arg and parent.keyword is node
            ):
                continue
            if type(parent) in (cst.FunctionDef, cst.ClassDef):
                continue
            found.append(node)
        return found

    def host_safe(self, names: set[str], outside: cst.CSTNode | None = None) -> bool:
        """Every read of these names (CPU tensors) runs beside XLA tensors."""
        return all(self._safe(load, names, scalar=False) for name in names for load in self.loads(name, outside))

    def _safe(self, node: cst.Name, names: set[str], scalar: bool) -> bool:
        parent = self.parents.get(id(node))
        if type(parent) is cst.BinaryOperation and isinstance(parent.operator, _ARITHMETIC):
            return self._meets_another_value(parent, names)
        if type(parent) is cst.AugAssign and isinstance(parent.operator, _AUGMENTED):
            return True
        if type(parent) is cst.Attribute and parent.value is node and parent.attr.value in _HOST_READS:
            call = self.parents.get(id(parent))
            return type(call) is cst.Call and call.func is parent
        if type(parent) is cst.Subscript and parent.value is node:
            return type(self.parents.get(id(parent))) is cst.AssignTarget  # ``t[i] = v``
        if scalar and type(parent) in (cst.Comparison, cst.ComparisonTarget):
            return True
        if type(parent) is cst.For and parent.iter is node and not scalar:
            return self._iterated_flat(node.value) and self._elements_safe(parent, names)
        return False

    def _meets_another_value(self, operation: cst.BinaryOperation, names: set[str]) -> bool:
        """The whole arithmetic has an operand that is neither a number nor one of ``names``
        (a device tensor, which makes the result an XLA tensor)."""
        top: cst.CSTNode = operation
        while type(parent := self.parents.get(id(top))) is cst.BinaryOperation and isinstance(
            parent.operator, _ARITHMETIC
        ):
            top = parent
        operands: list[cst.CSTNode] = [top]
        while operands:
            operand = operands.pop()
            if type(operand) is cst.BinaryOperation and isinstance(operand.operator, _ARITHMETIC):
                operands += [operand.left, operand.right]
            elif type(operand) is cst.UnaryOperation:
                operands.append(operand.expression)
            elif not (
                type(operand) in (cst.Integer, cst.Float) or (type(operand) is cst.Name and operand.value in names)
            ):
                return True
        return False

    def _iterated_flat(self, name: str) -> bool:
        """Every value of ``name`` is 1-D (``x.unique()``) or a move of itself (``name.cuda()``)."""
        values = self.assigned.get(name, [])
        return bool(values) and all(
            type(value) is cst.Call
            and type(value.func) is cst.Attribute
            and (
                value.func.attr.value in _FLAT
                or (value.func.attr.value in ("cuda", "to") and dotted(value.func.value) == name)
            )
            for value in values
        )

    def _elements_safe(self, loop: cst.For, names: set[str]) -> bool:
        elements = _bound(loop.target)
        if len(elements) != 1 or type(loop.target) is not cst.Name:
            return False
        loads = [load for load in self.loads(elements[0].value) if _inside(load, loop.body, self.parents)]
        return all(self._safe(load, {*names, elements[0].value}, scalar=True) for load in loads)


def _unpacked(target: cst.BaseExpression, value: cst.BaseExpression, count: int) -> list[cst.BaseExpression | None]:
    """What each name of a target is bound to: ``a, b = x, y`` pairs them; otherwise the value for one name."""
    if type(target) is cst.Name:
        return [value]
    if type(target) is cst.Tuple and type(value) is cst.Tuple and len(value.elements) == count == len(target.elements):
        return [element.value for element in value.elements]
    return [None] * count


def _subtree(node: cst.CSTNode | None) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children(current))
    return found


def _inside(node: cst.CSTNode, ancestor: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
    current: cst.CSTNode | None = node
    while current is not None:
        if current is ancestor:
            return True
        current = parents.get(id(current))
    return False


def cpu_type_choice_safe(choice: cst.IfExp, function: cst.FunctionDef | None) -> bool:
    """``FT = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor; a, b = FT([0]), FT([0])``:
    on XLA the CPU type is chosen; it is safe there when the chosen type is only called into names
    of the function, and every read of those runs beside XLA tensors (``loss = w * a``, ``a.item()``)."""
    if function is None or not is_cuda_type_choice(choice):
        return False
    scope = _Function(function)
    assign = scope.parents.get(id(choice))
    if type(assign) is not cst.Assign or len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name:
        return False
    chosen = assign.targets[0].target.value
    if len(scope.assigned.get(chosen, [])) != 1:
        return False
    made: set[str] = set()
    for load in scope.loads(chosen):
        call = scope.parents.get(id(load))
        if type(call) is not cst.Call or call.func is not load:
            return False
        names = [name for name, values in scope.assigned.items() for value in values if value is call]
        if len(names) != 1:
            return False
        made.add(names[0])
    return bool(made) and scope.host_safe(made)


def skipped_moves_safe(condition: cst.If, function: cst.FunctionDef | None) -> bool:
    """``if x.is_cuda: t = t.cuda()`` left as it is: on XLA the moves are skipped and ``t`` stays on
    the CPU; safe when the block only makes such moves into names, and every read of those
    (outside the block) runs beside XLA tensors."""
    if function is None or condition.orelse is not None or not isinstance(condition.body, cst.IndentedBlock):
        return False
    moved: set[str] = set()
    for statement in condition.body.body:
        if type(statement) is not cst.SimpleStatementLine:
            return False
        for small in statement.body:
            if not (
                type(small) is cst.Assign
                and len(small.targets) == 1
                and type(small.targets[0].target) is cst.Name
                and type(small.value) is cst.Call
                and method_name(small.value) in ("cuda", "to")
            ):
                return False
            moved.add(small.targets[0].target.value)
    return bool(moved) and _Function(function).host_safe(moved, outside=condition)
