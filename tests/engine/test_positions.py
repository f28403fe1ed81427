"""The lightweight start-position pass agrees with LibCST's PositionProvider."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods.analyse import analyse
from codemods.concerns import concerns_for
from codemods.engine.nodes import walk
from codemods.engine.positions import code_and_starts, code_reusing, print_back
from codemods.engine.rewriter import Context, Rewriter
from codemods.engine.rule import RuleSelection
from codemods.pipeline import _never
from codemods.targets import get_target
from tests.support.fixtures import fixture_scripts
from tests.support.paths import FIXTURES


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
    call = cst.ensure_type(cst.ensure_type(module.body[1], cst.SimpleStatementLine).body[0], cst.Assign).value
    code, starts = code_and_starts(module, {call})
    assert code == module.code
    assert starts == {call: (2, 5)}


@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_starts_found_from_their_statement_match_a_whole_print(script: Path) -> None:
    module = cst.parse_module((FIXTURES / script).read_bytes())
    expected = code_and_starts(module, None)[1]
    nodes = list(walk(module))
    for parents in (analyse(module).parents, {}):  # {}: every node found by printing the module again
        positions = print_back(module).positions(parents)
        positions.locate(nodes[::7])  # some at once, the others one by one
        for node in nodes:
            assert positions.get(node) == expected[node], type(node).__name__


def test_a_node_the_module_does_not_hold_has_no_start() -> None:
    module = cst.parse_module("x = 1\n")
    positions = print_back(module).positions({})
    assert positions.get(cst.Name("y")) is None
    assert positions.get(None) is None


@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_a_conversion_printed_reusing_kept_statements_is_printed_as_libcst_prints_it(script: Path) -> None:
    module = cst.parse_module((FIXTURES / script).read_bytes())
    before = print_back(module)
    assert before.code == module.code
    facts = analyse(module)
    ctx = Context(facts, get_target("2.9"), RuleSelection(), _never)
    converted = Rewriter(ctx, concerns_for(ctx), facts.nodes_to_visit).transform(module)
    reprinted = code_reusing(converted, before)
    assert reprinted.code == converted.code
    ast.parse(reprinted.new_parts())


def _moved_up(module: cst.Module) -> cst.Module:
    """The statements of the first ``if`` block, one level up."""
    return module.with_changes(body=[*cst.ensure_type(module.body[0], cst.If).body.body, *module.body[1:]])


def _elif_alone(module: cst.Module) -> cst.Module:
    """The ``elif`` of the first ``if``, as a statement of its own."""
    return module.with_changes(body=[cst.ensure_type(module.body[0], cst.If).orelse])


def _moved_down(module: cst.Module) -> cst.Module:
    """The first statement moved into the block of the second."""
    first, block = module.body[0], cst.ensure_type(module.body[1], cst.If)
    inner = block.body.with_changes(body=[first, *block.body.body])
    return module.with_changes(body=[block.with_changes(body=inner)])


def _import_added(module: cst.Module) -> cst.Module:
    return module.with_changes(body=[cst.parse_statement("import torch_xla\n"), *module.body])


def _call_added(module: cst.Module) -> cst.Module:
    return module.with_changes(body=[*module.body, cst.parse_statement("torch_xla.sync()\n")])


@pytest.mark.parametrize(
    ("source", "change"),
    [
        ("if cuda:\n    a = 1  # one\n\n    b = 2\nc = 3\n", _moved_up),
        ("if a:\n    x = 1\nelif b:\n    y = 2\nelse:\n    z = 3\n", _elif_alone),
        ("a = 1\nif c:\n\tb = 2\n", _moved_down),
        ("import torch\nx = 1\ny = 2", _import_added),  # no final newline
        ("import torch\nx = 1\ny = 2  # two", _call_added),
        ("import torch\r\ndef f():\r\n    return 1\r\n", _import_added),
    ],
)
def test_kept_statements_in_a_new_place_are_printed_for_it(
    source: str, change: Callable[[cst.Module], cst.Module]
) -> None:
    module = cst.parse_module(source)
    before = print_back(module)
    changed = change(module)
    reprinted = code_reusing(changed, before)
    assert reprinted.code == changed.code
    ast.parse(reprinted.new_parts())


def test_the_new_parts_keep_what_the_conversion_wrote_and_stand_pass_for_what_it_kept() -> None:
    module = cst.parse_module("import torch\n\ndef f():\n    a = 1\n    b = 2\n    return a\n\nx = f()\n")
    function = cst.ensure_type(module.body[1], cst.FunctionDef)
    # g() = 3: a target CPython refuses, on purpose.
    broken = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Call(cst.Name("g")))], cst.Integer("3"))])  # type: ignore[arg-type]
    body = function.body.with_changes(body=[function.body.body[0], broken, *function.body.body[1:]])
    changed = module.with_changes(body=[module.body[0], function.with_changes(body=body), module.body[2]])
    reprinted = code_reusing(changed, print_back(module))
    assert reprinted.code == changed.code
    assert reprinted.new_parts() == "pass\n\ndef f():\n    pass\n    g() = 3\n    pass\n    return a\n\nx = f()\n"
    with pytest.raises(SyntaxError):
        ast.parse(reprinted.new_parts())  # the new statement is checked: it does not parse


def test_the_rewrite_hands_back_the_statements_it_left_as_they_were() -> None:
    """Statements the rewrite entered (they name torch_xla) but did not change keep their
    identity, so the output takes their printed text instead of printing them again."""
    module = cst.parse_module("import torch\nimport torch_xla\n\nx = torch_xla.device()\n\n\ndef f():\n    return x\n")
    facts = analyse(module)
    assert id(module.body[2]) in facts.nodes_to_visit  # entered: it names torch_xla
    ctx = Context(facts, get_target("2.9"), RuleSelection(), _never)
    converted = Rewriter(ctx, concerns_for(ctx), facts.nodes_to_visit).transform(module)
    assert all(new is old for new, old in zip(converted.body, module.body, strict=True))


@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_fixes_are_located_in_the_output_as_a_whole_print_locates_them(script: Path) -> None:
    module = cst.parse_module((FIXTURES / script).read_bytes())
    facts = analyse(module)
    ctx = Context(facts, get_target("2.9"), RuleSelection(), _never)
    converted = Rewriter(ctx, concerns_for(ctx), facts.nodes_to_visit).transform(module)
    anchors = {f.result for f in ctx.findings if f.result is not None}
    starts = code_reusing(converted, print_back(module), anchors).starts(facts.parents)
    assert starts == code_and_starts(converted, anchors)[1]
