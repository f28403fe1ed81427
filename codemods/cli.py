"""The command line: parse options, call the library, render, set the exit code.

Exit codes: 0 clean; 1 changes made or needed, or findings at or above the fail-on
severity (for convert: findings it did not fix); 2 usage error or a file that could
not be processed (the other files are still processed).
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from codemods import __version__, progress, rule_docs
from codemods.config import ConfigError, Settings, load
from codemods.conversion import SKIP_FILE
from codemods.doctor.static import DEFAULT_FAMILIES as DOCTOR_FAMILIES
from codemods.engine.report import RENDERERS, FileReport, Mode, Report, coloured_diff
from codemods.engine.rule import RuleSelection
from codemods.files import FileProblem, discover, excluded_files, is_dockerfile, is_notebook, read_bytes
from codemods.pipeline import is_read
from codemods.rules import SEVERITIES, Severity
from codemods.runner import DEFAULT_MAX_BYTES, Job, process_bytes, project_of, run, workers_for
from codemods.targets import DEFAULT_TARGET, TARGETS
from codemods.verify.options import REFERENCES, VerifyOptions
from codemods.verify.report import RENDERERS as VERIFY_RENDERERS

# The collections Python makes as the process ends would look through every object it
# holds (the modules, LibCST's tables, the caches), all of which go with the process:
# they are frozen first (about 50 M instructions of a start).
atexit.register(gc.freeze)


def _codes(value: str | None) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in (value or "").split(",") if c.strip())


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _common(command: Callable[..., Any]) -> Callable[..., Any]:
    options: list[Decorator] = [
        click.argument("paths", nargs=-1, type=click.Path(readable=False)),
        click.option(
            "--target",
            type=click.Choice(sorted(TARGETS)),
            default=None,
            help=f"torch_xla names to write (default {DEFAULT_TARGET}, or [tool.xla-codemod] target).",
        ),
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help="Worker processes; 0 picks one per CPU for large runs.",
        ),
        click.option("--select", help="Comma-separated rule codes or prefixes to run (default: all)."),
        click.option("--ignore", help="Comma-separated rule codes or prefixes to skip."),
        click.option("--exclude", multiple=True, help="Glob of paths to skip (repeatable)."),
        click.option(
            "--max-size",
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            help=f"Largest file to convert, in MiB (default {DEFAULT_MAX_BYTES / 2**20:g}).",
        ),
        *_report_options(list(RENDERERS)),
        click.option(
            "--fail-on",
            type=click.Choice(SEVERITIES),
            default=None,
            help="Exit 1 on findings of this severity or above (default error, or [tool.xla-codemod] fail-on).",
        ),
        click.option(
            "--show-info",
            is_flag=True,
            default=None,
            help="Also show the infos the tool fixes, which ask nothing of you (imports added or "
            "removed, CUDA-only settings dropped); or [tool.xla-codemod] show-info = true.",
        ),
        click.option(
            "--allow-empty",
            is_flag=True,
            help="Exit 0 when PATH holds nothing to check (a Python file, notebook or Dockerfile).",
        ),
    ]
    return _applied(options)(command)


def _applied(options: list[Decorator]) -> Decorator:
    """The options in the order given (as they are listed by --help)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _report_options(formats: list[str]) -> list[Decorator]:
    """--report and --format, for a command whose renderers are named `formats`."""
    return [
        click.option(
            "--report",
            "report_file",
            type=click.Path(allow_dash=True),
            help="Write the report to FILE ('-' for standard output).",
        ),
        click.option(
            "--format",
            "report_format",
            type=click.Choice(formats),
            default="text",
            show_default=True,
            help="Report format.",
        ),
    ]


def _runs_script(formats: list[str]) -> Decorator:
    """The end of a command that runs SCRIPT (doctor, verify): --report, --format and the
    script's command line."""
    return _applied(
        [
            *_report_options(formats),
            click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="[--] SCRIPT [ARGS]..."),
        ]
    )


def _steps_option(default: int, help: str) -> Decorator:
    return click.option("--steps", type=click.IntRange(min=1), default=default, show_default=True, help=help)


