"""Every rule on its own cases, read from the rule objects (codemods/*/rules.py, listed by
tests/support/rule_cases.py): its documented examples and invalid cases (positive, alias) and its
valid cases (negative), and the alias and sagemaker cases derived from them
(tests/support/derived_cases.py, ids ``...-derived-...``).  Each gives the expected output and, for an invalid case, exactly
the rule's expected findings (line, column, text of the message); a valid case gives
none; converted again, each changes nothing."""

from __future__ import annotations

import pytest

from codemods import RULES, convert_source
from codemods.engine.rule import substituted
from codemods.rules import SEVERITIES
from tests.support.derived_cases import DERIVED_CASES, _save_may_be_guarded
from tests.support.rule_cases import CASES, CHECKED_RULES, RUN_CASES, Case


@pytest.mark.parametrize("case", CASES + DERIVED_CASES, ids=lambda c: c.id)
def test_rule_case(case: Case) -> None:
    conversion = convert_source(case.before, target=case.target, filename=case.filename)
    expected = case.after if case.after is not None else case.before
    assert conversion.output == expected
    found = [f for f in conversion.findings if f.rule == case.rule]
    if case.kind == "negative":
        assert not found
    elif not case.run_level:  # a rule across the files of a run fires on the run (tests/containers/)
        assert found
    if case.expect:  # all the rule's findings: where (line, column; 0: not checked) and what
        unchecked = {e.line for e in case.expect if not e.column}  # a derived case's, on a rewritten line
        assert sorted((f.line, 0 if f.line in unchecked else f.col) for f in found) == sorted(
            (e.line, 0 if e.line in unchecked else e.column) for e in case.expect
        ), found
    for want in case.expect:
        assert any(f.line == want.line and want.column in (0, f.col) and want.message in f.message for f in found), (
            f"no {case.rule} finding at {want.line}:{want.column} saying {want.message!r}: {found}"
        )
    again = convert_source(conversion.output, target=case.target, filename=case.filename)
    assert again.output == conversion.output
    assert not any(f.fixed for f in again.findings)


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in CASES + DERIVED_CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_invalid_case_says_what_it_finds() -> None:
    """Examples and invalid cases give their findings (line, column, message), Fixit style."""
    silent = [case.id for case in CASES if case.kind != "negative" and not case.expect and not case.run_level]
    assert silent == [], "give these cases their findings"


# XLD rules are what `xla-codemod doctor` sees at run time: tests/doctor/.
@pytest.mark.parametrize("rule", [r.code for r in CHECKED_RULES])
def test_every_rule_has_positive_negative_and_alias_cases(rule: str) -> None:
    kinds = {c.kind for c in CASES + DERIVED_CASES if c.rule == rule} | {
        kind for code, kind, _ in RUN_CASES if code == rule
    }
    assert kinds == {"positive", "negative", "alias"}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_a_severity_and_a_unique_code(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.severity in SEVERITIES
    assert [r.code for r in RULES].count(rule.code) == 1


@pytest.mark.parametrize(
    ("output", "guarded"),
    [
        ("import torch_xla.core.xla_model as xm\nif rank == 0:\n    xm.save(m, p)\n", True),
        ("def f(m):\n    if rank != 0:\n        return\n    xm.save(m, p)\n", True),
        ("def f(m):\n    xm.save(m, p)\n\n\nif rank == 0:\n    f(m)\n", True),
        ("def f(m, gpu):\n    xm.save(m, p)\n    if gpu:\n        m.cuda()\n\n\nf(m, True)\n", False),
    ],
)
def test_a_save_an_if_may_guard_gives_no_sagemaker_case(output: str, guarded: bool) -> None:
    """sagemaker keeps ``torch.save`` under a rank check: a 2.9 case whose ``xm.save`` an ``if``
    may guard is not respelled for it (tests/support/derived_cases.py)."""
    assert _save_may_be_guarded(output) is guarded


def test_a_case_program_substituted_from_another_names_only_what_stands_in_it() -> None:
    """``substituted`` (how a case writes its program as another's difference) makes each change
    in turn, wherever it stands, and refuses one that does not stand in the program: a case
    would otherwise keep its base's line unnoticed."""
    base = 'x = f("cuda")\ny = g("cuda")\n'
    assert substituted(base, ('"cuda"', '"xla"'), ('g("xla")', "h()")) == 'x = f("xla")\ny = h()\n'
    with pytest.raises(ValueError, match="not in the program"):
        substituted(base, ('"cuda"', '"xla"'), ('"cuda"', '"cpu"'))
