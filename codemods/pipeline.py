"""One file, top to bottom: read -> analyse -> rewrite -> report.

``convert_source`` is the library entry point; the command line only finds files,
calls it, writes results and renders the report.
"""

from __future__ import annotations

import ast
import difflib
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, TypeVar

from codemods.annotate import add_todos
from codemods.conversion import (
    SKIP_FILE,
    Conversion,
    ConversionError,
    another_frameworks_file,
    chooses_a_device,
    needs_parsing,
)
from codemods.distributed.env_ranks import env_rank_readers
from codemods.engine.report import Finding, HeldFinding
from codemods.engine.rule import Rule, RuleSelection
from codemods.engine.suppressions import suppressions
from codemods.files import is_dockerfile, is_notebook
from codemods.project.import_context import ImportContext
from codemods.project.module_summary import ModuleSummary
from codemods.project.reexports import with_reexports
from codemods.targets import DEFAULT_TARGET, Target, get_target

# LibCST and everything built on it are imported when a file needs parsing (in
# _parsed, _python_script, _check_dockerfile): a run over files without torch never loads them.
if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.positions import Positions, Printed
    from codemods.engine.rewriter import PendingFinding
    from codemods.facts import Facts
    from codemods.project.resolver import FileImports, Summarise

Source = TypeVar("Source", str, bytes)

# Launcher scripts (estimators) and model-parallel training scripts also get the SM checks.
_SAGEMAKER = (b"sagemaker", b"smdistributed")


def convert_source(
    source: Source,
    *,
    target: str = DEFAULT_TARGET,
    selection: RuleSelection | None = None,
    locate: Literal["output", "input"] = "output",
    max_bytes: int | None = None,
    filename: str | None = None,
    annotate: bool = False,
    imports: ImportContext | None = None,
    distributed: bool = False,
) -> Conversion:
    """Convert one script's text (str, or bytes to keep its encoding, BOM and newlines).

    ``filename`` says what kind of file it is: a Dockerfile (``Dockerfile``,
    ``*.Dockerfile``, ``Dockerfile.*``) is checked, never rewritten; a Jupyter notebook
    (``*.ipynb``: bytes or its JSON text) has its code cells converted as one program
    (codemods/notebooks/convert.py); anything else is Python.
    ``imports`` tells where the file's imports lead (the project's modules and their
    summaries, see codemods/project/resolver.py); without it, modules that are neither the
    standard library nor well-known packages are taken for unread project modules.

    Findings point into the output (``locate="output"``, after an in-place convert) or
    into the input (for lint, --check and --diff).  ``annotate`` writes a TODO comment
    above each statement that needs a person (see annotate.py).  ``distributed`` makes a
    one-device script multi-process too (``convert --distributed``).  Raises ConversionError
    for input that is not Python text or cannot be parsed, and for a relevant file
    larger than ``max_bytes``; never returns output that does not parse.
    """
    name_table = get_target(target)
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    if b"\0" in raw:
        raise ConversionError(
            "binary file (it holds NUL bytes), not Python source", raw[: raw.index(b"\0")].count(b"\n") + 1
        )
    if filename is not None and is_dockerfile(filename):
        return _check_dockerfile(source, raw, filename, selection or RuleSelection(), max_bytes)
    if filename is not None and is_notebook(filename):
        from codemods.notebooks.convert import convert_notebook

        def convert_code(code: str, name: str | None) -> Conversion:
            """The code cells as one script (never multi-process: a notebook runs in one
            kernel), or the script a ``%%writefile name`` cell writes."""
            return convert_source(
                code,
                target=target,
                selection=selection,
                locate=locate,
                max_bytes=max_bytes,
                filename=name,
                annotate=annotate,
                imports=imports,
            )

        converted = convert_notebook(raw, convert_code, selection or RuleSelection(), locate)
        if isinstance(source, bytes) or isinstance(converted.output, str):
            return converted
        return replace(converted, source=source, output=converted.output.decode("utf-8"))
    if not is_read(raw, imports):
        # (a module without torch still tells the scripts that call it where its ranks come from)
        return Conversion(
            source, source, [], summary=ModuleSummary(unread=True, env_rank_readers=env_rank_readers(raw))
        )
    if max_bytes is not None and len(raw) > max_bytes:
        raise ConversionError(
            f"{len(raw) / 2**20:.1f} MiB is over the {max_bytes / 2**20:.1f} MiB limit for conversion "
            "(raise it with --max-size); left alone",
            1,
        )
    if _bracket_depth(raw) > _DEEP:
        # Deep nesting can overflow LibCST's native parser; CPython stops at 200 levels.
        try:
            _parse_with_cpython(source)
        except SyntaxError as error:
            raise ConversionError(f"cannot parse: {error.msg}", error.lineno, error.offset) from None
    options = _Options(name_table, selection or RuleSelection(), locate, filename, imports, distributed)
    # Launcher scripts are few: their analysis loads only for them.
    convert = _launcher_script if any(word in raw for word in _SAGEMAKER) else _python_script
    try:
        if not annotate:
            return convert(source, raw, options)

        def input_located() -> list[Finding]:
            return convert(source, raw, replace(options, locate="input")).findings

        conversion = convert(source, raw, replace(options, locate="output"))
        return _with_todos(conversion, None if locate == "output" else input_located)
    except RecursionError:
        if _cpython_accepts(source):
            raise  # CPython reads it: the recursion is the tool's own (an internal error)
        raise ConversionError("too deeply nested to convert") from None


