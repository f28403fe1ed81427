"""Optimizer wrappers handed to project callables: a class of the project that is no torch
optimizer but has its own ``step``, which steps the one it holds (``class Optimizer: def
step(self): self.optimizer.step()``).  ``xm.optimizer_step`` on an instance of one fails with several
processes (it reduces the gradients of the instance's ``param_groups``, which it has not); the
step inside its ``step`` is the one the port makes.  What a file hands project callables, for
the files that step what they are handed (training/step_kinds.py); plain data, no LibCST at
module level."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    import libcst as cst

    from codemods.project.import_context import ImportContext
    from codemods.project.module_summary import Found


def plain_stepper(bases: tuple[str, ...], methods: tuple[str, ...]) -> bool:
    """A class that defines ``step`` itself and derives from nothing that may be an optimizer."""
    return "step" in methods and all(base.rsplit(".", 1)[-1] == "object" for base in bases)


def wrapper_class(found: Found | None) -> bool:
    """``found`` is a class of its module that defines its own ``step`` and derives from nothing
    that may be an optimizer (as training/step_kinds.py's wrappers of the file): whatever its
    ``step`` steps (the torch optimizer it holds, as written or already ported), it has no
    ``param_groups`` for ``xm.optimizer_step`` to reduce."""
    if found is None or found.summary is None or "." in found.name:
        return False
    return any(plain_stepper(bases, methods) for name, bases, methods in found.summary.classes if name == found.name)


def handed_wrappers(
    call: cst.Call,
    founds: list[Found],
    built: Callable[[cst.BaseExpression], list[tuple[str, str]]],
    context: ImportContext,
) -> set[tuple[str, str, int, str, bool]]:
    """What ``call`` (of the project callables ``founds``) hands them: (their module's path, their
    name, the argument's index without self, or -1 and its keyword, whether it is an instance of an
    optimizer wrapper of a module of the project).  ``built``: the project callables that built an
    argument's value (the project analysis's builders).  Every argument, so that one of any other
    kind (a torch optimizer built in the call, a parameter) leaves its parameter unproven; none
    after a starred argument (their positions are not known)."""
    found_args: list[tuple[int, str, bool]] = []
    for index, arg in enumerate(call.args):
        if arg.star:
            break
        builders = built(arg.value)
        wrapper = bool(builders) and all(wrapper_class(context.lookup(module, name)) for module, name in builders)
        at, keyword = (-1, arg.keyword.value) if arg.keyword is not None else (index, "")
        found_args.append((at, keyword, wrapper))
    return {
        (found.summary.path, found.name, at, keyword, wrapper)
        for found in founds
        if found.summary is not None
        for at, keyword, wrapper in found_args
    }
