"""Smoke harness: the tool over whole folders of real code, as a new user would run it.

For each folder and target, in a scratch copy: ``convert`` every file (as one run, so
the whole-repository analysis is used), check that what it wrote parses, ``convert
--check`` the result (a second run must change nothing), and ``lint`` the original.
Prints, per file, internal errors, exceptions, recursion failures, output that does
not parse, non-idempotent output and CUDA left in converted code without a finding on
its line; then figures per folder and the slowest files.  Exit 1 on any internal error,
recursion failure, unparsable output or non-idempotent file.

    python scripts/smoke.py FOLDER... [--target 2.9 --target sagemaker] [--json results.json]

Each folder runs in a child process (``-j N``: N at once) with a watchdog: a file that takes longer than
``--file-timeout`` seconds is reported as not terminating, and the run goes on.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import multiprocessing
import shutil
import signal
import sys
import tempfile
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_SKIPPED_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv"}
_CUDA_STRINGS = ("cuda", "nccl")


@dataclass
class FileResult:
    path: str
    seconds: float = 0.0
    error: str | None = None  # the first run's error, as the tool reported it
    lint_error: str | None = None
    unparsable: str | None = None
    not_idempotent: str | None = None  # the second run's diff (first lines)
    cuda_leftovers: list[int] = field(default_factory=list)  # output lines without a finding
    findings: int = 0
    changed: bool = False


@dataclass
class FolderResult:
    folder: str
    target: str
    files: list[FileResult]
    seconds: float

    def count(self, what: str) -> int:
        return sum(1 for f in self.files if getattr(f, what))

    @property
    def internal(self) -> list[FileResult]:
        return [f for f in self.files if _internal(f.error) or _internal(f.lint_error)]

    @property
    def recursion(self) -> list[FileResult]:
        return [f for f in self.files if "too deeply nested" in (f.error or "") + (f.lint_error or "")]

    @property
    def failures(self) -> int:
        return len(self.internal) + len(self.recursion) + self.count("unparsable") + self.count("not_idempotent")


def _internal(error: str | None) -> bool:
    return error is not None and error.startswith("internal error")


def _copy(folder: Path, into: Path) -> None:
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _SKIPPED_DIRS or (Path(directory, n).is_symlink())}

    shutil.copytree(folder, into, ignore=ignore, symlinks=False)


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def _cuda_lines(text: str) -> set[int]:
    """Lines whose code (not comments) names CUDA: ``torch.cuda``, ``.cuda()``, "cuda" strings."""
    lines: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and token.string == "cuda":
                lines.add(token.start[0])
            elif token.type == tokenize.STRING:
                try:
                    value = ast.literal_eval(token.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str) and value.split(":")[0].lower() in _CUDA_STRINGS:
                    lines.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


def _run(paths: list[str], mode: str, target: str, timeout: float, times: dict[str, float] | None = None) -> list:
    """The tool's own run over ``paths`` (as the CLI makes it, in one process), each file
    timed and watched: one that takes over ``timeout`` seconds fails with TimeoutError,
    which the tool reports as an internal error of that file, and the run goes on."""
    from codemods import runner
    from codemods.files import FileProblem, discover
    from codemods.pipeline import load_parser
    from codemods.rules import RuleSelection

    work = []
    for item in discover(paths):
        if not isinstance(item, FileProblem):
            work.append((item, runner.Job(mode, target, RuleSelection(select=("ALL",)))))  # type: ignore[arg-type]
    load_parser()  # not counted as the first file's time
    process_path = runner.process_path

    def timed(path: str, *args: object, **kwargs: object) -> object:
        signal.alarm(int(timeout))
        started = time.perf_counter()
        try:
            return process_path(path, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            signal.alarm(0)
            if times is not None:
                times[path] = time.perf_counter() - started

    def overtime(signum: int, frame: object) -> None:
        raise TimeoutError(f"no result after {timeout:.0f} s: the analysis does not terminate")

    signal.signal(signal.SIGALRM, overtime)
    runner.process_path = timed  # type: ignore[assignment]
    try:
        return runner.run(work, 1)
    finally:
        runner.process_path = process_path


def check_folder(folder: Path, target: str, timeout: float) -> FolderResult:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # as the CLI does
    started = time.perf_counter()
    results: dict[str, FileResult] = {}
    with tempfile.TemporaryDirectory(prefix="xla-smoke-") as scratch:
        copy = Path(scratch) / folder.name
        _copy(folder, copy)
        times: dict[str, float] = {}
        for report in _run([str(copy)], "write", target, timeout, times):
            rel = _relative(report.path, copy)
            result = results[rel] = FileResult(rel, seconds=times.get(report.path, 0.0), error=report.error)
            result.findings = len(report.findings)
            result.changed = report.changed
            if report.error is not None or not rel.endswith(".py"):
                continue
            data = Path(report.path).read_bytes()
            text = data.decode("utf-8-sig", errors="replace")
            if report.changed:
                try:
                    ast.parse(data)  # as CPython reads the file (BOM, encoding cookie)
                except SyntaxError as error:
                    result.unparsable = f"line {error.lineno}: {error.msg}"
            flagged = {f.line for f in report.findings}
            result.cuda_leftovers = sorted(_cuda_lines(text) - flagged) if "torch" in text else []
        for report in _run([str(copy)], "diff", target, timeout):
            rel = _relative(report.path, copy)
            if report.changed and rel in results:
                results[rel].not_idempotent = "\n".join(report.diff.splitlines()[:40])
    for report in _run([str(folder)], "lint", target, timeout):
        rel = _relative(report.path, folder)
        if rel in results:
            results[rel].lint_error = report.error
    return FolderResult(str(folder), target, sorted(results.values(), key=lambda r: r.path), time.perf_counter() - started)


def _child(folder: str, target: str, timeout: float, queue: multiprocessing.Queue) -> None:
    result = check_folder(Path(folder), target, timeout)
    queue.put(json.dumps(asdict(result)))


def _in_child(folder: Path, target: str, timeout: float) -> FolderResult:
    """A fresh process per folder and target: the tool keeps per-run state, and a
    crash of the harness itself must not hide the other folders."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_child, args=(str(folder), target, timeout, queue))
    process.start()
    data = queue.get()
    process.join()
    raw = json.loads(data)
    return FolderResult(raw["folder"], raw["target"], [FileResult(**f) for f in raw["files"]], raw["seconds"])


