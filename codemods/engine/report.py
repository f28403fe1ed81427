"""Report: one model of what happened to each file, rendered as text, JSON, SARIF,
GitHub annotations, Markdown or a diff."""

from __future__ import annotations

import difflib
import json
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from codemods.engine.rule import SEVERITIES, Severity, at_least, rule_of
from codemods.engine.wording import would
from codemods.targets import TARGETS


@dataclass(frozen=True)
class Finding:
    """A change the tool makes (``fixed``: its fix covers the finding; whether the fix was
    written is the run's mode, ``Report.fixes_applied``) or a follow-up a person must do.
    ``line`` and ``col`` are 1-based.  In a notebook, ``cell`` is the cell's 1-based
    number among all its cells (as ruff counts them) and ``line`` counts within the cell;
    ``file_line`` is the line of the ``.ipynb`` file that holds that source line (for
    annotators that show the file itself).  A finding about the notebook's metadata has
    no cell: its ``line`` is the file's."""

    rule: str
    line: int
    col: int
    message: str
    fixed: bool
    cell: int | None = None
    file_line: int | None = None

    @property
    def severity(self) -> Severity:
        return rule_of(self.rule).severity

    def as_dict(self, message: str | None = None, fixed: bool | None = None) -> dict[str, object]:
        """The JSON form: ``fixable`` always; ``fixed`` (the fix is in the file now) only
        when the run converts (``fixed`` given)."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "line": self.line,
            "col": self.col,
            "message": self.message if message is None else message,
            "fixable": self.fixed,
            **({"fixed": fixed} if fixed is not None else {}),
            **({"cell": self.cell} if self.cell is not None else {}),
            **({"file_line": self.file_line} if self.file_line is not None else {}),
        }

    @property
    def position(self) -> str:
        """``line:col``, or ``cell N:line:col`` in a notebook."""
        return f"{'' if self.cell is None else f'cell {self.cell}:'}{self.line}:{self.col}"

    @property
    def physical_line(self) -> int:
        """The line in the file as stored (a notebook's JSON text)."""
        return self.file_line or self.line


# What the layers above gather of a run's files for held findings (project/run_summaries.py's
# RunSummaries: the engine reads none of it).
RunT_contra = TypeVar("RunT_contra", contravariant=True)


class HeldCondition(Protocol[RunT_contra]):
    """When a held finding stands, decided once every file of the run is converted.  A
    condition is plain data (it crosses process boundaries with its file's report); each
    kind of condition belongs to the concern that holds findings with it."""

    def standing(self, finding: Finding, holder: Path, run: RunT_contra) -> Finding | None:
        """The finding as it stands (its message may name what the run's files hold), or
        None: the run's files clear it.  ``holder``: the file that holds it (resolved)."""
        ...


@dataclass(frozen=True)
class HeldFinding:
    """A finding held back until the run's other files are seen (a file that others import
    cannot tell alone whether a loop of theirs drives its step): it stands only if its
    condition says so (runner.release_held), and it gets no TODO comment."""

    finding: Finding
    condition: HeldCondition[Any]


# What a run did: convert in place ("write"), convert without writing ("check",
# "diff"), or report only ("lint").
Mode = Literal["write", "check", "diff", "lint"]


@dataclass
class FileReport:
    path: str
    changed: bool = False
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)
    diff: str = ""
    # Findings at or above this severity fail the run (per file: overrides may differ).
    fail_on: Severity = "error"
    # What the file tells the checks across files of a run (containers/across_files.py):
    # images its estimators run, or the image a Dockerfile builds.
    images: tuple[object, ...] = ()
    # What the file tells the other files of its project (a Python module's summary).
    summary: object | None = None
    # Findings that stand only if the run's other files do not clear them.
    held: tuple[HeldFinding, ...] = ()
    # Where in the file the error is (1-based), when the parser said.
    error_line: int | None = None
    error_col: int | None = None
    # The target the file was converted for (None: not converted, a Dockerfile or the doctor's).
    target: str | None = None

    @property
    def error_location(self) -> str:
        """``path:line:col`` of the error, or ``path`` when it has no position."""
        if self.error_line is None:
            return self.path
        return f"{self.path}:{self.error_line}:{self.error_col or 1}"


def error_line(file: FileReport) -> str:
    """``path:line:col: error: message`` (``path: error: message`` without a position)."""
    return f"{file.error_location}: error: {file.error}"


