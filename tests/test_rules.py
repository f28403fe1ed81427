"""Every rule on its before/after cases (tests/rule_cases.py): positive, negative and
alias cases, each also converted twice to check idempotence."""

from __future__ import annotations

import pytest

from codemods import RULES, convert_source
from codemods.doctor import rules as doctor
from codemods.rules import SEVERITIES
from tests.launcher_rule_cases import LAUNCHER_CASES, RUN_CASES
from tests.notebook_rule_cases import NOTEBOOK_CASES
from tests.rule_cases import CASES, Case

ALL_CASES = CASES + LAUNCHER_CASES + NOTEBOOK_CASES


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_rule_case(case: Case) -> None:
    conversion = convert_source(case.before, target=case.target, filename=case.filename)
    expected = case.after if case.after is not None else case.before
    assert conversion.output == expected
    fired = {f.rule for f in conversion.findings}
    if case.kind == "negative":
        assert case.rule not in fired
    else:
        assert case.rule in fired
    for line, text in case.expect:
        assert any(
            f.rule == case.rule and f.line == line and text in f.message for f in conversion.findings
        ), f"no {case.rule} finding at line {line} saying {text!r}: {conversion.findings}"
    again = convert_source(conversion.output, target=case.target, filename=case.filename)
    assert again.output == conversion.output
    assert not any(f.fixed for f in again.findings)


# XLD rules are what `xla-codemod doctor` sees at run time: tests/test_doctor*.py.
@pytest.mark.parametrize("rule", [r.code for r in RULES if not r.code.startswith(doctor.PREFIX)])
def test_every_rule_has_positive_negative_and_alias_cases(rule: str) -> None:
    kinds = {c.kind for c in ALL_CASES if c.rule == rule} | {kind for code, kind, _ in RUN_CASES if code == rule}
    assert kinds == {"positive", "negative", "alias"}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_a_severity_and_a_unique_code(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.severity in SEVERITIES
    assert [r.code for r in RULES].count(rule.code) == 1
