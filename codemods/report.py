"""Report: one model of what happened to each file, rendered as text, JSON, SARIF or a diff."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

from codemods import __version__
from codemods.rules import RULES, RULES_BY_CODE, Severity


@dataclass(frozen=True)
class Finding:
    """A change the tool made (``fixed``) or a follow-up a person must do.
    ``line`` and ``col`` are 1-based."""

    rule: str
    line: int
    col: int
    message: str
    fixed: bool

    @property
    def severity(self) -> Severity:
        return RULES_BY_CODE[self.rule].severity

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "fixed": self.fixed,
        }


@dataclass
class FileReport:
    path: str
    changed: bool = False
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)
    diff: str = ""
    # What the file tells the checks across files of a run (containers.connect_images):
    # images its estimators run, or the image a Dockerfile builds.
    images: tuple[object, ...] = ()


@dataclass
class Report:
    files: list[FileReport] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        findings = [f for r in self.files for f in r.findings]
        return {
            "files": len(self.files),
            "changed": sum(r.changed for r in self.files),
            "errors": sum(r.error is not None for r in self.files),
            "fixed": sum(f.fixed for f in findings),
            "manual": sum(not f.fixed for f in findings),
        }


def finding_line(path: str, finding: Finding) -> str:
    """``path:line:col: CODE [*] message`` (flake8/ruff style; [*] marks an autofix)."""
    mark = "[*] " if finding.fixed else ""
    return f"{path}:{finding.line}:{finding.col}: {finding.rule} {mark}{finding.message}"


def render_text(report: Report) -> str:
    lines: list[str] = []
    for file in report.files:
        if file.error is not None:
            lines.append(f"{file.path}: error: {file.error}")
        lines.extend(finding_line(file.path, f) for f in file.findings)
    s = report.summary()
    lines.append(
        f"{s['files']} file(s) checked, {s['changed']} changed, {s['fixed']} fix(es), "
        f"{s['manual']} manual follow-up(s), {s['errors']} error(s)"
    )
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    files = [
        {
            "path": f.path,
            "changed": f.changed,
            "error": f.error,
            "findings": [x.as_dict() for x in f.findings],
        }
        for f in report.files
    ]
    return json.dumps({"files": files, "summary": report.summary()}, indent=2) + "\n"


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0, as GitHub code scanning and most CI annotators read it."""
    used = sorted({x.rule for f in report.files for x in f.findings})
    rules = [
        {
            "id": code,
            "name": RULES_BY_CODE[code].name,
            "shortDescription": {"text": RULES_BY_CODE[code].summary},
        }
        for code in used
    ]
    index = {code: i for i, code in enumerate(used)}
    results = [
        {
            "ruleId": x.rule,
            "ruleIndex": index[x.rule],
            "level": "note" if x.fixed else "warning",
            "message": {"text": ("fixed: " if x.fixed else "") + x.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": {"startLine": x.line, "startColumn": x.col},
                    }
                }
            ],
        }
        for f in report.files
        for x in f.findings
    ]
    errors = [
        {"level": "error", "message": {"text": f"{f.path}: {f.error}"}, "descriptor": {"id": "file-error"}}
        for f in report.files
        if f.error is not None
    ]
    run = {
        "tool": {
            "driver": {
                "name": "xla-codemod",
                "version": __version__,
                "informationUri": "https://pypi.org/project/torch-xla-codemods/",
                "rules": rules,
            }
        },
        "results": results,
    }
    if errors:
        run["invocations"] = [{"executionSuccessful": False, "toolExecutionNotifications": errors}]
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    return json.dumps(sarif, indent=2) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif}


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path.lstrip('/')}",
            tofile=f"b/{path.lstrip('/')}",
        )
    )


def render_rules() -> str:
    """``xla-codemod rules``: every rule, [*] where the tool fixes it, and its severity."""
    return "".join(
        f"{r.code} {'[*]' if r.fixable else '   '} {r.severity:<7} {r.name:<24} {r.summary}\n" for r in RULES
    )
