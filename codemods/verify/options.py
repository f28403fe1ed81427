"""What a verify run is asked to do: read by the verification (verify.py) and by each run
(runs.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from codemods.targets import DEFAULT_TARGET

REFERENCES = ("auto", "cuda", "cpu", "none")


@dataclass(frozen=True)
class VerifyOptions:
    steps: int = 10  # optimizer steps each run makes before it is stopped
    reference: str = "auto"  # auto (CUDA if there is a GPU, else the CPU), cuda, cpu, none
    converted: bool = False  # the script is a port already: run it as it is
    original: str | None = None  # with converted: the original script, for the reference run
    target: str = DEFAULT_TARGET
    timeout: float = 600.0  # seconds per run
    python: str = field(default_factory=lambda: sys.executable)
    progress: Callable[[str], None] | None = None  # told what is going on (the CLI: standard error)
