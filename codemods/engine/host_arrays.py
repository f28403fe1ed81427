"""Numpy arrays a function provably holds where it hands a value on: what a call of an op that takes
numpy arrays or tensors (mmcv's ``pixel_group``) is given, read from the bindings of the function
that makes the call.  A rule asks it of a call it is about to report (the reference's ancestors,
``Context.ancestors``); nothing here is kept between calls.

A numpy array: what ``.numpy()`` returns; what a ``numpy`` or ``cv2`` function returns (their
results are numpy arrays, tuples of them and numbers, never a tensor on a device); an element, a
slice or an attribute of one, and what its methods return (``.astype(...)``, ``.transpose(...)``;
not ``.to``, ``.cuda`` or ``.type``, which a tensor has too); a comparison or arithmetic whose left
operand is one (numpy refuses a tensor on its right, a TypeError on every device), or a number
literal beside one; a conditional expression both of whose values are.  A name holds one where
the last of its bindings that every path to the point goes through (an assignment earlier in a
block that holds the point) binds one, and so does every binding that may run after it and before
the point (earlier in the code, or in a loop that holds the point; an augmented assignment keeps a
numpy array one).  A parameter, a name bound by a ``for``, a ``with``, an import or anything else,
an attribute of another object (``self.scores``) and a name the function does not bind are not
known to hold one.  (An element picked from a one-dimensional array is a numpy scalar, which takes
a tensor on its right; an op that takes arrays is not handed one.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from codemods.engine.nodes import children, target_names

_PACKAGES = ("numpy.", "cv2.")
# Methods a tensor has that move it: on a numpy array they do not exist, on a tensor they may
# leave the host.
_MOVES = frozenset({"to", "cuda", "type"})
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOOPS = (cst.For, cst.While)
_DEPTH = 8  # bindings followed through bindings


@dataclass(frozen=True)
class _Binding:
    statement: cst.CSTNode  # the small statement (or the compound statement, the parameter) that binds
    value: cst.BaseExpression | None  # the value bound (None: not known to be an array)
    augmented: bool = False


@dataclass(repr=False)
class _Function:
    """One function's bindings by name, and each node's place: its parent, and the span of its
    subtree in code order (a binding takes effect at the end of its statement)."""

    parent: dict[int, cst.CSTNode] = field(default_factory=dict)
    span: dict[int, tuple[int, int]] = field(default_factory=dict)
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)


def holds_numpy_array(
    value: cst.BaseExpression, ancestors: Sequence[cst.CSTNode], resolve: Callable[[cst.CSTNode], str | None]
) -> bool:
    """``value`` is a numpy array where it is evaluated; ``ancestors``: the nodes from the module down
    to the one that holds ``value`` (an argument's call), in the function they are in."""
    function = next((node for node in reversed(ancestors) if isinstance(node, cst.FunctionDef)), None)
    if function is None:
        return False
    return _Reader(_read(function), resolve).array(value, 0, set())


def _read(function: cst.FunctionDef) -> _Function:
    read = _Function()
    for param in _parameters(function.params):
        read.bindings.setdefault(param, []).append(_Binding(function, None))
    order = 0
    stack: list[tuple[cst.CSTNode, bool]] = [(function.body, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            start, _ = read.span[id(node)]
            read.span[id(node)] = (start, order)
            continue
        read.span[id(node)] = (order, order)
        order += 1
        _bind(node, read.bindings)
        stack.append((node, True))
        if isinstance(node, _SCOPES):
            continue  # its own names (its name is bound in this function: _bind)
        below = children(node)
        for child in below:
            read.parent[id(child)] = node
        stack.extend((child, False) for child in reversed(below))
    return read


def _parameters(params: cst.Parameters) -> list[str]:
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    everyone = [*params.posonly_params, *params.params, *star, *params.kwonly_params]
    everyone += [params.star_kwarg] if params.star_kwarg is not None else []
    return [param.name.value for param in everyone]


def _bind(node: cst.CSTNode, bindings: dict[str, list[_Binding]]) -> None:
    """The names ``node`` binds, with their values where the node is an assignment."""
    pairs: list[tuple[str, cst.BaseExpression | None]] = []
    augmented = False
    if isinstance(node, cst.Assign):
        for target in node.targets:
            pairs += _assigned(target.target, node.value)
    elif isinstance(node, cst.AnnAssign) and node.value is not None:
        pairs += _assigned(node.target, node.value)
    elif isinstance(node, cst.AugAssign):
        pairs += [(name, None) for name in target_names(node.target)]
        augmented = True
    elif isinstance(node, (cst.For, cst.CompFor)):
        if isinstance(node, cst.For):  # a comprehension's names are its own
            pairs += [(name, None) for name in target_names(node.target)]
    elif isinstance(node, cst.AsName):
        pairs += [(name, None) for name in target_names(node.name)]
    elif isinstance(node, cst.NamedExpr):
        pairs += [(name, None) for name in target_names(node.target)]
    elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
        pairs += [(_bound_by_import(alias), None) for alias in node.names]
    elif isinstance(node, (cst.Global, cst.Nonlocal)):
        pairs += [(item.name.value, None) for item in node.names]
    elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        pairs.append((node.name.value, None))
    elif isinstance(node, cst.Del):
        pairs += [(name, None) for name in target_names(node.target)]
    for name, value in pairs:
        bindings.setdefault(name, []).append(_Binding(node, value, augmented))


def _assigned(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression | None]]:
    """Each name a target binds with its value: a name its element of a tuple value, and each name
    unpacked from any other value that value itself (its elements are arrays where it is one)."""
    if isinstance(target, cst.Name):
        return [(target.value, value)]
    if not isinstance(target, (cst.Tuple, cst.List)):
        return []
    if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
        return [
            pair
            for element, given in zip(target.elements, value.elements)
            for pair in (
                _assigned(element.value, given.value)
                if not isinstance(element, cst.StarredElement) and not isinstance(given, cst.StarredElement)
                else [(name, None) for name in target_names(element.value)]
            )
        ]
    return [(name, value) for name in target_names(target)]


def _bound_by_import(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    head: cst.BaseExpression = alias.name
    while isinstance(head, cst.Attribute):
        head = head.value
    return head.value if isinstance(head, cst.Name) else ""


@dataclass
class _Reader:
    function: _Function
    resolve: Callable[[cst.CSTNode], str | None]

    def array(self, value: cst.BaseExpression, depth: int, following: set[tuple[str, int]]) -> bool:
        if isinstance(value, cst.Name):
            return self._name_holds(value, depth, following)
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Attribute):
                if func.attr.value == "numpy":
                    return True
                qualified = self.resolve(func)
                if qualified is not None:
                    return qualified.startswith(_PACKAGES)
                return func.attr.value not in _MOVES and self.array(func.value, depth, following)
            qualified = self.resolve(func)
            return qualified is not None and qualified.startswith(_PACKAGES)
        if isinstance(value, (cst.Subscript, cst.Attribute)):
            return self.array(value.value, depth, following)
        if isinstance(value, (cst.Comparison, cst.BinaryOperation)):
            left = value.left
            right = value.right if isinstance(value, cst.BinaryOperation) else value.comparisons[0].comparator
            if isinstance(left, (cst.Integer, cst.Float)):  # ``1 - mask``
                return self.array(right, depth, following)
            return self.array(left, depth, following)
        if isinstance(value, cst.UnaryOperation):
            return not isinstance(value.operator, cst.Not) and self.array(value.expression, depth, following)
        if isinstance(value, cst.IfExp):
            return self.array(value.body, depth, following) and self.array(value.orelse, depth, following)
        return False

    def _name_holds(self, name: cst.Name, depth: int, following: set[tuple[str, int]]) -> bool:
        """The bindings that may reach ``name`` (see the module's docstring) all bind an array."""
        at = self.function.span.get(id(name))
        bindings = self.function.bindings.get(name.value, [])
        if at is None or not bindings or depth > _DEPTH:
            return False
        key = (name.value, at[0])
        if key in following:
            return True  # a binding that reads the name again (``x = x[1:]`` in a loop): the others decide
        point = self._ancestors(name)
        reaching = self._dominating(bindings, point, at[0])
        if reaching is None:
            return False
        since = self.function.span[id(reaching.statement)][1]
        loops = [self.function.span[id(node)] for node in point if isinstance(node, _LOOPS)]
        later = [
            binding
            for binding in bindings
            if binding is not reaching
            and (span := self.function.span.get(id(binding.statement))) is not None
            and (since <= span[1] <= at[0] or any(start <= span[0] < end for start, end in loops))
        ]
        inner = following | {key}
        return all(
            binding.augmented or (binding.value is not None and self.array(binding.value, depth + 1, inner))
            for binding in (reaching, *later)
        )

    def _ancestors(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        found: list[cst.CSTNode] = []
        current = self.function.parent.get(id(node))
        while current is not None:
            found.append(current)
            current = self.function.parent.get(id(current))
        return found

    def _dominating(self, bindings: list[_Binding], point: list[cst.CSTNode], at: int) -> _Binding | None:
        """The last binding made by a statement of a block that holds the point, before it."""
        holding = {id(node) for node in point}
        best: _Binding | None = None
        for binding in bindings:
            span = self.function.span.get(id(binding.statement))
            block = self.function.parent.get(id(binding.statement))
            if binding.augmented or span is None or block is None or span[1] > at:
                continue  # an augmented assignment keeps the value it combines
            if isinstance(block, cst.SimpleStatementLine):  # its line's block, or the line itself
                in_line = id(block) in holding
                block = self.function.parent.get(id(block))
                if not in_line and (block is None or id(block) not in holding):
                    continue
            elif id(block) not in holding:
                continue
            if best is None or span[1] > self.function.span[id(best.statement)][1]:
                best = binding
        return best
