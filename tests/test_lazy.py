"""Lazy-mode and Hugging Face rules beyond their rule cases: the examples each rule
shows (``xla-codemod rules``) convert as they say, and lint on an already-ported
script names every sync point and recompilation source at its own line."""

from __future__ import annotations

import pytest

from codemods import RULES, convert_source
from tests.conftest import FIXTURES

FAMILIES = ("XLA7", "XLA8")


@pytest.mark.parametrize("rule", [r for r in RULES if r.code.startswith(FAMILIES)], ids=lambda r: r.code)
def test_rule_examples_convert_as_shown(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.why and rule.examples
    for example in rule.examples:
        conversion = convert_source(example.before, target=example.target)
        assert rule.code in {f.rule for f in conversion.findings}, conversion.findings
        assert conversion.output == (example.before if example.after is None else example.after)
