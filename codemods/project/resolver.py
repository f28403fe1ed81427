"""The project a file belongs to: its root, where its imports lead among the project's
files, and the summaries of those files.

The root is the nearest folder above the file that holds ``.git``, ``pyproject.toml``,
``setup.py`` or ``setup.cfg`` (a repository, or a package's own folder)
(without one: in a run of several files, the folder they share; else the file's folder; that
folder, when it is a package's, climbed to the outermost package that holds it, whose folder above
is searched too: ``domainbed/scripts/train.py``'s ``from domainbed import algorithms``).
An import resolves the way Python would find it when the script runs from its own folder,
a folder above it, or the root: ``from util.misc import X`` is ``util/misc.py`` (or
``util/misc/__init__.py``) next to the file or under the root; relative imports follow
the file's package.  A src layout (``<root>/src/<package>/...``, a ``src`` folder with no
``__init__.py`` of its own) is searched too, after the root, the way the package is found
once installed: ``src/fairseq2/gang.py``'s ``from fairseq2.device import Device`` is
``src/fairseq2/device.py``.  A ``src`` that is itself a package is an ordinary package
under the root (``from src.x import y``), not a place where packages live.  After these, the
folders the file, or a project module it imports (``import _init_paths``), puts on ``sys.path``
by hand, where the tool can compute them (project/sys_path.py): ``lib/models/model.py`` for
``from models.model import create_model``; a folder above a root that no marker made (the script's
own folder) widens the project to it, and so does the nearest folder above such a root where a
module the script imports and finds nowhere else is (``python -m src.main`` from there puts it on
sys.path: ``from src.utils import *``), wherever the tool itself runs from.  Anything that resolves to no file of the project (installed
packages, the standard library) is outside it.

A summary (project/summary_from_facts.py) comes from converting the module in memory, read but never
written; modules converted in the same run are not pending.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from codemods.engine import speed
from codemods.files import FileProblem, read_bytes
from codemods.project.folder_scans import package_modules
from codemods.project.import_context import OwnsByLookup
from codemods.project.module_summary import Found, ModuleSummary, StarNames
from codemods.project.package_runs import package_run_folder
from codemods.project.project_files import ProjectFiles
from codemods.project.project_scans import launched_in_run, names_file, unseen_callers
from codemods.project.roots import is_package, marks_a_root, resolved
from codemods.project.star_names import star_exports
from codemods.project.sys_path import added_folders
from codemods.project.text_scans import (
    calls_under_rank_checks,
    import_requests,
    tests_the_rank,
    wraps_fsdp,
)

# How a module is summarised: its bytes, its path and its own import context.
Summarise = Callable[[bytes, "FileImports"], "ModuleSummary | None"]
_MAX_HOPS = 4
# How far above a script the folder it runs from (``os.getcwd()`` on sys.path) is looked for.
_MAX_RUN_FOLDER_HOPS = 3
# ``x.module``, a wrapper's model read (not ``.modules()``).
_READS_MODULE = re.compile(rb"\.\s*module\b")
# A summary made on demand converts the module, whose own analysis may ask for the
# summaries of its imports, and so on down the import graph: the nesting is bounded, so
# that how deep a project's imports go never decides how deep the tool recurses.
_MAX_NESTED_SUMMARIES = 16


class Project(ProjectFiles):
    """Summaries of the project's modules, by resolved path; computed once each (what its
    folders and files hold, read once for the run: project/project_files.py)."""

    def __init__(
        self,
        root: Path,
        summarise: Summarise,
        in_run: Collection[Path] = (),
        known: Mapping[Path, ModuleSummary | None] | None = None,
        imported: Collection[Path] | None = None,
        fsdp_imported: Collection[Path] = (),
    ) -> None:
        """``in_run``: the files this run converts (their summaries are not pending); ``known``:
        summaries the run has already made (by resolved path); ``imported``: the files of the run that
        another file of the run imports (found when needed, if not given), and ``fsdp_imported`` those
        of them that a file wrapping a model in FSDP imports."""
        super().__init__(root)
        self._imported = None if imported is None else {resolved(p) for p in imported}
        self._fsdp_imported = {resolved(p) for p in fsdp_imported}
        # Package __init__ files -> the project files they import (imported_files, once each).
        self.package_imports: dict[Path, set[Path]] = {}
        # Files of the run -> the project files they import (imported_files, once each: the
        # runner orders the run with them, and a file without torch asks them again).
        self.file_imports: dict[Path, set[Path]] = {}
        self.summarise = summarise
        self._in_run = in_run
        self._summaries: dict[Path, ModuleSummary | None] = {}
        self._reading: set[Path] = set()
        self._paths: dict[str, Path] = {}
        # Files -> the folders they, or the project modules they import, put on sys.path
        # (asked on a file's first import that its own folders do not resolve), and
        # modules -> the folders they put there themselves.
        self._path_folders: dict[Path, tuple[Path, ...]] = {}
        self._folders_added: dict[Path, tuple[Path, ...]] = {}
        self._requests: dict[Path, list[tuple[str, str]]] = {}
        # The folder above a root that is itself a package (``domainbed/``, its files run as
        # ``python -m domainbed.scripts.train`` from there): ``from domainbed import algorithms``
        # is searched from it, and leads only to the root's own modules (``contains``).
        self.package_base = self.root.parent if is_package(self.root) and self.root.parent != self.root else None
        self._star_names: dict[Path, StarNames | None] = {}
        self._module_readers: list[Path] | None = None  # the run's files that read ``.module`` (module_reader)
        self._rank_guarded: dict[Path, set[str]] | None = None  # project file -> rank_guarded_calls
        # Kept answers (with the shortcuts, engine/speed.py): a project's classes share bases, so
        # the same lookups come back many times.  Each is kept for the wider roots it was asked with
        # (they only grow: ``len`` tells them apart), and a lookup only when no answer it read was
        # transient: ``_transient`` counts the summaries asked while being made (an import cycle,
        # or deeper than the bound: None) and the sys.path folders asked while being found (``()``).
        self._transient = 0
        self._finding_folders: set[Path] = set()
        self._imports: dict[tuple[Path, int], FileImports] = {}
        self._lookups: dict[tuple[object, ...], Found | None] = {}
        self.learn(known or {})

    @functools.cached_property
    def in_run(self) -> set[Path]:
        """The files of the run, resolved when first needed (a run makes a Project per root, each given
        every file of the run; most never ask)."""
        return {resolved(p) for p in self._in_run}

    def imported_in_run(self, path: Path) -> bool:
        """Another file of the run imports ``path`` (a quick textual scan of the run's files, made once,
        when the runner did not say)."""
        if self._imported is None:
            self._imported = set()
            for file in self.in_run:
                try:
                    data = read_bytes(str(file))
                except FileProblem:
                    continue
                found = imported_files(self, file, data)
                self._imported |= found
                if wraps_fsdp(data):
                    self._fsdp_imported |= found
        return path in self._imported

    def named_methods(self, name: str, nested: bool = False) -> tuple[Found, ...]:
        """The methods named ``name`` of the project's classes that take a training step or run a
        training loop, in files other than tests (import_context.ImportContext.named_methods)."""
        found: list[Found] = []
        for path in self._method_files().get(name, ()):
            summary = self.summary(path)
            if summary is None:
                continue
            for qualname in sorted(summary.steps | summary.trainers | summary.loop_runners):
                owner, _, method = qualname.rpartition(".")
                if method == name and owner and (nested or "." not in owner):
                    found.append(Found(summary, qualname))
        return tuple(found)

    def imported_by_fsdp(self, path: Path) -> bool:
        """A file of the run that wraps a model in FSDP imports ``path``."""
        return self.imported_in_run(path) and path in self._fsdp_imported

    def module_reader(self, path: Path) -> str | None:
        """A file of the run other than ``path`` that reads ``.module`` on something (a quick
        textual scan of the run's files, made once), as findings show it; None: none does."""
        if self._module_readers is None:
            self._module_readers = []
            for file in sorted(self.in_run):
                try:
                    if _READS_MODULE.search(read_bytes(str(file))):
                        self._module_readers.append(file)
                except FileProblem:
                    continue
        return next((self.display(file) for file in self._module_readers if file != path), None)

    def rank_guarded_calls(self, path: Path) -> frozenset[str]:
        """The names that the run's files importing ``path`` call under a rank check (read once for the
        run: only files with such a check, and with project imports or not yet scanned for them, are parsed)."""
        if self._rank_guarded is None:
            self._rank_guarded = {}
            for file in sorted(self.in_run):
                try:
                    data = read_bytes(str(file))
                except FileProblem:
                    continue
                if self.file_imports.get(file) == set() or not tests_the_rank(data):
                    continue  # no project file to guard (as the runner found its imports), or no rank check
                names = calls_under_rank_checks(data)
                for imported in imported_files(self, file, data) if names else ():
                    self._rank_guarded.setdefault(imported, set()).update(names)
        return frozenset(self._rank_guarded.get(resolved(path), ()))

    def own_cuda_handed(self, path: Path, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        """What the run's other files hand ``name`` of ``path`` (import_context.ImportContext.own_cuda_handed),
        read from their summaries.  Not while a summary is being made: those files' summaries, made
        there, would miss what the modules being read hold (an import cycle), and be kept so."""
        if self._reading:
            self._transient += 1
            return ()
        target = resolved(path)
        shown = self.display(target)
        return tuple(
            (cls, pending)
            for file in sorted(self.in_run)
            if file != target and (summary := self.summary(file)) is not None
            for there, callee, at, keyword, cls, pending in summary.own_cuda_arguments
            if there == shown and callee == name and (at == index if at >= 0 else keyword == parameter)
        )

    def index_attributes_handed(self, path: Path, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        """ImportContext.index_attributes_handed, of ``path``; none while a summary is made (as own_cuda_handed)."""
        if self._reading:
            self._transient += 1
            return ()
        shown = self.display(target := resolved(path))
        return tuple(
            (summary.path, attribute)
            for file in sorted(self.in_run)
            if file != target and (summary := self.summary(file)) is not None
            for there, callee, at, keyword, attribute in summary.index_attributes_handed
            if there == shown and callee == name and (at == index if at >= 0 else keyword == parameter)
        ) + unseen_callers(self, target, name, imported_files)

    def wrapper_handed(self, path: Path, name: str, index: int, parameter: str) -> bool:
        """The run's other files hand ``name`` of ``path`` optimizer wrappers only, at least one
        (import_context.ImportContext.wrapper_handed), read from their summaries; False while a summary
        is being made (as ``own_cuda_handed``)."""
        if self._reading:
            self._transient += 1
            return False
        target = resolved(path)
        shown = self.display(target)
        handed = [
            wrapper
            for file in sorted(self.in_run)
            if file != target and (summary := self.summary(file)) is not None
            for there, callee, at, keyword, wrapper in summary.hands_wrappers
            if there == shown and callee == name and (at == index if at >= 0 else keyword == parameter)
        ]
        return bool(handed) and all(handed)

    def launched_importer(self, path: Path, requested: bool) -> tuple[str, bool | None] | None:
        """A file of the run that imports ``path`` and whose processes are started once per XLA
        device (its summary's ``launched``; ``launchable`` where the run makes one-device scripts
        multi-process, ``requested``): (that file as findings show it, True); (the first
        importer whose summary cannot be read, None) when none is known to be; ("", None): no file
        of the run imports it; None: importers of the run, none started so."""
        unknown: tuple[str, bool | None] | None = ("", None)
        target = resolved(path)
        for file in sorted(self.in_run):
            if file == target:
                continue
            try:
                data = read_bytes(str(file))
            except FileProblem:
                continue
            if target not in imported_files(self, file, data):
                continue
            summary = self.summary(file)
            if summary is None:
                unknown = (self.display(file), None) if not unknown or not unknown[0] else unknown
            elif unknown == ("", None):
                unknown = None
            if summary is not None and (summary.launched or (requested and summary.launchable)):
                return self.display(file), True
        return unknown

    def learn_imported(self, imported: Collection[Path], fsdp_imported: Collection[Path] = ()) -> None:
        """The run's files that another file of the run imports, and those that a file
        wrapping a model in FSDP imports, as the runner found them."""
        self._imported = {resolved(p) for p in imported}
        self._fsdp_imported = {resolved(p) for p in fsdp_imported}

    def learn(self, known: Mapping[Path, ModuleSummary | None]) -> None:
        """Summaries the run has made meanwhile."""
        for path, summary in known.items():
            if path not in self._summaries:
                self._keep(path, summary)

    def imports_of(self, path: Path) -> FileImports:
        """Where the file's imports lead (made once per file and wider roots)."""
        file = resolved(path)
        if not speed.shortcuts():
            return FileImports(self, file)
        key = (file, len(self.wider_roots))
        imports = self._imports.get(key)
        if imports is None:
            imports = self._imports[key] = FileImports(self, file)
        return imports

    def kept_lookup(self, key: tuple[object, ...], find: Callable[[], Found | None]) -> Found | None:
        """``find()``, kept under ``key`` (with the wider roots) when no answer it read was transient."""
        if not speed.shortcuts():
            return find()
        key = (*key, len(self.wider_roots))
        if key in self._lookups:
            return self._lookups[key]
        transient = self._transient
        found = find()
        if self._transient == transient and key[-1] == len(self.wider_roots):
            self._lookups[key] = found
        return found

    def summary(self, path: Path) -> ModuleSummary | None:
        """The module's summary; None if it cannot be read or converted (or is being summarised already:
        an import cycle; or is reached through more summaries made on demand than the bound)."""
        if path in self._summaries:
            return self._summaries[path]
        if path in self._reading or len(self._reading) >= _MAX_NESTED_SUMMARIES:
            self._transient += 1
            return None  # an import cycle, or a chain of imports deeper than the bound (not kept)
        self._reading.add(path)
        try:
            summary = self.summarise(read_bytes(str(path)), self.imports_of(path))
        except FileProblem:
            summary = None
        finally:
            self._reading.discard(path)
        return self._keep(path, summary)

    def _keep(self, path: Path, summary: ModuleSummary | None) -> ModuleSummary | None:
        if summary is not None:
            in_run = path in self.in_run  # (what it holds is converted, or reported, in this run)
            summary = replace(
                summary,
                path=self.display(path),
                pending=summary.pending and not in_run,
                holds=() if in_run else summary.holds,
                parameter_attribute_moves=frozenset() if in_run else summary.parameter_attribute_moves,
            )
            self._paths[summary.path] = path
        self._summaries[path] = summary
        return summary

    def resolved(self, shown: str) -> Path | None:
        """The file behind a summary's path."""
        return self._paths.get(shown)

    def path_folders(self, path: Path) -> tuple[Path, ...]:
        """The folders that the file, or a project module it imports (``import _init_paths``),
        puts on ``sys.path`` by hand (project/sys_path.py): searched after the file's own."""
        known = self._path_folders.get(path)
        if known is not None:
            if path in self._finding_folders:
                self._transient += 1
            return known
        self._path_folders[path] = ()  # (while finding them, the file's imports use its own folders)
        self._finding_folders.add(path)
        try:
            found = self._find_path_folders(path)
        finally:
            self._finding_folders.discard(path)
        if found is None:
            return ()
        self._path_folders[path] = found
        self._widen(found)
        return found

    def _find_path_folders(self, path: Path) -> tuple[Path, ...] | None:
        requests = self._requests.get(path)
        if requests is None:
            try:
                requests = self.requests_of(path, read_bytes(str(path)))
            except FileProblem:
                return None
        folders = list(self._folders_added_by(path))
        imports = FileImports(self, path)
        unresolved: list[str] = []
        for wanted in dict.fromkeys(module for module, _ in requests):
            located = imports.module_file(wanted)
            if located is not None and located[0] != path:
                folders.extend(self._folders_added_by(located[0]))
            elif located is None and not wanted.startswith("."):
                unresolved.append(wanted)
        absolute = [f for f in folders if f.is_absolute()]
        for relative in dict.fromkeys(f for f in folders if not f.is_absolute()):
            if (found := self._from_run_folder(path, unresolved, relative)) is not None:
                absolute.append(found)
        # Imports found only in a folder above (``python -m scripts.train`` there): without .git, else above a package.
        above = self._from_run_folder if not marks_a_root(self.root) else functools.partial(package_run_folder, self)
        if unresolved and (found := above(path, unresolved)):
            absolute.append(found)
        return tuple(f for f in dict.fromkeys(resolved(f) for f in absolute) if f not in imports.folders)

    def _from_run_folder(self, path: Path, wanted: Sequence[str], relative: Path = Path()) -> Path | None:
        """The folder ``relative`` to the one the script at ``path`` runs from (a folder it puts
        on sys.path from ``os.getcwd()``, project/sys_path.py): that of the script or the nearest
        one above it where a module the script imports and finds nowhere else is (YOLOv6's
        ``tools/train.py``, run from the repository's root, imports ``yolov6.core.engine``).  The
        folders looked at stop at a marked root (``.git``, ``pyproject.toml``: above it is another
        project) and go at most ``_MAX_RUN_FOLDER_HOPS`` up; None: no such folder."""
        start = path.parent
        for hops, folder in enumerate([start, *start.parents]):
            if hops > _MAX_RUN_FOLDER_HOPS:
                break
            base = folder / relative
            if any(self.module_file_at(base, tuple(module.split("."))) is not None for module in wanted):
                return base
            if marks_a_root(folder):
                break
        return None

    def _widen(self, folders: Sequence[Path]) -> None:
        """A root taken from the files' own folder for lack of a marker (a single script of a
        repository without .git or pyproject.toml) is no limit that the script itself sets:
        ``sys.path.append(dirname(dirname(abspath(__file__))))`` in ``results/run.py`` makes the
        folder above it, and its modules, the script's project; so does a folder beside the root
        (``tools/_init_paths.py`` putting ``../lib`` there: HRNet's ``lib`` beside ``tools``)."""
        above = [
            f
            for f in folders
            if (self.root.is_relative_to(f) and f != self.root and f.parent != f)
            or (f.parent == self.root.parent and f != self.root)
        ]
        if above and not marks_a_root(self.root):
            self.wider_roots.update(above)

    def requests_of(self, path: Path, data: bytes) -> list[tuple[str, str]]:
        """The ``(module, name)`` pairs the file's imports ask for (a quick textual scan, torch's
        left out; kept, with the folders the file puts on sys.path: its lookups ask again)."""
        requests = self._requests.get(path)
        if requests is None:
            requests = self._requests[path] = list(import_requests(data))
            self._folders_added[path] = added_folders(path, data)
        return requests

    def _folders_added_by(self, module: Path) -> tuple[Path, ...]:
        known = self._folders_added.get(module)
        if known is None:
            try:
                text = read_bytes(str(module))
            except FileProblem:
                text = b""
            known = self._folders_added[module] = added_folders(module, text)
        return known

    def star_names(self, path: Path, depth: int = 0) -> StarNames | None:
        """What ``from <the module at path> import *`` binds (project/star_names.py); None when the module
        cannot be read.  Its own star imports of project modules are followed a few modules deep; an
        import cycle binds nothing more."""
        if path in self._star_names:
            return self._star_names[path]
        self._star_names[path] = ()  # (an import cycle stops here)
        try:
            exports = star_exports(read_bytes(str(path)))
        except FileProblem:
            exports = None
        found: StarNames | None = None
        if exports is not None:
            names: dict[str, str | None] = {}
            for module in exports.stars if depth < _MAX_HOPS else ():
                names.update(self.imports_of(path).star_names(module, depth + 1) or ())
            names.update(exports.imported)
            names.update(dict.fromkeys(exports.own))
            found = tuple((name, qualified) for name, qualified in names.items() if exports.exported(name))
        self._star_names[path] = found
        return found


class FileImports(OwnsByLookup):
    """Where one file's imports lead (see the module docstring)."""

    def __init__(self, project: Project, path: Path, folders: Sequence[Path] = ()) -> None:
        """``folders``: where its absolute imports are searched, and nowhere else (default:
        see below, then the folders the file puts on sys.path)."""
        self.project = project
        self.path = path
        self.follows_sys_path = not folders
        if folders:
            self.folders = list(folders)
            self._key: tuple[object, ...] = (path, tuple(self.folders))  # (what its lookups are kept under)
            return
        # The file's folder, the folders between it and the root that are no package (a script
        # there that imports the file runs from it: FEDformer/exp/exp_main.py's ``exp.exp_basic``
        # is FEDformer/exp/exp_basic.py), the root.
        between = path.parent.parents if path.parent.is_relative_to(project.root) else ()
        scripts = (f for f in between if f.is_relative_to(project.root) and not (f / "__init__.py").exists())
        folders = [path.parent, *scripts, project.root, *sorted(project.wider_roots)]
        if project.package_base is not None:
            folders.append(project.package_base)
        if project.src_layout is not None:
            folders.append(project.src_layout)
        self.folders = list(dict.fromkeys(folders))
        self._key = (path, None, tuple(self.folders))

    def imported_in_run(self) -> bool:
        return self.project.imported_in_run(self.path)

    def names_project_module(self, head: str) -> bool:
        for base in self.folders:
            if not self.project.contains(folder := base / head):
                continue
            if folder.with_name(f"{head}.py").is_file() or (folder.is_dir() and any(folder.glob("*.py"))):
                return True
        return False

    def converted(self) -> bool:
        return self.path in self.project.in_run

    def leaves_out_imports(self, data: bytes) -> bool:
        in_run = self.project.in_run
        return self.path in in_run and not imported_files(self.project, self.path, data) <= in_run

    def imported_by_fsdp(self) -> bool:
        return self.project.imported_by_fsdp(self.path)

    def module_read_in_run(self) -> str | None:
        return self.project.module_reader(self.path)

    def rank_guarded_in_run(self) -> frozenset[str]:
        return self.project.rank_guarded_calls(self.path)

    def launched_importer(self, requested: bool) -> tuple[str, bool | None] | None:
        return self.project.launched_importer(self.path, requested)

    def launched_in_run(self) -> str | None:
        return launched_in_run(self.project.in_run, self.project.summary, self.project.display, self.path)

    def own_cuda_handed(self, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        return self.project.own_cuda_handed(self.path, name, index, parameter)

    def wrapper_handed(self, name: str, index: int, parameter: str) -> bool:
        return self.project.wrapper_handed(self.path, name, index, parameter)

    def index_attributes_handed(self, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        return self.project.index_attributes_handed(self.path, name, index, parameter)

    def imports_a_training_step(self, data: bytes) -> bool:
        return any(self.project.takes_a_training_step(file) for file in imported_files(self.project, self.path, data))

    def named_methods(self, name: str, nested: bool = False) -> tuple[Found, ...]:
        return self.project.named_methods(name, nested)

    def test_file(self) -> bool:
        return self.project.test_file(self.path)

    def others_in_run(self) -> bool:
        return bool(self.project.in_run - {self.path})

    def neighbours(self) -> tuple[str, ...]:
        try:
            files = sorted(self.path.parent.glob("*.py"))
        except OSError:  # a folder we may not list
            return ()
        return tuple(file.stem for file in files if file.stem != self.path.stem and file.stem.isidentifier())

    def own_module(self) -> str | None:
        return self.path.stem if self.path.stem.isidentifier() else None

    def config_file(self, relative: str) -> tuple[str, str] | None:
        return self.project.config_file(self.path.parent / relative)

    def mentioned_elsewhere(self, name: str) -> bool | None:
        return self.project.mentioned_elsewhere(self.path, name)

    def mentioned_outside(self, path: str, name: str) -> bool | None:
        return self.project.mentioned_elsewhere(Path(path), name)

    def cuda_checked(self, attribute: str, handed: bool = False) -> str | None:
        return self.project.cuda_checked(self.path, attribute, handed)

    def host_written(self, paths: frozenset[tuple[str, tuple[str, ...] | None]]) -> bool | None:
        return self.project.host_written(paths)

    def built_extensions(self) -> tuple[tuple[str, str], ...]:
        return self.project.built_extensions()

    def loadable_modules(self, package: str) -> tuple[str, ...]:
        added = self.project.path_folders(self.path) if self.follows_sys_path else ()
        return package_modules([*self.folders, *added], package, resolved(self.path), self.project.contains)

    def project_config_files(self) -> tuple[tuple[str, str], ...]:
        return self.project.config_files

    def arguments_without_optim(self) -> str | None:
        return self.project.arguments_without_optim

    def launchers(self) -> tuple[tuple[str, str], ...]:
        folder, root = self.path.parent, self.project.root
        places = dict.fromkeys((folder, folder / "scripts", root, root / "scripts"))
        me = resolved(self.path)
        found = []
        for place in places:
            for script, lines in self.project.shell_scripts(place):
                if named := [line for line in lines if names_file(line, self.path.name, me, (script.parent, root))]:
                    found.append((self.project.display(script), "\n".join(named)))
        return tuple(found)

    def star_names(self, module: str, depth: int = 0) -> StarNames | None:
        located = self.module_file(module)
        return None if located is None or located[1] else self.project.star_names(located[0], depth)

    def lookup(self, module: str, name: str, hops: int = 0) -> Found | None:
        """Follows names that a module imports from another (re-exports), and methods that a
        class inherits from its bases (of the module, or imported), a few hops deep (kept: the
        project's classes share bases)."""
        return self.project.kept_lookup((*self._key, module, name, hops), lambda: self._looked_up(module, name, hops))

    def _looked_up(self, module: str, name: str, hops: int) -> Found | None:
        found = self._lookup(module, name)
        if found is None or found.summary is None or hops >= _MAX_HOPS:
            return found
        return self._followed(found, hops) or found

    def _followed(self, found: Found, hops: int) -> Found | None:
        """Where the name ``found`` holds is defined: the module it is imported from, or the
        base class that defines the method (None: here); kept per module, name and hops (which
        file asks makes no difference: the summary says where its names lead)."""
        summary = found.summary
        assert summary is not None
        return self.project.kept_lookup(("followed", summary.path, found.name, hops), lambda: self._follow(found, hops))

    def _follow(self, found: Found, hops: int) -> Found | None:
        summary = found.summary
        assert summary is not None
        file = self.project.resolved(summary.path)
        if file is None or hops >= _MAX_HOPS:
            return None
        origin = summary.origin_of(found.name) if found.name else None
        if origin is not None:
            return self.project.imports_of(file).lookup(*origin, hops=hops + 1)
        method = found.name.partition(".")[2]
        for base in summary.inherits(found.name):
            inherited = f"{base}.{method}"
            if (local := summary.origin_of(base)) is None:  # a class of the same module
                further = self._followed(Found(summary, inherited), hops + 1)
                if further is None and summary.defines(inherited):
                    further = Found(summary, inherited)  # (that base defines it: here)
            else:
                further = self.project.imports_of(file).lookup(local[0], f"{local[1]}.{method}", hops=hops + 1)
            if further is not None:
                return further
        return None

    def lookup_from(self, summary: ModuleSummary, module: str, name: str) -> Found | None:
        file = self.project.resolved(summary.path)
        return None if file is None else self.project.imports_of(file).lookup(module, name)

    def _lookup(self, module: str, name: str) -> Found | None:
        located = self.module_file(module, name)
        if located is None:
            return None
        file, rest = located
        if name and rest == name.partition(".")[2] and (package := self.module_file(module)) is not None:
            # ``from helpers import Runner`` where helpers/__init__.py does ``from helpers.Runner import
            # Runner``: the package's own binding hides the submodule of the same name (and ``Runner.fit``
            # is the class's method, not a name of the submodule).
            summary = self.project.summary(package[0])
            if package[0] != file and summary is not None and summary.origin_of(name.split(".")[0]) is not None:
                return Found(summary, name)
        return Found(self.project.summary(file), rest)

    def module_file(self, module: str, name: str = "") -> tuple[Path, str] | None:
        """The project file that ``from module import name`` reads, and what of ``name``
        is left to find inside it (a name may itself be a submodule)."""
        dots = len(module) - len(module.lstrip("."))
        parts = [p for p in module.lstrip(".").split(".") if p]
        names = [p for p in name.split(".") if p]
        if dots:
            base = self.path.parent
            for _ in range(dots - 1):
                base = base.parent
            bases = [base]
        else:
            bases = self.folders
        whole = parts + names
        for base in bases:
            for size in range(len(whole), max(len(parts), 1) - 1, -1):
                file = self.project.module_file_at(base, tuple(whole[:size]))
                # A module never imports itself: utils/model.py's ``from model import X`` is model/.
                if file is not None and self.project.contains(file) and file != resolved(self.path):
                    return file, ".".join(whole[size:])
        if not dots and self.follows_sys_path and (added := self.project.path_folders(self.path)):
            return FileImports(self.project, self.path, added).module_file(module, name)
        return None


def imported_files(project: Project, path: Path, data: bytes, depth: int = 0) -> set[Path]:
    """The project files a file imports (a quick textual scan: enough to order a run), and
    those that an imported package's ``__init__.py`` imports in turn (``from a2c import algo``,
    whose ``__init__`` imports ``.a2c_acktr``: the file reaches that module through it)."""
    if depth == 0 and (known := project.file_imports.get(resolved(path))) is not None:
        return known
    imports = project.imports_of(path)
    found: set[Path] = set()
    for wanted, name in project.requests_of(resolved(path), data):
        located = imports.module_file(wanted, name)
        if located is not None:
            found.add(located[0])
    for package in [f for f in found if f.name == "__init__.py"] if depth < _MAX_HOPS else []:
        if package not in project.package_imports:
            project.package_imports[package] = set()  # (an import cycle among packages stops here)
            try:
                project.package_imports[package] = imported_files(project, package, read_bytes(str(package)), depth + 1)
            except FileProblem:
                pass
        found |= project.package_imports[package]
    found.discard(resolved(path))
    if depth == 0:
        project.file_imports[resolved(path)] = found
    return found
