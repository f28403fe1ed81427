"""The route of a file's bytes: the modules the pipeline hands a file to, in order, traced
over one conversion of each kind of input and compared with the numbered lists of
docs/dev/architecture.md ("One file's way through"), which must stay short."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType

import pytest

import codemods
from codemods.pipeline import convert_source
from tests.support.notebooks import DEVICE_CELL, LOOP_CELL, MODEL_CELL, notebook
from tests.support.paths import FIXTURES, ROOT

PACKAGE = Path(codemods.__file__).resolve().parent
ARCHITECTURE = ROOT / "docs" / "dev" / "architecture.md"
MAX_STOPS = 12
MAX_RETURNS = 3

# Per kind of input: a conversion of it, and the module of its own pipeline when that is
# not pipeline.py (what that module calls is on the route too).
KINDS: dict[str, tuple[Callable[[], object], str]] = {
    "A Python file": (
        lambda: convert_source((FIXTURES / "amp_recipe.py").read_bytes(), filename="amp_recipe.py"),
        "pipeline.py",
    ),
    "A launcher script": (
        lambda: convert_source(
            (FIXTURES / "launchers" / "seed_pytorch_estimator.py").read_bytes(), filename="launch.py"
        ),
        "pipeline.py",
    ),
    "A Dockerfile": (
        lambda: convert_source(
            (FIXTURES / "containers" / "extend_dlc" / "Dockerfile").read_bytes(), filename="Dockerfile"
        ),
        "pipeline.py",
    ),
    "A notebook": (
        lambda: convert_source(notebook(DEVICE_CELL, MODEL_CELL, LOOP_CELL).encode(), filename="train.ipynb"),
        "notebooks/convert.py",
    ),
}


def _module(code: CodeType) -> str | None:
    path = Path(code.co_filename)
    return path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else None


def traced_route(convert: Callable[[], object], own_pipeline: str) -> list[str]:
    """The modules ``convert`` hands the file to, in order (one entry per stay): each call
    from the pipeline's own code (``convert_source`` and the functions of its module, or
    of the kind's own pipeline module, that it calls) into another module of the package
    is a stop; what a stop does in turn (the walk's analyses, the rewrites) is inside it."""
    convert()  # imports and caches first: the route is the same on every later file
    route: list[str] = []
    on_route: set[int] = set()  # frames of the pipeline's own code

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "return":
            on_route.discard(id(frame))
            return
        if event != "call" or (module := _module(frame.f_code)) is None:
            return
        if not route:
            if frame.f_code is convert_source.__code__:
                on_route.add(id(frame))
                route.append(module)
            return
        caller = frame.f_back
        if caller is None or id(caller) not in on_route:
            return
        if module == _module(caller.f_code):
            on_route.add(id(frame))  # the pipeline's own helper: no new stop
            return
        if module == own_pipeline:
            on_route.add(id(frame))
        if module != route[-1]:
            route.append(module)

    sys.setprofile(profile)
    try:
        convert()
    finally:
        sys.setprofile(None)
    return route


def documented_routes() -> dict[str, list[str]]:
    """Per heading of the section, the module each numbered step starts with."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## One file's way through", 1)[1].split("\n## ", 1)[0]
    routes: dict[str, list[str]] = {}
    for block in section.split("\n### ")[1:]:
        heading, _, body = block.partition("\n")
        routes[heading.strip()] = re.findall(r"^\d+\. `([\w/]+\.py)`", body, re.MULTILINE)
    return routes


def returns(route: list[str]) -> int:
    return len(route) - len(set(route))


@pytest.mark.parametrize("kind", KINDS)
def test_the_route_is_the_documented_one(kind: str) -> None:
    convert, own_pipeline = KINDS[kind]
    assert traced_route(convert, own_pipeline) == documented_routes()[kind]


def test_every_documented_route_is_short() -> None:
    routes = documented_routes()
    assert set(routes) == set(KINDS)
    for kind, route in routes.items():
        assert len(route) <= MAX_STOPS, kind
        assert returns(route) <= MAX_RETURNS, kind
