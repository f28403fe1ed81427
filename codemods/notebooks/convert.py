"""Jupyter notebooks (``.ipynb``): the code cells ported as one program, written back
into the cells they came from.

1. read: the notebook's JSON is read and validated with nbformat (the format's reference
   library); the text is kept, with where each cell's ``source`` value lies in it
   (notebooks/notebook_json.py, which also writes it back in step 5).
2. join: the Python code cells, in cell order, become one program with a marker line
   before each cell (a device chosen in cell 2 is the device of the loop in cell 5).
   IPython syntax that is not Python (``%magic``, ``!shell``, ``x = !cmd``, ``?name``,
   ``name?``, the first line of a ``%%time``-like cell magic, a magic called without its
   ``%`` under IPython's automagic: ``cd dir``) is masked by a placeholder
   statement first, the way nbQA masks it, and restored exactly afterwards.  Cells in
   other languages (``%%bash``, ``%%html``, ...) are left out, and left alone; the
   script a ``%%writefile train.py`` cell writes is ported as a file of its own.
3. convert: the program goes through the pipeline of scripts (codemods/pipeline.py).
4. split: the converted program is cut at the markers; the imports the port adds go into
   the first cell that imports torch (where a notebook is run from the top, after its
   ``!pip install`` cells).
5. write: each changed cell's ``source`` value is replaced in the original text, in the
   layout it had; every other byte (outputs, execution counts, metadata, untouched
   cells, indentation, key order, final newline) stays as it was.

Findings name the cell (``report.Finding.cell``) and the line within it; the
notebook's own rules (XLN1, codemods/notebooks/rules.py) report shell lines that
install torch, a GPU runtime in the metadata, and written scripts that cannot be ported.
When no cell imports torch at the top level, the added imports stay where the script
pipeline puts them (at the top of the first code cell).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from codemods.conversion import Conversion, ConversionError, needs_parsing
from codemods.engine.report import CellChange, Finding
from codemods.engine.rule import Rule, RuleSelection
from codemods.imports.rules import ADD_IMPORT
from codemods.notebooks.notebook_json import Notebook, file_lines, read_notebook, source_spans, write_sources
from codemods.notebooks.rules import GPU_RUNTIME, PIP_INSTALL_TORCH, WRITTEN_SCRIPT

# Convert code with the notebook's options (codemods.pipeline.convert_source): the joined
# program (no file name), or the script a %%writefile cell writes (its file name).
ConvertCode = Callable[[str, "str | None"], Conversion]

_MARKER = "# <xla-codemod cell {}>"
_MARKER_LINE = re.compile(r"^# <xla-codemod cell (\d+)>\n", re.MULTILINE)
_PLACEHOLDER = "pass  # <xla-codemod ipython {}>"
_PLACEHOLDER_LINE = re.compile(r"^([ \t]*)pass  # <xla-codemod ipython (\d+)>$", re.MULTILINE)
# Cell magics whose body is Python run in the kernel (their first line is masked).
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_WRITES_FILE = frozenset({"writefile", "file"})
# A line IPython reads as a magic, a shell escape, help, or an assignment from either.
_IPYTHON_LINE = re.compile(
    r"[%!]"
    r"|\?+[A-Za-z_]"
    r"|[A-Za-z_][\w.]*(?:\[[^\]]*\]|\(\))?\?{1,2}\s*$"
    r"|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]"
)

# IPython's automagic (on by default): a line magic or a shell alias called without its ``%``
# (``cd ZoeDepth``, ``pip install timm``).  A line that starts with one of these names and is
# no Python statement on its own is masked as its ``%`` form would be.
_AUTOMAGICS = frozenset(
    {
        "alias", "cat", "cd", "clear", "conda", "cp", "env", "history", "less", "load_ext", "ls", "lsmagic",
        "man", "matplotlib", "mkdir", "more", "mv", "pinfo", "pip", "popd", "pushd", "pwd", "reload_ext",
        "rm", "rmdir", "run", "set_env", "time", "timeit", "unload_ext", "who", "whos",
    }
)  # fmt: skip
_AUTOMAGIC_LINE = re.compile(r"([A-Za-z_]\w*)[ \t]+[^\s=(.\[,:;]")


def _automagic(stripped: str) -> bool:
    """``stripped`` is an automagic line: a magic's name, then its arguments, and no Python
    statement (``cd dir``, but not ``cd = 1``, ``cd(x)`` or ``time.sleep(1)``)."""
    found = _AUTOMAGIC_LINE.match(stripped)
    if found is None or found.group(1) not in _AUTOMAGICS:
        return False
    try:
        compile(stripped, "<cell line>", "exec")
    except SyntaxError:
        return True
    return False  # (``ls and x``, ``time in t``: Python)


@dataclass
class _Cell:
    """One code cell: its number (1-based, among all cells), its source, and how it is joined."""

    number: int
    source: str
    masked: str = ""
    newline_added: bool = False
    start: int = 0  # first line of its code in the joined program (after its marker)


@dataclass
class _Masks:
    """The lines masked in the whole program, by placeholder index."""

    lines: list[str] = field(default_factory=list)
    where: list[tuple[int, int]] = field(default_factory=list)  # (cell number, line in the cell)
    indents: list[str] = field(default_factory=list)  # of each placeholder
    moved: dict[int, tuple[int, int]] = field(default_factory=dict)  # (cell, line) in the output, by index

    def mask(self, line: str, cell: int, number: int, indent: str) -> str:
        self.lines.append(line)
        self.where.append((cell, number))
        self.indents.append(indent)
        return indent + _PLACEHOLDER.format(len(self.lines) - 1)

    def restore(self, index: int, indent: str) -> str:
        """The masked line, moved with its placeholder if a rewrite re-indented that."""
        line, masked = self.lines[index], self.indents[index]
        if indent == masked:
            return line
        return indent + (line[len(masked) :] if line.startswith(masked) else line.lstrip(" \t"))


def convert_notebook(raw: bytes, convert: ConvertCode, selection: RuleSelection, locate: str) -> Conversion:
    """Convert a notebook's bytes; raises ConversionError (one line: no traceback) for
    a file that is not a notebook nbformat accepts, or a conversion that cannot be put
    back into its cells.  ``locate``: findings in the output or the input."""
    if not needs_parsing(raw):
        return Conversion(raw, raw, [])
    notebook = read_notebook(raw)
    metadata = notebook.data["metadata"]
    language = metadata.get("language_info", {}).get("name") or metadata.get("kernelspec", {}).get("language")
    if str(language or "python").lower() != "python":  # an R or Julia notebook
        return Conversion(raw, raw, [])
    cells: list[_Cell] = []
    masks = _Masks()
    findings: list[Finding] = []
    scripts: list[tuple[int, str, str, str]] = []  # %%writefile *.py cells: (cell, magic line, script, file name)
    for number, cell in enumerate(notebook.data["cells"], 1):
        if cell.get("cell_type") != "code":
            continue
        source = _joined(cell.get("source", ""))
        kind = _cell_magic(source)
        if kind is None or kind in _PYTHON_CELL_MAGICS:
            cells.append(_Cell(number, source, _mask(source, number, masks)))
        elif kind in _WRITES_FILE:
            head, _, body = source.partition("\n")
            target = next((w for w in head.split()[1:] if not w.startswith("-")), "")
            if target.endswith(".py"):
                scripts.append((number, head, body, target))
    new_sources: dict[int, str] = {}
    for number, head, body, target in scripts:
        findings += _port_script(convert, number, head, body, target, new_sources)
    if not cells:
        return _finish(raw, notebook, new_sources, findings + _pip_findings(masks, notebook), selection, locate)

    program = _join(cells)
    try:
        conversion = convert(program, None)
    except ConversionError as error:
        raise _in_cell(error, cells) from None
    output = conversion.output
    assert isinstance(output, str)
    converted = _split(output, cells)
    added = _added_imports(conversion.findings)
    where = cells if locate == "input" else _output_cells(output, cells)
    located = [_finding_in_cell(f, where) for f in conversion.findings]
    converted, located = _move_imports(converted, located, added, cells, locate)
    for cell in cells:
        restored = _unmask(converted[cell.number], masks, cell.number)
        if cell.newline_added and restored.endswith("\n"):
            restored = restored[:-1]
        if restored != cell.source:
            new_sources[cell.number] = restored
    if locate == "output":  # the IPython lines where the port moved them
        masks.where = [masks.moved.get(index, where) for index, where in enumerate(masks.where)]
    findings += _pip_findings(masks, notebook)
    return _finish(raw, notebook, new_sources, findings + located, selection, locate)


def _finish(
    raw: bytes,
    notebook: Notebook,
    new_sources: dict[int, str],
    findings: list[Finding],
    selection: RuleSelection,
    locate: str,
) -> Conversion:
    """The written notebook, and the findings placed in the file (the written one for
    ``locate="output"``); findings about the metadata come last, as it does in the file."""
    findings = [f for f in findings if selection.enabled(f.rule)]
    runtime_checked = selection.enabled(GPU_RUNTIME.code)
    text = write_sources(notebook, new_sources) if new_sources else notebook.text
    prefix = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    output = (prefix + text).encode("utf-8") if new_sources else raw
    located = text if locate == "output" else notebook.text
    lines_of = file_lines(located, notebook, new_sources if locate == "output" else {})
    if runtime_checked:
        findings += _runtime_findings(notebook, located)
    placed = [replace(f, file_line=lines_of(f.cell, f.line)) if f.cell is not None else f for f in findings]
    placed.sort(key=lambda f: (f.cell is None, f.cell or 0, f.line, f.col, f.rule))
    cells = notebook.data["cells"]
    changes = tuple(CellChange(n, _joined(cells[n - 1]["source"]), new) for n, new in sorted(new_sources.items()))
    return Conversion(raw, output, placed, cells=changes)


# -- cells --------------------------------------------------------------------------------


def _joined(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def _cell_magic(source: str) -> str | None:
    """The cell magic a cell starts with (``%%time`` -> ``time``), if any."""
    first = source.lstrip().split("\n", 1)[0]
    if not first.startswith("%%"):
        return None
    return first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""


# -- mask and join ------------------------------------------------------------------------


def _mask(source: str, cell: int, masks: _Masks) -> str:
    """The cell's code with each IPython line (a ``%%time`` cell's first line too)
    replaced by a placeholder statement at its indentation.  Only lines that start a
    statement are looked at (a line starting with ``%`` inside brackets is Python's
    modulo; a ``!`` line in a string is text): a small scanner follows brackets and
    strings from line to line."""
    lines = source.split("\n")
    depth, quote, continued = 0, "", False
    masked_from: str | None = None  # indentation of a masked line continued with a backslash
    out = []
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip(" \t")
        indent = line[: len(line) - len(stripped)]
        if masked_from is not None:
            out.append(masks.mask(line, cell, number, masked_from))
            masked_from = masked_from if line.endswith("\\") else None
            continue
        at_start = depth == 0 and not quote and not continued
        if at_start and (_IPYTHON_LINE.match(stripped) or _automagic(stripped.rstrip("\\"))):
            out.append(masks.mask(line, cell, number, indent))
            masked_from = indent if line.endswith("\\") else None
            continue
        out.append(line)
        depth, quote, continued = _scan(line, depth, quote)
    return "\n".join(out)


def _scan(line: str, depth: int, quote: str) -> tuple[int, str, bool]:
    """Bracket depth and open string after ``line``, and whether it ends with a backslash."""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            i += 1
            continue
        if c == "#":
            return depth, "", False
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
        elif c in "'\"":
            quote = c * 3 if line.startswith(c * 3, i) else c
            i += len(quote)
            continue
        i += 1
    continued = line.endswith("\\")
    if len(quote) == 1 and not continued:
        quote = ""  # an unterminated one-line string: a syntax error the parser will report
    return depth, quote, continued


def _join(cells: list[_Cell]) -> str:
    parts = []
    line = 1
    for cell in cells:
        code = cell.masked
        cell.newline_added = not code.endswith("\n")
        if cell.newline_added:
            code += "\n"
        parts.append(_MARKER.format(cell.number) + "\n" + code)
        cell.start = line + 1
        line += 1 + code.count("\n")
    return "".join(parts)


def _in_cell(error: ConversionError, cells: list[_Cell]) -> ConversionError:
    """The pipeline's error, with its line named in its cell."""
    if not error.line:
        return error
    cell, line = _cell_line(error.line, cells)
    where = f"cell {cell}, line {line}" + (f", column {error.col}" if error.col else "")
    return ConversionError(f"{where}: {error.message}")


