"""The README's commands stay true: CI runs the README's test command, and the example
command converts a fixture that exists."""

from __future__ import annotations

import re

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
COMMANDS = re.findall(r"```sh\n(.+?)\n```", README)


def test_readme_has_the_two_commands() -> None:
    assert len(COMMANDS) == 2
    example, tests = COMMANDS
    assert "pip install -e ." in example and "xla-codemod convert --diff fixtures/" in example
    assert (ROOT / example.rsplit(" ", 1)[-1]).is_file()
    assert "pip install -e '.[test,xla]'" in tests and tests.endswith("python -m pytest")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert COMMANDS[1] in ci.splitlines()