def _print(result: FolderResult, verbose: bool) -> None:
    name = Path(result.folder).name
    print(
        f"{name} [{result.target}]: {len(result.files)} files, {result.count('changed')} changed, "
        f"{sum(f.findings for f in result.files)} findings, {len(result.internal)} internal errors, "
        f"{len(result.recursion)} recursion failures, {result.count('unparsable')} unparsable outputs, "
        f"{result.count('not_idempotent')} not idempotent, "
        f"{sum(1 for f in result.files if f.error and not _internal(f.error))} input errors, "
        f"{sum(len(f.cuda_leftovers) for f in result.files)} CUDA lines without a finding, {result.seconds:.1f} s"
    )
    for f in result.files:
        where = f"  {name}/{f.path}"
        if _internal(f.error) or "too deeply nested" in (f.error or ""):
            print(f"{where}: convert: {f.error}")
        elif f.error and verbose:
            print(f"{where}: input error: {f.error}")
        if _internal(f.lint_error) or "too deeply nested" in (f.lint_error or ""):
            print(f"{where}: lint: {f.lint_error}")
        if f.unparsable:
            print(f"{where}: output does not parse: {f.unparsable}")
        if f.not_idempotent:
            print(f"{where}: a second run changes it:\n" + "\n".join("    " + line for line in f.not_idempotent.splitlines()))
        if f.cuda_leftovers and verbose:
            print(f"{where}: CUDA without a finding on lines {', '.join(map(str, f.cuda_leftovers[:20]))}")


def markdown_table(results: list[FolderResult]) -> str:
    rows = [
        "| folder | target | files | changed | findings | internal errors | recursion | unparsable | not idempotent "
        "| input errors | CUDA lines without a finding | seconds |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        rows.append(
            f"| {Path(r.folder).name} | {r.target} | {len(r.files)} | {r.count('changed')} | "
            f"{sum(f.findings for f in r.files)} | {len(r.internal)} | {len(r.recursion)} | {r.count('unparsable')} | "
            f"{r.count('not_idempotent')} | {sum(1 for f in r.files if f.error and not _internal(f.error))} | "
            f"{sum(len(f.cuda_leftovers) for f in r.files)} | {r.seconds:.0f} |"
        )
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--target", action="append", choices=("2.9", "sagemaker"))
    parser.add_argument("--file-timeout", type=float, default=180.0)
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument("-j", "--jobs", type=int, default=1, help="folders checked at once (one process each)")
    parser.add_argument("--json", type=Path, help="write every result here")
    parser.add_argument("--markdown", type=Path, help="write the figures per folder as a Markdown table here")
    parser.add_argument("-v", "--verbose", action="store_true", help="also input errors and CUDA leftovers")
    args = parser.parse_args(argv)
    targets = args.target or ["2.9", "sagemaker"]
    results = []
    work = [(folder, target) for folder in args.folders for target in targets]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each task waits on its own child process
        for result in pool.map(lambda task: _in_child(task[0], task[1], args.file_timeout), work):
            results.append(result)
            _print(result, args.verbose)
            sys.stdout.flush()
            if args.json is not None:  # as the results come: a long run stopped early keeps them
                args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    timed = sorted(((f.seconds, Path(r.folder).name, r.target, f.path) for r in results for f in r.files), reverse=True)
    print("\nslowest files (convert, one process):")
    for seconds, name, target, path in timed[: args.slowest]:
        print(f"  {seconds * 1000:8.0f} ms  {name}/{path} [{target}]")
    files = {(r.folder, f.path) for r in results for f in r.files}
    failures = sum(r.failures for r in results)
    print(
        f"\n{len(args.folders)} folders, {len(files)} files, {len(targets)} target(s): "
        f"{sum(len(r.internal) for r in results)} internal errors, {sum(len(r.recursion) for r in results)} recursion "
        f"failures, {sum(r.count('unparsable') for r in results)} unparsable outputs, "
        f"{sum(r.count('not_idempotent') for r in results)} not idempotent"
    )
    if args.markdown is not None:
        args.markdown.write_text(markdown_table(results))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
