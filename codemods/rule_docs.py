"""Rule documentation, Fixit and ruff style: ``xla-codemod rules`` lists every rule,
``xla-codemod rules CODE`` prints one rule's page (summary, why it matters on XLA,
examples of what it flags and what the tool writes), ``--format json`` gives all of it
to tools, ``--format markdown`` the pages of docs/rules/ (scripts/rule_pages.py writes
them there).  The examples are checked by the test suite, and a test checks that the
pages in docs/rules/ are the ones the rule objects give, so the pages cannot drift."""

from __future__ import annotations

import difflib
import json
import re
import textwrap
from dataclasses import asdict
from typing import Any

from codemods.doctor.rules import RUNTIME
from codemods.engine.rule import matches
from codemods.rules import RULES, Example, Rule


def select(patterns: tuple[str, ...]) -> list[Rule]:
    """Rules by code or prefix ("XLA3"), in catalogue order; all without patterns."""
    return [rule for rule in RULES if not patterns or matches(rule.code, patterns)]


def render_list(rules: list[Rule]) -> str:
    """One line per rule: code, [*] where the tool fixes it, severity, name, summary."""
    return "".join(
        f"{r.code} {'[*]' if r.fixable else '   '} {r.severity:<7} {r.name:<24} {r.summary}\n" for r in rules
    )


def render_page(rule: Rule) -> str:
    fix = "fixed by `xla-codemod convert`" if rule.fixable else "reported, for a person to fix"
    lines = [f"{rule.code} {rule.name}", "", f"severity: {rule.severity}; {fix}", "", rule.summary + "."]
    if rule.why:
        lines += [
            "",
            "Why it matters on XLA:",
            *textwrap.wrap(rule.why, 88, initial_indent="  ", subsequent_indent="  "),
        ]
    for number, example in enumerate(rule.example_cases(), 1):
        where = f"{example.filename}, target {example.target}"
        heading = f"Example{f' {number}' if len(rule.example_cases()) > 1 else ''} ({where})"
        lines += ["", f"{heading}:", *_block(example.before)]
        if example.after is None:
            lines += ["", "is reported and left as it is."]
        else:
            lines += ["", "becomes:", *_block(example.after)]
    return "\n".join(lines) + "\n"


def render_pages(rules: list[Rule]) -> str:
    return "\n\n".join(render_page(rule) for rule in rules)


def _block(code: str) -> list[str]:
    return ["    " + line if line else "" for line in code.splitlines()]


def as_dict(rule: Rule) -> dict[str, Any]:
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "fixable": rule.fixable,
        "summary": rule.summary,
        "why": rule.why,
        "instead": rule.instead,
        # What an example shows (an invalid case's expected findings are for the tests).
        "examples": [
            {key: value for key, value in asdict(example).items() if key in ("before", "after", "target", "filename")}
            for example in rule.example_cases()
        ],
    }


def render_json(rules: list[Rule]) -> str:
    return json.dumps([as_dict(rule) for rule in rules], indent=2) + "\n"


# Markdown pages, one per rule, in docs/rules/ (written by scripts/rule_pages.py, checked
# by tests/docs/test_docs.py): what the rule does, why, an example, what to use instead and
# whether the tool fixes it, all from the rule objects.

RULE_PAGES = "docs/rules"
REGENERATE = "python scripts/rule_pages.py"

# Families by code prefix, in catalogue order; a code belongs to the longest prefix it has.
FAMILIES: dict[str, str] = {
    "XLA0": "Imports and notes across files",
    "XLA1": "Device",
    "XLA2": "Optimizer and mixed precision",
    "XLA3": "Step barriers and loaders",
    "XLA4": "Checkpoints",
    "XLA5": "CUDA runtime calls",
    "XLA6": "Distributed training (XLA611-XLA613: FSDP)",
    "XLA7": "Lazy mode: host syncs and recompilation (XLA72: torch.compile)",
    "XLA8": "Hugging Face, Accelerate (XLA8), Lightning and Fabric (XLA82)",
    "XLA9": "torch_xla release names",
    "XLN": "Notebooks: what they hold besides code",
    "SM1": "SageMaker model-parallel launchers",
    "SM2": "SageMaker Training Compiler launchers",
    "SM3": "Dockerfiles of SageMaker images",
    "XLD": "Doctor: what a running script does (`xla-codemod doctor`)",
}

