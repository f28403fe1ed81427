"""The summary of a module the conversion skipped unparsed (no training script: a package's
``__init__.py``, a helper without torch), read with Python's own parser: what it re-exports
(``from .data_parallel import UserScatteredDataParallel``; ``from .other import *``, whose names
the star binds as the module itself would), the dicts of classes it holds, its classes, the
functions that forward to a factory and its flags' defaults, so that the files importing it
reach through it in a run that converts it as in one that only reads it."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

from codemods.project.import_context import outside_project
from codemods.project.module_summary import ModuleSummary, StarNames

# What ``from <module> import *`` binds, the module as written (the file's ImportContext.star_names).
StarLookup = Callable[[str], StarNames | None]


def with_reexports(
    summary: ModuleSummary | None, data: bytes, star_names: StarLookup | None = None
) -> ModuleSummary | None:
    """A module that is not a training script (skipped unparsed) may still re-export names
    (a package's ``__init__.py``: ``from .data_parallel import UserScatteredDataParallel``) or
    hold a dict of the classes it imports (``train_factory = {'ctdet': CtdetTrainer}``): its
    summary says where they come from, in a run that converts it as in one that reads it.
    ``star_names``: what its star imports of project modules bind (None: they bind nothing known)."""
    if summary is None or replace(summary, unread=False) != ModuleSummary():
        return summary
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return summary
    attributes = _named_attributes(tree)
    if b"import" not in data:
        return replace(summary, named_attributes=attributes) if attributes else summary
    imported, tables = _imported_names(tree, star_names), _name_tables(tree)
    return replace(
        summary,
        named_attributes=attributes,
        imported=imported,
        name_tables=tables,
        classes=_classes(tree),
        forwards=_forwards(tree),
        reaches=_reaches(tree, {local for local, _, _ in imported}, dict(tables)),
        flag_defaults=_flag_defaults(tree),
        ported_flags=_ported_flags(tree),
    )


def _named_attributes(tree: ast.Module) -> frozenset[str]:
    """The attributes the module names and the identifiers its strings hold (ProjectFacts.named_attributes,
    here of any receiver): the methods of project classes a helper the conversion skipped may call
    (``agent.load(path)``)."""
    return frozenset(
        node.attr if isinstance(node, ast.Attribute) else str(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        or (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier())
    )


def _imported_names(tree: ast.Module, star_names: StarLookup | None) -> tuple[tuple[str, str, str], ...]:
    """(local name, module as written, name there) of each ``from ... import`` (Python's own
    parser: this is for files the conversion skipped), then of each name a module-level
    ``from <project module> import *`` binds that no import names itself: the module's own names
    and its imports of the project (``from .other import *`` with ``device = torch.device(...)``
    in other.py: ``from utils import device`` leads there), as ImportAnalysis binds them."""
    named = [
        (alias.asname or alias.name, "." * node.level + (node.module or ""), alias.name)
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name != "*"
    ]
    locals_ = {local for local, _, _ in named}
    for node in tree.body if star_names is not None else ():
        if not (isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)):
            continue
        module = "." * node.level + (node.module or "")
        if not node.level and outside_project(module):
            continue
        for local, qualified in (star_names(module) if star_names is not None else None) or ():
            if local not in locals_ and (qualified is None or not outside_project(qualified)):
                named.append((local, module, local))
                locals_.add(local)
    return tuple(named)


def _name_tables(tree: ast.Module) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Module-level ``name = {key: Name, ...}`` whose values are all names (as
    ProjectAnalysis records them for the files it parses)."""
    tables: list[tuple[str, tuple[str, ...]]] = []
    filled: dict[str, list[str]] = {}  # ``REGISTRY = {}``, then ``REGISTRY["q"] = QLearner``
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.Assign) and isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            if target.value.id in filled and (written := _dotted(node.value)) is not None:
                filled[target.value.id].append(written)
            continue
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and not node.value.keys:
            if isinstance(target, ast.Name):
                filled[target.id] = []
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Dict) and all(None is not k for k in value.keys):
                elements = value.values
            elif isinstance(value, (ast.List, ast.Tuple)):
                elements = value.elts
            else:
                continue
            names = [name for v in elements if (name := _dotted(v)) is not None]
            if names and len(names) == len(elements):
                tables.append((node.targets[0].id, tuple(names)))
    tables.extend((table, tuple(values)) for table, values in filled.items() if values)
    return tuple(sorted(tables))


