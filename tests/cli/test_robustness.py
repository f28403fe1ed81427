"""Bad and unusual input: every bad file gets a one-line message and exit code 2, is
left byte-identical, and never stops the other files; unusual but valid files
(encodings, BOM, newlines, empty) round-trip.  Writes are atomic and survive an
interrupt."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.files import FileProblem, write_atomically
from tests.support.paths import FIXTURES
from tests.support.processes import default_signal_dispositions

GOOD = "import torch\n\ndevice = torch.device('cuda')\n"
GOOD_CONVERTED = "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\n"


def run_cli(*args: str, cwd: Path, user: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "codemods", *args]
    if user is not None:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


# Each bad file's error line: `path:line:col: error: message` where the parser gave a position.
BAD_INPUTS = {
    "syntax_error.py": (b"import torch\n\ndef f(:\n    pass\n", ":3:7: error: cannot parse: invalid syntax"),
    "python2.py": (b"import torch\nprint 'loss', loss\n", ":2:1: error: cannot parse: Missing parentheses"),
    "undecodable.py": (b"import torch\nname = '\xff\xfe'\n", ":2:1: error: cannot decode byte b'\\xff' as utf-8"),
    "binary.py": (b"\x7fELF\x02\x01\x01\x00torch\x00\x00", ":1:1: error: binary file (it holds NUL bytes)"),
    "deep.py": (
        b"import torch\nx = " + b"f(" * 3000 + b")" * 3000 + b"\n",
        ":2:406: error: cannot parse: too many nested parentheses",
    ),
    "big.py": (b"import torch\n" + b"x = 1\n" * (5 * 2**20 // 6), ":1:1: error: 5.0 MiB is over the 1.0 MiB limit"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_gets_a_message_and_is_left_alone(name: str, tmp_path: Path) -> None:
    content, message = BAD_INPUTS[name]
    (tmp_path / name).write_bytes(content)
    (tmp_path / "good.py").write_text(GOOD)
    result = run_cli("convert", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    (error_line,) = [line for line in result.stdout.splitlines() if line.startswith(f"./{name}")]
    assert error_line.startswith(f"./{name}{message}")
    assert "Traceback" not in result.stdout + result.stderr
    assert (tmp_path / name).read_bytes() == content
    assert (tmp_path / "good.py").read_text() == GOOD_CONVERTED


def test_deeply_nested_but_valid_code_converts(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text("import torch\nx = " + "f(" * 190 + "torch.device('cuda')" + ")" * 190 + "\n")
    result = run_cli("convert", "deep.py", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "torch_xla.device()" in (tmp_path / "deep.py").read_text()


def test_max_size_option(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(GOOD + "x = 1\n" * 2000)  # about 12 KiB
    too_big = run_cli("lint", "--max-size", "0.005", "train.py", cwd=tmp_path)
    assert too_big.returncode == 2 and "MiB limit for conversion" in too_big.stdout
    fits = run_cli("lint", "--max-size", "0.05", "train.py", cwd=tmp_path)
    assert fits.returncode == 1 and "XLA101" in fits.stdout


def test_path_problems(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "package.py").mkdir()  # a folder named like a script
    (tmp_path / "package.py" / "inner.py").write_text(GOOD)
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.symlink(".", tmp_path / "self_link")  # a folder loop; never followed
    result = run_cli("convert", "good.py", "package.py", "loop_a.py", "missing.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "loop_a.py: error: cannot read: Too many levels of symbolic links" in result.stdout
    assert "missing.py: error: no such file or directory" in result.stdout
    assert (tmp_path / "good.py").read_text() == GOOD_CONVERTED
    assert (tmp_path / "package.py" / "inner.py").read_text() == GOOD_CONVERTED
    # A folder walk passes over the symlink loops and never follows the folder link.
    walked = run_cli("lint", ".", cwd=tmp_path)
    assert walked.returncode == 0, walked.stdout + walked.stderr
    assert "2 file(s) checked, 0 failed" in walked.stdout


def test_read_only_file_is_reported_not_written(tmp_path: Path) -> None:
    (tmp_path / "locked.py").write_text(GOOD)
    (tmp_path / "locked.py").chmod(0o444)
    (tmp_path / "good.py").write_text(GOOD)
    result = run_cli("convert", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "./locked.py: error: read-only file: not converted" in result.stdout
    assert "./locked.py:3:10: error: XLA101 [*]" in result.stdout  # findings point into the unchanged file
    assert (tmp_path / "locked.py").read_text() == GOOD
    assert (tmp_path / "good.py").read_text() == GOOD_CONVERTED


def usable_by(user: str, cwd: Path) -> None:
    """Skip, saying why, unless ``user`` can run the installed tool at all (its virtual
    environment may live where other users cannot read)."""
    probe = run_cli("--version", cwd=cwd, user=user)
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"user {user} cannot run the installed tool ({sys.executable}): {reason}")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to switch user")
def test_unreadable_file(tmp_path: Path) -> None:
    """Root reads everything, so this runs the tool as 'nobody'."""
    tmp_path.chmod(0o777)
    usable_by("65534", tmp_path)
    secret = tmp_path / "secret.py"
    secret.write_text(GOOD)
    secret.chmod(0o600)
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "good.py").chmod(0o666)
    result = run_cli("lint", "secret.py", "good.py", cwd=tmp_path, user="65534")
    assert result.returncode == 2, result.stderr
    assert "secret.py: error: cannot read: Permission denied" in result.stdout
    assert "good.py:3:10: error: XLA101 [*] would replace" in result.stdout


def test_symlinked_file_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text(GOOD)
    os.symlink("real.py", tmp_path / "link.py")
    run_cli("convert", "link.py", cwd=tmp_path)
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_text() == GOOD_CONVERTED


def test_write_refuses_a_file_changed_or_deleted_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(GOOD)
    original = path.read_bytes()
    path.write_text(GOOD + "# edited by someone else\n")
    with pytest.raises(FileProblem, match="changed on disk"):
        write_atomically(str(path), GOOD_CONVERTED.encode(), original)
    assert path.read_text() == GOOD + "# edited by someone else\n"
    path.unlink()
    with pytest.raises(FileProblem, match="cannot read"):
        write_atomically(str(path), GOOD_CONVERTED.encode(), original)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\xef\xbb\xbf" + GOOD.encode(), id="bom"),
        pytest.param(GOOD.replace("\n", "\r\n").encode(), id="crlf"),
        pytest.param(b"import torch\r\n\ndevice = torch.device('cuda')\r\nx = 1\n", id="mixed-newlines"),
        pytest.param(
            "# -*- coding: latin-1 -*-\nimport torch\n# café\nd = torch.device('cuda')\n".encode("latin-1"),
            id="latin-1",
        ),
    ],
)
def test_unusual_valid_files_round_trip(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "script.py"
    path.write_bytes(content)
    result = run_cli("convert", "script.py", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    output = path.read_bytes()
    assert output == convert_source(content).output
    # Every original line survives with its own newline; added lines follow the file's style.
    for line in content.splitlines(keepends=True):
        if b"cuda" not in line:
            assert line in output
    assert convert_source(output).output == output


def _interrupt_run(tmp_path: Path, jobs: str, signum: int) -> None:
    source = (FIXTURES / "mnist_flags.py").read_bytes()
    converted = convert_source(source).output
    folder = tmp_path / "repo"
    folder.mkdir()
    for index in range(300):
        (folder / f"train_{index:03}.py").write_bytes(source)
    process = subprocess.Popen(
        [sys.executable, "-m", "codemods", "convert", "-j", jobs, str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # The child hears the signal whatever this process inherited: under `nohup ... &`
        # SIGINT is ignored, and an ignored disposition survives exec.
        preexec_fn=default_signal_dispositions,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until the run is writing files
        if any((folder / f"train_{i:03}.py").read_bytes() != source for i in range(0, 300, 10)):
            break
        time.sleep(0.05)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    assert b"interrupted" in stderr and b"Traceback" not in stderr
    states = [(folder / f"train_{i:03}.py").read_bytes() for i in range(300)]
    assert all(state in (source, converted) for state in states)
    assert source in states and converted in states  # it was stopped mid-run
    assert sorted(p.name for p in folder.iterdir()) == [f"train_{i:03}.py" for i in range(300)]


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_folder_run_leaves_each_file_old_or_new(tmp_path: Path, jobs: str, signum: int) -> None:
    _interrupt_run(tmp_path, jobs, signum)


def test_a_conversion_that_never_ends_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loop of ours without end (list 23: an alias chain that grew for ever) stops at the time
    limit with an internal error naming where it was, and the file is left as it was."""
    from codemods import runner
    from codemods.engine.rule import RuleSelection

    def endless(*args: object, **kwargs: object) -> None:
        time.sleep(60)

    monkeypatch.setattr(runner, "FILE_TIME_LIMIT", 0.2)
    monkeypatch.setattr(runner, "convert_source", endless)
    before = signal.getsignal(signal.SIGALRM)
    report, output = runner.process_bytes(
        "train.py", GOOD.encode(), runner.Job(mode="write", target="2.9", selection=RuleSelection())
    )
    assert output == GOOD.encode()
    assert report.error is not None and report.error.startswith("internal error (the conversion took more than 0.2 s")
    assert "the file was left alone, please report it" in report.error
    assert signal.getsignal(signal.SIGALRM) is before


def test_a_callers_own_alarm_is_left_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller that bounds the conversion with an alarm of its own (scripts/smoke.py) keeps it:
    the time limit neither replaces its handler nor cancels its timer."""
    from codemods import runner
    from codemods.engine.rule import RuleSelection

    def theirs(signum: int, frame: object) -> None:
        raise TimeoutError("the caller's alarm")

    previous = signal.signal(signal.SIGALRM, theirs)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        runner.process_bytes(
            "train.py", GOOD.encode(), runner.Job(mode="write", target="2.9", selection=RuleSelection())
        )
        assert signal.getsignal(signal.SIGALRM) is theirs
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
