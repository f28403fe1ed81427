"""The progress bar: drawn on a terminal (a real pseudo-terminal here), never in a
pipe, under pre-commit or in CI; no pool of our own inside pre-commit."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from codemods import progress
from codemods.engine.report import FileReport
from codemods.runner import workers_for
from tests.support.paths import FIXTURES


@pytest.fixture
def terminal():  # type: ignore[no-untyped-def]
    main_fd, side_fd = pty.openpty()
    with os.fdopen(side_fd, "w") as stream:
        yield stream, main_fd
    os.close(main_fd)


def test_draws_on_a_terminal_and_clears_itself(terminal, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    stream, main_fd = terminal
    for name in ("CI", "PRE_COMMIT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert progress.wanted(stream)
    bar = progress.Progress(4, stream, delay=0)
    bar(FileReport("a.py"))
    bar.close()
    shown = read_all(main_fd).decode()
    assert "[#######-----------------------] 1/4 files" in shown
    assert shown.endswith("\r\x1b[K")


def read_all(fd: int) -> bytes:
    """What the terminal shows so far (the writes may arrive in pieces)."""
    shown = b""
    while select.select([fd], [], [], 0.5)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        shown += chunk
    return shown


@pytest.mark.parametrize("variable", ["CI", "PRE_COMMIT"])
def test_never_under_ci_or_pre_commit(terminal, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:  # type: ignore[no-untyped-def]
    stream, _ = terminal
    monkeypatch.setenv(variable, "1")
    assert not progress.wanted(stream)


def test_never_in_a_pipe(tmp_path: Path) -> None:
    assert not progress.wanted(io.StringIO())
    for index in range(20):
        (tmp_path / f"train_{index}.py").write_text("import torch\nx = torch.device('cuda')\n")
    result = subprocess.run([sys.executable, "-m", "codemods", "lint", str(tmp_path)], capture_output=True, text=True)
    assert result.stderr == "" and "20 file(s) checked" in result.stdout


def test_a_short_run_shows_nothing(terminal) -> None:  # type: ignore[no-untyped-def]
    stream, main_fd = terminal
    bar = progress.Progress(2, stream)  # finishes well within its one-second delay
    bar(FileReport("a.py"))
    bar(FileReport("b.py"))
    bar.close()
    assert read_all(main_fd) == b""


def test_no_pool_of_our_own_inside_pre_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    assert workers_for(100) == min(os.cpu_count() or 1, 8)
    assert workers_for(3) == 1
    monkeypatch.setenv("PRE_COMMIT", "1")
    assert workers_for(100) == 1
    assert workers_for(100, requested=2) == 2  # asked for explicitly (hook args): as asked


def test_a_long_run_on_a_terminal_shows_the_bar_on_stderr_only(tmp_path: Path) -> None:
    source = (FIXTURES / "mnist_flags.py").read_bytes()
    for index in range(60):  # a few seconds: past the bar's one-second delay
        (tmp_path / f"train_{index:02}.py").write_bytes(source)
    main_fd, side_fd = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "PRE_COMMIT")}
    process = subprocess.Popen(
        [sys.executable, "-m", "codemods", "lint", "-j", "1", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=side_fd,
        env={**environment, "TERM": "xterm"},
    )
    os.close(side_fd)
    stdout, _ = process.communicate(timeout=300)
    shown = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    os.close(main_fd)
    assert b"/60 files" in shown and shown.endswith(b"\r\x1b[K")
    assert b"files" not in stdout.split(b"\n")[0] and b"60 file(s) checked" in stdout and b"\x1b" not in stdout