def is_read(raw: bytes, imports: ImportContext | None) -> bool:
    """Whether a Python file is parsed: it names torch (or a library built on it) or takes a
    training step, or the run that knows its project reads it for the other modules."""
    return needs_parsing(raw) or (
        imports is not None and not another_frameworks_file(raw) and _read_for_the_project(raw, imports)
    )


def _read_for_the_project(raw: bytes, imports: ImportContext) -> bool:
    """A file that names no torch is read all the same for what it does with the project's other
    modules: it uses some the run does not convert, chooses the device for them, imports one
    that takes a training step (its loop drives the step: a barrier goes there), or imports a
    module named at run time (``importlib.import_module(name)``, an ``exec`` of an import: a single-file
    run says so, XLA003)."""
    return (
        imports.leaves_out_imports(raw)
        or chooses_a_device(raw)
        or imports.imports_a_training_step(raw)
        or any(call in raw for call in _DYNAMIC_IMPORTS)
    )


# The calls that may import a project module named at run time (``exec(f"from model.{name} import ...")``).
_DYNAMIC_IMPORTS = (b"import_module(", b"exec(", b"__import__(")


def _cpython_accepts(source: str | bytes) -> bool:
    """Whether CPython's parser takes the file within its own nesting limits, as ``python``
    runs it (its default recursion limit, which the command line raises for LibCST): only
    a file it refuses is too deeply nested for anyone."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(min(limit, _PYTHON_RECURSION_LIMIT))
    try:
        _parse_with_cpython(source)
    except (RecursionError, MemoryError, SyntaxError):
        return False
    finally:
        sys.setrecursionlimit(limit)
    return True


_PYTHON_RECURSION_LIMIT = 1000  # CPython's default


def load_parser() -> None:
    """Loads LibCST and what is built on it (as a Python file does on first use): before a
    process pool forks, so that its workers share them instead of loading them each."""
    import codemods.analyse
    import codemods.concerns
    import codemods.engine.roundtrip  # noqa: F401


def _with_todos(conversion: Conversion, input_located: Callable[[], list[Finding]] | None) -> Conversion:
    """``conversion`` with TODO comments for what it did not fix; its findings follow
    the inserted lines, or come from ``input_located`` when they point into the input."""
    text = conversion.output if isinstance(conversion.output, str) else conversion.output.decode(conversion.encoding)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    annotated, moved = add_todos(
        text[len(bom) :], [(f.line, f.rule, f.message) for f in conversion.findings if not f.fixed]
    )
    findings = conversion.findings if input_located is None else input_located()
    if annotated == text[len(bom) :]:
        return replace(conversion, findings=findings)
    try:
        _parse_with_cpython(annotated)
    except SyntaxError as error:
        raise ConversionError(
            f"internal error: the annotated code does not parse ({error.msg}); the file was left alone", error.lineno
        ) from None
    if input_located is None:
        findings = [replace(f, line=moved(f.line)) for f in findings]
    output = bom + annotated
    return replace(
        conversion,
        output=output if isinstance(conversion.output, str) else output.encode(conversion.encoding),
        findings=findings,
    )


_DEEP = 100
_BRACKETS = re.compile(rb"[()\[\]{}]")


def _bracket_depth(raw: bytes) -> int:
    """How deep brackets nest (strings and comments included: an upper bound)."""
    depth = peak = 0
    for bracket in _BRACKETS.findall(raw):
        depth += 1 if bracket in b"([{" else -1
        peak = max(peak, depth)
    return peak


def _parsed(source: Source, raw: bytes) -> _Parsed:
    """Step 1 of a Python file: LibCST's tree, which must print the file back exactly."""
    import libcst as cst

    from codemods.engine.roundtrip import NotReproduced, parse_exactly

    try:
        # What LibCST cannot read or print back exactly (a tail of comments) is set aside.
        module, tail, encoding, printed_input = parse_exactly(source)
    except NotReproduced as lost:
        raise ConversionError(
            "LibCST cannot give this file back exactly from this line on; left alone so that nothing is lost",
            lost.line,
        ) from None
    except cst.ParserSyntaxError as error:
        raise _syntax_error(source, error) from None
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConversionError(
            f"cannot decode byte {raw[error.start : error.start + 1]!r} as {error.encoding}: "
            "declare the file's encoding with a coding comment",
            line,
        ) from None
    except (LookupError, SyntaxError, UnicodeError) as error:
        raise ConversionError(f"cannot decode: {error}") from None
    code = source if isinstance(source, str) else raw.decode(encoding)
    tail_code = tail if isinstance(tail, str) else tail.decode(encoding)
    return _Parsed(source, module, code, tail_code, encoding, printed_input)


