"""What the project analysis (analysis.py) reads of a call's receiver and arguments: which
arguments are optimizers, which values are containers or builtins rather than project
instances, which method names are too generic to match a project's methods, and what a
module's use may run."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted
from codemods.project.module_summary import Found

if TYPE_CHECKING:
    from collections.abc import Callable


def optimizer_arguments(call: cst.Call, is_optimizer: Callable[[str | None], bool]) -> list[tuple[int, str]]:
    """The arguments of ``call`` that are known optimizers: (position, "") or (-1, keyword);
    none after a starred argument (their positions are not known)."""
    found: list[tuple[int, str]] = []
    for index, arg in enumerate(call.args):
        if arg.star:
            break
        if is_optimizer(dotted(arg.value)):
            found.append((-1, arg.keyword.value) if arg.keyword is not None else (index, ""))
    return found


def is_class(found: Found) -> bool:
    """``found`` names a class of its module."""
    assert found.summary is not None
    return any(cls == found.name for cls, _, _ in found.summary.classes)


# Builtins whose calls give a value of a known class.
BUILTIN_TYPES = frozenset(
    "dict list set tuple frozenset str int float bool bytes range enumerate zip map filter open iter "
    "sorted reversed len object type super".split()
)

# Calls that build an instance of a class their configuration names (``hydra.utils.instantiate(cfg.agent)``
# with ``_target_: drq.DRQAgent``): the tool cannot tell its class from the call.
CONFIG_BUILDERS = frozenset({"hydra.utils.instantiate", "hydra.utils.call"})


def globals_lookup(value: cst.BaseExpression) -> bool:
    """``globals()[name]``, ``globals().get(name)``: a name of the module looked up at run time."""
    if type(value) is cst.Subscript:
        holder: cst.BaseExpression = value.value
    elif type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value == "get":
        holder = value.func.value
    else:
        return False
    return type(holder) is cst.Call and dotted(holder.func) == "globals" and not holder.args


# Methods that torch's modules, optimizers, schedulers and tensors, or Python's containers, define:
# on a receiver whose class is not known, such a call is more likely theirs than a project
# method of that name.
GENERIC_METHODS = frozenset(
    "step zero_grad backward forward train eval to cuda cpu float half double parameters named_parameters "
    "modules children state_dict load_state_dict apply register_buffer add_module update get items keys values "
    "pop setdefault append extend insert remove sort copy clear add discard item detach clone numpy "
    "size view reshape mean sum add_param_group".split()
)
# Those of them that only Python's containers define (not torch's modules, optimizers or tensors).
CONTAINER_METHODS = frozenset("update get items keys values pop setdefault".split())
# What a value that steps an optimizer through a container's method name (``agent.update(...)``) is
# named: a value of unknown class called so counts only when its name says it may be one.
ROLE_WORDS = ("agent", "learner", "trainer", "model", "policy", "algo", "solver", "actor", "critic", "net")


def named_like(receiver: str, method: str) -> bool:
    """The receiver's name (``agent`` of ``self.agent``) says what ``method`` (``DRQAgent.update``, a
    project method that steps) belongs to: a word of it (``_``-separated, three letters or more) is a
    role word (ROLE_WORDS) or part of the method's class name; ``metrics``, ``stats``, ``meter`` are not."""
    owner = method.rpartition(".")[0].rpartition(".")[2].lower()
    words = [w for w in receiver.rpartition(".")[2].lower().split("_") if len(w) >= 3]
    return any(w in owner or any(role in w for role in ROLE_WORDS) for w in words)


CONTAINER_LITERALS = (cst.Dict, cst.DictComp, cst.List, cst.ListComp, cst.Set, cst.SetComp)
CONTAINER_BUILDERS = frozenset(
    "dict OrderedDict collections.OrderedDict defaultdict collections.defaultdict copy.deepcopy copy.copy".split()
)


def imported_names(found: Found) -> list[str]:
    """The names a module imports from elsewhere (for a use of the module as a whole)."""
    if found.name or found.summary is None:
        return []
    return sorted({local for local, _, _ in found.summary.imported})


def used_of(found: Found) -> list[str]:
    """The names of a module that a use of ``found`` may run: the name itself, or, for the
    module as a whole (a dict of modules, ``FORMATS = {"base": base}``, then
    ``FORMATS[name].parse_args(...)``), every name of it that holds or reaches something."""
    if found.name or found.summary is None:
        return [found.name]
    summary = found.summary
    return sorted({held[0] for held in summary.holds} | {name for name, _ in summary.reaches})
