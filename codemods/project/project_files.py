"""What a project's folders and files hold, read once for the run: its shell scripts and YAML
config files, the files that take a training step or name a function, the extensions its
``setup.py`` builds, which module files its folders hold, and which paths are the project's.
The resolver's ``Project`` (project/resolver.py) is made of these reads, which need no import
resolved, and the lookups and summaries that follow the imports; apart, so that the resolver
holds where imports lead and this what the files are."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

from codemods.engine import speed
from codemods.files import SKIPPED_DIRS, FileProblem, read_bytes
from codemods.project.folder_scans import MAX_CONFIG_BYTES, Mentions, read_config, yaml_files
from codemods.project.import_context import is_test_path
from codemods.project.project_scans import extensions_built, methods_by_name, module_file_under
from codemods.project.roots import marks_a_root, resolved
from codemods.project.text_scans import takes_a_training_step

if TYPE_CHECKING:  # (written_files reads LibCST: a run of files without torch loads none)
    from codemods.checkpoint.written_files import ChainPath


class ProjectFiles:
    """The reads of a project's folders and files that need no import resolved, each made once."""

    def __init__(self, root: Path) -> None:
        self.root = resolved(root)
        # Folders above (or beside) an unmarked root that a file puts on sys.path (the resolver's
        # Project._widen): the project's modules are under them too, and every module's imports search them.
        self.wider_roots: set[Path] = set()
        self._module_files: dict[tuple[Path, tuple[str, ...]], Path | None] = {}
        self._entries: dict[Path, frozenset[str] | None] = {}  # folder -> its entries' names, lowered (_may_hold)
        self._takes_a_step: dict[Path, bool] = {}
        self._methods: dict[str, tuple[Path, ...]] | None = None  # (named_methods)
        self._shell_scripts: dict[Path, tuple[tuple[Path, tuple[str, ...]], ...]] = {}
        self._extensions: tuple[tuple[str, str], ...] | None = None  # (built_extensions)
        self._scanned_configs: dict[Path, str] = {}  # resolved path -> text, once config_files has scanned
        self._mentions = Mentions(self.root)  # (mentioned_elsewhere)
        self._written: dict[frozenset[ChainPath], bool | None] = {}  # host_written's answers
        self._contains: dict[Path, bool] = {}
        self._contains_roots = 0  # len(wider_roots) when _contains was filled

    def shell_scripts(self, folder: Path) -> tuple[tuple[Path, tuple[str, ...]], ...]:
        """The shell scripts of a folder (``*.sh``, none larger than a config file) and their
        lines, continuation lines joined: read once for the run (every file asks its own folder's,
        the root's and their ``scripts/``)."""
        known = self._shell_scripts.get(folder)
        if known is None:
            read = []
            try:
                for path in sorted(folder.glob("*.sh")):
                    if path.stat().st_size <= MAX_CONFIG_BYTES:
                        read.append((path, tuple(path.read_text("utf-8").replace("\\\n", " ").splitlines())))
            except (OSError, UnicodeDecodeError):  # a folder we may not list, a file that is not text: no more read
                pass
            known = self._shell_scripts[folder] = tuple(read)
        return known

    @functools.cached_property
    def config_files(self) -> tuple[tuple[str, str], ...]:
        """The project's YAML config files (path as findings name it, text), read once for the run."""
        scanned = yaml_files(self.root)
        self._scanned_configs = {resolved(path): text for path, text in scanned}
        return tuple((self.display(path), text) for path, text in scanned)

    def config_file(self, path: Path) -> tuple[str, str] | None:
        """A YAML config file that a module names (path as findings name it, text): its text from
        the run's scan of the config files where that has read it, else read now (``read_config``,
        the scan's reader); None where there is none the tool can read."""
        text = self._scanned_configs.get(resolved(path)) if self._scanned_configs else None
        if text is None:
            read = read_config(path)
            if read is None:
                return None
            text = read[1]
        return self.display(path), text

    @functools.cached_property
    def src_layout(self) -> Path | None:
        """``<root>/src`` when it holds the project's packages (a folder that is no package
        of its own; see the module docstring)."""
        src = self.root / "src"
        try:
            if src.is_dir() and not (src / "__init__.py").exists():
                return src
        except OSError:  # a folder we may not look into: no layout to use
            pass
        return None

    @functools.cached_property
    def arguments_without_optim(self) -> str | None:
        """The ``training_args.py`` of the transformers copy the project ships whose TrainingArguments
        has no ``optim`` field (project/vendored.py), as findings name it; None: it ships none such."""
        from codemods.project.vendored import arguments_without_optim

        above = () if marks_a_root(self.root) else self.root.parents[:2]
        found = arguments_without_optim([self.root, *sorted(self.wider_roots)], above)
        return self.display(found) if found is not None else None

    def takes_a_training_step(self, path: Path) -> bool:
        """The project file calls ``.backward(``, ``.step()`` or ``zero_grad(`` (read once)."""
        if path not in self._takes_a_step:
            try:
                self._takes_a_step[path] = takes_a_training_step(read_bytes(str(path)))
            except FileProblem:
                self._takes_a_step[path] = False
        return self._takes_a_step[path]

    def test_file(self, path: Path) -> bool:
        """``path`` is a test file of the project (its path from the root: ``tests/``, ``test_*.py``)."""
        try:
            return is_test_path(path.relative_to(self.root).as_posix())
        except ValueError:  # outside the root: its name alone
            return is_test_path(path.name)

    def _method_files(self) -> dict[str, tuple[Path, ...]]:
        """The project's files (tests left out) that take a training step, by the names of the
        methods they define (project_scans.py): read once for the run."""
        if self._methods is None:
            self._methods = methods_by_name(self.root, self.test_file)
        return self._methods

    def mentioned_elsewhere(self, path: Path, name: str) -> bool:
        """Whether a file of the project other than ``path`` names ``name`` (folder_scans.Mentions)."""
        return self._mentions.elsewhere(path, name)

    def host_written(self, paths: frozenset[ChainPath]) -> bool | None:
        """Whether the project's ``torch.save`` calls that may write one of ``paths`` (a chain, and the
        literals naming the file beyond it) all save host data (checkpoint/written_files.py): None where
        none does, or the project is too large to scan."""
        if paths not in self._written:
            self._written[paths] = self._scan_written(paths)
        return self._written[paths]

    def _scan_written(self, paths: frozenset[ChainPath]) -> bool | None:
        import libcst as cst

        from codemods.checkpoint.written_files import host_written

        texts = self._mentions.texts()
        if texts is None:
            return None
        needles = [chain.encode() for chain, _ in paths]
        answer: bool | None = None
        for file, data in texts:
            if file.suffix != ".py" or b"torch.save" not in data or not any(n in data for n in needles):
                continue
            try:
                module = cst.parse_module(data)
            except cst.ParserSyntaxError:  # not Python the tool reads: not known
                return None
            found = host_written(module, paths)
            if found is False:
                return False
            answer = answer or found
        return answer

    def cuda_checked(self, path: Path, attribute: str, handed: bool = False) -> str | None:
        """The file (as findings name it) that sets ``self.<attribute>`` to CUDA's availability
        check, the only value the project gives it (folder_scans.Mentions); with ``handed``, one
        that sets a namespace's ``<attribute>`` beside such a check."""
        found = self._mentions.cuda_checked(path, attribute, handed)
        return None if found is None else self.display(found)

    def built_extensions(self) -> tuple[tuple[str, str], ...]:
        """The extension modules the project's ``setup.py`` files build (text_scans.py's
        ``built_extensions``), as findings name the files: read once for the run."""
        if self._extensions is None:
            self._extensions = extensions_built(self.root, self.display)
        return self._extensions

    def display(self, path: Path) -> str:
        """A path as findings show it: relative to the current folder where it can be."""
        try:
            return os.path.relpath(path)
        except ValueError:
            return str(path)

    def module_file_at(self, base: Path, parts: tuple[str, ...]) -> Path | None:
        """The file of module ``parts`` under ``base`` (kept: every file of a folder asks)."""
        key = (base, parts)
        if key not in self._module_files:
            self._module_files[key] = module_file_under(base, list(parts)) if self._may_hold(base, parts) else None
        return self._module_files[key]

    def _may_hold(self, base: Path, parts: tuple[str, ...]) -> bool:
        """Whether ``base`` has an entry that module ``parts`` starts from (``parts[0]``, or
        ``parts[0].py``), by its listing, read once for the run (as Python's own finder caches one),
        instead of looking for the module's files one by one.  Names are compared in any case (a file
        system may ignore it: the files are looked for then); True for a name that is not ASCII, for
        a folder that cannot be listed, and without the shortcuts (engine/speed.py)."""
        if not parts or not parts[0].isascii() or not speed.shortcuts():
            return True
        if base not in self._entries:
            try:
                self._entries[base] = frozenset(name.lower() for name in os.listdir(base))
            except OSError:  # no such folder, or not one we may list: its files are looked for
                self._entries[base] = None
        entries = self._entries[base]
        first = parts[0].lower()
        return entries is None or first in entries or f"{first}.py" in entries

    def contains(self, path: Path) -> bool:
        """``path`` is under the root or a wider root, in no folder a run skips (kept per path)."""
        if not speed.shortcuts():
            return self._contains_now(path)
        if self._contains_roots != len(self.wider_roots):
            self._contains.clear()
            self._contains_roots = len(self.wider_roots)
        known = self._contains.get(path)
        if known is None:
            known = self._contains[path] = self._contains_now(path)
        return known

    def _contains_now(self, path: Path) -> bool:
        return any(
            path.is_relative_to(top) and not any(part in SKIPPED_DIRS for part in path.relative_to(top).parts)
            for top in (self.root, *self.wider_roots)
        )
