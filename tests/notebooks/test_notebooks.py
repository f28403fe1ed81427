"""Jupyter notebooks: the code cells ported as one program, each rewrite in its own cell,
IPython lines and everything the port does not change given back byte for byte.

The notebooks are made with nbformat's API (tests/support/notebooks.py) and written as
Jupyter writes them (nbformat.writes: indent 1, sorted keys, non-ASCII as is), with outputs
and execution counts, so that what "untouched" means is Jupyter's own serialisation."""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from codemods import ConversionError, RuleSelection, convert_source
from codemods.cli import main
from codemods.engine.report import Finding
from tests.support.cli import LOADED_MODULES
from tests.support.fixtures import fixture_project, fixture_scripts, output_bytes, output_text
from tests.support.notebooks import DEVICE_CELL, LOOP_CELL, MODEL_CELL, notebook, sources
from tests.support.paths import FIXTURES

# IPython lines of every kind, and Python lines that only look like them.
MAGIC_CELL = (
    "%matplotlib inline\n"
    "!nvidia-smi\n"
    "files = !ls -1\n"
    "%time total = sum(range(10))\n"
    "model?\n"
    "?torch.randn\n"
    "remainder = (10\n"
    "             % 3)\n"
    "text = '''\n"
    "!this line is text\n"
    "'''\n"
    "if files:\n"
    "    !echo continued \\\n"
    "        over two lines\n"
    "    %env FOO=1"
)
TIMED_LOOP_CELL = "%%time\n" + LOOP_CELL.replace(
    "opt.step()", "opt.step()\n    print(f'step {step} loss {loss.item()}')"
)
BASH_CELL = "%%bash\necho $HOME\ntorch.save(x, 'y')"
SAVE_CELL = "torch.save(model.state_dict(), 'model.pt')  # é, 保存"

SYNC = {"2.9": "torch_xla.sync()", "sagemaker": "xm.mark_step()"}
DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}


def jupyter_writes(text: str, new_sources: dict[int, str]) -> str:
    """What Jupyter writes for ``text`` with the sources of the cells at these 0-based
    indexes replaced: the only bytes a conversion may change."""
    data = json.loads(text)
    for index, source in new_sources.items():
        data["cells"][index]["source"] = source.splitlines(True)
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def convert(text: str, target: str = "2.9", **options: object) -> tuple[str, list[Finding]]:
    conversion = convert_source(text.encode(), filename="nb.ipynb", target=target, **options)  # type: ignore[arg-type]
    return output_bytes(conversion).decode(), conversion.findings


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_device_and_loop_in_different_cells_are_one_program(target: str) -> None:
    """The device of cell 3 is the loop's device in cell 5: the loop gets its barrier and
    its optimizer step, each rewrite in its own cell; the imports go into the first cell
    that imports torch (after the !pip cell), once; the other cells and every output are
    Jupyter's bytes; a second run changes nothing."""
    text = notebook("!pip install -q numpy", DEVICE_CELL, MODEL_CELL, LOOP_CELL, "print('done')")
    output, findings = convert(text, target)
    cells = sources(output)
    assert cells[1] == "!pip install -q numpy"
    assert "import torch_xla.core.xla_model as xm\n" in cells[2]
    assert cells[2].index("import torch.nn as nn") < cells[2].index("import torch_xla")
    assert f"device = {DEVICE[target]}" in cells[2]
    assert cells[3] == MODEL_CELL
    assert "xm.optimizer_step(opt)" in cells[4] and cells[4].endswith("    " + SYNC[target])
    assert sum(c.count("import torch_xla.core.xla_model as xm") for c in cells) == 1
    assert output == jupyter_writes(text, {2: cells[2], 4: cells[4]})
    again, _ = convert(output, target)
    assert again == output
    by_rule = {f.rule: f for f in findings}
    assert (by_rule["XLA101"].cell, by_rule["XLA201"].cell, by_rule["XLA301"].cell) == (3, 5, 5)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_device_chain_in_one_cell_is_the_xla_device_of_the_later_cells_in_the_first_run(target: str) -> None:
    """``if cuda: ... elif mps: ... else: cpu`` in one cell, which the port folds to the XLA
    device: an optimizer built in a later cell before another cell moves the model is fixed
    in the first run (a second run finds nothing more), and a model built anew before the
    move leaves the first model's optimizer alone."""
    chain = (
        "import torch\n"
        "if torch.cuda.is_available():\n"
        "    device = torch.device('cuda')\n"
        "elif torch.backends.mps.is_available():\n"
        "    device = torch.device('mps')\n"
        "else:\n"
        "    device = torch.device('cpu')\n"
        "model = torch.nn.Linear(4, 2)"
    )
    optimizer = "opt = torch.optim.AdamW(model.parameters())"
    for move, fixed in (("model.to(device)", True), ("model = torch.nn.Linear(4, 2)\nmodel.to(device)", False)):
        output, findings = convert(notebook(chain, optimizer, move), target)
        assert (f"model.to({DEVICE[target]}).parameters()" in sources(output)[2]) is fixed
        assert [f.rule for f in findings if f.rule == "XLA203"] == (["XLA203"] if fixed else [])
        again, _ = convert(output, target)
        assert again == output


