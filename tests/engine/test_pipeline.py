"""The one-file pipeline: byte fidelity, quick skips, finding positions, suppression."""

from __future__ import annotations

import ast
import gc
from dataclasses import replace
from pathlib import Path

import libcst as cst
import pytest

from codemods import ConversionError, RuleSelection, convert_source
from codemods.conversion import needs_parsing
from codemods.engine.nodes import string_value
from codemods.engine.report import Finding
from codemods.pipeline import Source
from tests.support.fixtures import fixture_scripts, output_bytes, output_text
from tests.support.paths import FIXTURES

SCRIPT = (
    "# -*- coding: utf-8 -*-\n"
    "import torch  # the framework\n"
    "\n"
    "device = torch.device('cuda')   # keep this comment\n"
    "for x in batches:\n"
    "    loss = model(x.to(device)).sum()\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
)


def test_untouched_text_survives_byte_for_byte() -> None:
    output = output_text(convert_source(SCRIPT))
    assert output.startswith("# -*- coding: utf-8 -*-\nimport torch  # the framework\n")
    assert "device = torch_xla.device()   # keep this comment\n" in output
    assert "    loss = model(x.to(device)).sum()\n" in output


@pytest.mark.parametrize("newline", ["\r\n", "\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_newlines_and_bom_round_trip(newline: str, bom: bytes) -> None:
    source = bom + SCRIPT.replace("\n", newline).encode()
    output = convert_source(source).output
    assert isinstance(output, bytes)
    assert output.startswith(bom + b"# -*- coding")
    lines = output.split(b"\n")[:-1]
    assert all(line.endswith(b"\r") == (newline == "\r\n") for line in lines)
    assert convert_source(output).output == output


def test_latin1_file_keeps_its_encoding() -> None:
    source = "# -*- coding: latin-1 -*-\nimport torch\nname = 'café'\ntorch.save(m, name)\n".encode("latin-1")
    output = convert_source(source).output
    assert isinstance(output, bytes)
    assert "name = 'café'".encode("latin-1") in output
    assert b"xm.save(m, name)" in output


def test_files_without_torch_are_skipped_before_parsing() -> None:
    not_even_python = "def f(:\n    pass\n"
    assert convert_source(not_even_python).output == not_even_python
    plain = "import numpy as np\nprint(np.zeros(3).to('cuda'))\n"
    conversion = convert_source(plain)
    assert conversion.output == plain and conversion.findings == []


@pytest.mark.parametrize(
    "source",
    ["ctrl_loss = 0.0\nprint(ctrl_loss)\n", "class Robot:\n    def act(self):\n        return self.ctrl.to('cuda')\n"],
)
def test_trl_inside_another_word_does_not_get_a_file_parsed(source: str) -> None:
    assert not needs_parsing(source.encode())


@pytest.mark.parametrize(
    "source",
    [
        "from trl import SFTTrainer\n",
        "from trl.trainer import SFTConfig\n",
        "import trl\n",
        "import trl as t\n",
        "import os, trl.trainer\n",
        "try:\n    import trl\nexcept ImportError:\n    pass\n",
    ],
)
def test_an_import_of_trl_gets_a_file_parsed(source: str) -> None:
    assert needs_parsing(source.encode())


@pytest.mark.parametrize(
    ("source", "parsed"),
    [
        ("from trainer import Trainer, TrainerArgs\n", True),
        ("from trainer.trainer import Trainer\n", True),
        ("import trainer\n", True),
        ("trainer = make_trainer()\ntrainer.fit()\n", False),
        ('cells = ["from trainer import Trainer"]\n', False),
    ],
)
def test_only_an_import_of_coquis_trainer_gets_a_file_parsed(source: str, parsed: bool) -> None:
    """coqui's ``trainer`` package is XLA307's (library_apis.LIBRARY_LOOPS); the word is in countless files."""
    assert needs_parsing(source.encode()) is parsed


def test_skip_file_comment() -> None:
    source = "# xla-codemod: skip-file\n" + SCRIPT
    assert convert_source(source).output == source


def test_syntax_error_raises_with_position() -> None:
    with pytest.raises(ConversionError) as error:
        convert_source("import torch\nprint 'hello'\n")
    assert error.value.line == 2
    assert "Missing parentheses" in error.value.message


def test_findings_point_into_output_or_input() -> None:
    converted = convert_source(SCRIPT)
    lines = output_text(converted).splitlines()
    by_rule = {f.rule: f for f in converted.findings}
    barrier = by_rule["XLA301"]
    assert lines[barrier.line - 1][barrier.col - 1 :] == "torch_xla.sync()"
    step = by_rule["XLA201"]
    assert lines[step.line - 1][step.col - 1 :].startswith("xm.optimizer_step(optimizer)")

    linted = convert_source(SCRIPT, locate="input")
    input_lines = SCRIPT.splitlines()
    by_rule = {f.rule: f for f in linted.findings}
    assert input_lines[by_rule["XLA301"].line - 1].startswith("for x in batches:")
    assert input_lines[by_rule["XLA201"].line - 1][by_rule["XLA201"].col - 1 :] == "optimizer.step()"


def test_suppression_comment_silences_and_keeps_code() -> None:
    source = SCRIPT.replace("    optimizer.step()\n", "    optimizer.step()  # xla-codemod: ignore[XLA201]\n")
    conversion = convert_source(source)
    assert "optimizer.step()  # xla-codemod: ignore[XLA201]" in conversion.output
    assert "XLA201" not in {f.rule for f in conversion.findings}
    assert "torch_xla.sync()" in conversion.output


def test_disabled_rule_is_not_applied() -> None:
    conversion = convert_source(SCRIPT, selection=RuleSelection(ignore=("XLA201",)))
    assert "optimizer.step()" in conversion.output
    assert "import torch_xla.core.xla_model" not in conversion.output


def test_sagemaker_target_writes_seed_names() -> None:
    output = convert_source(SCRIPT, target="sagemaker").output
    assert "device = xm.xla_device()" in output
    assert "    xm.mark_step()\n" in output
    assert "import torch_xla\n" not in output


def test_unknown_target() -> None:
    with pytest.raises(ValueError, match="unknown target"):
        convert_source(SCRIPT, target="1.0")


# Files LibCST 1.9 does not print back exactly (issue 15): blank lines and comments
# before an oddly indented comment at the end of a file are lost, with or without a
# final newline, after module-level code or an indented block.
UNREPRODUCED = [
    "import torch\nx = torch.zeros(1)\n\n\n  # c",
    "import torch\ny = 1\n\n    # a\n  # b",
    "import torch\ndef f():\n    return 1\n    # trailing\n\n  # odd\n",
]
# Their tails: what follows the last line of code.
TAILS = ["\n\n  # c", "\n    # a\n  # b", "    # trailing\n\n  # odd\n"]


def _twins(newline: str, text: str) -> str:
    return text.replace("\n", newline)


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("source", UNREPRODUCED, ids=["blank-lines", "comment-lines", "after-a-block"])
def test_files_libcst_does_not_reproduce_come_back_byte_for_byte(source: str, newline: str) -> None:
    source = _twins(newline, source)
    assert cst.parse_module(source).code != source, "LibCST now reproduces this: codemods/engine/roundtrip.py may go"

    def comes_back(given: Source) -> None:
        conversion = convert_source(given)
        assert conversion.output == given
        assert not conversion.changed and not any(f.fixed for f in conversion.findings)
        assert convert_source(given, locate="input").output == given

    comes_back(source)
    comes_back(source.encode())


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("tail", TAILS, ids=["blank-lines", "comment-lines", "after-a-block"])
def test_fixes_before_an_unreproduced_tail_keep_it(tail: str, newline: str) -> None:
    source = _twins(newline, "import torch\ndevice = torch.device('cuda')\n" + tail)
    expected = _twins(newline, "import torch\nimport torch_xla\ndevice = torch_xla.device()\n" + tail)
    assert convert_source(source).output == expected
    assert convert_source(source.encode()).output == expected.encode()
    # Findings still point at the converted code.
    (device,) = [f for f in convert_source(source).findings if f.rule == "XLA101"]
    assert (device.line, device.col) == (3, 10)


def _order(finding: Finding) -> tuple[int, int, str]:
    return finding.line, finding.col, finding.rule


_FIXTURE_SOURCES = {path: (FIXTURES / path).read_bytes() for path in fixture_scripts()}


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("script", sorted(_FIXTURE_SOURCES), ids=str)
def test_unreproduced_tails_after_real_scripts_are_kept(script: Path, newline: bytes) -> None:
    """Each fixture comes back converted exactly as without the tail, the tail after it."""
    source = _FIXTURE_SOURCES[script].replace(b"\n", newline)
    plain = convert_source(source)
    for tail in TAILS:
        tail_bytes = tail.replace("\n", newline.decode()).encode()
        tailed = convert_source(source + tail_bytes)
        assert tailed.output == output_bytes(plain) + tail_bytes
        # A fix that removes the last statement points past the end of the plain output:
        # there, at its last line; with a tail kept in the module, at the tail's first.
        last = len(plain.output.splitlines())
        clamped = [replace(f, line=min(f.line, last)) for f in tailed.findings]
        assert sorted(clamped, key=_order) == sorted(plain.findings, key=_order)
        if not any(f.fixed for f in plain.findings):
            assert tailed.output == source + tail_bytes


@pytest.mark.parametrize(
    "source",
    ["import torch\ndevice = torch.device('cuda')\n\n\\\r\n", "import torch\ndevice = torch.device('cuda')\\\n\n\n "],
    ids=["continued-blank-line", "continuation-before-blank-lines"],
)
def test_valid_files_libcst_cannot_read_are_read_without_their_tail(source: str) -> None:
    """A backslash continuation at the end: CPython reads these, LibCST does not (or
    loses the blank lines after it)."""
    try:
        assert cst.parse_module(source).code != source
    except cst.ParserSyntaxError:
        pass
    output = output_text(convert_source(source))
    assert output.startswith("import torch\nimport torch_xla\ndevice = torch_xla.device()")
    assert output.endswith(
        source[source.index("device = torch.device('cuda')") + len("device = torch.device('cuda')") :]
    )


def test_a_file_that_cannot_come_back_exactly_is_refused() -> None:
    """Old Mac line ends (CR alone): LibCST loses lines the tail guard cannot set aside
    (the tokenizer reads the whole file as one line), so the file is left alone."""
    source = "import torch\rdevice = torch.device('cuda')\r\r\r  # c"
    assert cst.parse_module(source).code != source
    with pytest.raises(ConversionError) as error:
        convert_source(source)
    assert error.value.line == 3
    assert str(error.value) == (
        "line 3: LibCST cannot give this file back exactly from this line on; left alone so that nothing is lost"
    )


def test_a_conversion_leaves_no_cycles_for_the_garbage_collector() -> None:
    """What a file's conversion builds is freed by reference counting as soon as it is
    done (a run converts hundreds of files; collections would otherwise walk them)."""
    sources = [(FIXTURES / script).read_bytes() for script in fixture_scripts()]
    for source in sources:  # the first time, the tool's per-type tables are filled (kept, not garbage)
        convert_source(source, locate="input")
    gc.collect()
    gc.disable()
    try:
        for source in sources:
            convert_source(source, locate="input")
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "literal",
    [
        "'cuda'",
        '"cpu"',
        "''",
        "'''xla'''",
        '"""a\nb"""',
        "'a\\nb'",
        "'\\x41'",
        "r'x\\y'",
        "u'x'",
        "b'x'",
        "f'x'",
        "'\"'",
        '"\'"',
    ],
)
def test_string_values_are_read_as_python_reads_them(literal: str) -> None:
    value = ast.literal_eval(literal) if not literal.startswith("f") else None
    assert string_value(cst.parse_expression(literal)) == (value if isinstance(value, str) else None)