@dataclass
class Report:
    """What a run did.  ``show_info``: False leaves out the infos that ask nothing of the
    user (infos the tool fixes: an import added, one left unused removed, a CUDA-only
    setting dropped), in every format; they are counted as hidden.  A file whose
    ``fail_on`` is ``info`` shows them all."""

    files: list[FileReport] = field(default_factory=list)
    mode: Mode = "write"
    show_info: bool = True
    # The tool's version, for the formats that name it (SARIF): the command line's.
    tool_version: str = ""

    @property
    def fixes_applied(self) -> bool:
        """Whether ``fixed`` findings are done (an in-place convert) or only possible."""
        return self.mode == "write"

    @property
    def converts(self) -> bool:
        """A convert run (its findings say ``fixed``), not lint nor the doctor."""
        return self.mode != "lint"

    def shown(self, file: FileReport) -> list[Finding]:
        """The file's findings this report shows."""
        if self.show_info or file.fail_on == "info":
            return file.findings
        return [x for x in file.findings if not (x.fixed and x.severity == "info")]

    def hidden(self) -> int:
        return sum(len(f.findings) - len(self.shown(f)) for f in self.files)

    def message(self, finding: Finding) -> str:
        """The finding's text in this run's voice: a fix written says what it did, one
        not written what it would do (codemods/engine/wording.py)."""
        return finding.message if self.fixes_applied or not finding.fixed else would(finding.message)

    def line(self, path: str, finding: Finding) -> str:
        return finding_line(path, finding, self.message(finding))

    def standing(self, file: FileReport) -> list[Finding]:
        """Findings that still stand in the file when the run ends: all of them for lint
        (it changes nothing), the ones the tool did not fix for convert (what it fixes
        makes the file change, which convert's exit code says anyway)."""
        return file.findings if self.mode == "lint" else [f for f in file.findings if not f.fixed]

    def exit_code(self) -> int:
        """0 clean; 1 a file changed (or would), or a standing finding at or above the
        file's fail-on severity; 2 a file could not be processed."""
        if any(f.error is not None for f in self.files):
            return 2
        failing = any(f.changed or any(at_least(x.severity, f.fail_on) for x in self.standing(f)) for f in self.files)
        return 1 if failing else 0

    def summary(self) -> dict[str, Any]:
        """Files (for convert: changed, or would change with --check/--diff, and
        unchanged), findings shown by severity and rule, each fixable or manual, and
        for an in-place convert how many were fixed; the infos hidden; how to start
        the converted scripts."""
        findings = [x for f in self.files for x in self.shown(f)]
        failed = sum(f.error is not None for f in self.files)
        changed = sum(f.changed and f.error is None for f in self.files)
        by_rule: dict[str, dict[str, Any]] = {}
        for x in sorted(findings, key=lambda x: (SEVERITIES.index(x.severity), x.rule)):
            counts = by_rule.setdefault(x.rule, {"severity": x.severity, "fixable": 0, "manual": 0})
            counts["fixable" if x.fixed else "manual"] += 1
        by_severity: dict[str, dict[str, int]] = {}
        for counts in by_rule.values():
            total = by_severity.setdefault(counts["severity"], {"fixable": 0, "manual": 0})
            total["fixable"] += counts["fixable"]
            total["manual"] += counts["manual"]
        files: dict[str, Any] = {"files": len(self.files), "failed": failed}
        if self.converts:
            files |= {
                "changed" if self.fixes_applied else "would_change": changed,
                "unchanged": len(self.files) - changed - failed,
            }
        fixable = sum(x.fixed for x in findings)
        return {
            **files,
            "findings": len(findings),
            "fixable": fixable,
            "manual": len(findings) - fixable,
            **({"fixed": fixable} if self.fixes_applied else {}),
            "hidden_info": self.hidden(),
            "by_severity": by_severity,
            "by_rule": by_rule,
            "start": [{"how": how, "files": paths} for how, paths in self.starts().items()],
        }

    def starts(self) -> dict[str, list[str]]:
        """How to start the scripts whose conversion changes how they start (an entry
        point or a launcher written), by instruction: each instruction once per run."""
        if not self.converts:
            return {}
        found: dict[str, list[str]] = {}
        for file in self.files:
            kinds = {rule_of(x.rule).changes_start for x in file.findings if x.fixed} - {None}
            if file.target is None or not kinds or getattr(file.summary, "starts_nothing", False):
                continue  # (a module whose launcher a function of it holds: the script importing it starts)
            kind = "launcher" if "launcher" in kinds else "entry point"
            found.setdefault(TARGETS[file.target].how_to_start[kind], []).append(file.path)
        return {
            how.replace("{script}", paths[0] if len(paths) == 1 else "SCRIPT"): paths for how, paths in found.items()
        }


def finding_line(path: str, finding: Finding, message: str | None = None) -> str:
    """``path:line:col: severity: CODE [*] message`` (the gcc/flake8 shape; [*] marks a
    finding the tool fixes); ``path:cell N:line:col: ...`` in a notebook, as ruff writes it."""
    mark = "[*] " if finding.fixed else ""
    text = finding.message if message is None else message
    return f"{path}:{finding.position}: {finding.severity}: {finding.rule} {mark}{text}"


