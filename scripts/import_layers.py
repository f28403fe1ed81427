"""The package's module import graph, its import circles and the imports that run back up
the declared layers (docs/architecture.md#layers).

Every ``import`` and ``from ... import`` of a ``codemods`` module counts, wherever it is
written: at the top, under ``if TYPE_CHECKING:`` or inside a function. An edge goes to the
module named (``from codemods.amp import rules`` reaches ``codemods.amp.rules``); a package
imported on the way (its ``__init__``) is not an edge, as the package's own ``__init__``
(the library's front door, ``codemods/__init__.py``) sits on top of everything.

    python scripts/import_layers.py          # figures, circles, back-up edges, private names

``tests/conventions/test_layering.py`` fails on any circle, back-up edge or private name.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "codemods"

# The layers, lowest first: a module may import modules of its own layer or a lower one.
# A concern's module is placed by its role, from its name: its part of the fact sheet
# (``facts``), ``rules`` (the rule objects, whose hooks read the facts), the analysis (any
# module not named as a rewrite), the rewrite. Modules not listed (and not a concern's) are
# in the layer given by TOP_LEVEL.
LAYERS = (
    "engine",  # codemods/engine/, and the data every layer reads: targets.py, apis.py (followed_packages.py, library_apis.py)
    "facts",  # the fact sheet (facts.py) and its parts, each concern's facts.py: what the analyses publish
    "rules",  # each concern's rules.py, or its rules package (one module per rule): its hooks read the facts
    "analysis",  # each concern's analysis
    "analyse",  # the walk over every analysis: analyse.py
    "rewrite",  # each concern's rewrites
    "catalogue",  # the rule catalogue and its pages, the list of rewrites
    "files",  # a file's bytes, what converting one gives, the project around it: files.py, conversion.py, project/resolver.py
    "pipeline",  # one file of each kind: pipeline.py, notebooks/convert.py, containers' check across files
    "runner",  # many files: runner.py, project/resolver.py, the doctor and verify commands
    "cli",  # the command line and the package's front door
)

TOP_LEVEL = {
    "codemods": "cli",
    "codemods.__main__": "cli",
    "codemods.cli": "cli",
    "codemods.apis": "engine",
    "codemods.library_apis": "engine",
    "codemods.equivalent_apis": "engine",
    "codemods.followed_packages": "engine",
    "codemods.targets": "engine",
    "codemods.facts": "facts",
    "codemods.analyse": "analyse",
    "codemods.rules": "catalogue",
    "codemods.rule_docs": "catalogue",
    "codemods.concerns": "catalogue",
    "codemods.annotate": "pipeline",
    "codemods.pipeline": "pipeline",
    "codemods.config": "runner",
    "codemods.files": "files",
    "codemods.conversion": "files",
    "codemods.progress": "runner",
    "codemods.runner": "runner",
}

# A concern's module whose role its name does not say.
CONCERN_MODULES = {
    "codemods.project.module_summary": "facts",  # what a module tells the others: part of the project's facts
    "codemods.project.import_context": "facts",  # how a file looks up its imports: the context the project's facts hold
    "codemods.project.run_summaries": "facts",  # what the files of a run tell each other: the held findings' facts
    "codemods.launcher.instances": "facts",  # the SageMaker instance table: data the launcher rules read
    "codemods.notebooks.convert": "pipeline",
    "codemods.notebooks.notebook_json": "files",  # a notebook file's text, read and written back
    "codemods.containers.across_files": "pipeline",
    "codemods.project.resolver": "files",
    "codemods.project.package_runs": "files",  # the folder a script in a package runs from (python -m), for the resolver
    "codemods.project.folder_scans": "files",  # the project's folders listed and its YAML files read, for the resolver
    "codemods.project.project_files": "files",  # what the project's folders and files hold, read once: the resolver's base
    "codemods.project.vendored": "files",  # a transformers copy the project ships, read once for the resolver
    "codemods.project.project_scans": "files",  # the project's files scanned once per run, for the resolver
    "codemods.verify": "runner",
    "codemods.doctor": "runner",
}

# A concern's rewrites (the modules that define an ``engine.rewriter.Concern``: the layering
# test checks that this list names them all).
REWRITES = frozenset(
    {
        "codemods.engine.rule_hooks",  # a concern made of rules' hooks (engine/hooks.py)
        "codemods.launcher.rewrite",
    }
)


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int
    names: tuple[str, ...] = ()  # the names a ``from`` import takes


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root`` (the repository), by dotted name."""
    return {module_name(root, path): path for path in sorted((root / PACKAGE).rglob("*.py"))}


