"""Analyses declare what they read (``Analysis.reads`` and ``conclude_reads``, engine/walk.py),
and the walk and conclude orders are derived from those declarations.

Every fixture and rule case is analysed with a fact sheet that records, per analysis
and phase (walking, finishing, concluding), the parts it reads and the analyses it asks
for with ``walk.analysis``: each must be declared, or the derived order could run an
analysis before what it reads.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields

import libcst as cst
import pytest

from codemods import TARGETS, convert_source
from codemods.analyse import ANALYSES, analyse, inspected
from codemods.engine.walk import Analysis, FactSheet, Walk, conclude_order, walk_order
from codemods.facts import Facts
from tests.support.fixtures import fixture_project, fixture_scripts
from tests.support.paths import FIXTURES
from tests.support.rule_cases import CASES

# (analysis class, phase) -> the names it read.
Found = dict[tuple[type[Analysis], str], set[str]]


class _RecordingSheet:
    """The fact sheet as one analysis sees it: every part it reads (or writes) is noted."""

    _facts: FactSheet
    _note: Callable[[str], None]

    def __init__(self, facts: FactSheet, note: Callable[[str], None]) -> None:
        object.__setattr__(self, "_facts", facts)
        object.__setattr__(self, "_note", note)

    def __getattr__(self, name: str) -> object:
        self._note(name)
        return getattr(self._facts, name)

    def __setattr__(self, name: str, value: object) -> None:
        self._note(name)
        setattr(self._facts, name, value)


@contextmanager
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[Found]:
    """While it lasts, every analysis reads the fact sheet through a recording view."""
    found: Found = defaultdict(set)
    phases: dict[int, list[str]] = {}  # by id of the analysis: its phase, in a cell
    keep: list[Analysis] = []  # the ids stay theirs while the record lasts
    base_init = Analysis.__init__
    base_analysis = Walk.analysis

    def note(analysis: Analysis, name: str) -> None:
        found[(type(analysis), phases[id(analysis)][0])].add(name)

    def init(self: Analysis, walk: Walk) -> None:
        base_init(self, walk)
        keep.append(self)
        phases[id(self)] = phase = ["walking"]
        self.facts = _RecordingSheet(walk.facts, lambda name: note(self, name))  # type: ignore[assignment]
        for method, label in (("finish", "finishing"), ("conclude", "concluding")):

            def run(bound: Callable[[], None] = getattr(self, method), label: str = label) -> None:  # noqa: B008 - bound now, per method
                phase[0] = label
                try:
                    bound()
                finally:
                    phase[0] = "answering"  # the others may still ask it

            setattr(self, method, run)

    def analysis(self: Walk, kind: type[Analysis]) -> Analysis:
        caller = sys._getframe(1).f_locals.get("self")
        if isinstance(caller, Analysis) and id(caller) in phases:
            note(caller, kind.name)
        return base_analysis(self, kind)

    monkeypatch.setattr(Analysis, "__init__", init)
    monkeypatch.setattr(Walk, "analysis", analysis)
    yield found


def undeclared(found: Found, kinds: list[type[Analysis]]) -> list[str]:
    """What the analyses read without declaring it."""
    concluding = {
        name for kind in kinds if kind.conclude is not Analysis.conclude for name in (kind.name, kind.fills) if name
    }
    problems = []
    for (kind, phase), names in sorted(found.items(), key=lambda item: (item[0][0].__name__, item[0][1])):
        allowed = {kind.name, kind.fills, *kind.reads} | ({*kind.conclude_reads} if phase == "concluding" else set())
        for name in sorted(names - allowed):
            problems.append(f"{kind.__name__} reads {name!r} while {phase}")
        if phase == "concluding":
            for name in sorted((names & concluding) - {kind.name, kind.fills} - set(kind.conclude_reads)):
                problems.append(
                    f"{kind.__name__} reads {name!r} while concluding, and it concludes too: conclude_reads"
                )
    return problems


def _analyse_everything() -> None:
    for script in fixture_scripts():
        for target in sorted(TARGETS):
            imports = fixture_project(script, target).imports_of(FIXTURES / script)
            convert_source((FIXTURES / script).read_bytes(), target=target, imports=imports)
    for case in CASES:
        if case.filename == "train.py":
            analyse(cst.parse_module(case.before))
            analyse(cst.parse_module(case.before), distributed=True)


def test_every_analysis_reads_only_what_it_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    with recording(monkeypatch) as found:
        _analyse_everything()
    assert {kind for kind, _ in found} == set(ANALYSES)  # every analysis was seen at work
    assert undeclared(found, ANALYSES) == []


def test_an_undeclared_read_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: an analysis that asks for another analysis while
    walking, reads the training part while concluding, and the device part (which concludes
    too) while concluding, none of it declared where it should be."""

    class Sneaky(Analysis):
        facts: Facts
        name = "sneaky"
        reads = ("device",)

        def visit_Call(self, node: cst.Call) -> None:
            self.walk.analysis(ANALYSES[0])

        def conclude(self) -> None:
            self.facts.device.strings.clear()
            self.facts.training.models.clear()

    with recording(monkeypatch) as found:
        walk = Walk(Facts(), [*ANALYSES, Sneaky], inspected)
        walk.run(cst.parse_module("import torch\nx = torch.zeros(2)\n"))
        walk.finish()
    assert [p for p in undeclared(found, [*ANALYSES, Sneaky]) if "Sneaky" in p] == [
        "Sneaky reads 'training' while concluding",
        "Sneaky reads 'device' while concluding, and it concludes too: conclude_reads",
        f"Sneaky reads {ANALYSES[0].name!r} while walking",
    ]


