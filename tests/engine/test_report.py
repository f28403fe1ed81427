"""Every report format, produced by the command line and parsed back: JSON, SARIF,
GitHub workflow commands and Markdown (with a CommonMark parser); severities and
levels agree; the text report closes with its summary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from codemods.cli import main
from codemods.engine.report import (
    GITHUB_LEVELS,
    SARIF_LEVELS,
    FileReport,
    Finding,
    Report,
    render_github,
    render_markdown,
)
from codemods.rules import RULES_BY_CODE
from tests.support.reports import parse_github

SOURCE = """\
import torch

device = torch.device("cuda")
name = torch.cuda.get_device_name(0)
if name.startswith("A100") and device.is_cuda:
    torch.cuda.manual_seed(1)
print(torch.cuda.memory_allocated())
"""
# XLA101 (fixed), XLA001 (fixed); XLA506 error, XLA105 warning, XLA505 warning, XLA503 info.
MANUAL = {"XLA506": "error", "XLA105": "warning", "XLA505": "warning", "XLA503": "info"}


def report(*args: str, cwd: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--report", "-", str(cwd / "train.py")], catch_exceptions=False)
    return result.exit_code, result.stdout


@pytest.fixture
def script(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(SOURCE)
    return tmp_path


def test_json_findings_carry_their_rules_severity(script: Path) -> None:
    _, output = report("lint", "--format", "json", cwd=script)
    (file,) = json.loads(output)["files"]
    manual = {f["rule"]: f["severity"] for f in file["findings"] if not f["fixable"]}
    assert manual == MANUAL
    assert all(f["severity"] == RULES_BY_CODE[f["rule"]].severity for f in file["findings"])


def test_sarif_levels_follow_severity_and_applied_fixes_are_notes(script: Path) -> None:
    _, lint = report("lint", "--format", "sarif", cwd=script)
    run = json.loads(lint)["runs"][0]
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels == {code: SARIF_LEVELS[RULES_BY_CODE[code].severity] for code in levels}
    assert levels["XLA101"] == "error" and levels["XLA105"] == "warning" and levels["XLA503"] == "note"
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["XLA506"]["defaultConfiguration"] == {"level": "error"}
    _, written = report("convert", "--format", "sarif", cwd=script)
    results = json.loads(written)["runs"][0]["results"]
    fixed = [r for r in results if r["message"]["text"].startswith("fixed: ")]
    assert fixed and all(r["level"] == "note" for r in fixed)
    assert {r["ruleId"]: r["level"] for r in results if r not in fixed}["XLA506"] == "error"


def test_github_annotations_one_per_finding(script: Path) -> None:
    exit_code, output = report("lint", "--format", "github", cwd=script)
    assert exit_code == 1
    commands = parse_github(output)
    path = str(script / "train.py")
    by_rule = {c["title"]: c for c in commands}
    # No notice for the import the fix adds: an info that asks nothing of anyone.
    assert len(commands) == 5 and set(by_rule) == {f"xla-codemod ({code})" for code in [*MANUAL, "XLA101"]}
    crash = by_rule["xla-codemod (XLA506)"]
    assert crash["level"] == "error" and crash["file"] == path and (crash["line"], crash["col"]) == ("4", "8")
    assert crash["message"].startswith(f"{path}:4:8: error: XLA506 `torch.cuda.get_device_name` is CUDA-only")
    assert by_rule["xla-codemod (XLA101)"]["message"].endswith(
        'XLA101 [*] would replace torch.device("cuda") with torch_xla.device()'
    )
    assert {c["title"][-7:-1]: c["level"] for c in commands} == {
        code: GITHUB_LEVELS[RULES_BY_CODE[code].severity] for code in [*MANUAL, "XLA101"]
    }
    # After an in-place convert, what was fixed is a notice.
    _, written = report("convert", "--format", "github", cwd=script)
    levels = {c["title"][-7:-1]: c["level"] for c in parse_github(written)}
    assert levels["XLA101"] == "notice" and levels["XLA506"] == "error"


def test_github_escapes_what_would_break_a_command() -> None:
    finding = Finding("XLA506", 3, 1, "100% of a, b: c\nd", False)
    output = render_github(Report([FileReport("odd,dir:x%.py", findings=[finding])], "lint"))
    (command,) = parse_github(output)
    assert command["file"] == "odd,dir:x%.py"
    assert command["message"] == "odd,dir:x%.py:3:1: error: XLA506 100% of a, b: c\nd"
    assert "\n" not in output.rstrip("\n")


def _inline_texts(tokens) -> list[str]:  # type: ignore[no-untyped-def]
    """Each inline element's text, code spans marked with backticks."""
    texts = []
    for token in tokens:
        if token.type == "inline":
            texts.append("".join(f"`{c.content}`" if c.type == "code_inline" else c.content for c in token.children))
    return texts