# -- split and unmask ---------------------------------------------------------------------


def _split(output: str, cells: list[_Cell]) -> dict[int, str]:
    """Each cell's converted code, cut at the markers (which must all be there, in order)."""
    found = list(_MARKER_LINE.finditer(output))
    if [int(m.group(1)) for m in found] != [c.number for c in cells] or (found and found[0].start() != 0):
        raise ConversionError(
            "the port moves code across the notebook's cells (convert it as a script instead); left alone"
        )
    ends = [m.start() for m in found[1:]] + [len(output)]
    return {c.number: output[m.end() : end] for c, m, end in zip(cells, found, ends)}


def _output_cells(output: str, cells: list[_Cell]) -> list[_Cell]:
    """The cells' first lines in the converted program."""
    starts = [output.count("\n", 0, m.end()) + 1 for m in _MARKER_LINE.finditer(output)]
    return [replace(c, start=start) for c, start in zip(cells, starts)]


def _unmask(code: str, masks: _Masks, cell: int) -> str:
    """The cell's converted code with its IPython lines back (``masks.moved`` says where they are now)."""

    def restore(match: re.Match[str]) -> str:
        index = int(match.group(2))
        masks.moved[index] = (cell, code.count("\n", 0, match.start()) + 1)
        return masks.restore(index, match.group(1))

    restored, count = _PLACEHOLDER_LINE.subn(restore, code)
    expected = sum(1 for where in masks.where if where[0] == cell)
    if count != expected:
        raise ConversionError(f"cell {cell}: the port lost an IPython line (magic or shell); left alone")
    return restored


