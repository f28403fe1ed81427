"""The lightweight start-position pass agrees with LibCST's PositionProvider."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods.positions import code_and_starts
from codemods.syntax import walk
from tests.conftest import FIXTURES, fixture_scripts


@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_starts_match_position_provider(script: Path) -> None:
    source = (FIXTURES / script).read_bytes()
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    code, starts = code_and_starts(module, None)
    assert code == module.code
    assert len(starts) == len(expected)  # every node, whitespace and punctuation too
    for node in walk(module):
        start = expected[node].start
        assert starts[node] == (start.line, start.column + 1), type(node).__name__


def test_only_targets_are_recorded() -> None:
    module = cst.parse_module("import torch\r\nx = torch.zeros(2)\n")
    call = module.body[1].body[0].value  # type: ignore[attr-defined]
    code, starts = code_and_starts(module, {call})
    assert code == module.code
    assert starts == {call: (2, 5)}