# What a finding left as it is means, by severity.
CONSEQUENCES = {
    "error": "left as it is, the script (or the job) would crash, use the wrong device or silently change its "
    "results. `lint` and `convert` fail on it by default (`--fail-on error`).",
    "warning": "left as it is, the script runs, but slowly (recompilations, host syncs) or less safely. "
    "`--fail-on warning` fails on it.",
    "info": "left as it is, nothing changes on XLA: the code has no effect there. `--fail-on info` fails on it.",
}

_LANGUAGES = {"Dockerfile": "dockerfile"}
_FIX = "written by `xla-codemod convert`"
# Advice in a report-only rule's texts: a summary that ends in it ("...: use
# xm.set_rng_state(seed)"), sentences of its why that start with it ("Use torch.where, ...").
_ADVICE = ("use ", "save ", "keep ", "pass ", "read ", "choose ", "install ", "launch ", "remove ", "check ", "select ")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
_CLAUSE = re.compile(r"(?:^|(?<=[:;])\s+)(?=\w)")


def family_of(code: str) -> str:
    prefixes = [prefix for prefix in FAMILIES if code.startswith(prefix)]
    if not prefixes:
        raise ValueError(f"{code} is in no family: add its prefix to rule_docs.FAMILIES")
    return max(prefixes, key=len)


def render_markdown_page(rule: Rule) -> str:
    """The page of docs/rules/<CODE>.md."""
    family = family_of(rule.code)
    lines = [
        f"<!-- Generated from the rule object by `{REGENERATE}`: do not edit. -->",
        "",
        f"# {rule.code} {rule.name}",
        "",
        f"{rule.summary}.",
        "",
        f"Severity: **{rule.severity}**. Fix: {_FIX if rule.fixable else 'reported only'}."
        f" Family: [{family} {FAMILIES[family]}](README.md#{_slug(family + ' ' + FAMILIES[family])}).",
        "",
        "## Why it matters on XLA",
        "",
        rule.why,
        "",
        "## Example" if len(rule.example_cases()) == 1 else "## Examples",
    ]
    for number, example in enumerate(rule.example_cases(), 1):
        heading = _example_heading(example, number if len(rule.example_cases()) > 1 else None)
        lines += ["", heading, "", *_fenced(example, example.before)]
        if example.filename == RUNTIME:
            lines += ["", "is named by `xla-codemod doctor` while the script runs."]
        elif example.after is None:
            lines += ["", "is reported and left as it is."]
        elif rule.fixable:
            lines += ["", "becomes:", "", *_fenced(example, example.after)]
        else:
            lines += ["", "is reported; the rest of the conversion (other rules) gives:", ""]
            lines += _fenced(example, example.after)
    lines += ["", "## Use instead", "", *_instead(rule), "", "## Is the fix safe?", "", _safety(rule), ""]
    lines += [f"[All rules](README.md). `xla-codemod rules {rule.code}` prints this page in a terminal."]
    return "\n".join(lines) + "\n"


def render_markdown_index(rules: list[Rule]) -> str:
    """docs/rules/README.md: every rule by family, with its severity and whether it is fixed."""
    lines = [
        f"<!-- Generated from the rule objects by `{REGENERATE}`: do not edit. -->",
        "",
        "# Rules",
        "",
        "Every finding of `xla-codemod` names one of these rules. Severity says what happens if the finding is "
        "left as it is: **error** (the script would crash, use the wrong device or silently change its results), "
        "**warning** (it runs, but slowly: recompilations, host syncs), **info** (no effect on XLA). "
        "*Fixed* rules are rewritten by `xla-codemod convert` (`[*]` in the report); the others are reported "
        "for a person to change. `xla-codemod rules` lists them in a terminal, `xla-codemod rules CODE` prints "
        "one page, `--format json` gives all of it to tools.",
    ]
    for prefix, title in FAMILIES.items():
        members = [rule for rule in rules if family_of(rule.code) == prefix]
        if not members:
            continue
        lines += ["", f"## {prefix} {title}", ""]
        lines += ["| Code | Name | Severity | Fix | What it does |", "|---|---|---|---|---|"]
        lines += [
            f"| [{r.code}]({r.code}.md) | {r.name} | {r.severity} | {'fixed' if r.fixable else 'reported'} "
            f"| {r.summary.replace('|', chr(92) + '|')} |"
            for r in members
        ]
    return "\n".join(lines) + "\n"


def markdown_files(rules: tuple[Rule, ...] | list[Rule] = RULES) -> dict[str, str]:
    """Every file of docs/rules/, by name: the index and one page per rule."""
    return {"README.md": render_markdown_index(list(rules)), **{f"{r.code}.md": render_markdown_page(r) for r in rules}}


