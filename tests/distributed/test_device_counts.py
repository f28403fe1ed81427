"""What the device-count check (XLA602) must not say: rule cases assert that it fires; these
assert that a finding it could give is absent where it would be wrong."""

from __future__ import annotations

from codemods import convert_source
from tests.support.rule_cases import case_source


def test_a_cuda_count_the_launcher_only_logs_or_never_reads_on_xla_is_not_reported() -> None:
    """``n = torch.cuda.device_count() if torch.cuda.is_available() else 1`` is 1 on XLA, and a
    print of it is only a log line: neither is the launching process computing with 0."""
    findings = convert_source(case_source("guarded-or-logged-count")).findings
    assert [f for f in findings if f.rule == "XLA602" and "still sees 0" in f.message] == []
    assert any(f.rule == "XLA602" and f.fixed for f in findings)  # the workers re-read it


def test_a_reported_count_is_named_where_the_launcher_computes_with_it_not_where_it_is_handed_on() -> None:
    findings = convert_source(case_source("count-also-used-by-launcher")).findings
    assert [(f.line, f.col) for f in findings if "still sees 0" in f.message] == [(11, 16)]