def _python_script(source: Source, raw: bytes, options: _Options) -> Conversion:
    """A Python file: parsed, analysed, rewritten, printed and placed."""
    from codemods.analyse import analyse
    from codemods.concerns import rewrite

    parsed = _parsed(source, raw)  # engine/roundtrip.py
    facts = analyse(parsed.module, options.imports, options.distributed)  # analyse.py
    new_module, pending = rewrite(
        parsed.module, facts, options.target, options.selection, _silencer(parsed, facts)
    )  # concerns.py
    return _finished(parsed, facts, new_module, pending, options.locate, options.imports)[
        0
    ]  # engine/positions.py, project/summary_from_facts.py


def _launcher_script(source: Source, raw: bytes, options: _Options) -> Conversion:
    """A launcher script (one that names SageMaker): the Python steps, with the launcher's
    own analysis (its rewrites read it and visit every node) and the images its estimators
    name, for the check across the run's files."""
    from codemods.analyse import analyse
    from codemods.concerns import rewrite
    from codemods.containers.estimators import image_uses
    from codemods.launcher.analysis import analyse_launcher

    parsed = _parsed(source, raw)  # engine/roundtrip.py
    facts = analyse(parsed.module, options.imports, options.distributed)  # analyse.py
    launcher = analyse_launcher(parsed.module, facts.imports.table)  # launcher/analysis.py
    new_module, pending = rewrite(
        parsed.module, facts, options.target, options.selection, _silencer(parsed, facts), launcher
    )  # concerns.py
    conversion, input_starts = _finished(parsed, facts, new_module, pending, options.locate, options.imports)
    if options.filename is None:
        return conversion
    images = image_uses(launcher.estimators, options.filename, input_starts.get)  # containers/estimators.py
    return replace(conversion, images=images)


