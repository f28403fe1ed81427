"""Scans of a project's folders: its YAML config files, and the modules a package folder
holds (what ``importlib.import_module(f"pkg.{name}")`` may load), and the text of the files
that may name a function of the project (whether anything calls it)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from codemods.files import SKIPPED_DIRS
from codemods.project.roots import resolved

# A config file (YAML) larger than this is not read for a device (a data file, not a config).
MAX_CONFIG_BYTES = 256 * 1024
# How many YAML files of a project the scan for config files reads, at most, and how many bytes in all.
_MAX_CONFIG_FILES = 2000
_MAX_CONFIG_TOTAL = 32 * 1024 * 1024


def read_config(path: Path) -> tuple[int, str] | None:
    """A YAML config file's size in bytes and text: None where it is no regular file, is larger
    than MAX_CONFIG_BYTES, cannot be read or is not UTF-8 text.  The one reader of the
    project's config files: the scan below and a file named by the code that reads it."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_CONFIG_BYTES:
            return None
        return status.st_size, path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # unreadable, or not text: not read
        return None


def yaml_files(root: Path) -> tuple[tuple[Path, str], ...]:
    """The YAML files under ``root`` (path, text), each read by ``read_config``: at most
    _MAX_CONFIG_FILES and _MAX_CONFIG_TOTAL bytes in all, the folders a run skips left out."""
    found: list[tuple[Path, str]] = []
    total = 0
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_DIRS and not f.startswith("."))
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml")):
                continue
            path = Path(folder) / name
            read = read_config(path)
            if read is None:
                continue
            size, text = read
            total += size
            if len(found) >= _MAX_CONFIG_FILES or total > _MAX_CONFIG_TOTAL:
                return tuple(found)
            found.append((path, text))
    return tuple(found)


def package_modules(
    folders: Sequence[Path], package: str, me: Path, contains: Callable[[Path], bool]
) -> tuple[str, ...]:
    """The modules and packages of ``package`` (dotted; "" for the folders themselves) in the
    first of ``folders`` that holds it inside the project, ``me`` (the asking file) left out."""
    parts = [p for p in package.split(".") if p]
    found: list[str] = []
    for base in dict.fromkeys(folders):
        folder = base.joinpath(*parts)
        try:
            if not folder.is_dir() or not contains(folder):
                continue
            for child in sorted(folder.iterdir()):
                stem = child.name.removesuffix(".py")
                if not stem.isidentifier() or stem == "__init__" or child.name in SKIPPED_DIRS:
                    continue
                if child.name.endswith(".py") and child.is_file() and resolved(child) != me:
                    found.append(".".join([*parts, stem]))
                elif child.is_dir() and (parts or (child / "__init__.py").is_file()):
                    found.append(".".join([*parts, stem]))
        except OSError:  # a folder we may not list
            continue
        if parts:
            break  # the first folder of that name is the package Python imports
    return tuple(dict.fromkeys(found))


# The files whose text may call a function of the project by its name: code, notebooks, configs
# (a YAML ``_target_``), shell scripts, packaging (an entry point); how many, and how many bytes
# in all, the scan reads at most (past that, every name is taken as mentioned).
_MENTION_SUFFIXES = (".py", ".pyi", ".ipynb", ".yaml", ".yml", ".json", ".sh", ".cfg", ".toml", ".ini")
_MAX_MENTION_FILES = 5000
_MAX_MENTION_TOTAL = 64 * 1024 * 1024
_FULL_LINE_COMMENT = re.compile(rb"(?m)^[ \t]*#[^\n]*$")


def mention_texts(root: Path) -> tuple[tuple[Path, bytes], ...] | None:
    """The text of the files under ``root`` that may name a function of the project (resolved
    path, bytes with their full-line ``#`` comments blanked), the folders a run skips left out;
    None past _MAX_MENTION_FILES files or _MAX_MENTION_TOTAL bytes."""
    found: list[tuple[Path, bytes]] = []
    total = 0
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_DIRS and not f.startswith("."))
        for name in sorted(files):
            if not name.endswith(_MENTION_SUFFIXES):
                continue
            path = Path(folder) / name
            try:
                data = path.read_bytes()
            except OSError:  # unreadable: not read
                continue
            total += len(data)
            if len(found) >= _MAX_MENTION_FILES or total > _MAX_MENTION_TOTAL:
                return None
            found.append((resolved(path), _FULL_LINE_COMMENT.sub(b"", data)))
    return tuple(found)


