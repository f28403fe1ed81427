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
        package, default = loaded_name(part.loaded_names.get(call, call.args[0].value), string_flags)
        names = (default,) if default is not None else candidates(context, package, _depth(part, call))
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


def loaded_packages(part: ProjectFacts) -> dict[cst.CSTNode, str]:
    """Each import of a module named at run time, with the project package its name starts with ("": none)."""
    return {call: loaded_name(part.loaded_names.get(call, call.args[0].value), {})[0] for call in part.dynamic_imports}


def candidates(context: ImportContext, package: str, depth: int) -> tuple[str, ...]:
    """The project modules a name ``depth`` components below ``package`` may be
    (``f"model.{kind}.{name}"``: depth 2, the modules of each folder of ``model``)."""
    names = context.loadable_modules(package)
    for _ in range(depth - 1):
        names = tuple(m for name in names[:_MAX_LOADABLE] for m in context.loadable_modules(name)) or names
    return names


def _depth(part: ProjectFacts, call: cst.Call) -> int:
    template = template_text(part.loaded_names.get(call, call.args[0].value))
    return 1 if template is None else max(1, template.count(".") + 1 - len(loaded_package(template).split(".")))


def template_text(name: cst.BaseExpression) -> str | None:
    """The text of a module name built from strings, ``{}`` for each part known only at run time
    (``f"model.{kind}.{name}"``, ``"models." + name``: "model.{}.{}", "models.{}"), the ``from``
    or ``import`` of a statement ``exec`` runs left out (``f"from model.{kind} import {name}"``:
    "model.{}"); None when no string starts it."""
    parts: list[cst.BaseExpression] = []
    stack = [name]
    while stack:
        node = stack.pop()
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:
            stack += [node.right, node.left]
        else:
            parts.append(node)
    text = ""
    for part in parts:
        if type(part) is cst.FormattedString:
            text += "".join(p.value if type(p) is cst.FormattedStringText else "{}" for p in part.parts)
        elif isinstance(value := string_value(part), str):
            text += value
        else:
            text += "{}"
    if text.startswith("{}") or not text:
        return None
    words = text.split()
    if len(words) > 1 and words[0] in ("from", "import"):
        return words[1]
    return words[0] if words else None


def value_starts_import(name: cst.BaseExpression) -> bool:
    """The text an ``exec`` runs starts an import statement (``f"from model.{kind} import {name}"``)."""
    head: cst.BaseExpression = name
    while type(head) is cst.BinaryOperation and type(head.operator) is cst.Add:
        head = head.left
    if type(head) is cst.FormattedString:
        first = head.parts[0] if head.parts else None
        text = first.value if type(first) is cst.FormattedStringText else ""
    else:
        value = string_value(head)
        text = value if isinstance(value, str) else ""
    return text.lstrip().startswith(("from ", "import "))


def loaded_package(template: str) -> str:
    """The package a module name's template starts with ("model.{}.{}": "model"; "" for none)."""
    package = template.partition("{")[0].rpartition(".")[0]
    return package if all(p.isidentifier() for p in package.split(".")) else ""


def loaded_name(name: cst.BaseExpression, flags: dict[str, str]) -> tuple[str, str | None]:
    """What ``importlib.import_module(name)`` (or an ``exec`` of an import) loads, as far as the
    file tells: the package its name starts with (``f"model.{name}"``, ``"models." + name``,
    ``f"from model.{kind}.{name} import {name}"``: "model", "models", "model"; "" for none) and
    the module a flag's string default names (``args.model`` with
    ``add_argument("--model", default="votenet")``; None: not known)."""
    template = template_text(name)
    if template is not None and "{" in template:
        return loaded_package(template), None
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
