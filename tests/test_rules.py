"""Every rule on its own cases, read from the rule objects (codemods/*/rules.py, listed by
tests/rule_cases.py): its documented examples and invalid cases (positive, alias) and its
valid cases (negative).  Each gives the expected output, the rule's findings where it
says (line, column, text of the message), and converted again changes nothing."""

from __future__ import annotations

import pytest

from codemods import RULES, convert_source
from codemods.engine.rule import Invalid
from codemods.rules import RULES_BY_CODE, SEVERITIES, Rule
from tests.rule_cases import CASES, CHECKED_RULES, RUN_CASES, Case, is_run_level


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_case(case: Case) -> None:
    conversion = convert_source(case.before, target=case.target, filename=case.filename)
    expected = case.after if case.after is not None else case.before
    assert conversion.output == expected
    fired = {f.rule for f in conversion.findings}
    if case.kind == "negative":
        assert case.rule not in fired
    elif not case.run_level:  # a rule across the files of a run fires on the run (tests/test_launchers.py)
        assert case.rule in fired
    for want in case.expect:
        assert any(
            f.rule == case.rule and f.line == want.line and f.col == want.column and want.message in f.message
            for f in conversion.findings
        ), f"no {case.rule} finding at {want.line}:{want.column} saying {want.message!r}: {conversion.findings}"
    again = convert_source(conversion.output, target=case.target, filename=case.filename)
    assert again.output == conversion.output
    assert not any(f.fixed for f in again.findings)


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


# The example's finding is at the wrong line (test below): its position is not asserted until it is right.
WRONG_POSITION = {"XLA211"}


@pytest.mark.parametrize("rule", CHECKED_RULES, ids=lambda r: r.code)
def test_every_documented_example_says_what_it_finds(rule: Rule) -> None:
    """The page's examples are invalid cases with their findings (line, column, message)."""
    if is_run_level(rule) or rule.code in WRONG_POSITION:
        return
    for example in rule.examples:
        assert isinstance(example, Invalid) and example.findings, f"{rule.code}: give the example its findings"


@pytest.mark.xfail(strict=True, reason="positions: a decorator right after an inserted import is reported at the "
                   "import's line (2) instead of its own (3)")
def test_a_decorator_after_an_inserted_import_is_reported_at_its_own_line() -> None:
    conversion = convert_source(RULES_BY_CODE["XLA211"].examples[0].before)
    assert conversion.output.splitlines()[2] == '@torch.amp.custom_fwd(device_type="xla")'
    assert [(f.line, f.col) for f in conversion.findings if f.rule == "XLA211"] == [(3, 2)]


# XLD rules are what `xla-codemod doctor` sees at run time: tests/test_doctor*.py.
@pytest.mark.parametrize("rule", [r.code for r in CHECKED_RULES])
def test_every_rule_has_positive_negative_and_alias_cases(rule: str) -> None:
    kinds = {c.kind for c in CASES if c.rule == rule} | {kind for code, kind, _ in RUN_CASES if code == rule}
    assert kinds == {"positive", "negative", "alias"}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_a_severity_and_a_unique_code(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.severity in SEVERITIES
    assert [r.code for r in RULES].count(rule.code) == 1
