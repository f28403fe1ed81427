"""Rule documentation cannot drift: every rule has a why and an example, every example
runs through the part of the tool that handles its kind of file and gives the
documented output; ``xla-codemod rules CODE`` and ``--format json`` show them."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable

import pytest
from click.testing import CliRunner

from codemods import convert_source
from codemods.cli import main
from codemods.rules import RULES, RULES_BY_CODE, Example, Rule

# To be replaced by the distributed rules, which bring their own docs.
UNDOCUMENTED = {"XLA601"}
# Checks across the files of a run (an estimator against the Dockerfile of its image):
# one file's example cannot make them fire; tests/test_launchers.py runs them on whole
# runs (RUN_CASES).  Their examples must still come through the pipeline as documented.
RUN_LEVEL = {"SM308"}


def run_pipeline(example: Example) -> tuple[str, set[str]]:
    """The file pipeline, told the file's name (training scripts, launcher scripts,
    Dockerfiles): the output and the rules that fired (twice: a documented output must
    also be a fixed point)."""
    conversion = convert_source(example.before, target=example.target, filename=example.filename)
    again = convert_source(conversion.output, target=example.target, filename=example.filename)
    assert again.output == conversion.output, "the documented conversion is not idempotent"
    return conversion.output, {f.rule for f in conversion.findings}


# Which part of the tool runs an example, by its file name; first match wins.  Other
# kinds of example (runtime checks of `doctor`) add their rows.
EXAMPLE_RUNNERS: list[tuple[str, Callable[[Example], tuple[str, set[str]]]]] = [
    ("Dockerfile", run_pipeline),
    ("*.Dockerfile", run_pipeline),
    ("Dockerfile.*", run_pipeline),
    ("*.py", run_pipeline),
]


def runner_for(example: Example) -> Callable[[Example], tuple[str, set[str]]]:
    for pattern, runner in EXAMPLE_RUNNERS:
        if fnmatch.fnmatchcase(example.filename, pattern):
            return runner
    raise AssertionError(f"no runner for examples named {example.filename!r}: add one to EXAMPLE_RUNNERS")


DOCUMENTED = [rule for rule in RULES if rule.code not in UNDOCUMENTED]
EXAMPLES = [
    pytest.param(rule, example, id=f"{rule.code}-{number}")
    for rule in RULES
    for number, example in enumerate(rule.examples, 1)
]


@pytest.mark.parametrize("rule", DOCUMENTED, ids=lambda r: r.code)
def test_every_rule_says_why_and_shows_an_example(rule: Rule) -> None:
    assert rule.why.strip(), f"{rule.code} has no why"
    assert rule.examples, f"{rule.code} has no example"
    if rule.fixable:
        assert any(e.after is not None for e in rule.examples), f"{rule.code} is fixable: show the fix"


def test_the_undocumented_exceptions_still_exist() -> None:
    assert UNDOCUMENTED <= set(RULES_BY_CODE), "a rule left: take it out of UNDOCUMENTED"


@pytest.mark.parametrize(("rule", "example"), EXAMPLES)
def test_documented_example_gives_the_documented_output(rule: Rule, example: Example) -> None:
    output, fired = runner_for(example)(example)
    assert rule.code in fired or rule.code in RUN_LEVEL
    assert output == (example.after if example.after is not None else example.before)


def test_rules_code_prints_the_page() -> None:
    result = CliRunner().invoke(main, ["rules", "XLA301"])
    assert result.exit_code == 0
    page = result.output
    assert page.startswith("XLA301 training-loop-barrier\n")
    assert "severity: error; fixed by `xla-codemod convert`" in page
    assert "Why it matters on XLA:" in page and "graph grows with every step" in " ".join(page.split())
    rule = RULES_BY_CODE["XLA301"]
    assert indented(rule.examples[0].before) in page
    assert "becomes:\n" + indented(rule.examples[0].after or "") in page


def indented(code: str) -> str:
    return "\n".join("    " + line if line else "" for line in code.splitlines())


def test_rules_json_lists_every_rule_with_its_documentation() -> None:
    data = json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).output)
    assert [r["code"] for r in data] == [r.code for r in RULES]
    page = next(r for r in data if r["code"] == "XLA502")
    assert page["severity"] == "info" and page["fixable"] is True and page["why"] == RULES_BY_CODE["XLA502"].why
    assert page["examples"][1] == {
        "before": RULES_BY_CODE["XLA502"].examples[1].before, "after": None, "target": "2.9", "filename": "train.py"
    }
    family = json.loads(CliRunner().invoke(main, ["rules", "XLA4", "--format", "json"]).output)
    assert [r["code"] for r in family] == ["XLA401", "XLA402", "XLA403"]


def test_unknown_code_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["rules", "XLA3", "XLA77"])
    assert result.exit_code == 2 and "unknown rule code(s): XLA77" in result.output
