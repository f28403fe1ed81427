"""The functions that move to CUDA through other functions: a function of the file that calls one
that moves (``set_device`` calling ``set_gpu``, which returns ``args.cuda()``) moves too, and so
does a call of a function of another module of the project whose summary says it moves
(``from core.util import set_device``; its module's ``devices``).  A CUDA check around such a call
picks the device as one around the move itself would (XLA104 folds it), and the functions that
make such calls are movers in their own module's summary, for the modules that import them."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted
from codemods.project.module_summary import Found

if TYPE_CHECKING:
    from codemods.engine.walk import Walk


@dataclass(frozen=True, repr=False)
class HelperCall:
    """A call of a function of the file (``name``: its name) or of another module of the project
    (``project``: the callee as written), with the conditions around it and the function it is
    made in ("" at module level)."""

    name: str
    conds: tuple[cst.CSTNode, ...]
    scope: str
    project: bool = False
    node: cst.Call | None = None


def saw_call(
    walk: Walk, node: cst.Call, callee: str | None, project_names: Container[str], calls: list[HelperCall]
) -> None:
    """Note a call of a function of the file (``to_gpu(x)``) or of another module of the project
    (``util.to_gpu(x)``, ``set_device(x)`` imported from one), with the conditions around it."""
    scope = walk.qualname if walk.scopes else ""
    if callee is None and type(node.func) is cst.Name:  # `if torch.cuda.is_available(): x = to_gpu(x)`
        calls.append(HelperCall(node.func.value, tuple(walk.conds), scope))
    elif callee is not None and (func := dotted(node.func)) is not None and func.split(".")[0] in project_names:
        calls.append(HelperCall(func, tuple(walk.conds), scope, True, node))


def spread(
    calls: Iterable[HelperCall],
    choosers: set[str],
    functions: Iterable[str],
    origin: Callable[[str], Found | None],
) -> list[tuple[cst.CSTNode, ...]]:
    """Add to ``choosers`` the functions that call a mover or define one (``move_to_cuda``, whose
    nested ``_move_to_cuda`` returns ``tensor.cuda()``), and give the conditions around the calls
    of a mover (of the file, or of the project by its summary)."""
    calls = list(calls)
    functions = set(functions)
    movers = {call.name for call in calls if call.project and _moves(origin(call.name))}
    grew = True
    while grew:
        grew = False
        for chooser in list(choosers):
            outer = chooser.rsplit(".", 1)[0]
            if "." in chooser and outer in functions and outer not in choosers:
                choosers.add(outer)
                grew = True
        for call in calls:
            moving = call.name in movers if call.project else call.name in choosers
            if moving and call.scope and call.scope not in choosers:
                choosers.add(call.scope)
                grew = True
    return [
        call.conds for call in calls if call.conds and (call.name in movers if call.project else call.name in choosers)
    ]


def _moves(found: Found | None) -> bool:
    return found is not None and found.summary is not None and found.summary.chooses_device(found.name)
