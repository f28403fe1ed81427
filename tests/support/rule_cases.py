"""Every rule's test cases, read from the rule objects (codemods/*/rules.py), as one list:
its documented examples and its other invalid cases (``positive``, or ``alias`` for the
same construct reached through import aliases or another spelling), then its valid cases
(``negative``: code it must leave alone).  tests/rules/test_rules.py runs them; other tests walk
them (every rule case through a part of the tool) or pick one by its note.

The cases are written once, next to their rule; this module only lists them.  The alias
cases that only rename ``import torch``, and the sagemaker cases that only respell torch_xla's
device and sync calls, are derived from the positive and negative ones, not written
(tests/support/derived_cases.py).  A rule that
compares the files of a run (SM308) has its runs in ``RUN_CASES``, run by
tests/containers/test_dockerfiles.py.  Rules of `xla-codemod doctor` (XLD) are observed at run
time and have no cases here (tests/doctor/).
"""

from __future__ import annotations

from dataclasses import dataclass

from codemods.doctor import rules as doctor
from codemods.engine.rule import Expected, Invalid, Run
from codemods.rules import RULES, Rule


@dataclass(frozen=True)
class Case:
    rule: str
    kind: str  # "positive" | "negative" | "alias"
    before: str
    after: str | None = None  # the expected conversion; None: the code comes back unchanged
    target: str = "2.9"
    note: str = ""
    filename: str = "train.py"  # what kind of file (a launcher, a Dockerfile, a notebook)
    # Findings of ``rule`` the case must give: line (in the output), column, text in the message.
    expect: tuple[Expected, ...] = ()
    # The rule compares the files of a run: one file alone need not make it fire.
    run_level: bool = False
    # Another target makes something else of the code: no case is derived for it.
    target_only: bool = False

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.kind}-{self.note or 'case'}"


def is_run_level(rule: Rule) -> bool:
    return any(isinstance(case, Run) for case in (*rule.valid_cases(), *rule.invalid_cases()))


def cases_of(rule: Rule) -> list[Case]:
    """The rule's examples (notes ``example-N``), its other invalid cases, its valid cases."""
    run_level = is_run_level(rule)
    found = [
        Case(
            rule.code,
            "positive",
            e.before,
            e.after,
            e.target,
            f"example-{n}",
            e.filename,
            e.findings if isinstance(e, Invalid) else (),
            run_level,
        )
        for n, e in enumerate(rule.example_cases(), 1)
    ]
    found += [
        Case(
            rule.code,
            "alias" if c.alias else "positive",
            c.before,
            c.after,
            c.target,
            c.note,
            c.filename,
            c.findings,
            run_level,
            c.target_only,
        )
        for c in rule.invalid_cases()
        if isinstance(c, Invalid)
    ]
    found += [
        Case(rule.code, "negative", c.before, c.after, c.target, c.note, c.filename, (), run_level, c.target_only)
        for c in rule.valid_cases()
        if not isinstance(c, Run)
    ]
    return found


CHECKED_RULES = [rule for rule in RULES if not rule.code.startswith(doctor.PREFIX)]
CASES = [case for rule in CHECKED_RULES for case in cases_of(rule)]

# (rule, kind, files: path -> text) for the rules that compare the files of a run.
RUN_CASES = [
    (rule.code, kind, dict(case.files))
    for rule in CHECKED_RULES
    for kind, cases in (("positive", rule.invalid_cases()), ("negative", rule.valid_cases()))
    for case in cases
    if isinstance(case, Run)
    for kind in ["alias" if case.alias else kind]
]


def case_source(note: str) -> str:
    """The code of the rule case with this note."""
    return next(case.before for case in CASES if case.note == note)