def test_findings_point_into_the_cell_of_the_input_or_of_the_output() -> None:
    text = notebook("!pip install -q numpy", DEVICE_CELL, MODEL_CELL, LOOP_CELL)
    _, written = convert(text)
    _, read = convert(text, locate="input")
    position = {(f.rule, f.cell, f.line, f.col) for f in read}
    assert ("XLA101", 3, 4, 10) in position  # device = torch.device(...) in the input
    assert ("XLA201", 5, 6, 5) in position
    written_positions = {(f.rule, f.cell, f.line) for f in written}
    assert ("XLA101", 3, 6) in written_positions  # two import lines above it now
    assert {("XLA001", 3, 3), ("XLA001", 3, 4)} <= written_positions


def test_ipython_lines_come_back_exactly_and_python_around_them_is_ported() -> None:
    text = notebook(DEVICE_CELL, MODEL_CELL, MAGIC_CELL, TIMED_LOOP_CELL, BASH_CELL, SAVE_CELL)
    output, findings = convert(text)
    cells = sources(output)
    assert cells[3] == MAGIC_CELL
    assert cells[4].startswith("%%time\nfor step in range(10):\n") and "xm.optimizer_step(opt)" in cells[4]
    assert "xm.add_step_closure(" in cells[4]
    assert cells[5] == BASH_CELL  # another language: left alone, its torch.save too
    assert cells[6] == "xm.save(model.state_dict(), 'model.pt')  # é, 保存"
    assert output == jupyter_writes(text, {1: cells[1], 4: cells[4], 6: cells[6]})
    assert "保存" in output  # non-ASCII written as is, as Jupyter writes it
    assert convert(output)[0] == output


def test_a_cell_the_port_does_not_touch_keeps_its_layout_whatever_it_is(tmp_path: Path) -> None:
    """A notebook written by another tool (indent 2, keys unsorted, sources as one
    string, no final newline): only the changed cell's source lines differ."""
    data = json.loads(notebook(DEVICE_CELL, MODEL_CELL, LOOP_CELL))
    data["cells"][3]["source"] = LOOP_CELL  # one string
    data = {"nbformat_minor": data["nbformat_minor"], **data}
    text = json.dumps(data, indent=2)
    output, _ = convert(text)
    removed = [line for line in difflib.ndiff(text.splitlines(), output.splitlines()) if line.startswith("- ")]
    bodies = [line[2:].strip().rstrip(",") for line in removed]
    assert bodies and all(body.startswith('"source": ') or isinstance(json.loads(body), str) for body in bodies), (
        removed
    )
    assert json.loads(output)["cells"][3]["source"].startswith("for step in range(10):")
    assert not output.endswith("\n") and list(json.loads(output)) == list(data)
    assert convert(output)[0] == output


def test_crlf_layout_and_byte_order_mark_are_kept() -> None:
    """A notebook checked out with CRLF line ends (git's autocrlf), or saved with a BOM."""
    text = notebook("!pip install -q numpy", DEVICE_CELL, MODEL_CELL, LOOP_CELL)
    lf, _ = convert(text)
    assert lf != text
    crlf = convert_source(text.replace("\n", "\r\n").encode(), filename="nb.ipynb").output
    assert crlf == lf.replace("\n", "\r\n").encode()
    assert convert_source(b"\xef\xbb\xbf" + text.encode(), filename="nb.ipynb").output == b"\xef\xbb\xbf" + lf.encode()


