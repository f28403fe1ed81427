"""What converting one file gives (``Conversion``), how a conversion fails
(``ConversionError``), and the look at a file's bytes that skips it before any parsing:
shared by the pipeline of each kind of file (pipeline.py, notebooks/convert.py) and the
runner."""

from __future__ import annotations

import re
from dataclasses import dataclass

from codemods.apis import CUDA_ONLY_PACKAGES
from codemods.engine.report import CellChange, Finding, HeldFinding
from codemods.library_apis import LIBRARY_LOOP_PACKAGES
from codemods.project.module_summary import ModuleSummary
from codemods.project.text_scans import imports_another_framework, takes_a_training_step

# A file that mentions none of these cannot be a target: skipped before parsing.  (Looked
# for one by one with ``in``: a regular expression of the alternatives tries each at every
# byte, which cost more than the rest of the skip on a file without them.)
# Also the packages whose training loops the file may call (basicsr's train_pipeline, from a file
# that names no torch): library_apis.LIBRARY_LOOPS; and the packages of CUDA-only kernels (apis.CUDA_ONLY_PACKAGES:
# ``from apex import amp`` in a file that names no torch).
# Accelerate's DeepSpeed placeholders and plugin (XLA810): a module that only subclasses or builds them
# (``class BaseDummyOptim(DummyOptim)``) names no torch.
_RELEVANT = (
    b"torch",
    b"sagemaker",
    b"transformers",
    b"lightning",
    b"ignite",
    b"timm",
    b"DummyOptim",
    b"DummyScheduler",
    b"DeepSpeedPlugin",
) + tuple(package.encode() for package in (*LIBRARY_LOOP_PACKAGES, *CUDA_ONLY_PACKAGES) if package != "trainer")
# coqui's ``trainer`` package (library_apis.LIBRARY_LOOPS), a word in countless files: only a line that
# imports it (``from trainer import Trainer``, ``from trainer.trainer import ...``, ``import trainer``).
_IMPORTS_COQUI_TRAINER = re.compile(
    rb"^[ \t]*(?:from[ \t]+trainer(?:\.trainer)?[ \t]+import\b|import[ \t]+trainer\b)", re.MULTILINE
)
# TRL, whose name is inside other words (``ctrl_loss``, ``self.ctrl``): it counts only as a
# module a line imports (``import trl``, ``import os, trl.trainer``, ``from trl import ...``),
# looked for only in a file that has the three letters at all.
_IMPORTS_TRL = re.compile(rb"^[ \t]*(?:from[ \t]+trl\b|import\b[^\n#;]*?[ \t,]trl\b)", re.MULTILINE)
# A comment that makes the tool leave a file alone.
SKIP_FILE = "xla-codemod: skip-file"


class ConversionError(Exception):
    """The file cannot be converted; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col

    def __str__(self) -> str:
        if self.line and self.col:
            return f"line {self.line}, column {self.col}: {self.message}"
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass
class Conversion:
    """What converting one file gives: its new text and the findings."""

    source: str | bytes
    output: str | bytes
    findings: list[Finding]
    encoding: str = "utf-8"
    # What the checks across files of a run need (containers/across_files.py).
    images: tuple[object, ...] = ()
    # What other files of the project need to know of this one (Python files only).
    summary: ModuleSummary | None = None
    # A notebook's changed cells (report.CellChange), for its diff.
    cells: tuple[CellChange, ...] = ()
    # Findings held back until the run's other files are seen (runner.release_held).
    held: tuple[HeldFinding, ...] = ()

    @property
    def changed(self) -> bool:
        return self.output != self.source


# A module without torch that chooses the device for the rest of the project: it sets a GPU switch
# off (``config.use_GPU = False``, read by another module to pick the device: device/cpu_flags.py),
# a device to a CUDA string (``args.device = "cuda"`` in a function that receives the parsed
# arguments, ``config.device = "cuda"`` in a config module), or gives a device flag "cuda" (its
# default, or among its choices).  A run that knows the project reads and converts such a file too.
# Letters in any case: each expression is searched for, case-sensitively, in the lowered bytes (one
# expression of four alternatives that ignores case would be tried at every byte; each of these starts
# with a character or a word the search skips to).
_CHOOSES_A_DEVICE = tuple(
    re.compile(expression)
    for expression in (
        rb"\.\w*(?:gpu|cuda)\w*\s*=\s*false\b",
        rb"dev\w*\s*=\s*[rbuf]?[\"']cuda\b",
        rb"choices\s*=\s*[\[(][^\])]*[\"']cuda[\"']",
        rb"add_argument\(\s*(?:[\"']-\w+[\"']\s*,\s*)?[\"']--?\w*dev[^)]*[\"']cuda",
    )
)


def chooses_a_device(raw: bytes) -> bool:
    """The file may choose the device for other modules of the project (read even without torch),
    also through a Hydra config whose sections it instantiates (``agent: {device: ${device}}``)."""
    lowered = raw.lower()
    return (
        any(expression.search(lowered) for expression in _CHOOSES_A_DEVICE)
        or (b"hydra" in raw and b"instantiate" in raw)
    ) and SKIP_FILE.encode() not in raw


def needs_parsing(raw: bytes) -> bool:
    """Whether a Python file is parsed at all (else it is skipped, and LibCST not loaded): it names
    torch or a library built on it, or takes a training step with a model and an optimizer that
    other modules make (SPADE's trainer.py: ``loss.backward(); self.opt.step()``, no torch)."""
    return (
        (
            any(word in raw for word in _RELEVANT)
            or _imports_trl(raw)
            or (b"trainer" in raw and _IMPORTS_COQUI_TRAINER.search(raw) is not None)
            or takes_a_training_step(raw)
        )
        and SKIP_FILE.encode() not in raw
        and not another_frameworks_file(raw)
    )


def another_frameworks_file(raw: bytes) -> bool:
    """The file names no torch and imports another deep-learning framework (paddle, tensorflow,
    jax, ...): its models, optimizers and loops are that framework's, even where a module path
    says ``transformers`` (``ppdet.modeling.transformers``)."""
    return b"torch" not in raw and imports_another_framework(raw)


def _imports_trl(raw: bytes) -> bool:
    return b"trl" in raw and _IMPORTS_TRL.search(raw) is not None
