"""What a single-file run tells of the project methods that a call may run by its name, where the tool
cannot tell the class of the receiver (``model.optimize_parameters()``, ProjectAnalysis._named_training,
XLA003): the CUDA device choice or mixed precision that a method's class inherits from a base class
(of its module or imported from another one: ``self.device`` set in ``BaseModel.__init__``), and the
project factory that built the receiver from modules it imports by a name known only at run time
(``getattr(importlib.import_module(f"pkg.models.{name}"), opt["model_type"])(opt)``), whose set of
classes no run on one file can tell.  ``analysis`` is the file's ProjectAnalysis (not imported here:
that module imports this one)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from codemods.project.receivers import used_of

if TYPE_CHECKING:
    from codemods.project.module_summary import ModuleSummary

# How holdings.py shows a module imported by a name known only at run time, with the package the name
# starts with (read back here).
LOADED_PACKAGE = ", which imports a module of the project's `{}` package"

# What a class holds that its methods' plain optimizer step does not make right on XLA (reach.plain_step).
HELD_CAUSES = ("device", "amp", "cuda-only")

# The code a holding shows, and its line (```importlib.import_module(name)` (line 22)``).
_CODE = re.compile(r"`[^`]*`(?: \(line \d+\))?")

# How many bases deep the lookup goes.
_MAX_DEPTH = 4


def inherited_choice(analysis: Any, summary: ModuleSummary, name: str) -> tuple[str, str, str, str] | None:
    """A base class of the class of the method ``name`` (``SRModel.optimize_parameters``) that holds a
    CUDA device choice, CUDA mixed precision or a CUDA-only API (what the subclass's methods run with,
    ``self.device``), the first found depth-first, left to right (not Python's C3 order where bases share an ancestor), a few deep: (the class as its
    module names it, that module's path, the cause, the code held and its line); None where no base does."""
    return _base_holding(analysis, summary, name.split(".")[0], set(), 0)


def _base_holding(
    analysis: Any, summary: ModuleSummary, cls: str, seen: set[tuple[str, str]], depth: int
) -> tuple[str, str, str, str] | None:
    if depth >= _MAX_DEPTH or (summary.path, cls) in seen:
        return None
    seen.add((summary.path, cls))
    for base in next((bases for c, bases, _ in summary.classes if c == cls), ()):
        there: ModuleSummary | None = summary
        name: str | None = base
        if (origin := summary.origin_of(base)) is not None:  # imported: ``from pkg.models.base_model import BaseModel``
            found = analysis.part.context.lookup_from(summary, *origin)
            there, name = (found.summary, found.name) if found is not None else (None, None)
        if there is None or not name or "." in name:
            continue  # (outside the project, or a module the tool cannot read: nothing it would port)
        for held, cause, what, _ in there.holds:
            if held == name and cause in HELD_CAUSES:
                return name, there.path, cause, what
        if (further := _base_holding(analysis, there, name, seen, depth + 1)) is not None:
            return further
    return None


def runtime_factory(analysis: Any, head: str) -> tuple[str, str, str, str] | None:
    """Where ``head`` (the receiver) is bound to what a project function returns whose module imports
    modules by a name known only at run time (``create_model`` over ``importlib.import_module(
    f"basicsr.models.{file_name}")`` of a scan of its folder): (the function as written here, that
    import's code and line as findings show it, the path of the module that imports, the folder those
    modules are looked for in: the package's the name starts with, else that module's); None for
    anything else."""
    for module, function in analysis.builders.get(head, []):
        found = analysis.part.context.lookup(module, function)
        if found is None or found.summary is None:
            continue
        for path, cause, _, what, _ in analysis.held_by(found.summary, ["", *used_of(found)], 0):
            if cause == "dynamic-import":
                code = match.group(0) if (match := _CODE.match(what)) else what
                return function, code, path, _folder(analysis, path, what)
    return None


def _folder(analysis: Any, path: str, what: str) -> str:
    """The folder a module name's package leads to (``what`` ends with "of the project's `pkg.models`
    package"), as findings name it; else the folder of the module that imports (``path``)."""
    marker = LOADED_PACKAGE.partition("{}")[0]
    if marker in what:
        package = what.rpartition(marker)[2].partition("`")[0]
        found = analysis.part.context.lookup(package, "")
        if found is not None and found.summary is not None and not found.name:
            shown: str = found.summary.path
            return shown.rpartition("/")[0] + "/" if shown.endswith("/__init__.py") else shown
    folder = path.rpartition("/")[0]
    return folder + "/" if folder else "the folder of " + path
