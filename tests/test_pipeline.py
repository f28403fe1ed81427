"""The one-file pipeline: byte fidelity, quick skips, finding positions, suppression."""

from __future__ import annotations

import pytest

from codemods import ConversionError, RuleSelection, convert_source

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
    output = convert_source(SCRIPT).output
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
    lines = converted.output.splitlines()
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
