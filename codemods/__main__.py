"""``python -m codemods`` is the same program as ``xla-codemod``."""

from codemods.cli import main

main(prog_name="xla-codemod")
