"""Running the pipeline over many files: read, convert, write or diff, one FileReport
each; a file that fails never stops the others."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

from codemods.containers import connect_images
from codemods.files import FileProblem, is_read_only, read_bytes, write_atomically
from codemods.pipeline import ConversionError, convert_source
from codemods.report import FileReport, Mode, unified_diff
from codemods.rules import RuleSelection, Severity

# Below this many files a process pool costs more than it saves.
_POOL_THRESHOLD = 16
# Larger training scripts are generated code, not worth minutes of parsing.
DEFAULT_MAX_BYTES = 2**20


@dataclass(frozen=True)
class Job:
    """What to do with one file (per-path overrides make jobs differ within a run)."""

    mode: Mode
    target: str
    selection: RuleSelection
    max_bytes: int | None = DEFAULT_MAX_BYTES
    fail_on: Severity = "error"
    annotate: bool = False  # TODO comments where a person is needed (convert only)


def process_bytes(path: str, data: bytes, job: Job) -> tuple[FileReport, bytes]:
    """Convert one file's bytes; returns the report and the new bytes."""
    report = FileReport(path, fail_on=job.fail_on)
    locate = "output" if job.mode == "write" else "input"
    try:
        conversion = convert_source(
            data,
            target=job.target,
            selection=job.selection,
            locate=locate,
            max_bytes=job.max_bytes,
            filename=path,
            annotate=job.annotate and job.mode != "lint",
        )
    except ConversionError as error:
        report.error = str(error)
        return report, data
    except Exception as error:  # a bug of ours must not stop the other files
        report.error = f"internal error ({type(error).__name__}: {error}); the file was left alone, please report it"
        return report, data
    output = conversion.output
    assert isinstance(output, bytes)
    report.findings = conversion.findings
    report.images = conversion.images
    report.changed = conversion.changed and job.mode != "lint"
    if report.changed and job.mode == "diff":
        report.diff = unified_diff(path, _text(data, conversion.encoding), _text(output, conversion.encoding))
    return report, output


def _text(data: bytes, encoding: str) -> str:
    return data.decode(encoding, "replace")


def process_path(path: str, job: Job) -> FileReport:
    """One file, read to written; a read-only file is checked but not written."""
    try:
        data = read_bytes(path)
        read_only = job.mode == "write" and is_read_only(path)
        report, output = process_bytes(path, data, replace(job, mode="check") if read_only else job)
        if report.changed and read_only:
            report.error = "read-only file: not converted (make it writable, or see --diff)"
        elif report.changed and job.mode == "write" and report.error is None:
            write_atomically(path, output, data)
    except FileProblem as problem:
        return FileReport(path, error=str(problem), fail_on=job.fail_on)
    return report


def _ignore_interrupts() -> None:
    """Workers finish the file in hand; the parent decides when to stop."""
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
    they run)."""
    reports = _run_each(work, workers, done)
    connect_images(reports)
    return reports


def _run_each(
    work: Sequence[tuple[str, Job]], workers: int, done: Callable[[FileReport], None] | None
) -> list[FileReport]:
    if workers <= 1 or len(work) < 2:
        results = (process_path(path, job) for path, job in work)
        return [_tell(done, report) for report in results]
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        results = pool.map(process_path, [p for p, _ in work], [j for _, j in work], chunksize=4)
        reports = [_tell(done, report) for report in results]
    except BaseException:
        # Interrupted: files being written complete (each atomically), queued ones never start.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return reports


def _tell(done: Callable[[FileReport], None] | None, report: FileReport) -> FileReport:
    if done is not None:
        done(report)
    return report
