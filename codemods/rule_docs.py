"""Rule documentation, Fixit and ruff style: ``xla-codemod rules`` lists every rule,
``xla-codemod rules CODE`` prints one rule's page (summary, why it matters on XLA,
examples of what it flags and what the tool writes), ``--format json`` gives all of it
to tools.  The examples are checked by the test suite, so the pages cannot drift."""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict
from typing import Any

from codemods.rules import RULES, Rule, matches


def select(patterns: tuple[str, ...]) -> list[Rule]:
    """Rules by code or prefix ("XLA3"), in catalogue order; all without patterns."""
    return [rule for rule in RULES if not patterns or matches(rule.code, patterns)]


def render_list(rules: list[Rule]) -> str:
    """One line per rule: code, [*] where the tool fixes it, severity, name, summary."""
    return "".join(f"{r.code} {'[*]' if r.fixable else '   '} {r.severity:<7} {r.name:<24} {r.summary}\n" for r in rules)


def render_page(rule: Rule) -> str:
    fix = "fixed by `xla-codemod convert`" if rule.fixable else "reported, for a person to fix"
    lines = [f"{rule.code} {rule.name}", "", f"severity: {rule.severity}; {fix}", "", rule.summary + "."]
    if rule.why:
        lines += ["", "Why it matters on XLA:", *textwrap.wrap(rule.why, 88, initial_indent="  ", subsequent_indent="  ")]
    for number, example in enumerate(rule.examples, 1):
        where = f"{example.filename}, target {example.target}"
        heading = f"Example{f' {number}' if len(rule.examples) > 1 else ''} ({where})"
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
        "examples": [asdict(example) for example in rule.examples],
    }


def render_json(rules: list[Rule]) -> str:
    return json.dumps([as_dict(rule) for rule in rules], indent=2) + "\n"
