"""Running the pipeline over many files: read, convert, write or diff, one FileReport
each; a file that fails never stops the others."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from codemods.conversion import ConversionError, needs_parsing
from codemods.engine.report import FileReport, Mode, notebook_diff, unified_diff
from codemods.engine.rule import RuleSelection
from codemods.files import FileProblem, is_dockerfile, is_read_only, read_bytes, write_atomically
from codemods.pipeline import convert_source, load_parser, summarise_with
from codemods.project.import_context import ImportContext
from codemods.project.module_summary import ModuleSummary
from codemods.project.reexports import with_reexports
from codemods.project.resolver import Project, imported_files
from codemods.project.roots import find_root, resolved
from codemods.project.run_order import waves
from codemods.project.run_summaries import RunSummaries
from codemods.project.text_scans import wraps_fsdp
from codemods.rules import Severity

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

# Below this many files a process pool costs more than it saves.
_POOL_THRESHOLD = 16
# Larger training scripts are generated code, not worth minutes of parsing.
DEFAULT_MAX_BYTES = 2**20
# No file of a megabyte takes this long (the largest measured: seconds); one that does has met a
# loop of ours without end, reported as an internal error instead of a run that never finishes.
FILE_TIME_LIMIT = 300.0


class _Overtime(BaseException):
    """Raised by the alarm in the middle of a conversion: a BaseException, so that no
    ``except Exception`` on the way swallows it."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (an alarm signal: only in the main thread, and only
    where no caller watches with an alarm of its own, such as scripts/smoke.py's per-file bound,
    which this one must not replace)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or not hasattr(signal, "setitimer")
        or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None)
        or signal.getitimer(signal.ITIMER_REAL)[0] > 0
    ):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _Overtime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class Job:
    """What to do with one file (per-path overrides make jobs differ within a run)."""

    mode: Mode
    target: str
    selection: RuleSelection
    max_bytes: int | None = DEFAULT_MAX_BYTES
    fail_on: Severity = "error"
    annotate: bool = False  # TODO comments where a person is needed (convert only)
    distributed: bool = False  # make one-device scripts multi-process too (convert --distributed)


def process_bytes(path: str, data: bytes, job: Job, imports: ImportContext | None = None) -> tuple[FileReport, bytes]:
    """Convert one file's bytes; returns the report and the new bytes."""
    report = FileReport(path, fail_on=job.fail_on, target=job.target)
    locate: Literal["output", "input"] = "output" if job.mode == "write" else "input"
    try:
        with _time_limit(FILE_TIME_LIMIT):
            conversion = convert_source(
                data,
                target=job.target,
                selection=job.selection,
                locate=locate,
                max_bytes=job.max_bytes,
                filename=path,
                annotate=job.annotate and job.mode != "lint",
                imports=imports,
                distributed=job.distributed,
            )
    except ConversionError as error:
        report.error, report.error_line, report.error_col = error.message, error.line, error.col
        return report, data
    except _Overtime as error:
        report.error = (
            f"internal error (the conversion took more than {FILE_TIME_LIMIT:g} s, in {tool_frame(error)}); "
            "the file was left alone, please report it"
        )
        return report, data
    except Exception as error:  # a bug of ours must not stop the other files
        report.error = (
            f"internal error ({type(error).__name__}: {error}, in {tool_frame(error)}); "
            "the file was left alone, please report it"
        )
        return report, data
    output = conversion.output
    assert isinstance(output, bytes)
    report.findings = conversion.findings
    report.images = conversion.images
    # What a skipped module re-exports matters only to the run's files that import it.
    wanted = _IMPORTED is None or resolved(Path(path)) in _IMPORTED
    stars = imports.star_names if imports is not None else None
    report.summary = with_reexports(conversion.summary, data, stars) if wanted else conversion.summary
    report.held = conversion.held
    report.changed = conversion.changed and job.mode != "lint"
    if report.changed and job.mode == "diff":
        if conversion.cells:  # a notebook: its changed cells' sources, not its JSON
            report.diff = notebook_diff(path, conversion.cells)
        else:
            report.diff = unified_diff(path, _text(data, conversion.encoding), _text(output, conversion.encoding))
    return report, output


def tool_frame(error: BaseException) -> str:
    """Where in the tool ``error`` was raised: its innermost frame in this package."""
    import traceback  # only on a failure

    package = Path(__file__).parent
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).is_relative_to(package)]
    if not frames:
        return "an unknown place"
    frame = frames[-1]
    return f"{Path(frame.filename).relative_to(package.parent).as_posix()}:{frame.lineno} {frame.name}"


def _text(data: bytes, encoding: str) -> str:
    return data.decode(encoding, "replace")