def render_text(report: Report) -> str:
    lines: list[str] = []
    for file in report.files:
        if file.error is not None:
            lines.append(error_line(file))
        lines.extend(report.line(file.path, f) for f in report.shown(file))
    lines.extend(summary_lines(report))
    return "\n".join(lines) + "\n"


def summary_lines(report: Report) -> list[str]:
    """The closing summary: files (changed ones only when something was, or would be,
    written), findings by severity and by rule, fixable (fixed) or manual, the infos
    hidden, and how to start the converted scripts."""
    s = report.summary()
    if report.converts:
        changed = f"{s['changed']} changed" if "changed" in s else f"{s['would_change']} would change"
        lines = [f"{s['files']} file(s) seen: {changed}, {s['unchanged']} unchanged, {s['failed']} failed"]
    else:  # lint writes nothing: no file changed
        lines = [f"{s['files']} file(s) checked, {s['failed']} failed"]
    done = "fixed" if report.fixes_applied else "fixable"
    if s["by_rule"]:
        lines.append(
            "findings: "
            + ", ".join(
                f"{sev} {c['fixable'] + c['manual']} ({_counts(c, done)})" for sev, c in s["by_severity"].items()
            )
        )
        lines.extend(
            f"  {code} {c['severity']:<7} {_counts(c, done):<22} {rule_of(code).name}"
            for code, c in s["by_rule"].items()
        )
    else:
        lines.append("findings: none")
    if s["hidden_info"]:
        lines.append(f"{s['hidden_info']} info(s) hidden: {done} by the tool, nothing to do (--show-info shows them)")
    lines.extend(f"to start {', '.join(paths)}: {how}" for how, paths in report.starts().items())
    return lines


def _counts(counts: dict[str, Any], done: str) -> str:
    """ "3 fixed, 1 manual", leaving out what is zero."""
    return ", ".join(f"{counts[key]} {word}" for key, word in (("fixable", done), ("manual", "manual")) if counts[key])


def render_json(report: Report) -> str:
    def fixed(x: Finding) -> bool | None:
        return (x.fixed and report.fixes_applied) if report.converts else None

    files = [
        {
            "path": f.path,
            "changed": f.changed,
            "error": f.error,
            **({"error_line": f.error_line, "error_col": f.error_col or 1} if f.error_line is not None else {}),
            "findings": [x.as_dict(report.message(x), fixed(x)) for x in report.shown(f)],
        }
        for f in report.files
    ]
    return json.dumps({"files": files, "summary": report.summary()}, indent=2) + "\n"


# SARIF result levels and GitHub workflow commands, by severity.
SARIF_LEVELS: dict[Severity, str] = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_LEVELS: dict[Severity, str] = {"error": "error", "warning": "warning", "info": "notice"}