def test_every_part_of_the_fact_sheet_is_filled_by_an_analysis() -> None:
    parts = {f.name for f in fields(Facts)} - {"nodes_to_visit", "parents"}
    named = {kind.name for kind in ANALYSES}
    assert parts <= named | {kind.fills for kind in ANALYSES}  # the others keep their results to themselves
    assert len(named) == len(ANALYSES)


def _providers(kinds: list[type[Analysis]]) -> dict[str, list[type[Analysis]]]:
    providers: dict[str, list[type[Analysis]]] = defaultdict(list)
    for kind in kinds:
        for name in {kind.name, kind.fills} - {""}:
            providers[name].append(kind)
    return providers


def test_the_orders_follow_the_declarations() -> None:
    providers = _providers(ANALYSES)
    for kind in ANALYSES:
        for name in (*kind.reads, "imports"):
            for provider in providers[name]:
                assert provider is kind or ANALYSES.index(provider) < ANALYSES.index(kind), (kind.__name__, name)
    concluding = conclude_order(tuple(ANALYSES))
    for kind in concluding:
        for name in kind.conclude_reads:
            for provider in providers[name]:
                if provider in concluding:
                    assert concluding.index(provider) < concluding.index(kind), (kind.__name__, name)
    assert walk_order(list(reversed(ANALYSES)))[0].name == "imports"


def test_a_cycle_or_an_unknown_name_is_refused() -> None:
    class First(Analysis):
        name = "first"
        reads = ("second",)

    class Second(Analysis):
        name = "second"
        reads = ("first",)

    class Lost(Analysis):
        name = "lost"
        reads = ("nowhere",)

    imports = next(kind for kind in ANALYSES if kind.name == "imports")
    with pytest.raises(ValueError, match="cycle"):
        walk_order([imports, First, Second])
    with pytest.raises(ValueError, match="Lost reads nowhere"):
        walk_order([imports, Lost])


def test_the_derived_order_is_stable() -> None:
    """Deriving the order again changes nothing, and analyses with nothing between them
    keep the order they were listed in."""
    assert walk_order(ANALYSES) == ANALYSES