def _finished(
    parsed: _Parsed,
    facts: Facts,
    new_module: cst.Module,
    pending: list[PendingFinding],
    locate: Literal["output", "input"],
    imports: ImportContext | None,
) -> tuple[Conversion, Positions]:
    """The last steps of a Python file: the new code (the statements the rewrites left
    as they were keep their text), checked to parse; the findings placed in the input or
    the output; what the project's other files need to know of this one."""
    from codemods.engine.positions import code_reusing
    from codemods.project.dynamic_loads import loaded_packages
    from codemods.project.holdings import caller_only_names, holdings
    from codemods.project.summary_from_facts import summarise

    source, source_code, tail_code = parsed.source, parsed.code, parsed.tail
    # Only fixes change a file: without one, it comes back byte for byte (unprinted).
    fixed = any(f.fixed for f in pending)
    anchors = {f.result for f in pending if f.result is not None} if locate == "output" else ()
    to_check = None  # what must parse for the output to parse (None: all of it)
    output_positions: dict[cst.CSTNode, tuple[int, int]] = {}
    printed = ""
    if fixed:
        reprinted = code_reusing(new_module, parsed.printed, anchors)
        printed, to_check = reprinted.code, reprinted.new_parts
        output_positions = reprinted.starts(facts.parents) if anchors else {}
    input_starts = parsed.printed.positions(facts.parents)
    input_starts.locate([*(f.original for f in pending), *facts.distributed.unchecked_collectives])
    new_code = printed + tail_code
    changed = fixed and new_code != source_code
    if changed:
        try:
            _parse_with_cpython(new_code if to_check is None else to_check() + tail_code)
        except SyntaxError as error:
            raise ConversionError(
                f"internal error: the converted code does not parse ({error.msg}); the file was left alone",
                error.lineno,
            ) from None
    output: str | bytes = new_code.encode(parsed.encoding) if isinstance(source, bytes) else new_code
    if locate == "input" or not changed:
        findings = [_at(f, input_starts.get(f.original)) for f in pending]
    else:
        # Lines are mapped without the tail set aside: findings do not depend on it.
        line_map = _LineMap(source_code[: len(source_code) - len(tail_code)], printed)
        findings = [
            _at(
                f,
                (output_positions.get(f.result) if f.result is not None else None)
                or line_map.move(input_starts.get(f.original)),
            )
            for f in pending
        ]
    held = tuple(HeldFinding(finding, p.held) for p, finding in zip(pending, findings) if p.held is not None)
    if held:
        findings = [finding for p, finding in zip(pending, findings) if p.held is None]
    findings.sort(key=lambda f: (f.line, f.col, f.rule))
    # What it holds matters to the files that import it when the run does not convert it.
    summarised = imports is not None and not imports.converted()
    # (a reload of host data the module wrote itself is no checkpoint: checkpoint/host_data.py)
    held_findings = [p for p in pending if p.original not in facts.checkpoint.host_data_loads]
    holds, method_holds, method_findings = (
        holdings(
            parsed.module,
            facts.parents,
            held_findings,
            input_starts.get,
            parsed.printed.text_of,
            loaded_packages(facts.project),
            facts.device.is_available_call,
        )
        if summarised
        else ((), (), ())
    )
    collectives = tuple(
        (callee, start[0])
        for call, (callee, _) in facts.distributed.unchecked_collectives.items()
        if (start := input_starts.get(call)) is not None
    )
    summary = summarise(
        facts,
        pending=changed,
        holds=holds,
        collectives=collectives,
        method_holds=method_holds,
        method_findings=method_findings,
        env_rank_readers=env_rank_readers(output if changed else source),
        caller_only_names=caller_only_names(parsed.module) if summarised else (),
    )
    conversion = Conversion(source, output if changed else source, findings, parsed.encoding, (), summary, held=held)
    return conversion, input_starts


def _check_dockerfile(
    source: Source, raw: bytes, filename: str, selection: RuleSelection, max_bytes: int | None
) -> Conversion:
    """A Dockerfile: checked (SM3), never rewritten."""
    from codemods.containers.check import check_dockerfile
    from codemods.containers.dockerfile import DockerfileSyntaxError

    if SKIP_FILE.encode() in raw:
        return Conversion(source, source, [])
    if max_bytes is not None and len(raw) > max_bytes:
        size, limit = len(raw) / 2**20, max_bytes / 2**20
        raise ConversionError(f"{size:.1f} MiB is over the {limit:.1f} MiB limit; left alone", 1)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConversionError(f"cannot decode byte {raw[error.start : error.start + 1]!r} as UTF-8", line) from None
    try:
        checked = check_dockerfile(text, selection, filename)
    except DockerfileSyntaxError as error:
        raise ConversionError(f"cannot parse: {error.message}", error.line) from None
    return Conversion(source, source, checked.findings, images=(checked.build,) if checked.build else ())


