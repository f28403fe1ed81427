"""Static findings on the lines a run names: where a lint rule flags the same line, say so.

The doctor sees what happened; a static rule often says why (a host read in a training
loop, a slice with the loop's index).  Which rule families are cited is configurable;
the default is the lazy-mode family (XLA7).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from codemods.conversion import ConversionError
from codemods.doctor.rules import CHANGING_OPERATION, HOST_READ, RECOMPILING_SYNC_SITE
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection, matches
from codemods.pipeline import convert_source, summarise_with
from codemods.project.resolver import Project
from codemods.project.roots import find_root
from codemods.rules import RULES_BY_CODE
from codemods.targets import DEFAULT_TARGET

DEFAULT_FAMILIES = ("XLA7",)
# The codes of the findings that name a line of the script's code.
RUNTIME_RULES = tuple(rule.code for rule in (RECOMPILING_SYNC_SITE, CHANGING_OPERATION, HOST_READ))


def cross_reference(findings: dict[str, list[Finding]], families: tuple[str, ...]) -> dict[str, list[Finding]]:
    """``findings`` with each runtime finding's message extended by the static findings of
    ``families`` on its line (the file linted as it is: lines point into it)."""
    if not families:
        return findings
    result = {}
    for path, found in findings.items():
        lines = {f.line for f in found if f.rule in RUNTIME_RULES}
        static = _static_by_line(Path(path), families) if lines else {}
        result[path] = [
            dataclasses.replace(f, message=f"{f.message} {_citation(static[f.line])}")
            if f.rule in RUNTIME_RULES and f.line in static
            else f
            for f in found
        ]
    return result


def _static_by_line(path: Path, families: tuple[str, ...]) -> dict[int, list[Finding]]:
    try:
        project = Project(find_root(path), summarise_with(DEFAULT_TARGET, RuleSelection(), None), in_run=[path])
        conversion = convert_source(
            path.read_bytes(), locate="input", filename=str(path), imports=project.imports_of(path)
        )
    except (ConversionError, OSError):
        return {}
    by_line: dict[int, list[Finding]] = {}
    for finding in conversion.findings:
        if matches(finding.rule, families):
            by_line.setdefault(finding.line, []).append(finding)
    return by_line


def _citation(static: list[Finding]) -> str:
    codes = sorted({f"{f.rule} {RULES_BY_CODE[f.rule].name}" for f in static})
    return f"(static rule {', '.join(codes)} flags this line too)"