def _timeout_option(help: str) -> Decorator:
    return click.option(
        "--timeout", type=click.FloatRange(min=0, min_open=True), default=600, show_default=True, help=help
    )


def _python_option(help: str) -> Decorator:
    return click.option("--python", default=sys.executable, show_default="this interpreter", help=help)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120})
@click.version_option(__version__, prog_name="xla-codemod")
def main() -> None:
    """Port native PyTorch training scripts to PyTorch/XLA."""


@main.command(short_help="Rewrite PATH... (default: the current folder) in place; - for stdin to stdout.")
@_common
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if any file would change.")
@click.option("--annotate", is_flag=True, help="Write a `# TODO(xla-codemod): ...` comment above what needs a person.")
@click.option(
    "--distributed",
    is_flag=True,
    help="Also make one-device scripts multi-process (sampler, _mp_fn, the XLA launcher).",
)
def convert(diff: bool, check: bool, annotate: bool, distributed: bool, **options: Any) -> None:
    """Rewrite PATH... in place (a file, a folder, or - for stdin to stdout; no PATH: the
    current folder)."""
    mode: Mode = "diff" if diff else "check" if check else "write"
    sys.exit(_execute(mode, annotate=annotate, distributed=distributed, **options))


@main.command(short_help="Report findings for PATH... (default: the current folder); rewrite nothing.")
@_common
def lint(**options: Any) -> None:
    """Report findings for PATH... without rewriting (no PATH: the current folder); exit 1
    on findings at or above --fail-on.  A fix's finding says what `convert` would do."""
    sys.exit(_execute("lint", **options))


@main.command(short_help="List every rule, or print the page of each rule CODE names.")
@click.argument("codes", nargs=-1)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="markdown: the pages of docs/rules/ (every rule's, without CODE).",
)
def rules(codes: tuple[str, ...], output_format: str) -> None:
    """List every rule (code, [*] if the tool fixes it, severity, summary), or print
    the page of each rule CODE names (a code or a prefix: why, examples)."""
    patterns = _codes(",".join(codes))
    unknown = RuleSelection(select=patterns).unknown_patterns()
    if unknown:
        raise click.UsageError(f"unknown rule code(s): {', '.join(unknown)} (see `xla-codemod rules`)")
    chosen = rule_docs.select(patterns)
    if output_format == "json":
        click.echo(rule_docs.render_json(chosen), nl=False)
    elif output_format == "markdown":
        click.echo(rule_docs.render_markdown(chosen), nl=False)
    else:
        click.echo(rule_docs.render_pages(chosen) if patterns else rule_docs.render_list(chosen), nl=False)


@main.command(
    context_settings={"allow_interspersed_args": False},
    short_help="Run SCRIPT a few steps on XLA; name the lines that recompile or sync.",
)
@_steps_option(20, "Stop after this many step barriers (torch_xla.sync(), xm.mark_step(), MpDeviceLoader).")
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Steps allowed to compile before a steady state is expected.",
)
@_timeout_option("Stop the script after this many seconds.")
@_python_option("Interpreter with torch_xla that runs the script.")
@click.option(
    "--cross-reference",
    "families",
    default=",".join(DOCTOR_FAMILIES),
    show_default=True,
    help="Static rule families to cite where they flag the same line ('' for none).",
)
@click.option("--show-output", is_flag=True, help="Show the script's output (on standard error).")
@_runs_script(sorted(RENDERERS))
def doctor(
    command: tuple[str, ...], families: str, report_file: str | None, report_format: str, **options: Any
) -> None:
    """Run SCRIPT [ARGS...] a few steps on XLA and name the lines that recompile or sync.

    Exit 0: steady state; 1: graphs still compiled after warm-up; 2: the script cannot run.
    """
    # Imported here, not at the top: a conversion's start does not pay for the doctor.
    from codemods.doctor.diagnose import DoctorOptions, diagnose

    try:
        diagnosis = diagnose(command[0], command[1:], DoctorOptions(cross_reference=_codes(families), **options))
    except KeyboardInterrupt:
        click.echo("interrupted: the script was stopped", err=True)
        sys.exit(130)
    _emit(diagnosis.report, report_file, report_format, to_stderr=False)
    sys.exit(diagnosis.exit_code)