def imports_of(name: str, source: str, known: Iterable[str]) -> list[Edge]:
    """The package's modules that ``source`` (module ``name``) imports, anywhere in it."""
    known = set(known)
    edges: list[Edge] = []
    package = name if name in known and _is_package(name, known) else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    edges.append(Edge(name, _deepest_known(alias.name, known), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != PACKAGE:
                continue
            taken = tuple(alias.name for alias in node.names if f"{base}.{alias.name}" not in known)
            edges.extend(
                Edge(name, f"{base}.{alias.name}", node.lineno) for alias in node.names if alias.name not in taken
            )
            if taken:
                edges.append(Edge(name, _deepest_known(base, known), node.lineno, taken))
    return [edge for edge in edges if edge.imported != name]


def _is_package(name: str, known: set[str]) -> bool:
    return any(other.startswith(name + ".") for other in known)


def _deepest_known(dotted: str, known: set[str]) -> str:
    parts = dotted.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts)


def graph(root: Path) -> list[Edge]:
    found = modules(root)
    return [edge for name, path in found.items() for edge in imports_of(name, path.read_text(), found)]


def concern_of(module: str) -> str | None:
    """The concern folder a module belongs to (``codemods.amp.rules`` -> ``amp``); None for
    the engine and the top-level modules."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "engine" or module in TOP_LEVEL:
        return None
    return parts[1]


def layer_of(module: str) -> str:
    if module in TOP_LEVEL:
        return TOP_LEVEL[module]
    parts = module.split(".")
    if parts[1] == "engine":
        return "engine"
    if parts[-1] in ("rules", "facts"):
        return parts[-1]
    if parts[-1] == "held_conditions":  # when a held finding stands: plain data over the run's summaries
        return "facts"
    if len(parts) > 3 and parts[2] == "rules":  # a concern's rules package: one module per rule
        return "rules"
    for prefix, layer in CONCERN_MODULES.items():
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return "rewrite" if module in REWRITES else "analysis"


def circles(edges: Iterable[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    without recursion), each sorted, largest first."""
    successors: dict[str, set[str]] = {}
    for edge in edges:
        successors.setdefault(edge.importer, set()).add(edge.imported)
        successors.setdefault(edge.imported, set())
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for start in sorted(successors):
        if start in index:
            continue
        work = [(start, iter(sorted(successors[start])))]
        index[start] = lowest[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = lowest[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(successors[child]))))
                    break
                if child in on_stack:
                    lowest[node] = min(lowest[node], index[child])
            else:
                work.pop()
                if work:
                    lowest[work[-1][0]] = min(lowest[work[-1][0]], lowest[node])
                if lowest[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return sorted(components, key=lambda c: (-len(c), c))


def back_up(edges: Iterable[Edge], layer: Mapping[str, str] | None = None) -> list[Edge]:
    """The imports that run back up the layers: the imported module's layer is above the
    importer's. ``layer`` maps a module to its layer (default: ``layer_of``)."""
    rank = {name: position for position, name in enumerate(LAYERS)}
    place = layer.__getitem__ if layer is not None else layer_of
    return [edge for edge in edges if rank[place(edge.imported)] > rank[place(edge.importer)]]


def private_names(edges: Iterable[Edge]) -> list[Edge]:
    """Imports of another concern's private names (``from codemods.amp.analysis import
    _optimizer_class`` in cuda_only): a concern publishes what others may read."""
    return [
        edge
        for edge in edges
        if any(name.startswith("_") for name in edge.names) and concern_of(edge.importer) != concern_of(edge.imported)
    ]


def main(root: Path) -> int:
    edges = graph(root)
    found_circles = circles(edges)
    upward = back_up(edges)
    private = private_names(edges)
    print(f"{len(modules(root))} modules, {len({(e.importer, e.imported) for e in edges})} import edges")
    print(f"{len(found_circles)} import circles ({sum(map(len, found_circles))} modules in them)")
    for component in found_circles:
        print(f"  circle of {len(component)}: {', '.join(component)}")
    print(f"{len(upward)} imports that run back up the layers")
    for edge in upward:
        print(
            f"  {edge.importer}:{edge.line} ({layer_of(edge.importer)}) -> {edge.imported} ({layer_of(edge.imported)})"
        )
    print(f"{len(private)} imports of another concern's private names")
    for edge in private:
        print(f"  {edge.importer}:{edge.line} -> {edge.imported}: {', '.join(edge.names)}")
    return 1 if found_circles or upward or private else 0


if __name__ == "__main__":
    sys.exit(main(Path(__file__).resolve().parents[1]))