def _level(report: Report, finding: Finding, levels: dict[Severity, str]) -> str:
    """A finding's level: its severity's, or the lowest for a fix already made."""
    return levels["info"] if finding.fixed and report.fixes_applied else levels[finding.severity]


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0, as GitHub code scanning and most CI annotators read it."""
    used = sorted({x.rule for f in report.files for x in report.shown(f)})
    rules = [
        {
            "id": code,
            "name": rule_of(code).name,
            "shortDescription": {"text": rule_of(code).summary},
            **({"fullDescription": {"text": rule_of(code).why}} if rule_of(code).why else {}),
            "defaultConfiguration": {"level": SARIF_LEVELS[rule_of(code).severity]},
        }
        for code in used
    ]
    index = {code: i for i, code in enumerate(used)}
    results = [
        {
            "ruleId": x.rule,
            "ruleIndex": index[x.rule],
            "level": _level(report, x, SARIF_LEVELS),
            "message": {"text": ("fixed: " if x.fixed and report.fixes_applied else "") + report.message(x)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": {"startLine": x.physical_line, "startColumn": x.col},
                    }
                }
            ],
            **({"properties": {"cell": x.cell, "cellLine": x.line, "cellColumn": x.col}} if x.cell is not None else {}),
        }
        for f in report.files
        for x in report.shown(f)
    ]
    errors = [
        {
            "level": "error",
            "message": {"text": error_line(f)},
            "descriptor": {"id": "file-error"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        **(
                            {"region": {"startLine": f.error_line, "startColumn": f.error_col or 1}}
                            if f.error_line is not None
                            else {}
                        ),
                    }
                }
            ],
        }
        for f in report.files
        if f.error is not None
    ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "xla-codemod",
                "version": report.tool_version,
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


def render_github(report: Report) -> str:
    """GitHub Actions workflow commands, one annotation per finding (as ruff writes
    them): ``::error title=...,file=...,line=...,col=...::path:line:col: severity: CODE message``."""
    lines: list[str] = []
    for file in report.files:
        if file.error is not None:
            where = f",line={file.error_line},col={file.error_col or 1}" if file.error_line is not None else ""
            lines.append(f"::error title=xla-codemod,file={_property(file.path)}{where}::{_data(error_line(file))}")
        for x in report.shown(file):
            properties = f"title={_property(f'xla-codemod ({x.rule})')},file={_property(file.path)},line={x.physical_line},col={x.col}"
            lines.append(f"::{_level(report, x, GITHUB_LEVELS)} {properties}::{_data(report.line(file.path, x))}")
    return "".join(line + "\n" for line in lines)


def _data(text: str) -> str:
    """Escapes of a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """Escapes of a workflow command's property value."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_markdown(report: Report) -> str:
    """A pull-request comment: per file, what the tool changed and what needs a person,
    grouped by severity."""
    done = {"write": "Changed by the tool", "lint": "Fixable with `xla-codemod convert`"}.get(
        report.mode, "Would be changed by `xla-codemod convert`"
    )
    sections: list[str] = []
    for file in report.files:
        shown = report.shown(file)
        fixed = [x for x in shown if x.fixed]
        manual = [x for x in shown if not x.fixed]
        if file.error is None and not shown and not file.changed:
            continue
        sections += [f"### `{file.path}`", ""]
        if file.error is not None:
            sections += [f"`{file.error_location}`: error: {_markdown(file.error)}", ""]
        if fixed:
            sections += [f"**{done}** ({len(fixed)}):", "", *(_markdown_item(report, x) for x in fixed), ""]
        if manual:
            sections += [f"**Needs a person** ({len(manual)}):", ""]
            for severity in SEVERITIES:
                group = [x for x in manual if x.severity == severity]
                if group:
                    sections += [f"- {severity} ({len(group)})", *(f"  {_markdown_item(report, x)}" for x in group)]
            sections.append("")
    lines = summary_lines(report)
    summary = [line.strip() + "  " for line in lines[:2] + [x for x in lines[2:] if not x.startswith("  ")]]
    return "\n".join(["## xla-codemod", "", *summary, "", *(sections or ["Nothing to change, nothing to check.", ""])])


def _markdown_item(report: Report, finding: Finding) -> str:
    where = f"line {finding.line}" if finding.cell is None else f"cell {finding.cell}, line {finding.line}"
    return f"- {where}: {finding.severity}: `{finding.rule}` {_markdown(report.message(finding))}"


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\*_[]<>#|~"})


def _markdown(text: str) -> str:
    """Text as Markdown: code spans (between backticks) as they are, markup escaped
    elsewhere; one line."""
    text = " ".join(text.split())
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code spans at all
        return text.replace("`", "\\`").translate(_MARKDOWN_SPECIAL)
    return "`".join(part if i % 2 else part.translate(_MARKDOWN_SPECIAL) for i, part in enumerate(parts))


RENDERERS = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
    "markdown": render_markdown,
}


_DIFF_COLOURS = (("+++", "\x1b[1m"), ("---", "\x1b[1m"), ("@@", "\x1b[36m"), ("+", "\x1b[32m"), ("-", "\x1b[31m"))


def coloured_diff(diff: str) -> str:
    """A unified diff in terminal colours: headers bold, hunks cyan, additions green,
    removals red."""
    out = []
    for line in diff.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        colour = next((c for prefix, c in _DIFF_COLOURS if body.startswith(prefix)), None)
        out.append(f"{colour}{body}\x1b[0m{line[len(body) :]}" if colour else line)
    return "".join(out)


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{_patch_path(path)}",
            tofile=f"b/{_patch_path(path)}",
        )
    )


@dataclass(frozen=True)
class CellChange:
    """A notebook cell the conversion changes: its 1-based number and its source before and after."""

    cell: int
    before: str
    after: str


def notebook_diff(path: str, changes: tuple[CellChange, ...]) -> str:
    """A unified diff of each changed cell's source, labelled by cell as ruff labels them
    (``a/nb.ipynb:cell 3``): for reading, not for ``git apply`` (the file is JSON)."""
    name = _patch_path(path)
    parts = []
    for change in changes:
        before = change.before.splitlines(keepends=True)
        after = change.after.splitlines(keepends=True)
        # Cells rarely end with a newline: each side's last line gets one for the diff.
        for lines in (before, after):
            if lines and not lines[-1].endswith(("\n", "\r")):
                lines[-1] += "\n"
        parts.append(
            "".join(difflib.unified_diff(before, after, f"a/{name}:cell {change.cell}", f"b/{name}:cell {change.cell}"))
        )
    return "".join(parts)


def _patch_path(path: str) -> str:
    """A path as `git apply` and `patch -p1` take it: normalised, no leading slash."""
    return posixpath.normpath(path).lstrip("/")
