"""What a rule is: a code, a severity, a summary, why it matters on XLA, examples, and the
cases its tests run.

Severities say what happens if the finding is left as it is: ``error`` (the converted
script would crash, use the wrong device or silently change results), ``warning`` (it
runs, but slowly: recompiles, host syncs) and ``info`` (no effect on XLA).  Users gate
commits on errors.

A rule carries its test cases, as Fixit's rules do (VALID / INVALID): ``valid`` is code it
must leave alone (no finding of the rule), ``invalid`` is code it flags, with the output the
tool writes and the findings it gives (line, column, text of the message).  Its documented
``examples`` are its first invalid cases: tests/rules/test_rules.py runs the examples and then the
other cases, each converted twice (a second run changes nothing), so the rule pages show
code that the tests run and nothing is written twice.

The examples and cases are written as ``examples=lambda: (...)``: built only when the docs
or a test ask for them (``Rule.example_cases()``, ``valid_cases()``, ``invalid_cases()``),
not each time the tool starts (building and dedenting them all cost about 5% of a run
over a small project).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

Severity = Literal["error", "warning", "info"]
StartChange = Literal["launcher", "entry point"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")  # most severe first


@dataclass(frozen=True)
class Example:
    """Code the rule flags, and what the tool makes of it (None: left as it is).
    ``filename`` says what kind of file it is (a training script, a launcher, a Dockerfile)."""

    before: str
    after: str | None = None
    target: str = "2.9"
    filename: str = "train.py"


def example(before: str, after: str | None = None, *, target: str = "2.9", filename: str = "train.py") -> Example:
    """An Example written as indented triple-quoted blocks (dedented here)."""
    return Example(_dedent(before), None if after is None else _dedent(after), target, filename)


def _dedent(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


@dataclass(frozen=True)
class Expected:
    """A finding an invalid case must give: its line (1-based, in the output) and column
    (1-based: where the construct it names starts; for code the fix rewrote or removed,
    usually where it started before the fix), and a text its message contains."""

    line: int
    column: int
    message: str


@dataclass(frozen=True)
class Invalid(Example):
    """Code the rule flags (its examples are Invalid too): ``after`` is the tool's output
    (None: left as it is), ``findings`` what the rule must say, ``alias`` marks the same
    construct reached through import aliases or another spelling, ``note`` names the case
    (the test's id).  ``target_only``: the rule flags it on its target only (what torch_xla 2.9's
    import patches), so the tests derive no case of it for the other target."""

    findings: tuple[Expected, ...] = ()
    alias: bool = False
    note: str = ""
    target_only: bool = False  # as Valid's: the other target makes something else of it (its own case)


@dataclass(frozen=True)
class Valid:
    """Code the rule must leave alone (no finding of it); ``after`` is what other rules make
    of it (None: unchanged).  ``target_only``: other rules make something else of it on the
    other target (sagemaker's torch_xla 1.13 rewrites ``torch.autocast``), so the tests derive
    no case of it for that target (tests/support/derived_cases.py)."""

    before: str
    after: str | None = None
    target: str = "2.9"
    filename: str = "train.py"
    note: str = ""
    target_only: bool = False


@dataclass(frozen=True)
class Run:
    """The files of one run (path, text), for a rule that compares files (an estimator and
    the Dockerfile of its image): valid (the rule gives nothing) or invalid (it fires)."""

    files: tuple[tuple[str, str], ...]
    alias: bool = False


def invalid(
    before: str,
    after: str | None = None,
    *,
    target: str = "2.9",
    filename: str = "train.py",
    note: str = "",
    alias: bool = False,
    findings: tuple[Expected, ...] = (),
    target_only: bool = False,
) -> Invalid:
    """An Invalid case written as indented triple-quoted blocks (dedented here)."""
    return Invalid(
        _dedent(before), None if after is None else _dedent(after), target, filename, findings, alias, note, target_only
    )


def valid(
    before: str,
    after: str | None = None,
    *,
    target: str = "2.9",
    filename: str = "train.py",
    note: str = "",
    target_only: bool = False,
) -> Valid:
    """A Valid case written as indented triple-quoted blocks (dedented here)."""
    return Valid(_dedent(before), None if after is None else _dedent(after), target, filename, note, target_only)


def substituted(program: str, *changes: tuple[str, str]) -> str:
    """``program`` with each ``(old, new)`` of ``changes`` made in turn, wherever ``old`` stands:
    a case's program written as its difference from another's (its conversion, a near variant).
    An ``old`` that does not stand in the program is an error, not a change quietly not made."""
    for old, new in changes:
        if old not in program:
            raise ValueError(f"not in the program: {old!r}")
        program = program.replace(old, new)
    return program


# The step barrier the port writes on each target: the module it imports, and the call.
BARRIERS = {
    "2.9": ("torch_xla", "torch_xla.sync()"),
    "sagemaker": ("torch_xla.core.xla_model as xm", "xm.mark_step()"),
}


def with_barrier(
    program: str,
    last: str,
    *,
    target: str = "2.9",
    indent: str | None = None,
    imported_after: str | None = "import torch\n",
    barrier: str | None = None,
) -> str:
    """``program`` as a fix that ends a loop with the step barrier leaves it: the barrier of ``target``
    (or the call ``barrier``, for an alias) after the loop's last line ``last`` (at that line's indentation,
    or ``indent``), and its module imported after the line ``imported_after`` (None: already imported)."""
    module, call = BARRIERS[target]
    at = last[: len(last) - len(last.lstrip())] if indent is None else indent
    changes = [(last, f"{last}{at}{barrier or call}\n")]
    if imported_after is not None:
        changes.insert(0, (imported_after, f"{imported_after}import {module}\n"))
    return substituted(program, *changes)


def run(*files: tuple[str, str], alias: bool = False) -> Run:
    """A Run of (path, text) files, the texts written as indented triple-quoted blocks."""
    return Run(tuple((path, _dedent(text)) for path, text in files), alias)


CaseT = TypeVar("CaseT")
# A rule's cases: a function that builds them (or, for a rule with few, the cases themselves).
Cases = Callable[[], tuple[CaseT, ...]] | tuple[CaseT, ...]


# Every rule by its code, entered when its concern's rules module makes it: a finding keeps
# its rule's code, and the report and the rule selection look the rule up here, so that the
# engine needs no catalogue (codemods/rules.py collects them in order, for the docs).
_BY_CODE: dict[str, Rule] = {}


def rule_of(code: str) -> Rule:
    """The rule with that code."""
    return _BY_CODE[code]


def _no_cases() -> tuple[()]:
    return ()


# Keyword arguments only: a rule reads as what each of its parts is (no bare `True`).
@dataclass(frozen=True, kw_only=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    fixable: bool
    why: str = ""
    # For a rule the tool only reports: what to write instead (its page's "Use instead").
    instead: str = ""
    # Its fix changes how the script is started: it writes the XLA launcher ("launcher")
    # or only the `_mp_fn(index)` entry point a launcher calls ("entry point").  The
    # report then says how to start the script for its target (Target.how_to_start).
    changes_start: StartChange | None = None
    # Documented (`xla-codemod rules CODE`): the rule's first invalid cases.  Like the other
    # cases, not compared or hashed: a rule is its code and what it says.
    examples: Cases[Example] = field(default=_no_cases, compare=False, repr=False)
    # Its other test cases.
    valid: Cases[Valid | Run] = field(default=_no_cases, compare=False, repr=False)
    invalid: Cases[Invalid | Run] = field(default=_no_cases, compare=False, repr=False)

    def __post_init__(self) -> None:
        if _BY_CODE.setdefault(self.code, self) is not self:
            raise ValueError(f"two rules have the code {self.code}")

    def example_cases(self) -> tuple[Example, ...]:
        """The documented examples."""
        return _built(self.examples)

    def valid_cases(self) -> tuple[Valid | Run, ...]:
        """Code the rule must leave alone."""
        return _built(self.valid)

    def invalid_cases(self) -> tuple[Invalid | Run, ...]:
        """Code the rule flags, but its examples."""
        return _built(self.invalid)


def _built(cases: Cases[CaseT]) -> tuple[CaseT, ...]:
    return cases if isinstance(cases, tuple) else cases()


def at_least(severity: Severity, threshold: Severity) -> bool:
    """True if ``severity`` is ``threshold`` or more severe."""
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold)


def matches(code: str, patterns: tuple[str, ...]) -> bool:
    """True if ``code`` is selected by any pattern: a full code or a prefix (XLA1, ALL)."""
    return any(p == "ALL" or code.startswith(p) for p in patterns)


@dataclass(frozen=True)
class RuleSelection:
    """Which rules are on: ``select`` prefixes (default all), minus ``ignore`` prefixes."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()

    def enabled(self, code: str) -> bool:
        return matches(code, self.select) and not matches(code, self.ignore)

    def unknown_patterns(self) -> list[str]:
        return [p for p in self.select + self.ignore if p != "ALL" and not any(code.startswith(p) for code in _BY_CODE)]
