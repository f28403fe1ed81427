"""What an optimizer's parameters are read from, as names: the receivers of the method calls in
the value it is built over (``model.head.parameters()``, ``model.param_groups(wd)``), the names
the value is built from (``[*groups, {"params": extra}]``), and the model such a name is, or is a
submodule of.  Kept apart from early_optimizers.py because the training analysis, the
round trips and the class-owned optimizers read them too."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import dotted, walk

# The methods that move a module, and those that hand out its parameters.
_MOVES = frozenset({"to", "cuda", "cpu", "xla"})
PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})
# Module methods that change the module in place and return it (a cast, a mode): ``model =
# model.half()`` binds the module again, not a collection of its parameters.
_RETURN_THE_MODULE = frozenset(
    {"half", "float", "double", "bfloat16", "train", "eval", "requires_grad_", "share_memory"}
)


def returns_the_module(value: cst.BaseExpression) -> bool:
    """``value`` is a named module through casts and modes that return it (``model.half()``,
    ``net.float().eval()``), or a move: what it binds is that module, not its parameters."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        if value.func.attr.value not in _RETURN_THE_MODULE | _MOVES:
            return False
        value = value.func.value
    return type(value) is not cst.Call and dotted(value) is not None


def root_in(name: str, models: set[str]) -> str | None:
    """The model of ``models`` that ``name`` is, or is a submodule of (``model.vision``)."""
    parts = name.split(".")
    return next((root for cut in range(len(parts), 0, -1) if (root := ".".join(parts[:cut])) in models), None)


def module_calls(value: cst.CSTNode) -> list[tuple[cst.Call, str]]:
    """The method calls in ``value`` on a named receiver (``model.head.parameters()``,
    ``model.param_groups(wd)``), with that receiver."""
    return [
        (sub, owner)
        for sub in walk(value)
        if type(sub) is cst.Call
        and type(sub.func) is cst.Attribute
        and sub.func.attr.value not in _MOVES
        and (owner := _owner(sub.func.value)) is not None
    ]


def _owner(node: cst.BaseExpression) -> str | None:
    """The named module a receiver belongs to: ``model.head``, ``model`` of ``model[0]``."""
    while type(node) is cst.Subscript:
        node = node.value
    return dotted(node)


def value_names(node: cst.BaseExpression) -> list[str]:
    """The names an optimizer's parameters are built from, outside calls' callees:
    ``params``, ``[*groups, {"params": extra}]``, ``chain(a, b)``, ``p for p in params``."""
    name = dotted(node)
    if name is not None:
        return [name]
    if type(node) is cst.Call:
        return [n for arg in node.args for n in value_names(arg.value)]
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return [n for element in node.elements for n in value_names(element.value)]
    if type(node) is cst.Dict:
        return [
            n for element in node.elements if isinstance(element, cst.DictElement) for n in value_names(element.value)
        ]
    if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return value_names(node.for_in.iter)
    if type(node) is cst.BinaryOperation:
        return [*value_names(node.left), *value_names(node.right)]
    return []