def test_a_notebook_written_with_ascii_escapes_keeps_them_in_the_changed_cell() -> None:
    data = json.loads(notebook(DEVICE_CELL + "  # é"))
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"  # ensure_ascii: é is \u00e9
    output, _ = convert(text)
    assert output.isascii() and '"print(device)  # \\u00e9"' in output
    assert output == json.dumps(json.loads(output), indent=1, sort_keys=True) + "\n"


def test_annotate_writes_todos_into_their_cells_once() -> None:
    loop = LOOP_CELL + "\n    value = loss.item()\n    print(value)"
    output, findings = convert(notebook("!pip install -q numpy", DEVICE_CELL, MODEL_CELL, loop), annotate=True)
    cell = sources(output)[4]
    assert "    # TODO(xla-codemod): XLA702" in cell and "xm.optimizer_step(opt)" in cell
    todo = next(f for f in findings if f.rule == "XLA702")
    assert todo.cell == 5 and cell.splitlines()[todo.line - 1].strip() == "value = loss.item()"
    assert convert(output, annotate=True)[0] == output


def test_suppression_comment_in_a_cell() -> None:
    cell = DEVICE_CELL.replace("else 'cpu')", "else 'cpu')  # xla-codemod: ignore[XLA101]")
    output, findings = convert(notebook(cell))
    assert sources(output)[1] == cell and not any(f.rule == "XLA101" for f in findings)


SCRIPT = (
    "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n"
    "for step in range(3):\n    model(torch.randn(4, 2).cuda()).sum().backward()\n    opt.step()\n"
)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_writefile_cell_of_a_training_script_is_ported_as_that_script(target: str) -> None:
    """The script a %%writefile cell writes is ported as the file itself would be, below the
    magic line; the notebook's own program does not see it (it is not run in the kernel)."""
    text = notebook("%%writefile train.py\n" + SCRIPT, "%%writefile notes.txt\n" + SCRIPT, "!python train.py")
    output, findings = convert(text, target)
    cells = sources(output)
    assert cells[1] == "%%writefile train.py\n" + output_text(
        convert_source(SCRIPT, target=target, filename="train.py")
    )
    assert f"    {SYNC[target]}" in cells[1] and cells[2:] == sources(text)[2:]
    assert output == jupyter_writes(text, {1: cells[1]})
    line_of = {f.rule: f.line for f in findings if f.cell == 2}
    assert cells[1].splitlines()[line_of["XLA201"] - 1] == "    xm.optimizer_step(opt)"
    read = {(f.rule, f.cell, f.line) for f in convert(text, target, locate="input")[1]}
    assert {("XLA102", 2, 4), ("XLA201", 2, 8)} <= read  # the script's lines, one below the magic line
    assert convert(output, target)[0] == output


def test_writefile_cell_that_cannot_be_ported_is_reported_and_left_alone() -> None:
    broken = "%%writefile train.py\n" + SCRIPT + "print 'done'\n"
    appended = "%%writefile -a train.py\n" + SCRIPT
    text = notebook(broken, appended, "!python train.py")
    output, findings = convert(text)
    assert output == text
    assert [(f.rule, f.cell, f.line) for f in findings] == [("XLN103", 2, 1), ("XLN103", 3, 1)]
    assert "line 9: cannot parse: Missing parentheses in call to 'print'" in findings[0].message


@pytest.mark.parametrize(
    ("line", "reported"),
    [
        ("!pip install -q torch torchvision", True),
        ("%pip install -U torch==2.1.0", True),
        ("!{sys.executable} -m pip install torchaudio", True),
        (
            "!pip install torch==2.9.0 'torch_xla[tpu]==2.9.0' -f https://storage.googleapis.com/libtpu-releases/index.html",
            False,
        ),
        ("!pip install torchmetrics timm", False),
        ("!pip install -r requirements.txt", False),
        ("!pip install -i https://download.pytorch.org/whl/cpu numpy", False),
        ("x = 'pip install torch'", False),
    ],
)
def test_pip_install_of_torch_without_torch_xla(line: str, reported: bool) -> None:
    text = notebook("import os\n" + line, "import torch")
    _, findings = convert(text)
    found = [(f.cell, f.line) for f in findings if f.rule == "XLN101"]
    assert found == ([(2, 2)] if reported else [])


