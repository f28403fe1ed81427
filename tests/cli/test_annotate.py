"""convert --annotate: TODO comments above the statements that need a person, nothing
else changed, never twice; and --diff in colour on a terminal only."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods import convert_source
from codemods.annotate import MARK
from codemods.cli import main
from tests.support.fixtures import output_text

SOURCE = '''\
import torch

device = torch.device("cuda")
name = torch.cuda.get_device_name(
    0)
if x.is_cuda:  # keep this comment
    y = """
# not a comment: inside a string
text"""; print(torch.cuda.memory_allocated())


class Trainer:
    def gpus(self):
        # existing comment
        return torch.cuda.device_count() + torch.cuda.utilization()
'''


def without_todos(code: str) -> str:
    return "".join(line for line in code.splitlines(keepends=True) if not line.lstrip().startswith(MARK))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_todos_go_above_each_statement_and_nothing_else_changes(newline: str) -> None:
    source = SOURCE.replace("\n", newline)
    plain = output_text(convert_source(source))
    annotated = output_text(convert_source(source, annotate=True))
    assert without_todos(annotated) == plain
    lines = annotated.splitlines()
    todos = [(i, line) for i, line in enumerate(lines) if MARK in line]
    assert [
        (lines[i + 1].strip()[:24], line.split(MARK)[1][:6], line[: len(line) - len(line.lstrip())])
        for i, line in todos
    ] == [
        ("name = torch.cuda.get_de", "XLA506", ""),
        ("if x.is_cuda:  # keep th", "XLA105", ""),
        ('y = """', "XLA503", "    "),
        ("return torch.cuda.device", "XLA506", "        "),  # one per rule and statement
    ]
    assert all(line.endswith(newline) for line in annotated.splitlines(keepends=True))
    assert "# not a comment: inside a string\ntext" in annotated.replace("\r\n", "\n")


def test_findings_point_at_their_code_after_the_inserted_lines() -> None:
    conversion = convert_source(SOURCE, annotate=True)
    lines = output_text(conversion).splitlines()
    for finding in conversion.findings:
        code = lines[finding.line - 1][finding.col - 1 :]
        assert code.startswith(("torch.cuda", "x.is_cuda", "torch_xla", "import torch_xla")), (finding, code)


def test_a_second_run_adds_nothing() -> None:
    once = output_text(convert_source(SOURCE, annotate=True))
    assert convert_source(once, annotate=True).output == once
    assert convert_source(once).output == once  # the comments are only comments


def test_check_and_diff_point_into_the_input(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SOURCE)
    result = CliRunner().invoke(main, ["convert", "--diff", "--annotate", str(tmp_path / "train.py")])
    assert f"+{MARK}XLA506 `torch.cuda.get_device_name`" in result.stdout
    assert f"{tmp_path / 'train.py'}:4:8: error: XLA506" in result.stderr
    assert (tmp_path / "train.py").read_text() == SOURCE


def test_convert_annotate_writes_once(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SOURCE)
    first = CliRunner().invoke(main, ["convert", "--annotate", str(tmp_path / "train.py")])
    written = (tmp_path / "train.py").read_bytes()
    assert first.exit_code == 1 and written.count(MARK.encode()) == 4
    assert f"{tmp_path / 'train.py'}:6:8: error: XLA506" in first.output  # moved down by its own TODO line
    second = CliRunner().invoke(main, ["convert", "--annotate", str(tmp_path / "train.py")])
    assert (tmp_path / "train.py").read_bytes() == written
    assert second.exit_code == 1  # the XLA506 errors still stand: annotated is not fixed


def diff_on(stdout_is_terminal: bool, tmp_path: Path, **env: str) -> bytes:
    (tmp_path / "train.py").write_text(SOURCE)
    command = [sys.executable, "-m", "codemods", "convert", "--diff", str(tmp_path / "train.py")]
    environment = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "xterm", **env}
    if not stdout_is_terminal:
        return subprocess.run(command, capture_output=True, env=environment).stdout
    main_fd, side_fd = pty.openpty()
    process = subprocess.Popen(command, stdout=side_fd, stderr=subprocess.DEVNULL, env=environment)
    os.close(side_fd)
    shown = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    process.wait(timeout=60)
    os.close(main_fd)
    return shown


def test_diff_in_colour_on_a_terminal_only(tmp_path: Path) -> None:
    coloured = diff_on(True, tmp_path)
    assert b"\x1b[32m+device = torch_xla.device()\x1b[0m" in coloured
    assert b'\x1b[31m-device = torch.device("cuda")\x1b[0m' in coloured
    piped = diff_on(False, tmp_path)
    assert b"\x1b" not in piped and b"+device = torch_xla.device()\n" in piped
    assert b"\x1b" not in diff_on(True, tmp_path, NO_COLOR="1")