def _cell_line(line: int, cells: list[_Cell]) -> tuple[int, int]:
    """(cell number, line in the cell) of a line of the joined program; a marker line
    is the first line of its cell."""
    index = max(bisect.bisect_right([c.start for c in cells], line) - 1, 0)
    return cells[index].number, max(line - cells[index].start + 1, 1)


def _finding_in_cell(finding: Finding, cells: list[_Cell]) -> Finding:
    cell, line = _cell_line(finding.line, cells)
    return replace(finding, cell=cell, line=line)


# -- imports the port adds ------------------------------------------------------------------

_ADDED = re.compile(r"^added `(import [\w.]+(?: as \w+)?)` ")  # XLA001's message (imports/rules.py)
_TORCH_IMPORT = re.compile(r"(?:import|from)\s+torch(?:[.\s]|$)")


def _added_imports(findings: list[Finding]) -> list[str]:
    """The import statements the conversion added (XLA001 names each)."""
    return [m.group(1) for f in findings if f.rule == ADD_IMPORT.code and f.fixed and (m := _ADDED.match(f.message))]


def _move_imports(
    converted: dict[int, str], findings: list[Finding], added: list[str], cells: list[_Cell], locate: str
) -> tuple[dict[int, str], list[Finding]]:
    """The added imports moved to the first cell that imports torch (the pipeline puts
    them after the program's leading import block: in a notebook, that may be a cell of
    ``!pip install`` lines that runs before torch_xla is there)."""
    if not added:
        return converted, findings
    home = next((c for c in cells if _imports_torch(c.masked)), None)
    block = _find_block(converted, added)
    if home is None or block is None or block[0] == home.number:
        return converted, findings
    cell, first = block
    lines = converted[cell].split("\n")
    moved = lines[first : first + len(added)]
    converted = dict(converted)
    converted[cell] = "\n".join(lines[:first] + lines[first + len(added) :])
    home_lines = converted[home.number].split("\n")
    at = _after_torch_imports(home_lines)
    converted[home.number] = "\n".join(home_lines[:at] + moved + home_lines[at:])
    k = len(added)
    placed = []
    for f in findings:
        if f.rule == ADD_IMPORT.code and f.fixed:
            index = next(
                (i for i, text in enumerate(moved) if f.message.startswith(f"added `{text.split('  #')[0]}`")), 0
            )
            f = replace(f, cell=home.number, line=(at + 1 + index) if locate == "output" else max(at, 1), col=1)
        elif locate == "output" and f.cell == cell and f.line > first + k:
            f = replace(f, line=f.line - k)
        elif locate == "output" and f.cell == home.number and f.line > at:
            f = replace(f, line=f.line + k)
        placed.append(f)
    return converted, placed