def test_pip_install_finding_follows_its_line_in_the_output() -> None:
    text = notebook("import torch\n!pip install torch\ndevice = torch.device('cuda')")
    for locate in ("input", "output"):
        output, findings = convert(text, locate=locate)
        (finding,) = [f for f in findings if f.rule == "XLN101"]
        assert finding.cell is not None
        code = sources(output if locate == "output" else text)[finding.cell - 1]
        assert code.splitlines()[finding.line - 1] == "!pip install torch", (locate, code)
    assert finding.line == 3  # below the import the port added


def test_pip_install_in_a_bash_cell_is_reported_too() -> None:
    _, findings = convert(notebook("%%bash\npip install torch", "import torch"))
    assert [(f.rule, f.cell, f.line, f.col) for f in findings] == [("XLN101", 2, 2, 1)]


@pytest.mark.parametrize(
    ("metadata", "key", "reported"),
    [
        ({"accelerator": "GPU", "colab": {"gpuType": "T4"}}, '"accelerator"', True),
        ({"colab": {"gpuType": "A100"}}, '"gpuType"', True),
        ({"kaggle": {"accelerator": "nvidiaTeslaT4", "isGpuEnabled": True}}, '"accelerator"', True),
        ({"accelerator": "TPU", "colab": {"gpuType": "V28"}}, "", False),
        ({"kaggle": {"accelerator": "tpu1vmV38"}}, "", False),
    ],
)
def test_gpu_runtime_in_the_metadata(metadata: dict[str, object], key: str, reported: bool) -> None:
    text = notebook(DEVICE_CELL, metadata=metadata)
    output, findings = convert(text)
    found = [f for f in findings if f.rule == "XLN102"]
    assert len(found) == reported
    if reported:
        (finding,) = found
        assert finding.cell is None and finding.fixed is False
        assert output.splitlines()[finding.line - 1][finding.col - 1 :].startswith(key)


