"""The command line as the tests run it."""

from __future__ import annotations

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
