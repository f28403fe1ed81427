"""No code names a rule by its code: outside the concerns' rules.py modules, a rule is the
rule object (``CUDA_DEVICE``), never the string ``"XLA101"``.  Prose that mentions codes
(messages, docstrings, comments) is fine; a string that is exactly a code is not."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from codemods.rules import RULES_BY_CODE
from tests.support.paths import ROOT

PACKAGE = ROOT / "codemods"
# What a rule code looks like, in every family (existing or not: "XLA999" is a code too).
RULE_CODE = re.compile(r"(?:XLA|XLN|XLD|SM)\d{3}")


def rule_code_literals(source: str) -> list[tuple[int, str]]:
    """The string literals of ``source`` that are exactly a rule code, with their lines."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_CODE.fullmatch(node.value)
    ]


def _is_rules_module(path: Path) -> bool:
    """Where a concern's rules are defined: codemods/<concern>/rules.py, or a module of its
    rules package (codemods/<concern>/rules/, one module per rule)."""
    if path.parent == PACKAGE:
        return False
    return path.name == "rules.py" or (path.parent.name == "rules" and path.parent.parent.parent == PACKAGE)


def test_the_code_pattern_matches_every_rule() -> None:
    assert RULES_BY_CODE
    assert [code for code in RULES_BY_CODE if not RULE_CODE.fullmatch(code)] == []


def test_the_scan_finds_codes_and_leaves_prose_alone() -> None:
    source = (
        'ctx.report("XLA101", node, "XLA101 says so")\n'
        "rules = ('SM203', f'XLD104')\n"
        '"""A docstring about XLA101 and SM3."""\n'
        "message = f'{rule} XLA2 family'\n"
    )
    assert rule_code_literals(source) == [(1, "XLA101"), (2, "SM203"), (2, "XLD104")]


def test_no_module_outside_the_rules_modules_names_a_rule_by_its_code() -> None:
    scanned = [path for path in sorted(PACKAGE.rglob("*.py")) if not _is_rules_module(path)]
    rules_modules = [path for path in PACKAGE.rglob("*.py") if _is_rules_module(path)]
    assert len(rules_modules) >= 18 and len(scanned) > 80  # the scan sees the whole package
    found = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in scanned
        for line, value in rule_code_literals(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "use the rule object from the concern's rules.py:\n" + "\n".join(found)