def _imports_torch(code: str) -> bool:
    return any(_TORCH_IMPORT.match(line) for line in code.split("\n"))


def _find_block(converted: dict[int, str], added: list[str]) -> tuple[int, int] | None:
    """(cell, 0-based line) where the added import lines stand together."""
    wanted = set(added)
    for number, code in converted.items():
        lines = code.split("\n")
        for i in range(len(lines) - len(added) + 1):
            if {line.split("  #")[0] for line in lines[i : i + len(added)]} == wanted:
                return number, i
    return None


def _after_torch_imports(lines: list[str]) -> int:
    """The 0-based line after the last torch import of the run of one-line imports that
    holds the cell's first top-level torch import (where a script gets them too)."""
    first = next((i for i, line in enumerate(lines) if _TORCH_IMPORT.match(line)), None)
    if first is None:  # a rewrite took the torch import away: the cell's top, then
        return 0
    at = first + 1
    for i in range(first + 1, len(lines)):
        line = lines[i]
        if not line.startswith(("import ", "from ")) or line.rstrip().endswith(("(", "\\")):
            break
        if _TORCH_IMPORT.match(line) or line.startswith(("import torch_xla", "from torch_xla")):
            at = i + 1
    return at


# -- the notebook's own rules ----------------------------------------------------------------


