"""The fixture scripts (fixtures/), converted as a run over their folder converts them."""

from __future__ import annotations

from pathlib import Path

from codemods import Conversion, convert_source
from codemods.engine.report import unified_diff
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.support.paths import FIXTURES

# Launcher scripts and Dockerfiles: not training scripts (tests/launcher/, tests/containers/).
NOT_TRAINING_SCRIPTS = ("launchers", "containers")


def fixture_scripts() -> list[Path]:
    """Every training script under fixtures/, as paths relative to it."""
    return sorted(
        p.relative_to(FIXTURES)
        for p in FIXTURES.rglob("*.py")
        if "__pycache__" not in p.parts and p.relative_to(FIXTURES).parts[0] not in NOT_TRAINING_SCRIPTS
    )


def fixture_project(script: Path, target: str) -> Project:
    """The project a fixture belongs to, as a run over its folder sees it: a script in a
    folder of its own converts with the whole folder; a lone script with itself."""
    group = FIXTURES / script.parts[0]
    files = sorted(group.rglob("*.py")) if group.is_dir() else [group]
    return Project(group if group.is_dir() else FIXTURES, summarise_with(target, RuleSelection(), None), in_run=files)


def convert_fixture(script: Path, target: str, source: bytes | None = None, distributed: bool = False) -> Conversion:
    """The fixture (or ``source`` in its place) converted as a run over its folder would
    (``distributed``: as ``convert --distributed`` would)."""
    imports = fixture_project(script, target).imports_of(FIXTURES / script)
    source = (FIXTURES / script).read_bytes() if source is None else source
    return convert_source(source, target=target, imports=imports, distributed=distributed)


def review_diff(script: Path, before: bytes, after: bytes) -> str:
    """A conversion as a reviewer reads it: the tool's own ``--diff`` of the file (every
    changed byte shows, untouched code appears only as context); "unchanged" for none."""
    if before == after:
        return "unchanged\n"
    return unified_diff(str(script), before.decode("utf-8"), after.decode("utf-8"))


def output_bytes(conversion: Conversion) -> bytes:
    """The output of a conversion of bytes, which is bytes (Conversion's type allows either
    kind, whatever the source's)."""
    assert isinstance(conversion.output, bytes), type(conversion.output)
    return conversion.output


def output_text(conversion: Conversion) -> str:
    """The output of a conversion of text, which is text."""
    assert isinstance(conversion.output, str), type(conversion.output)
    return conversion.output
