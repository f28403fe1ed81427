"""Running the pipeline over many files: read, convert, write or diff, one FileReport
each; a file that fails never stops the others."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Literal

from codemods.files import FileProblem, read_bytes, write_atomically
from codemods.pipeline import ConversionError, convert_source
from codemods.report import FileReport, unified_diff
from codemods.rules import RuleSelection

Mode = Literal["write", "check", "diff", "lint"]

# Below this many files a process pool costs more than it saves.
_POOL_THRESHOLD = 16


@dataclass(frozen=True)
class Job:
    mode: Mode
    target: str
    selection: RuleSelection


def process_bytes(path: str, data: bytes, job: Job) -> tuple[FileReport, bytes]:
    """Convert one file's bytes; returns the report and the new bytes."""
    report = FileReport(path)
    locate = "output" if job.mode == "write" else "input"
    try:
        conversion = convert_source(data, target=job.target, selection=job.selection, locate=locate)
    except ConversionError as error:
        report.error = str(error)
        return report, data
    except RecursionError:
        report.error = "too deeply nested to convert"
        return report, data
    output = conversion.output
    assert isinstance(output, bytes)
    report.findings = conversion.findings
    report.changed = conversion.changed and job.mode != "lint"
    if report.changed and job.mode == "diff":
        report.diff = unified_diff(path, _text(data), _text(output))
    return report, output


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def process_path(path: str, job: Job) -> FileReport:
    try:
        data = read_bytes(path)
        report, output = process_bytes(path, data, job)
        if report.changed and job.mode == "write" and report.error is None:
            write_atomically(path, output, data)
    except FileProblem as problem:
        return FileReport(path, error=str(problem))
    return report


def run(paths: Iterable[str], job: Job, jobs: int) -> list[FileReport]:
    paths = list(paths)
    if jobs == 0:
        workers = min(os.cpu_count() or 1, 8) if len(paths) >= _POOL_THRESHOLD else 1
    else:
        workers = jobs
    if workers <= 1 or len(paths) < 2:
        return [process_path(p, job) for p in paths]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(process_path, paths, [job] * len(paths), chunksize=4))