def _cell_finding(rule: Rule, cell: int, line: int, col: int, message: str) -> Finding:
    return Finding(rule.code, line, col, message, False, cell=cell)


_PIP_INSTALL = re.compile(
    r"(?:^|[\s;&|!%(])(?:uv\s+)?(?:pip3?|(?:\S*python[\d.]*|\{sys\.executable\})\s+-m\s+pip)\s+install\s+(.*)"
)
_TORCH_PACKAGES = frozenset({"torch", "torchvision", "torchaudio"})
_OPTIONS_WITH_VALUES = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "-t",
        "--target",
        "-e",
        "--editable",
        "--prefix",
        "--root",
        "--platform",
        "--python-version",
    }
)


def _installed(arguments: str) -> set[str]:
    """The package names a ``pip install`` line names (normalised: torch_xla[tpu]==2.9 -> torch-xla)."""
    names: set[str] = set()
    words = arguments.split("#")[0].split()
    skip = False
    for word in words:
        if word in ("&&", ";", "|", "||"):
            break
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _OPTIONS_WITH_VALUES
            continue
        name = re.split(r"[\[=<>~!;@ ]", word.strip("'\""), maxsplit=1)[0]
        names.add(name.lower().replace("_", "-"))
    return names


def _pip_findings(masks: _Masks, notebook: Notebook) -> list[Finding]:
    shell_cells = []
    for number, cell in enumerate(notebook.data["cells"], 1):
        source = _joined(cell.get("source", "")) if cell.get("cell_type") == "code" else ""
        if _cell_magic(source) in ("bash", "sh", "script"):
            shell_cells += [(number, i, text) for i, text in enumerate(source.split("\n"), 1) if i > 1]
    findings = []
    masked = [(cell, line, text) for text, (cell, line) in zip(masks.lines, masks.where)]
    for cell, line, text in masked + shell_cells:
        match = _PIP_INSTALL.search(text)
        if match is None:
            continue
        names = _installed(match.group(1))
        torch = sorted(names & _TORCH_PACKAGES)
        if torch and "torch-xla" not in names:
            col = text.index("pip", match.start()) + 1
            findings.append(
                _cell_finding(
                    PIP_INSTALL_TORCH,
                    cell,
                    line,
                    col,
                    f"`{text.strip()}` installs {', '.join(torch)} without torch_xla: it replaces the torch that torch_xla "
                    "was built against (`import torch_xla` then fails); install torch and torch_xla together at matching "
                    "versions, or drop the line on a TPU runtime",
                )
            )
    return findings


