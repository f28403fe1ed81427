"""The command line as the tests run it: in this process (click's runner), and in a fresh
interpreter that says which modules it loaded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from codemods.cli import main


def invoke(  # type: ignore[no-untyped-def]
    *args: str, input: str | bytes | None = None, cwd: Path | None = None, env: dict[str, str | None] | None = None
):
    """The command line in this process; ``cwd``: the folder it runs in (restored after;
    a run with no PATH works on it, so tests that give none pass a temporary one);
    ``env``: variables set (None: unset) for the run.  PRE_COMMIT is unset unless given."""
    runner = CliRunner()
    environment = {"PRE_COMMIT": None, **(env or {})}
    if cwd is None:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False, env=environment)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False, env=environment)
    finally:
        os.chdir(old)


# Runs the command line in a fresh interpreter, then says which modules it loaded.
LOADED_MODULES = """\
import runpy, sys
sys.argv = ["xla-codemod", *sys.argv[1:]]
try:
    runpy.run_module("codemods", run_name="__main__")
except SystemExit as exit:
    print("exit", exit.code, file=sys.stderr)
print(" ".join(sorted(sys.modules)))
"""


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A documented command as a user types it, with this environment's xla-codemod first on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "PRE_COMMIT")}
    return subprocess.run(
        command, shell=True, cwd=cwd, capture_output=True, text=True, env={**environment, "PATH": path}, timeout=600
    )
