"""Lazy-mode and Hugging Face rules beyond their rule cases: the examples each rule
shows (``xla-codemod rules``) convert as they say, and lint on an already-ported
script names every sync point and recompilation source at its own line."""

from __future__ import annotations

import pytest

from codemods import RULES, convert_source
from tests.support.fixtures import output_text
from tests.support.paths import FIXTURES

FAMILIES = ("XLA7", "XLA8")


@pytest.mark.parametrize("rule", [r for r in RULES if r.code.startswith(FAMILIES)], ids=lambda r: r.code)
def test_rule_examples_convert_as_shown(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.why and rule.example_cases()
    for example in rule.example_cases():
        conversion = convert_source(example.before, target=example.target)
        assert rule.code in {f.rule for f in conversion.findings}, conversion.findings
        assert conversion.output == (example.before if example.after is None else example.after)


def _line_of(source: str, text: str) -> int:
    return next(i + 1 for i, line in enumerate(source.splitlines()) if text in line)


def test_lint_on_ported_code_names_every_sync_point_and_recompilation_source() -> None:
    """The already-ported fixture: device loader, xm.optimizer_step, no CUDA left; lint
    still names each host read and recompilation source at its line.  They are warnings
    (the script runs, slowly): lint fails on them when asked to, and not by default."""
    from click.testing import CliRunner

    from codemods.cli import main

    path = FIXTURES / "lazy_already_ported.py"
    source = path.read_text()
    assert CliRunner().invoke(main, ["lint", str(path)]).exit_code == 0
    result = CliRunner().invoke(main, ["lint", "--fail-on", "warning", str(path)])
    assert result.exit_code == 1, result.output
    expected = {
        ("XLA711", "series[step * 8"),  # device data sliced at the step's offset
        ("XLA714", "loader = DataLoader("),  # short last batch
        ("XLA713", "confident = logits["),  # boolean-mask indexing
        ("XLA702", "total += loss.item()"),  # accumulation on the host
        ("XLA703", "if loss < best:"),  # control flow on a device value
        ("XLA701", 'print(f"step {step}'),  # logging-only read
    }
    # path:line:col: severity: CODE ...
    found = {
        (line.split()[2], int(line.split(":")[1])) for line in result.output.splitlines() if line.startswith(str(path))
    }
    for rule, text in expected:
        assert (rule, _line_of(source, text)) in found, (rule, text, result.output)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("script", ["hf_trainer_code_args.py", "hf_trainer_argparser.py"])
def test_trainer_scripts_get_the_xla_optimizer_for_both_targets(script: str, target: str) -> None:
    output = output_text(convert_source((FIXTURES / script).read_text(), target=target))
    assert '"adamw_torch_xla"' in output
    assert "def _mp_fn(index):\n    main()\n" in output
    assert "torch_xla" not in output.replace("adamw_torch_xla", "")  # the Trainer does the rest


def test_rules_lists_the_lazy_mode_and_hugging_face_families() -> None:
    from click.testing import CliRunner

    from codemods.cli import main

    listing = CliRunner().invoke(main, ["rules"]).output
    for rule in RULES:
        if rule.code.startswith(FAMILIES):
            assert rule.code in listing and rule.summary in listing