@main.command(
    context_settings={"allow_interspersed_args": False},
    short_help="Port a scratch copy of SCRIPT, run it on XLA next to the original; check devices, barriers, losses.",
)
@_steps_option(10, "Optimizer steps each run makes before it is stopped.")
@click.option(
    "--reference",
    type=click.Choice(REFERENCES),
    default="auto",
    show_default=True,
    help="Where the original runs as the reference: CUDA if a GPU is present (auto), the CPU, or not at all.",
)
@click.option("--converted", is_flag=True, help="SCRIPT is a port already: run it as it is (no conversion).")
@click.option(
    "--original",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --converted: the original script, run as the reference.",
)
@click.option(
    "--target",
    type=click.Choice(sorted(TARGETS)),
    default=DEFAULT_TARGET,
    show_default=True,
    help="torch_xla names the conversion writes.",
)
@_timeout_option("Stop each run after this many seconds.")
@_python_option("Interpreter with torch and torch_xla that runs the script.")
@_runs_script(sorted(VERIFY_RENDERERS))
def verify(command: tuple[str, ...], report_file: str | None, report_format: str, **options: Any) -> None:
    """Port a scratch copy of SCRIPT's project, run it on XLA next to the original and check
    the port: model-on-xla, optimizer-params-on-xla, inputs-on-xla, step-barrier,
    bounded-graphs, no-cuda-calls, loss-match.

    Exit 0: every check passed (or was skipped); 1: a check failed; 2: the script could not run.
    """
    if options["original"] is not None and not options["converted"]:
        raise click.UsageError("--original is taken with --converted (without it, SCRIPT is the original)")

    def progress(message: str) -> None:
        click.echo(f"verify: {message}", err=True)

    # Imported here, not at the top: a conversion's start does not pay for the verifier.
    from codemods.verify.verify import verify as run_verify

    try:
        verification = run_verify(command[0], command[1:], VerifyOptions(progress=progress, **options))
    except KeyboardInterrupt:
        click.echo("interrupted: the runs were stopped", err=True)
        sys.exit(130)
    if verification.error is not None:
        click.echo(f"{command[0]}: error: {verification.error}", err=True)
    _write_report(VERIFY_RENDERERS[report_format](verification), report_file, to_stderr=False)
    sys.exit(verification.exit_code)


def _settings() -> Settings:
    try:
        return load(Path.cwd())
    except ConfigError as error:
        raise click.UsageError(str(error)) from None


