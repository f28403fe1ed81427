"""``importlib.import_module(...)`` in a converted file: the project modules it may load, which
a run on that file neither follows nor converts (XLA003 at the call when they hold what
converting them ports or reports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, string_value
from codemods.project.facts import DynamicLoad, Unported
from codemods.project.receivers import imported_names, used_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.engine.walk import Walk
    from codemods.project.facts import ProjectFacts
    from codemods.project.import_context import ImportContext
    from codemods.project.module_summary import ModuleSummary

# What a project module holds that a run must port or report: (module path, cause, top-level name
# there, the code it holds and its line, whether converting that module ports it).
Held = tuple[str, str, str, str, bool]

# How many of the modules an ``importlib.import_module(name)`` may load are read, at most.
_MAX_LOADABLE = 40


def dynamic_loads(
    part: ProjectFacts,
    string_flags: dict[str, str],
    held_by: Callable[[ModuleSummary, list[str], int], list[Held]],
) -> None:
    """``importlib.import_module(args.model)``, ``import_module(f"model.{name}")``: the
    project modules it may load (the module a flag's default names, else those of the
    package its name starts with, else those of the folders the file's imports search and
    the folders it puts on ``sys.path``), which a run on this file neither follows nor
    converts: where they hold what converting them ports or reports, XLA003 at the call."""
    context = part.context
    for call in part.dynamic_imports:
        package, default = loaded_name(call.args[0].value, string_flags)
        names = (default,) if default is not None else context.loadable_modules(package)
        held: list[Held] = []
        paths: list[str] = []
        for name in names[:_MAX_LOADABLE]:
            found = context.lookup(name, "")
            if found is None or found.summary is None or found.name:
                continue
            paths.append(found.summary.path)
            held.extend(
                h
                # (the module as a whole: its own names and those it imports from the project,
                # ``MODEL.get_loss`` where it does ``from loss_helper import get_loss``)
                for h in held_by(found.summary, ["", *used_of(found), *imported_names(found)], 0)
                if h[1] != "dynamic-import" and h not in held
            )
        if held:
            causes = tuple(dict.fromkeys(cause for _, cause, _, _, _ in held))
            firsts = [next(h for h in held if h[1] == cause) for cause in causes]
            # (then one of each module, so that the examples name every module they can)
            firsts += [next(h for h in held if h[0] == where) for where in dict.fromkeys(h[0] for h in held)]
            examples = tuple(dict.fromkeys((where, name, what) for where, _, name, what, _ in [*firsts, *held]))
            ported = tuple(sorted({ported for *_, ported in held}))
            part.dynamic_loads[call] = DynamicLoad(
                default, package, tuple(paths), len(names), Unported("", causes, examples, ported)
            )


def loaded_name(name: cst.BaseExpression, flags: dict[str, str]) -> tuple[str, str | None]:
    """What ``importlib.import_module(name)`` loads, as far as the file tells: the package
    its name starts with (``f"model.{name}"``, ``"models." + name``: "model", "models"; ""
    for none) and the module a flag's string default names (``args.model`` with
    ``add_argument("--model", default="votenet")``; None: not known)."""
    head: cst.BaseExpression = name
    while type(head) is cst.BinaryOperation and type(head.operator) is cst.Add:
        head = head.left
    prefix = string_value(head) if head is not name else None
    if type(name) is cst.FormattedString and name.parts and type(name.parts[0]) is cst.FormattedStringText:
        prefix = name.parts[0].value
    if prefix is not None:
        package = prefix.rpartition(".")[0]
        return (package, None) if all(p.isidentifier() for p in package.split(".")) else ("", None)
    chain = dotted(name)
    if chain is not None and "." in chain and (default := flags.get(chain.rsplit(".", 1)[-1])) is not None:
        return "", default if all(p.isidentifier() for p in default.split(".")) else None
    return "", None


def loaded_by_default(
    value: cst.BaseExpression, walk: Walk, flags: dict[str, str], context: ImportContext
) -> tuple[str, str] | None:
    """``importlib.import_module(args.model)`` (or a name of what it loads, ``....GRU4Rec``)
    where the flag's default (``add_argument("--model", default="gru4rec")``, above) names a module
    of the project: (that module, the name), what the run does unless told otherwise."""
    attr = ""
    if type(value) is cst.Attribute and type(value.value) is cst.Call:
        attr, value = value.attr.value, value.value
    if type(value) is not cst.Call or not value.args or walk.resolve(value.func) != "importlib.import_module":
        return None
    _, default = loaded_name(value.args[0].value, flags)
    if default is None or context.lookup(default, attr) is None:
        return None
    return default, attr