# The run this process takes part in: the files it converts (their summaries are not
# pending), and one Project per root and per way of converting.
_RUN_FILES: frozenset[Path] = frozenset()
_IMPORTED: frozenset[Path] | None = None  # the run's files that another of its files imports
_FSDP_IMPORTED: frozenset[Path] = frozenset()  # those of them that a file wrapping a model in FSDP imports
_PROJECTS: dict[tuple[Path, str, RuleSelection, int | None], Project] = {}
_ROOTS: dict[Path, Path] = {}  # folder -> its project's root, for this run
_ROOT_MARKS: dict[Path, bool] = {}  # folder -> whether it holds .git, pyproject.toml..., for this run
_RUN_TOP: Path | None = None  # the folder the run's files share (the root of files without a marked one)


def _set_run(
    files: frozenset[Path], imported: frozenset[Path] | None = None, fsdp_imported: frozenset[Path] = frozenset()
) -> None:
    global _RUN_FILES, _IMPORTED, _FSDP_IMPORTED, _RUN_TOP
    _RUN_FILES = files
    shared = Path(os.path.commonpath([file.parent for file in files])) if files else None
    _RUN_TOP = shared if shared is not None and shared.parent != shared else None  # never the filesystem's root
    _IMPORTED = imported
    _FSDP_IMPORTED = fsdp_imported
    _PROJECTS.clear()
    _ROOTS.clear()
    _ROOT_MARKS.clear()


def _set_imported(imported: frozenset[Path], fsdp_imported: frozenset[Path]) -> None:
    """The run's files that another of its files imports (and those that a file wrapping a
    model in FSDP imports), once the run has scanned them."""
    global _IMPORTED, _FSDP_IMPORTED
    _IMPORTED = imported
    _FSDP_IMPORTED = fsdp_imported
    for project in _PROJECTS.values():
        project.learn_imported(imported, fsdp_imported)


def project_of(path: Path, job: Job) -> Project:
    """The project ``path`` belongs to, as this run converts it (roots are kept by folder:
    every file of a folder asks, and the folders do not change during a run)."""
    file = resolved(path)
    root = _ROOTS.get(file.parent)
    if root is None:
        root = _ROOTS[file.parent] = find_root(file, _RUN_TOP, _ROOT_MARKS)
    key = (root, job.target, job.selection, job.max_bytes)
    project = _PROJECTS.get(key)
    if project is None:
        project = Project(
            root,
            summarise_with(job.target, job.selection, job.max_bytes),
            in_run=_RUN_FILES,
            imported=_IMPORTED,
            fsdp_imported=_FSDP_IMPORTED,
        )
        _PROJECTS[key] = project
    return project


def process_path(path: str, job: Job, known: dict[Path, ModuleSummary | None] | None = None) -> FileReport:
    """One file, read to written; a read-only file is checked but not written.  ``known``:
    summaries of the project files it imports that this run has made already."""
    try:
        data = read_bytes(path)
        read_only = job.mode == "write" and is_read_only(path)
        imports = None
        if not is_dockerfile(path):
            project = project_of(Path(path), job)
            project.learn(known or {})
            imports = project.imports_of(Path(path))
        report, output = process_bytes(path, data, replace(job, mode="check") if read_only else job, imports)
        if report.changed and read_only:
            report.error = "read-only file: not converted (make it writable, or see --diff)"
        elif report.changed and job.mode == "write" and report.error is None:
            write_atomically(path, output, data)
    except FileProblem as problem:
        return FileReport(path, error=str(problem), fail_on=job.fail_on)
    return report


def _start_worker(files: frozenset[Path], imported: frozenset[Path], fsdp_imported: frozenset[Path]) -> None:
    """Workers know the run, and finish the file in hand: the parent decides when to stop."""
    _set_run(files, imported, fsdp_imported)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def workers_for(files: int, requested: int = 0) -> int:
    """Worker processes: as many as asked for; with 0, one per CPU (at most 8) for runs
    large enough to pay for a pool, and none of our own under pre-commit, which already
    runs one hook process per CPU (it sets PRE_COMMIT=1 in hook environments)."""
    if requested:
        return requested
    if files < _POOL_THRESHOLD or os.environ.get("PRE_COMMIT"):
        return 1
    return min(os.cpu_count() or 1, 8)


def run(
    work: Sequence[tuple[str, Job]], workers: int = 1, done: Callable[[FileReport], None] | None = None
) -> list[FileReport]:
    """Every (path, job)'s report, in order (``done`` hears of each as it is ready);
    then the checks across files (estimators against the Dockerfiles of the images
    they run).

    Files go in rounds, each after the project files it imports, so that a file is
    converted with the summaries of its imports made by this run (no file is converted
    twice)."""
    files = frozenset(resolved(path) for path, _ in work)
    _set_run(files)
    parses = len(work) > 1 and any(_parsed(path) for path, _ in work)
    if parses:
        load_parser()
    with _few_collections() if parses else contextlib.nullcontext():
        return _run_rounds(work, workers, done, files)