def render_markdown(rules: list[Rule]) -> str:
    return "\n".join(render_markdown_page(rule) for rule in rules)


def _example_heading(example: Example, number: int | None) -> str:
    label = "" if number is None else f"Example {number}, "
    if example.filename == RUNTIME:
        return f"{label}{'a' if label else 'A'} line of a running script:"
    return f"{label}`{example.filename}`, target {example.target}:"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def _fenced(example: Example, code: str, language: str | None = None) -> list[str]:
    """``code`` in a fenced block; a notebook as its cells (and its metadata, if any)."""
    if example.filename.endswith(".ipynb") and language is None:
        return _notebook(example, code)
    fence = "```"
    while fence in code:
        fence += "`"
    language = language or _LANGUAGES.get(example.filename, "python")
    return [fence + language, *code.rstrip("\n").splitlines(), fence]


def _notebook(example: Example, text: str) -> list[str]:
    notebook = json.loads(text)
    lines: list[str] = []
    for number, cell in enumerate(notebook.get("cells", []), 1):
        source = "".join(cell.get("source", []))
        kind = "python" if cell.get("cell_type") == "code" else "markdown"
        lines += [f"Cell {number} ({cell.get('cell_type')}):", "", *_fenced(example, source, kind), ""]
    if notebook.get("metadata"):
        lines += ["Notebook metadata:", "", *_fenced(example, json.dumps(notebook["metadata"], indent=1), "json"), ""]
    return lines[:-1]


def _instead(rule: Rule) -> list[str]:
    """For a fixed rule, what the tool writes in its examples (the lines its fix adds), by
    target; for a report-only rule, what it says to write instead, else the advice its
    summary ends in, else where the finding says it."""
    if not rule.fixable:
        if rule.instead:
            return [rule.instead]
        advice = _advice(rule)
        if advice:
            return [" ".join(advice)]
        return [
            "There is no one replacement the tool could write: the finding's message says, for the line it "
            "names, what is missing or what to change by hand (see *Why it matters on XLA* above)."
        ]
    written: dict[str, list[str]] = {}
    fences: dict[str, Example] = {}
    for example in rule.example_cases():
        if example.after is not None and example.after != example.before:
            added = _added_lines(example.before, example.after)
            written.setdefault(example.target, []).append(added)
            fences.setdefault(example.target, example)
    lines: list[str] = []
    for target, blocks in written.items():
        where = f" (target {target})" if len(written) > 1 else ""
        code = "\n\n".join(block for block in blocks if block)
        if code:
            lines += [f"What `xla-codemod convert` writes in the example{where}:", ""]
            lines += [*_fenced(fences[target], code), ""]
        else:
            lines += [f"Nothing{where}: `xla-codemod convert` removes it.", ""]
    return lines[:-1]


def _advice(rule: Rule) -> list[str]:
    """Sentences of advice from a report-only rule's summary and why, as sentences."""
    found = []
    summary = rule.summary.rsplit(": ", 1)[-1] if ": " in rule.summary else ""
    if summary.lower().startswith(_ADVICE):
        found.append(summary.rstrip("."))
    for sentence in _SENTENCE.split(rule.why.strip()):
        for match in _CLAUSE.finditer(sentence):
            clause = sentence[match.end() :]
            if clause.lower().startswith(_ADVICE):
                found.append(clause.rstrip("."))
                break
    return [f"{advice[0].upper()}{advice[1:]}." for advice in found]


def _added_lines(before: str, after: str) -> str:
    """The lines of ``after`` that are not in ``before``: each run of them dedented, runs
    apart by a blank line; a ``pass`` that only keeps a block whose statement went is not one."""
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    runs = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        lines = [line for line in new[j1:j2] if line.strip() and line.strip() != "pass"]
        if tag in ("insert", "replace") and lines:
            runs.append(textwrap.dedent("\n".join(lines)))
    return "\n\n".join(runs)


def _safety(rule: Rule) -> str:
    if rule.fixable:
        fix = (
            "Yes: `xla-codemod convert` writes this fix (`[*]` in the report), and only where it can follow the "
            "values involved; where it cannot, it reports the line with this code, says why, and leaves the code "
            "as it is. Review the diff (`--diff`) as you would any change."
        )
    else:
        fix = (
            "Reported only: `xla-codemod convert` leaves the code as it is for a person to change "
            "(`--annotate` marks the line with a `# TODO(xla-codemod)` comment)."
        )
    return f"{fix} Severity {rule.severity}: {CONSEQUENCES[rule.severity]}"