def test_markdown_groups_what_needs_a_person_by_severity(script: Path) -> None:
    _, output = report("convert", "--check", "--format", "markdown", cwd=script)
    tokens = MarkdownIt().parse(output)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["xla-codemod", f"`{script / 'train.py'}`"]
    texts = _inline_texts(tokens)
    assert "**Would be changed by `xla-codemod convert`** (2):" not in texts  # bold is markup, not text
    strong = [
        t.children
        for t in tokens
        if t.type == "inline" and t.children and any(c.type == "strong_open" for c in t.children)
    ]
    assert [children[2].content for children in strong] == ["Would be changed by ", "Needs a person"]
    groups = [t for t in texts if re.fullmatch(r"(error|warning|info) \(\d+\)", t)]
    assert groups == ["error (1)", "warning (2)", "info (1)"]
    error_at = texts.index("error (1)")
    assert texts[error_at + 1].startswith("line 4: error: `XLA506` `torch.cuda.get_device_name` is CUDA-only")
    assert texts[texts.index("info (1)") + 1].startswith("line 7: info: `XLA503`")
    assert any(t.startswith("line 3: error: `XLA101` would replace torch.device(") for t in texts)
    assert texts[1].startswith("1 file(s) seen: 1 would change, 0 unchanged, 0 failed")


def test_markdown_keeps_messages_literal() -> None:
    finding = Finding("XLA506", 2, 1, "`f(**kwargs)` uses **kwargs and <html> | pipes_with_underscores_", False)
    tokens = MarkdownIt().parse(render_markdown(Report([FileReport("a.py", findings=[finding])], "lint")))
    assert "line 2: error: `XLA506` `f(**kwargs)` uses **kwargs and <html> | pipes_with_underscores_" in _inline_texts(
        tokens
    )


def test_markdown_of_a_clean_run_says_so(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\n")
    _, output = report("lint", "--format", "markdown", cwd=tmp_path)
    assert "Nothing to change, nothing to check." in _inline_texts(MarkdownIt().parse(output))


def test_text_summary_by_severity_and_rule(script: Path) -> None:
    _, output = report("lint", cwd=script)
    summary = output.splitlines()[-8:]
    assert summary[0] == "1 file(s) checked, 0 failed"
    assert summary[1] == "findings: error 2 (1 fixable, 1 manual), warning 2 (2 manual), info 1 (1 manual)"
    assert summary[2].split() == ["XLA101", "error", "1", "fixable", "cuda-device"]
    assert summary[3].split() == ["XLA506", "error", "1", "manual", "cuda-api"]
    assert [line.split()[0] for line in summary[4:7]] == ["XLA105", "XLA505", "XLA503"]
    assert summary[7] == "1 info(s) hidden: fixable by the tool, nothing to do (--show-info shows them)"
    _, shown = report("lint", "--show-info", cwd=script)
    assert "info 2 (1 fixable, 1 manual)" in shown and "hidden" not in shown
    _, written = report("convert", cwd=script)
    assert written.splitlines()[-8:][:2] == [
        "1 file(s) seen: 1 changed, 0 unchanged, 0 failed",
        "findings: error 2 (1 fixed, 1 manual), warning 2 (2 manual), info 1 (1 manual)",
    ]


BROKEN = "import torch\n\ndef f(:\n    pass\n"


@pytest.mark.parametrize("command", ["lint", "convert"])
def test_an_error_about_a_file_has_its_position_in_every_format(tmp_path: Path, command: str) -> None:
    """`path:line:col: error: message`, as a finding's line, in each format."""
    (tmp_path / "train.py").write_text(BROKEN)
    path = str(tmp_path / "train.py")
    line = f"{path}:3:7: error: cannot parse: invalid syntax"
    code, text = report(command, cwd=tmp_path)
    assert code == 2 and text.splitlines()[0] == line
    (file,) = json.loads(report(command, "--format", "json", cwd=tmp_path)[1])["files"]
    assert (file["error"], file["error_line"], file["error_col"]) == ("cannot parse: invalid syntax", 3, 7)
    (github,) = parse_github(report(command, "--format", "github", cwd=tmp_path)[1])
    assert (github["level"], github["line"], github["col"], github["message"]) == ("error", "3", "7", line)
    run = json.loads(report(command, "--format", "sarif", cwd=tmp_path)[1])["runs"][0]
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["message"]["text"] == line
    assert notification["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 7}
    markdown = _inline_texts(MarkdownIt().parse(report(command, "--format", "markdown", cwd=tmp_path)[1]))
    assert f"`{path}:3:7`: error: cannot parse: invalid syntax" in markdown
    (tmp_path / "train.py").write_bytes(b"\x7fELF\x00")
    unreadable = report(command, cwd=tmp_path)[1].splitlines()[0]
    assert unreadable == f"{path}:1:1: error: binary file (it holds NUL bytes), not Python source"
