"""Rule documentation cannot drift: every rule has a why and an example, every example
runs through the part of the tool that handles its kind of file and gives the
documented output (runtime examples of `doctor` are checked on real runs elsewhere); ``xla-codemod rules CODE`` and ``--format json`` show them."""

from __future__ import annotations

import ast
import fnmatch
import json
import textwrap
from collections.abc import Callable

import pytest
from click.testing import CliRunner

from codemods import convert_source
from codemods.cli import main
from codemods.doctor.rules import RUNTIME
from codemods.rules import RULES, RULES_BY_CODE, Example, Rule

# Checks across the files of a run (an estimator against the Dockerfile of its image, a
# training script against the project module its device comes from, a function against the
# project's other files that might call it):
# one file's example cannot make them fire; tests/containers/test_dockerfiles.py runs them on whole
# runs (RUN_CASES).  Their examples must still come through the pipeline as documented.
RUN_LEVEL = {"SM308", "XLA112", "XLA120"}


def check_with_the_pipeline(rule: Rule, example: Example) -> None:
    """The file pipeline, told the file's name (training scripts, launcher scripts,
    Dockerfiles): the rule fires and the output is the documented one, a fixed point."""
    conversion = convert_source(example.before, target=example.target, filename=example.filename)
    assert rule.code in {f.rule for f in conversion.findings} or rule.code in RUN_LEVEL
    assert conversion.output == (example.after if example.after is not None else example.before)
    again = convert_source(conversion.output, target=example.target, filename=example.filename)
    assert again.output == conversion.output, "the documented conversion is not idempotent"


def check_runtime_line(rule: Rule, example: Example) -> None:
    """`doctor` examples are lines of a running script, which the doctor names (tested on
    real runs in tests/doctor/): here, that they are Python a script can hold."""
    assert example.after is None
    line = textwrap.dedent(example.before).rstrip()
    ast.parse(line + "\n    pass" if line.endswith(":") else line)  # a loop header stands with a body


# Which part of the tool checks an example, by its file name; first match wins.
EXAMPLE_CHECKS: list[tuple[str, Callable[[Rule, Example], None]]] = [
    ("Dockerfile", check_with_the_pipeline),
    ("*.Dockerfile", check_with_the_pipeline),
    ("Dockerfile.*", check_with_the_pipeline),
    ("*.py", check_with_the_pipeline),
    ("*.ipynb", check_with_the_pipeline),
    (RUNTIME, check_runtime_line),
]


def check_for(example: Example) -> Callable[[Rule, Example], None]:
    for pattern, check in EXAMPLE_CHECKS:
        if fnmatch.fnmatchcase(example.filename, pattern):
            return check
    raise AssertionError(f"no check for examples named {example.filename!r}: add one to EXAMPLE_CHECKS")


EXAMPLES = [
    pytest.param(rule, example, id=f"{rule.code}-{number}")
    for rule in RULES
    for number, example in enumerate(rule.example_cases(), 1)
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_says_why_and_shows_an_example(rule: Rule) -> None:
    assert rule.why.strip(), f"{rule.code} has no why"
    assert rule.example_cases(), f"{rule.code} has no example"
    if rule.fixable:
        assert any(e.after is not None for e in rule.example_cases()), f"{rule.code} is fixable: show the fix"


@pytest.mark.parametrize(("rule", "example"), EXAMPLES)
def test_documented_example_gives_the_documented_output(rule: Rule, example: Example) -> None:
    check_for(example)(rule, example)


def test_rules_code_prints_the_page() -> None:
    result = CliRunner().invoke(main, ["rules", "XLA301"])
    assert result.exit_code == 0
    page = result.output
    assert page.startswith("XLA301 training-loop-barrier\n")
    assert "severity: error; fixed by `xla-codemod convert`" in page
    assert "Why it matters on XLA:" in page and "graph grows with every step" in " ".join(page.split())
    rule = RULES_BY_CODE["XLA301"]
    assert indented(rule.example_cases()[0].before) in page
    assert "becomes:\n" + indented(rule.example_cases()[0].after or "") in page


def indented(code: str) -> str:
    return "\n".join("    " + line if line else "" for line in code.splitlines())


def test_rules_json_lists_every_rule_with_its_documentation() -> None:
    data = json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).output)
    assert [r["code"] for r in data] == [r.code for r in RULES]
    page = next(r for r in data if r["code"] == "XLA502")
    assert page["severity"] == "info" and page["fixable"] is True and page["why"] == RULES_BY_CODE["XLA502"].why
    assert page["examples"][1] == {
        "before": RULES_BY_CODE["XLA502"].example_cases()[1].before,
        "after": None,
        "target": "2.9",
        "filename": "train.py",
    }
    family = json.loads(CliRunner().invoke(main, ["rules", "XLA4", "--format", "json"]).output)
    assert [r["code"] for r in family] == ["XLA401", "XLA402", "XLA403", "XLA404"]


def test_unknown_code_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["rules", "XLA3", "XLA77"])
    assert result.exit_code == 2 and "unknown rule code(s): XLA77" in result.output