def _reaches(tree: ast.Module, imported: set[str], tables: dict[str, tuple[str, ...]]) -> tuple[tuple[str, str], ...]:
    """(top-level function or class, a name it uses) for the imported names and the module's own
    functions and classes it uses (``create_model_and_diffusion`` calling ``create_model``), and the
    names of the module-level tables it reads (a factory: ``return TRAINERS[args.trainer](...)``
    with ``TRAINERS = {"base": Trainer}``), as ProjectAnalysis records them for the files it parses."""
    found: set[tuple[str, str]] = set()
    defined = {
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            if used in imported or (used in defined and used != node.name):
                found.add((node.name, used))
            found.update((node.name, written) for written in tables.get(used, ()))
    return tuple(sorted(found))


def _classes(tree: ast.Module) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """Top-level classes: (class, bases as written, the methods it defines)."""
    return tuple(
        (
            node.name,
            tuple(name for base in node.bases if (name := _dotted(base)) is not None),
            tuple(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))),
        )
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    )


def _forwards(tree: ast.Module) -> tuple[tuple[str, str, str, int, tuple[str, ...]], ...]:
    """The top-level functions that return what a call returns (ModuleSummary.forwards), for a
    module without torch (a package's ``__init__.py`` routing to its factories)."""
    found: list[tuple[str, str, str, int, tuple[str, ...]]] = []
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        parameters = [a.arg for a in function.args.args]
        imported = {
            alias.asname or alias.name: "." * node.level + (node.module or "")
            for node in ast.walk(function)
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        for node in ast.walk(function):
            if not (isinstance(node, ast.Return) and isinstance(node.value, ast.Call)):
                continue
            call = node.value
            arguments = tuple(_dotted(a) or "" for a in call.args if not isinstance(a, ast.Starred))
            if isinstance(call.func, ast.Subscript) and (table := _dotted(call.func.value)) is not None:
                if table in parameters:
                    found.append((function.name, "", "", parameters.index(table), arguments))
                else:
                    found.append((function.name, "", table, -2, arguments))
            elif (callee := _dotted(call.func)) is not None:
                found.append((function.name, imported.get(callee.split(".")[0], ""), callee, -1, arguments))
    return tuple(found)


def _flag_defaults(tree: ast.Module) -> tuple[tuple[str, str], ...]:
    """The defaults of the argparse flags the module adds (an options module without torch:
    ``parser.add_argument("--device", type=int, default=-1)``): (attribute, default as written)."""
    found = {}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
        ):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        dest = keywords.get("dest")
        name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
        long = next((f for f in flags if f.startswith("--")), None)
        name = name or (long.lstrip("-").replace("-", "_") if long else None)
        if name is not None and "default" in keywords:
            found[name] = ast.unparse(keywords["default"])
    return tuple(sorted(found.items()))


def _ported_flags(tree: ast.Module) -> frozenset[str]:
    """The argparse flags named like a device whose default or a choice is a CUDA string (the port
    makes it "xla"): ``add_argument("--device", choices=["cpu", "cuda"])``."""
    found = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
        ):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        long = next((a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")), None)
        dest = keywords.get("dest")
        name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
        name = name or (str(long).lstrip("-").replace("-", "_") if long else None)
        values = [keywords.get("default")]
        choices = keywords.get("choices")
        if isinstance(choices, (ast.List, ast.Tuple)):
            values.extend(choices.elts)
        if name is not None and "device" in name and any(_cuda_string(v) for v in values):
            found.add(name)
    return frozenset(found)


def _cuda_string(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (head := _dotted(node.value)) is not None:
        return f"{head}.{node.attr}"
    return None
