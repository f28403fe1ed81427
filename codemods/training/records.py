"""What the training analysis records per loop, function and module while it walks: read
by it and by its parts that follow steps into other functions (drivers.py) and find
optimizers built too early (early_optimizers.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import libcst as cst

from codemods.engine.nodes import dotted, method_name, receiver, string_value, walk

if TYPE_CHECKING:
    # What happens to models in a scope, in order (``_Scope.events``): plain tuples, each
    # tagged by its kind (its first item), which narrows the union (``event[0] == "move"``).
    # ``name = Net().to(device)``: the name, the constructor, the move at creation or None,
    # the call that built it.
    ModelEvent = tuple[Literal["model"], str, str, cst.Call | None, cst.Call]
    # ``name.to(device)``, ``name.cuda()``: the name, the device (None: unknown), the move.
    MoveEvent = tuple[Literal["move"], str, str | None, cst.Call]
    # ``name.cpu()``: the name, the call.
    CpuEvent = tuple[Literal["cpu"], str, cst.Call]
    # An optimizer built over ``name.parameters()`` (or another method of it): the name, that call.
    OptimizerEvent = tuple[Literal["optimizer"], str, cst.Call]
    # A call that may move a model or build an optimizer over one (known once the walk is
    # done): the callee, the call.
    CallEvent = tuple[Literal["call"], str, cst.Call]
    # An assignment: the name bound, the value.
    CollectEvent = tuple[Literal["collect"], str, cst.BaseExpression]
    # An optimizer built from those names: the names, the optimizer's call.
    UsesEvent = tuple[Literal["uses"], list[str], cst.Call]
    # A module built over others (``ModelWithLoss(model, loss)``): the name, the constructor,
    # the arguments (index, keyword or None, name), the device it is moved to at creation or
    # None, that move or None.
    WrapsEvent = tuple[Literal["wraps"], str, str, tuple[tuple[int, str | None, str], ...], str | None, cst.Call | None]
    ScopeEvent = ModelEvent | MoveEvent | CpuEvent | OptimizerEvent | CallEvent | CollectEvent | UsesEvent | WrapsEvent


@dataclass(repr=False)
class _Loop:
    node: cst.CSTNode
    owner: str  # the qualified name of the function it is in ("" at module level)
    backward: bool = False
    step_receivers: list[str] = field(default_factory=list)
    called: list[str] = field(default_factory=list)
    barrier: bool = False
    host_read: bool = False
    branch_reads: list[cst.Call] = field(default_factory=list)  # host reads under an ``if`` of the loop
    moved: dict[str, str] = field(default_factory=dict)  # what the loop moves -> to which device
    # Calls handing a loss and something that may be an optimizer to a callable: (call, callee, names).
    handed: list[tuple[cst.Call, str, list[str]]] = field(default_factory=list)
    outer: cst.CSTNode | None = None  # the loop it is in
    every_outer_iteration: bool = False  # it runs in every iteration of ``outer`` (no ``if`` of it around)
    iterates: tuple[str, str] = ("", "")  # ``for opt in self.optims``: ("opt", "self.optims")
    dead: bool = False  # in the body of an ``if False:`` (``if 0:``): it never runs


@dataclass(repr=False)
class _Scope:
    """A function body or the module's top level: what happens to models there, in order."""

    events: list[ScopeEvent] = field(default_factory=list)  # ScopeEvent above says what each is
    qualname: str = ""  # "" at module level
    # Method calls on a named receiver (``self.compile(lr)``, ``model.build_optimizer()``):
    # (how many events came before it, the receiver, the method, the call).
    method_calls: list[tuple[int, str, str, cst.Call]] = field(default_factory=list)
    # ``model = getattr(models, args.model)(adj)``: a class looked up by a name known at run time,
    # its callee the module as written (kept apart from ``events``: only XLA005 reads them).
    lookup_builds: list[ModelEvent] = field(default_factory=list)


@dataclass(repr=False)
class _Function(_Scope):
    name: str = ""
    node: cst.FunctionDef | None = None
    # What the function does once per call (outside loops of its own).
    backward: bool = False
    step_receivers: list[str] = field(default_factory=list)
    called: list[str] = field(default_factory=list)
    barrier: bool = False  # it runs the step barrier itself (a closure already ported)
    host_read: bool = False  # it reads a value to the host (``out.cpu().numpy()``, ``loss.item()``)
    # The names that every backward pass or optimizer step of the function runs under
    # ``if name:`` (in the body); None before the first.
    step_switches: set[str] | None = None
    # The ``name == constant`` tests that every step of the function runs under (step_guards.py).
    step_guards: set[tuple[str, str]] | None = None
    params: list[str] = field(default_factory=list)  # positional parameters, without self/cls
    # Arguments passed by keyword only: keyword-only parameters, and the keys read from
    # ``**kwargs`` (``kwargs["model"]``); ``kwargs`` is the name of that last parameter.
    keyword_params: list[str] = field(default_factory=list)
    kwargs: str | None = None
    varargs: str | None = None  # ``*modules``: the positional arguments past ``params``
    # Names bound to a parameter (``self.model = model``, ``self.device = device``).
    bound: dict[str, str] = field(default_factory=dict)
    # (parameter, device, move, the function the move is in: this one, or another method
    # of the class for an attribute ``__init__`` bound to the parameter).
    moved_params: list[tuple[str, str | None, cst.Call, str]] = field(default_factory=list)
    cpu_params: set[str] = field(default_factory=set)  # parameters the function moves to the CPU (``net.cpu()``)
    round_trip_params: set[str] = field(default_factory=set)  # ... and then back to a device
    parameters_of: set[str] = field(default_factory=set)  # parameters p read as ``p.(named_)parameters()``
    builds_optimizer: bool = False
    # Moves through a loop variable over a value of the instance the tool cannot read
    # (``for m in self.nets.values(): m.to(device)``): (what it iterates, the move).
    untraced_moves: list[tuple[str, cst.Call]] = field(default_factory=list)

    def positional(self, index: int) -> str | None:
        """The parameter a positional argument at ``index`` is handed to."""
        return self.params[index] if index < len(self.params) else self.varargs

    def parameter(self, node: cst.BaseExpression, name: str | None) -> str | None:
        """The parameter of the function that ``node`` (named ``name``) is: ``model``, or a
        key of its ``**kwargs`` (``kwargs["model"]``, ``kwargs.get("model")``,
        ``kwargs.pop("model")``), which it then records as passed by keyword."""
        if name is not None:
            return (
                name
                if name in self.params or name in self.keyword_params or name == self.varargs
                else self.bound.get(name)
            )
        if self.kwargs is None:
            return None
        holder: cst.BaseExpression | None
        if type(node) is cst.Subscript and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
            holder, key = node.value, node.slice[0].slice.value
        elif type(node) is cst.Call and method_name(node) in ("get", "pop") and node.args:
            holder, key = receiver(node), node.args[0].value
        else:
            return None
        param = string_value(key)
        if holder is None or dotted(holder) != self.kwargs or param is None:
            return None
        if param not in self.keyword_params:
            self.keyword_params.append(param)
        return param


def statically_dead(node: cst.CSTNode, conds: list[cst.If | cst.IfExp]) -> bool:
    """``node`` is in the body of one of the enclosing ``conds`` that is an ``if False:`` or an
    ``if 0:``: it never runs."""
    return any(
        type(c) is cst.If
        and (
            (type(c.test) is cst.Name and c.test.value == "False")
            or (type(c.test) is cst.Integer and c.test.value == "0")
        )
        and any(sub is node for sub in walk(c.body))
        for c in conds
    )
