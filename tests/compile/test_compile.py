"""What the torch.compile check (XLA721) must not say: rule cases assert that it fires; this
asserts that a finding it could give is absent where it would be wrong."""

from __future__ import annotations

from codemods import convert_source
from tests.support.rule_cases import case_source


def test_dynamo_optimize_with_the_openxla_backend_is_not_reported() -> None:
    findings = convert_source(case_source("dynamo-optimize")).findings
    assert [f.line for f in findings if f.rule == "XLA721"] == [4]