class Mentions:
    """Whether the project's files name a word: their text (mention_texts) read once for the run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._texts: tuple[tuple[Path, bytes], ...] | None | bool = False  # (False: unread)
        self._answers: dict[tuple[Path, str], bool] = {}
        self._settings: dict[str, tuple[Path, ...] | None] = {}  # cuda_checked's scan, by attribute
        self._handed: dict[str, tuple[Path, ...]] = {}  # cuda_checked's scan with ``handed``, by attribute

    def texts(self) -> tuple[tuple[Path, bytes], ...] | None:
        """The project's texts (mention_texts), read once; None when the project is too large to scan."""
        if self._texts is False:
            self._texts = mention_texts(self.root)
        return self._texts if isinstance(self._texts, tuple) else None

    def elsewhere(self, path: Path, name: str) -> bool:
        """Whether a file other than ``path`` names ``name`` as a word (its code, notebooks, configs
        and shell scripts, full-line comments left out); True when the project is too large to scan."""
        key = (resolved(path), name)
        if key not in self._answers:
            if self._texts is False:
                self._texts = mention_texts(self.root)
            texts = self._texts
            if not isinstance(texts, tuple) or not key[0].is_relative_to(self.root):
                return True
            needle = name.encode()
            word = re.compile(rb"(?<![\w])" + re.escape(needle) + rb"(?![\w])")
            # (the plain substring test first: most files do not hold the name at all)
            self._answers[key] = any(needle in data and word.search(data) for file, data in texts if file != key[0])
        return self._answers[key]

    def cuda_checked(self, path: Path, attribute: str, handed: bool = False) -> Path | None:
        """The file (``path`` last) that sets ``self.<attribute>`` to CUDA's availability check
        (``self.train_on_gpu = torch.cuda.is_available()``, a config class's flag), and no file
        sets it otherwise; None: none, or the project too large to scan.  With ``handed``: the
        first file other than ``path`` that sets ``<name>.<attribute>`` (``hyp_params.use_cuda =
        use_cuda``, a namespace it hands on) and calls ``torch.cuda.is_available()``."""
        if self._texts is False:
            self._texts = mention_texts(self.root)
        texts = self._texts
        if not isinstance(texts, tuple):
            return None
        if handed:
            if attribute not in self._handed:
                self._handed[attribute] = _handed_settings((*texts, *self._launchers_above()), attribute)
            return next((file for file in self._handed[attribute] if file != resolved(path)), None)
        if attribute not in self._settings:
            self._settings[attribute] = _cuda_settings(texts, attribute)
        files = self._settings[attribute]
        if files is None:
            return None  # set to something else too: not known
        me = resolved(path)
        # The first file that sets it, unless that is ``path``: then the next other one, or ``path``.
        return next((file for file in files if file != me), files[0] if files else None)

    def _launchers_above(self) -> tuple[tuple[Path, bytes], ...]:
        """The scripts beside a project folder without a root marker that import it as a package
        (``main.py`` beside ``src/``, doing ``from src import train``): a copy of a repository
        without .git whose run on ``src/train.py`` finds its root at ``src``."""
        if any((self.root / marker).exists() for marker in (".git", "pyproject.toml", "setup.py", "setup.cfg")):
            return ()
        imports = re.compile(rb"(?m)^\s*(?:from|import)\s+" + re.escape(self.root.name.encode()) + rb"\b")
        found: list[tuple[Path, bytes]] = []
        for path in sorted(self.root.parent.glob("*.py")):
            try:
                data = path.read_bytes()
            except OSError:  # unreadable: not read
                continue
            if imports.search(data) is not None:
                found.append((resolved(path), _FULL_LINE_COMMENT.sub(b"", data)))
        return tuple(found)


def _cuda_settings(texts: tuple[tuple[Path, bytes], ...], attribute: str) -> tuple[Path, ...] | None:
    """The files (in ``texts``' order, each once) that set ``self.<attribute>`` to CUDA's
    availability check; None where a file sets it to anything else."""
    needle = b"self." + attribute.encode()
    set_to = re.compile(rb"\bself\." + re.escape(attribute.encode()) + rb"\s*=(?!=)\s*([^\n]*)")
    files: list[Path] = []
    for file, data in texts:
        if needle not in data:  # (the plain substring test first: most files do not set it)
            continue
        for match in set_to.finditer(data):
            if re.fullmatch(rb"torch\.cuda\.is_available\(\)\s*(#.*)?", match.group(1).strip()) is None:
                return None
            if not files or files[-1] != file:
                files.append(file)
    return tuple(files)


def _handed_settings(texts: tuple[tuple[Path, bytes], ...], attribute: str) -> tuple[Path, ...]:
    """The files (in ``texts``' order) that set ``<name>.<attribute>`` (not ``self``'s) and call
    ``torch.cuda.is_available()``."""
    set_to = re.compile(rb"(?<![\w.])(?!self\.)[A-Za-z_]\w*\." + re.escape(attribute.encode()) + rb"\s*=(?!=)")
    return tuple(
        file
        for file, data in texts
        if file.suffix == ".py" and b"cuda.is_available()" in data and set_to.search(data) is not None
    )
