"""The package's layers hold (docs/architecture.md#layers): no import circle, type-only and
function-local imports included; no import that runs back up the layers; no concern reading
another's private names. scripts/import_layers.py builds the graph and prints the same."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

from codemods.engine.rewriter import Concern
from tests.support.paths import ROOT, scripts_importable

with scripts_importable():
    import import_layers
    from import_layers import Edge


def test_no_import_circles() -> None:
    assert import_layers.circles(import_layers.graph(ROOT)) == []


def test_no_import_runs_back_up_the_layers() -> None:
    assert import_layers.back_up(import_layers.graph(ROOT)) == []


def test_no_concern_imports_another_concerns_private_names() -> None:
    assert import_layers.private_names(import_layers.graph(ROOT)) == []


def test_every_module_has_its_layer_and_the_rewrites_are_listed() -> None:
    """A concern's module is placed by its name, and its rewrites are listed by name: the
    modules that define a Concern (the rewrites the catalogue lists, and the launcher's,
    loaded only for launcher scripts) are those of the list."""
    modules = import_layers.modules(ROOT)
    assert all(import_layers.layer_of(name) in import_layers.LAYERS for name in modules)
    for name in ["codemods.concerns", *import_layers.REWRITES]:
        importlib.import_module(name)
    assert {
        kind.__module__ for kind in _subclasses(Concern) if kind.__module__.startswith("codemods.")
    } == import_layers.REWRITES


def _subclasses(kind: type) -> set[type]:
    found: set[type] = set(kind.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_the_checker_finds_a_planted_circle_and_an_edge_back_up(tmp_path: Path) -> None:
    """The negative control: in a copy of the package, the engine's node helpers import
    the pipeline under ``if TYPE_CHECKING:`` (the pipeline reaches them through the
    rewriter), and the checker reports both the circle and the edge."""
    shutil.copytree(ROOT / "codemods", tmp_path / "codemods", ignore=shutil.ignore_patterns("__pycache__"))
    nodes = tmp_path / "codemods" / "engine" / "nodes.py"
    nodes.write_text(
        nodes.read_text()
        + "\n\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from codemods.pipeline import Conversion\n"
    )
    edges = import_layers.graph(tmp_path)
    assert any({"codemods.engine.nodes", "codemods.pipeline"} <= set(c) for c in import_layers.circles(edges))
    assert ("codemods.engine.nodes", "codemods.pipeline") in {
        (edge.importer, edge.imported) for edge in import_layers.back_up(edges)
    }


@pytest.mark.parametrize(
    ("source", "imported", "names"),
    [
        ("from codemods.b import c", "codemods.b.c", ()),  # a module taken from a package
        ("from codemods.b import thing", "codemods.b", ("thing",)),
        ("import codemods.b.c as c", "codemods.b.c", ()),
        ("def f():\n    from .b import _private", "codemods.b", ("_private",)),  # relative, in a function
    ],
)
def test_imports_are_found_wherever_they_are_written(source: str, imported: str, names: tuple[str, ...]) -> None:
    known = {"codemods", "codemods.a", "codemods.b", "codemods.b.c"}
    assert import_layers.imports_of("codemods.a", source, known) == [
        Edge("codemods.a", imported, source.count("\n") + 1, names)
    ]


def test_circles_and_back_up_edges_on_a_small_graph() -> None:
    """Tarjan's components on a graph small enough to check by hand: a -> b -> c -> a is a
    circle, d -> a is not in it; with d in the engine and a in the cli, d -> a runs back up."""
    edges = [Edge("a", "b", 1), Edge("b", "c", 1), Edge("c", "a", 1), Edge("d", "a", 1), Edge("a", "d", 2)]
    assert import_layers.circles(edges) == [["a", "b", "c", "d"]]
    assert import_layers.circles(edges[:4]) == [["a", "b", "c"]]
    layers = {"a": "cli", "b": "cli", "c": "cli", "d": "engine"}
    assert import_layers.back_up(edges, layers) == [Edge("d", "a", 1)]
