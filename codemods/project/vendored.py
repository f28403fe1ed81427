"""A copy of transformers that the project ships (``transformers/src/transformers/``, a fork it
installs with ``pip install -e``, PrefixTuning's 3.2.0): the one its scripts import, whose
``TrainingArguments`` may predate the ``optim`` field (transformers 4.x added it).  Found by its
``training_args.py`` in the places a project keeps such a copy: ``<root>/transformers/``,
``<root>/src/transformers/``, ``<root>/transformers/src/transformers/`` (a checkout of the library
beside the project's code), and the first two one folder down (``<root>/<folder>/src/transformers/``),
under the root and the wider roots the resolver knows (project/project_files.py); where no marker made
the root (a copy without ``.git``: a script's own folder, PrefixTuning's gpt2/), the fixed places of up
to two folders above it too.  Plain file reads, no LibCST."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

# A dataclass field ``optim: ... = field(...)`` (or a plain ``optim = ...``) in the class body.
_OPTIM_FIELD = re.compile(rb"^[ \t]+optim\s*[:=]", re.MULTILINE)
_ARGUMENTS_CLASS = re.compile(rb"^class\s+TrainingArguments\b", re.MULTILINE)
_MAX_BYTES = 1 << 20


def _fixed(folder: Path) -> Iterable[Path]:
    yield folder / "transformers" / "training_args.py"
    yield folder / "src" / "transformers" / "training_args.py"
    yield folder / "transformers" / "src" / "transformers" / "training_args.py"


def _candidates(root: Path) -> Iterable[Path]:
    yield from _fixed(root)
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:  # a folder we may not list: only the fixed places
        return
    for folder in folders:
        yield folder / "transformers" / "training_args.py"
        yield folder / "src" / "transformers" / "training_args.py"


def arguments_without_optim(roots: Iterable[Path], above: Iterable[Path] = ()) -> Path | None:
    """The ``training_args.py`` of a transformers copy under ``roots`` whose ``TrainingArguments``
    class has no ``optim`` field (the first found); None where the project ships none such (the
    installed transformers is the one imported).  ``above``: folders over a root that no marker made
    (a copy of a repository without ``.git``, whose script's folder is the root), where only the fixed
    places count (``transformers/``, ``src/transformers/``, ``transformers/src/transformers/``)."""
    places = [path for root in roots for path in _candidates(root)]
    places += [path for folder in above for path in _fixed(folder)]
    for path in dict.fromkeys(places):
        try:
            if not path.is_file() or path.stat().st_size > _MAX_BYTES:
                continue
            text = path.read_bytes()
        except OSError:
            continue
        if _ARGUMENTS_CLASS.search(text) and not _OPTIM_FIELD.search(text):
            return path
    return None
