"""The command line as the tests run it: in this process (click's runner), and in a fresh
interpreter that says which modules it loaded."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from codemods.cli import main


def invoke(*args: str, input: str | bytes | None = None, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)
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