def _run_rounds(
    work: Sequence[tuple[str, Job]], workers: int, done: Callable[[FileReport], None] | None, files: frozenset[Path]
) -> list[FileReport]:
    depends, fsdp_files = _imports_within(work, files)
    imported = frozenset(file for imports in depends.values() for file in imports)
    fsdp_imported = frozenset(file for wrapper in fsdp_files for file in depends[wrapper])
    _set_imported(imported, fsdp_imported)
    order = {resolved(path): index for index, (path, _) in enumerate(work)}
    by_path = {resolved(path): (path, job) for path, job in work}
    reports: dict[int, FileReport] = {}
    summaries: dict[Path, ModuleSummary | None] = {}
    pool = None
    if workers > 1 and len(work) > 1:
        from concurrent.futures import ProcessPoolExecutor  # not loaded by runs without a pool

        pool = ProcessPoolExecutor(
            max_workers=workers, initializer=_start_worker, initargs=(files, imported, fsdp_imported)
        )
    try:
        for round_ in waves(list(order), depends):
            tasks = [(*by_path[f], {d: summaries.get(d) for d in depends.get(f, ()) if d in summaries}) for f in round_]
            for file, report in zip(round_, _run_round(tasks, pool, workers)):
                summaries[file] = report.summary  # type: ignore[assignment]  # FileReport.summary is typed object (the engine does not import project's ModuleSummary): it holds one
                reports[order[file]] = _tell(done, report)
    except BaseException:
        if pool is not None:
            # Interrupted: files being written complete (each atomically), queued ones never start.
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    if pool is not None:
        pool.shutdown()
    ordered = [reports[i] for i in range(len(work))]
    if any(report.held for report in ordered):
        release_held(ordered)
    if any(report.images for report in ordered):
        from codemods.containers.across_files import connect_images  # imports LibCST: only for runs that need it

        connect_images(ordered)
    return ordered


def release_held(reports: Sequence[FileReport]) -> None:
    """The findings that files held back (engine.report.HeldFinding) that stand, now that
    every file of the run is converted: each one's condition reads the run's summaries."""
    run = RunSummaries(
        [
            replace(report.summary, path=_shown(report.path))
            for report in reports
            if isinstance(report.summary, ModuleSummary)
        ],
        file_of=resolved,
    )
    for report in reports:
        if report.held:
            holder = resolved(report.path)
            standing = [
                finding
                for held in report.held
                if (finding := held.condition.standing(held.finding, holder, run)) is not None
            ]
            if standing:
                report.findings = sorted([*report.findings, *standing], key=lambda f: (f.line, f.col, f.rule))
            report.held = ()


def _shown(path: str) -> str:
    """A path as findings show it: relative to the current folder where it can be."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return path


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Garbage collection tuned for converting files one after another: what the imports
    built lives as long as the run, so no collection looks through it again, and each
    file's trees (freed by reference counting, as nothing in them refers back) mostly go
    before a collection would look through them.  (Workers of a pool fork inside it.)"""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _parsed(path: str) -> bool:
    """Whether converting the file parses it (or checks a Dockerfile)."""
    try:
        return is_dockerfile(path) or needs_parsing(read_bytes(path))
    except FileProblem:
        return False


def _imports_within(work: Sequence[tuple[str, Job]], files: frozenset[Path]) -> tuple[dict[Path, set[Path]], set[Path]]:
    """Which files of the run each file imports; the files that wrap a model in FSDP."""
    depends: dict[Path, set[Path]] = {}
    fsdp_files: set[Path] = set()
    for path, job in work:
        if is_dockerfile(path):
            continue
        file = resolved(path)
        try:
            data = read_bytes(path)
        except FileProblem:
            continue
        depends[file] = imported_files(project_of(file, job), file, data) & files
        if wraps_fsdp(data):
            fsdp_files.add(file)
    return depends, fsdp_files


def _run_round(
    tasks: list[tuple[str, Job, dict[Path, ModuleSummary | None]]], pool: ProcessPoolExecutor | None, workers: int
) -> list[FileReport]:
    if pool is None or len(tasks) < 2:
        return [process_path(path, job, known) for path, job, known in tasks]
    chunk = max(1, min(4, len(tasks) // (4 * workers)))
    return list(pool.map(process_path, *zip(*tasks), chunksize=chunk))


def _tell(done: Callable[[FileReport], None] | None, report: FileReport) -> FileReport:
    if done is not None:
        done(report)
    return report