def _parse_with_cpython(source: str | bytes) -> None:
    """CPython's parser, without the SyntaxWarnings it prints about the user's code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        ast.parse(source)


def _syntax_error(source: str | bytes, error: cst.ParserSyntaxError) -> ConversionError:
    """CPython's own message and position where it has one (LibCST's native parser
    reports errors a line late): "invalid syntax", "Missing parentheses in call to
    'print'" for Python 2 code, and so on."""
    try:
        _parse_with_cpython(source)
    except SyntaxError as cpython:
        return ConversionError(f"cannot parse: {cpython.msg}", cpython.lineno, cpython.offset)
    except ValueError:
        pass
    return ConversionError(f"cannot parse: {error.message}", error.raw_line, error.raw_column + 1)


def _at(finding: PendingFinding, position: tuple[int, int] | None) -> Finding:
    line, col = position or (1, 1)
    return Finding(finding.rule.code, line, col, finding.message, finding.fixed)


class _LineMap:
    """Maps input lines to output lines, for findings whose node did not survive
    (computed on first use: most conversions never need it)."""

    def __init__(self, before: str, after: str) -> None:
        self.before, self.after = before, after
        self.blocks: Sequence[tuple[str, int, int, int, int]] | None = None
        self.last_line = max(len(after.splitlines()), 1)

    def move(self, position: tuple[int, int] | None) -> tuple[int, int] | None:
        if position is None:
            return None
        if self.blocks is None:
            matcher = difflib.SequenceMatcher(None, self.before.splitlines(), self.after.splitlines(), autojunk=False)
            self.blocks = matcher.get_opcodes()
        line, col = position
        for _, i1, i2, j1, j2 in self.blocks:
            if i1 <= line - 1 < i2:
                moved = j1 + min(line - 1 - i1, max(j2 - j1 - 1, 0)) + 1
                return min(moved, self.last_line), col
        return min(line, self.last_line), col


def _never(rule: Rule, node: cst.CSTNode) -> bool:
    return False


def _silencer(parsed: _Parsed, facts: Facts) -> Callable[[Rule, cst.CSTNode], bool]:
    """Findings (and fixes) are silenced by a suppression comment on the line they start
    on (where they start is found when a finding asks)."""
    if "xla-codemod:" not in parsed.code:
        return _never
    comments = suppressions(parsed.code)
    found: list[Positions] = []

    def suppressed(rule: Rule, node: cst.CSTNode) -> bool:
        if not found:
            found.append(parsed.printed.positions(facts.parents))
        position = found[0].get(node)
        return position is not None and comments.silences(rule, position[0])

    return suppressed


@dataclass(frozen=True)
class _Options:
    """What a Python file's conversion is asked (``convert_source``'s arguments)."""

    target: Target
    selection: RuleSelection
    locate: Literal["output", "input"]
    filename: str | None
    imports: ImportContext | None
    distributed: bool


@dataclass(frozen=True)
class _Parsed:
    """A Python file read: its tree, its text (``tail``: the end LibCST cannot give back,
    set aside) and how LibCST printed it."""

    source: str | bytes
    module: cst.Module
    code: str
    tail: str
    encoding: str
    printed: Printed


def summarise_with(target: str, selection: RuleSelection, max_bytes: int | None) -> Summarise:
    """Summaries made by converting modules in memory, the way the run converts files."""

    def summarise(data: bytes, imports: FileImports) -> ModuleSummary | None:
        try:
            summary = convert_source(
                data, target=target, selection=selection, locate="input", max_bytes=max_bytes, imports=imports
            ).summary
        except ConversionError:
            return None
        return with_reexports(summary, data, imports.star_names)

    return summarise