def _execute(
    mode: Mode,
    paths: tuple[str, ...],
    target: str | None,
    jobs: int,
    select: str | None,
    ignore: str | None,
    exclude: tuple[str, ...],
    max_size: float | None,
    report_file: str | None,
    report_format: str,
    fail_on: Severity | None,
    show_info: bool | None,
    allow_empty: bool,
    annotate: bool = False,
    distributed: bool = False,
) -> int:
    settings = _settings()
    signal.signal(signal.SIGTERM, _interrupt)
    # LibCST walks trees recursively: room for deeply nested (still valid) code.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    unknown = RuleSelection(select=_codes(select), ignore=_codes(ignore)).unknown_patterns()
    if unknown:
        raise click.UsageError(f"unknown rule code(s): {', '.join(unknown)} (see `xla-codemod rules`)")
    command_line = Settings(target, _codes(select), _codes(ignore), max_size=max_size, fail_on=fail_on)

    def job_for(path: str) -> Job:
        """Command-line options win over the file's settings (overrides included; none
        for standard input, which has no path)."""
        file = settings if path == "-" else settings.for_path(path)
        size = command_line.max_size or file.max_size
        return Job(
            mode,
            command_line.target or file.target or DEFAULT_TARGET,
            RuleSelection(
                select=command_line.select or file.select or ("ALL",), ignore=command_line.ignore + file.ignore
            ),
            int(size * 2**20) if size else DEFAULT_MAX_BYTES,
            command_line.fail_on or file.fail_on or "error",
            annotate,
            distributed,
        )

    shows_info = settings.show_info if show_info is None else show_info
    if "-" in paths:
        if len(paths) > 1:
            raise click.UsageError("'-' (standard input) cannot be combined with other paths")
        return _stdin(job_for("-"), report_file, report_format, shows_info)
    if not paths and os.environ.get("PRE_COMMIT"):
        # pre-commit passed no file (an `always_run` hook with none staged): nothing to do.
        return 0
    paths = paths or (".",)

    work: list[tuple[str, Job]] = []
    reports: list[FileReport] = []
    for item in discover(paths, exclude + settings.exclude):
        if isinstance(item, FileProblem):
            path, _, message = str(item).partition(": ")
            reports.append(FileReport(path, error=message))
        else:
            work.append((item, job_for(item)))
    if not work and not reports and not allow_empty and not excluded_files(paths, exclude + settings.exclude):
        click.echo(
            f"xla-codemod: error: nothing to check in {' '.join(paths)}: no Python file, notebook or Dockerfile "
            "(in a git work tree: none that git tracks or would track); --allow-empty makes this a pass",
            err=True,
        )
        return 2
    bar = progress.Progress(len(work), sys.stderr) if progress.wanted(sys.stderr) else None
    try:
        reports.extend(run(work, workers_for(len(work), jobs), bar))
    except KeyboardInterrupt:
        click.echo("interrupted: every file is either as it was or fully converted", err=True)
        return 130
    finally:
        if bar is not None:
            bar.close()
    if len(paths) == 1 and len(work) == 1 and work[0][0] == paths[0]:
        _say_if_unread(*work[0])
    report = Report(reports, mode, shows_info, __version__)
    code_on_stdout = mode == "diff"
    if code_on_stdout:
        _print_diffs(reports)
    _emit(report, report_file, report_format, to_stderr=code_on_stdout)
    return report.exit_code()


def _say_if_unread(path: str, job: Job) -> None:
    """The one Python file the user named, left unparsed by the quick look at its bytes: say
    why, rather than only count it unchanged (issue 32)."""
    if is_notebook(path) or is_dockerfile(path):
        return
    try:
        raw = read_bytes(path)
    except FileProblem:
        return
    if is_read(raw, project_of(Path(path), job).imports_of(Path(path))):
        return
    why = (
        f"it carries `# {SKIP_FILE}`"
        if SKIP_FILE.encode() in raw
        else "it names none of torch, sagemaker, transformers, lightning, ignite and trl, takes no training "
        "step (`.backward(`, `.step()`, `zero_grad(`) and uses no project module with one"
    )
    click.echo(f"xla-codemod: {path} was not parsed: {why}", err=True)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops a run the way Ctrl-C does: no file is left half written."""
    raise KeyboardInterrupt


def _stdin(job: Job, report_file: str | None, report_format: str, show_info: bool) -> int:
    data = sys.stdin.buffer.read()
    here = Path.cwd() / "-"  # imports resolve from the current folder
    file_report, output = process_bytes("-", data, job, project_of(here, job).imports_of(here))
    if job.mode == "write":
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
    elif job.mode == "diff":
        _print_diffs([file_report])
    report = Report([file_report], job.mode, show_info, __version__)
    _emit(report, report_file, report_format, to_stderr=job.mode in ("write", "diff"))
    return report.exit_code()


def _print_diffs(reports: list[FileReport]) -> None:
    """The diffs on standard output, in colour on a terminal only (and never with NO_COLOR)."""
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    for file in reports:
        click.echo(coloured_diff(file.diff) if colour else file.diff, nl=False, color=colour)


def _emit(report: Report, report_file: str | None, report_format: str, *, to_stderr: bool) -> None:
    _write_report(RENDERERS[report_format](report), report_file, to_stderr=to_stderr)


def _write_report(text: str, report_file: str | None, *, to_stderr: bool) -> None:
    """The report in FILE, or on standard output ('-'); with no --report, on standard error
    where the code itself goes to standard output (`to_stderr`)."""
    if report_file is None:
        click.echo(text, nl=False, err=to_stderr)
    elif report_file == "-":
        click.echo(text, nl=False)
    else:
        try:
            Path(report_file).write_text(text, encoding="utf-8")
        except OSError as error:
            raise click.FileError(report_file, hint=error.strerror) from None
