"""Running the pipeline over many files: read, convert, write or diff, one FileReport
each; a file that fails never stops the others."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Literal

from codemods.containers import connect_images
from codemods.files import FileProblem, is_read_only, read_bytes, write_atomically
from codemods.pipeline import ConversionError, convert_source
from codemods.report import FileReport, unified_diff
from codemods.rules import RuleSelection

Mode = Literal["write", "check", "diff", "lint"]

# Below this many files a process pool costs more than it saves.
_POOL_THRESHOLD = 16
# Larger training scripts are generated code, not worth minutes of parsing.
DEFAULT_MAX_BYTES = 2**20


@dataclass(frozen=True)
class Job:
    mode: Mode
    target: str
    selection: RuleSelection
    max_bytes: int | None = DEFAULT_MAX_BYTES


def process_bytes(path: str, data: bytes, job: Job) -> tuple[FileReport, bytes]:
    """Convert one file's bytes; returns the report and the new bytes."""
    report = FileReport(path)
    locate = "output" if job.mode == "write" else "input"
    try:
        conversion = convert_source(
            data, target=job.target, selection=job.selection, locate=locate, max_bytes=job.max_bytes, filename=path
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
        report, output = process_bytes(path, data, Job("check", job.target, job.selection, job.max_bytes) if read_only else job)
        if report.changed and read_only:
            report.error = "read-only file: not converted (make it writable, or see --diff)"
        elif report.changed and job.mode == "write" and report.error is None:
            write_atomically(path, output, data)
    except FileProblem as problem:
        return FileReport(path, error=str(problem))
    return report


def _ignore_interrupts() -> None:
    """Workers finish the file in hand; the parent decides when to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def run(paths: Iterable[str], job: Job, jobs: int) -> list[FileReport]:
    """Every file's report; then the checks across files (estimators against the
    Dockerfiles of the images they run)."""
    reports = _run_each(list(paths), job, jobs)
    connect_images(reports)
    return reports


def _run_each(paths: list[str], job: Job, jobs: int) -> list[FileReport]:
    if jobs == 0:
        workers = min(os.cpu_count() or 1, 8) if len(paths) >= _POOL_THRESHOLD else 1
    else:
        workers = jobs
    if workers <= 1 or len(paths) < 2:
        return [process_path(p, job) for p in paths]
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        reports = list(pool.map(process_path, paths, [job] * len(paths), chunksize=4))
    except BaseException:
        # Interrupted: files being written complete (each atomically), queued ones never start.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return reports
