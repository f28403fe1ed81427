"""XLA72: torch.compile on the XLA device.

One module per rule (its code and name), with the hooks that find and fix it on the nodes the
compile facts name (compile/analysis.py); this package lists them.  The concern has no rewrite
of its own."""

from __future__ import annotations

from codemods.compile.rules.xla721_torch_compile import TORCH_COMPILE
from codemods.compile.rules.xla722_inductor_options import INDUCTOR_OPTIONS
from codemods.compile.rules.xla723_compile_backend import COMPILE_BACKEND
from codemods.compile.rules.xla724_compiler_settings import COMPILER_SETTINGS

RULES = (TORCH_COMPILE, INDUCTOR_OPTIONS, COMPILE_BACKEND, COMPILER_SETTINGS)
