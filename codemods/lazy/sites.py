"""What lazy mode's data flow records as the walk goes (flow.py): each function's scope (its
names and what flows through them) and the sites the lazy analyses look at, where they are."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

import libcst as cst


@dataclass(repr=False)
class Scope:
    """A function (or the module): its names and what flows through them."""

    node: cst.FunctionDef | None
    qualname: str = ""  # ``Net.get_step`` for that method ("" for the module)
    params: list[str] = field(default_factory=list)
    locals: set[str] = field(default_factory=set)
    globals: set[str] = field(default_factory=set)
    # (target names, value, enclosing loops, augmented)
    assignments: list[tuple[tuple[str, ...], cst.BaseExpression, tuple[cst.CSTNode, ...], bool]] = field(
        default_factory=list
    )
    returns: list[cst.BaseExpression] = field(default_factory=list)
    returns_device: bool = False  # one of ``returns`` is a device value (settled in _device_names)
    device: set[str] = field(default_factory=set)
    host: set[str] = field(default_factory=set)
    varying: set[str] = field(default_factory=set)
    masks: set[str] = field(default_factory=set)
    is_forward: bool = False


# A site of a call is a site of an expression (sites are only read once collected).
NodeT_co = TypeVar("NodeT_co", bound=cst.CSTNode, covariant=True)


@dataclass(repr=False)
class Site(Generic[NodeT_co]):
    """A node of interest and where it is."""

    node: NodeT_co
    scope: Scope
    loops: tuple[cst.CSTNode, ...]
    statement: cst.BaseSmallStatement | None = None
    in_test: bool = False
    nested: bool = False  # inside a comprehension
    in_lambda: bool = False  # runs when the lambda is called, not here
    order: int = 0
    conditional: bool = False


@dataclass(repr=False)
class Sites:
    """The nodes the lazy analyses look at, collected by the walk in code order."""

    calls: list[Site[cst.Call]] = field(default_factory=list)
    subscripts: list[Site[cst.Subscript]] = field(default_factory=list)
    powers: list[Site[cst.BinaryOperation]] = field(default_factory=list)
    # f-string parts and print/logging arguments
    implicit: list[Site[cst.BaseExpression]] = field(default_factory=list)
    tests: list[Site[cst.BaseExpression]] = field(default_factory=list)
    names: list[tuple[cst.Name, Scope]] = field(default_factory=list)  # every name read, and its scope
    loops: dict[cst.CSTNode, Site[cst.For | cst.While]] = field(default_factory=dict)
    barriers: list[Site[cst.Call]] = field(default_factory=list)


@dataclass(repr=False)
class NameUses:
    """How the walk saw names and subscripts used, by node id."""

    ignored: set[int] = field(default_factory=set)  # attribute names, keywords, stores...
    safe: set[int] = field(default_factory=set)  # names used only for slicing or metadata
    passed: dict[int, tuple[cst.Call, int | str]] = field(default_factory=dict)  # name -> (call, position or keyword)
    store_subscripts: set[int] = field(default_factory=set)
    in_tests: set[int] = field(default_factory=set)  # nodes inside an if, while or assert test