def test_notebook_findings_follow_the_rule_selection() -> None:
    text = notebook("!pip install torch", DEVICE_CELL, metadata={"accelerator": "GPU"})
    _, findings = convert(text, selection=RuleSelection(ignore=("XLN",)))
    assert findings and not any(f.rule.startswith("XLN") for f in findings)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"import torch\n", "not a notebook: invalid JSON"),
        (
            b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "torch": 1, "bogus": 2}',
            "not a valid notebook",
        ),
        (
            b'{"cells": [{"cell_type": "code", "source": "import torch"}], "metadata": {}, "nbformat": 4, '
            b'"nbformat_minor": 4}',
            "not a valid notebook",
        ),
        (
            b'{"worksheets": [{"cells": [{"input": "import torch"}]}], "metadata": {}, "nbformat": 3, '
            b'"nbformat_minor": 0}',
            "not a version 4 notebook",
        ),
    ],
)
def test_invalid_notebook_is_one_line_error_and_left_alone(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(ConversionError, match=message):
        convert_source(content, filename="nb.ipynb")
    path = tmp_path / "nb.ipynb"
    path.write_bytes(content)
    result = CliRunner().invoke(main, ["convert", str(path)])
    assert result.exit_code == 2
    (line,) = [line for line in result.output.splitlines() if ": error: " in line]
    assert re.match(rf"{re.escape(str(path))}(:\d+:\d+)?: error: ", line) and message in line
    assert path.read_bytes() == content


def test_syntax_error_names_the_cell() -> None:
    with pytest.raises(ConversionError, match=r"cell 3, line 2"):
        convert(notebook(DEVICE_CELL, "x = 1\ndef f(:\n    pass"))


AUTOMAGIC_CELL = "cd ZoeDepth\nls -la\npip install timm\nmatplotlib inline\ncd = 'a name'\nprint(cd)"


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_automagic_lines_are_masked_like_their_percent_forms(target: str) -> None:
    """IPython's automagic runs ``cd ZoeDepth`` as ``%cd ZoeDepth``: masked, not a syntax error;
    a magic's name used as Python (``cd = 'a name'``) stays Python."""
    text = notebook(AUTOMAGIC_CELL, DEVICE_CELL, MODEL_CELL, LOOP_CELL)
    output, _ = convert(text, target)
    cells = sources(output)
    assert cells[1] == AUTOMAGIC_CELL
    assert SYNC[target] in cells[4]
    assert convert(output, target)[0] == output


def test_a_line_that_is_no_magic_and_no_python_is_still_a_syntax_error() -> None:
    with pytest.raises(ConversionError, match=r"cell 3, line 1"):
        convert(notebook(DEVICE_CELL, "cdx ZoeDepth"))


def test_notebook_without_torch_or_of_another_language_is_left_alone() -> None:
    plain = notebook("print('hello')")
    assert convert(plain) == (plain, [])
    r_notebook = notebook(DEVICE_CELL, metadata={"language_info": {"name": "R"}})
    assert convert(r_notebook) == (r_notebook, [])


def test_cli_text_json_sarif_github_markdown_name_the_cell(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(notebook("!pip install -q numpy", DEVICE_CELL, MODEL_CELL, LOOP_CELL))
    raw = path.read_text().splitlines()
    runner = CliRunner()
    text = runner.invoke(main, ["lint", str(path)]).output
    assert f"{path}:cell 3:4:10: error: XLA101 [*] would replace torch.device(" in text
    report = json.loads(runner.invoke(main, ["lint", "--format", "json", str(path)]).output)
    finding = next(f for f in report["files"][0]["findings"] if f["rule"] == "XLA101")
    assert {k: finding[k] for k in ("rule", "line", "col", "cell")} == {
        "rule": "XLA101",
        "line": 4,
        "col": 10,
        "cell": 3,
    }
    assert "torch.device('cuda'" in raw[finding["file_line"] - 1]  # the file's line that holds the cell's line
    sarif = json.loads(runner.invoke(main, ["lint", "--format", "sarif", str(path)]).output)
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "XLA101")
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == finding["file_line"]
    assert result["properties"] == {"cell": 3, "cellLine": 4, "cellColumn": 10}
    github = runner.invoke(main, ["lint", "--format", "github", str(path)]).output
    assert f"line={finding['file_line']},col=10::{path}:cell 3:4:10: error: XLA101" in github
    markdown = runner.invoke(main, ["lint", "--format", "markdown", str(path)]).output
    assert "- cell 3, line 4: error: `XLA101` would replace" in markdown


def test_cli_diff_and_check_write_nothing_and_label_cells(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    original = notebook("!pip install -q numpy", DEVICE_CELL, MODEL_CELL, LOOP_CELL)
    path.write_text(original)
    runner = CliRunner()
    diff = runner.invoke(main, ["convert", "--diff", str(path)])
    assert diff.exit_code == 1
    name = str(path).lstrip("/")
    assert f"--- a/{name}:cell 3\n+++ b/{name}:cell 3\n" in diff.output
    assert f"--- a/{name}:cell 5\n+++ b/{name}:cell 5\n" in diff.output
    assert "+    xm.optimizer_step(opt)\n" in diff.output and ":cell 4\n" not in diff.output
    assert runner.invoke(main, ["convert", "--check", str(path)]).exit_code == 1
    assert path.read_text() == original


def test_folder_run_ports_scripts_and_notebooks_with_the_same_rules(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    (project / ".venv").mkdir()
    (project / "train.py").write_text(DEVICE_CELL + "\n")
    nb = notebook(DEVICE_CELL, MODEL_CELL, LOOP_CELL)
    for name in ("notebooks/a.ipynb", "notebooks/skip_me.ipynb", ".venv/vendored.ipynb"):
        (project / name).write_text(nb)
    (project / "notebooks" / "plain.ipynb").write_text(notebook("print(1)"))
    result = subprocess.run(
        [sys.executable, "-m", "codemods", "convert", ".", "--exclude", "skip_me.ipynb"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "3 file(s) seen: 2 changed, 1 unchanged, 0 failed" in result.stdout
    assert "torch_xla.device()" in (project / "train.py").read_text()
    assert "torch_xla.device()" in sources((project / "notebooks" / "a.ipynb").read_text())[1]
    assert (project / "notebooks" / "skip_me.ipynb").read_text() == nb
    assert (project / ".venv" / "vendored.ipynb").read_text() == nb
    again = subprocess.run(
        [sys.executable, "-m", "codemods", "convert", ".", "--exclude", "skip_me.ipynb"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stdout


# Pieces of cells, each complete: Python, IPython, and Python that looks like IPython.
PIECES = [
    "%matplotlib inline",
    "!ls -la | head",
    "out = !pwd",
    "%timeit sum(range(3))",
    "torch.randn?",
    "??torch",
    "x = 1",
    "if x:\n    !echo in a block\n    %env A=1",
    "y = (x\n     % 2)",
    's = """\n!not shell\n"""',
    "# a comment?",
    "z = [1,\n  2]",
    "print('!')",
    "!pip install -q einops \\\n    numpy",
    "for i in x:\n    i?",
    "a = b = 1",
    "c = a != b",
    "d = 3 % 2",
]


@settings(max_examples=60, deadline=None)
@given(cells=st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("\n".join), min_size=1, max_size=4))
def test_cells_without_anything_to_port_come_back_byte_for_byte(cells: list[str]) -> None:
    """Whatever IPython and Python lines the cells hold, a notebook with nothing to port
    (its device line already XLA's) comes back byte for byte."""
    text = notebook("import torch\nimport torch_xla\ndevice = torch_xla.device()", *cells)
    output, findings = convert(text)
    assert output == text and not any(f.fixed for f in findings)


@settings(max_examples=40, deadline=None)
@given(cells=st.lists(st.lists(st.sampled_from(PIECES), max_size=5).map("\n".join), min_size=1, max_size=3))
def test_ipython_lines_around_a_port_come_back_exactly(cells: list[str]) -> None:
    text = notebook(DEVICE_CELL, *cells, MODEL_CELL, LOOP_CELL)
    output, _ = convert(text)
    assert sources(output)[2 : 2 + len(cells)] == cells
    assert "xm.optimizer_step(opt)" in sources(output)[-1]


def nonblank(code: str) -> list[str]:
    return [line for line in code.splitlines() if line.strip()]


def statement_cells(code: str) -> list[str]:
    """A script cut into cells as a notebook author would: the leading imports in the
    first cell, then each top-level statement (with the comments after it) in its own."""
    import ast

    lines = code.splitlines(keepends=True)
    body = ast.parse(code).body
    starts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", []))]) for s in body]
    leading = next(
        (i for i, s in enumerate(body) if not isinstance(s, (ast.Import, ast.ImportFrom, ast.Expr))), len(body)
    )
    cuts = [1, *starts[max(leading, 1) :]] if body else [1]
    segments = ["".join(lines[a - 1 : b - 1]) for a, b in zip(cuts, [*cuts[1:], len(lines) + 1])]
    return [segment.removesuffix("\n") for segment in segments]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("script", [s for s in fixture_scripts() if (FIXTURES / s).read_text().strip()], ids=str)
def test_a_script_cut_into_cells_converts_as_the_script_does(script: Path, target: str) -> None:
    """Every training fixture as a notebook of its statements: the converted cells, joined,
    are the converted script, line for line (split and join lose and move nothing; blank
    lines aside: a cell whose only statement the port removes is left empty, and a cell's
    last newline stands for a blank line of the script), and the notebook is a fixed point."""
    code = (FIXTURES / script).read_text()
    cells = statement_cells(code)
    assert "\n".join(cells) + "\n" == code
    imports = fixture_project(script, target).imports_of(FIXTURES / script)
    expected = output_text(convert_source(code, target=target, imports=imports))
    text = notebook(*cells)
    output = output_text(convert_source(text, target=target, filename="nb.ipynb", imports=imports))
    got = "\n".join(sources(output)[1:]) + "\n"
    assert nonblank(got) == nonblank(expected)
    assert convert_source(output, target=target, filename="nb.ipynb", imports=imports).output == output


def test_a_notebook_without_torch_is_skipped_without_loading_nbformat_or_libcst(tmp_path: Path) -> None:
    (tmp_path / "plain.ipynb").write_text(notebook("import os\nprint(os.getcwd())"))
    (tmp_path / "train.ipynb").write_text(notebook(DEVICE_CELL, MODEL_CELL, LOOP_CELL))
    for name, code, loaded in (("plain.ipynb", "exit 0", False), ("train.ipynb", "exit 1", True)):
        probe = subprocess.run(
            [sys.executable, "-c", LOADED_MODULES, "lint", name], capture_output=True, text=True, cwd=tmp_path
        )
        modules = probe.stdout.split()
        assert code in probe.stderr, probe.stderr
        assert ("nbformat" in modules, "libcst" in modules) == (loaded, loaded)