_GPU_TYPES = frozenset({"T4", "L4", "A100", "V100", "P100", "K80", "H100", "G4"})


def _runtime_findings(notebook: Notebook, text: str) -> list[Finding]:
    metadata = notebook.data.get("metadata", {})
    colab = metadata.get("colab") if isinstance(metadata.get("colab"), dict) else {}
    kaggle = metadata.get("kaggle") if isinstance(metadata.get("kaggle"), dict) else {}
    accelerator = metadata.get("accelerator")
    found = []
    if accelerator == "GPU" or (accelerator is None and colab.get("gpuType") in _GPU_TYPES):
        key, value = ("accelerator", accelerator) if accelerator == "GPU" else ("gpuType", colab.get("gpuType"))
        found.append((key, f"Colab runtime {key} {value!r}"))
    kaggle_accelerator = str(kaggle.get("accelerator", ""))
    if kaggle_accelerator.lower().startswith(("gpu", "nvidia")):
        found.append(("accelerator", f"Kaggle accelerator {kaggle_accelerator!r}"))
    findings = []
    for key, what in found:
        line, col = _metadata_key_position(text, key, what.startswith("Kaggle"))
        findings.append(
            Finding(
                GPU_RUNTIME.code,
                line,
                col,
                f"the notebook's metadata selects a GPU runtime ({what}): there it has no TPU and no torch_xla; select a "
                "TPU runtime and save the notebook",
                False,
            )
        )
    return findings


def _metadata_key_position(text: str, key: str, kaggle: bool) -> tuple[int, int]:
    """Line and column of ``"key"`` in the notebook's metadata (in its "kaggle" part for Kaggle)."""
    start, end = source_spans(text)[1] or (0, len(text))
    if kaggle:
        start = max(text.find('"kaggle"', start, end), start)
    at = text.find(f'"{key}"', start, end)
    at = start if at < 0 else at
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def _port_script(
    convert: ConvertCode, cell: int, head: str, script: str, target: str, new_sources: dict[int, str]
) -> list[Finding]:
    """A ``%%writefile train.py`` cell: the script it writes ported as a file of its own
    (what ``xla-codemod convert train.py`` would make of it), its findings placed in the
    cell below the magic line; reported (XLN103) when it cannot be ported."""
    if {"-a", "--append"} & set(head.split()):
        return [
            _cell_finding(
                WRITTEN_SCRIPT,
                cell,
                1,
                1,
                f"this cell appends to {target}, whose other parts are elsewhere: it is not ported; port {target} as a "
                "whole (`xla-codemod convert` after running the cells), or write it in one cell",
            )
        ]
    try:
        conversion = convert(script, target)
    except ConversionError as error:
        where = f"line {error.line + 1}: " if error.line else ""
        return [
            _cell_finding(
                WRITTEN_SCRIPT,
                cell,
                1,
                1,
                f"this cell writes {target}, which cannot be ported ({where}{error.message}): it runs as it is; fix it, "
                "or keep the script as a file of the repository",
            )
        ]
    output = conversion.output
    assert isinstance(output, str)
    if output != script:
        new_sources[cell] = head + "\n" + output
    return [replace(f, cell=cell, line=f.line + 1) for f in conversion.findings]
