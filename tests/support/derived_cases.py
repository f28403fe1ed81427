"""Rule cases derived from the written ones, so that a rule's module need not restate a
program with its import renamed, or for another target where only torch_xla's names differ.

With an alias: from each positive case (an example or an invalid case that
is not an alias case) and each negative case of a Python file with a top-level ``import torch``
(the written ones and those derived for the sagemaker target), the same program with
``import torch as th`` and every ``torch`` it names spelled ``th``, in the input and in the
expected output (a negative case stays negative).

The finding lines are kept and the columns moved by the renames before them on their line
(on a line the fix rewrote, a column after a rename is not checked: it may count from the
input's line).
The messages are not checked: a message that quotes the code says ``th.``, one that names an
API says ``torch.`` whatever the alias, and telling the two apart would restate the message.

A case the renaming does not fit (not one top-level ``import torch`` in the input and in the
output, ``torch`` imported again inside a function, a name ``th`` already in use, ``torch``
inside an f-string, a file that is not Python) gives no derived case: it is not run twice, nor counted.

For the sagemaker target: from each positive, alias or negative 2.9 case whose input names nothing of
torch_xla and whose output uses torch_xla only through ``import torch_xla``, the calls whose
spelling alone differs between the targets (``torch_xla.device()``, ``torch_xla.sync()``) and
the APIs both targets spell alike (``xm.optimizer_step``, ``pl.MpDeviceLoader``; ``xm.save``
only where no ``if`` may stand for a rank check: none around it, before it in its function or
around a call of its function, since a rank check keeps sagemaker's ``torch.save``), the same
case with that import and those calls spelled as the target tables of codemods/targets.py
spell them for sagemaker (``xm.xla_device()``), in the output and in the messages; columns
after a respelled call on its line move with it, and where the output imports sagemaker's
module already, the import of ``torch_xla`` goes and the finding lines after it move up.  A
negative case that no rule changes is the same case for sagemaker if it names nothing of
torch_xla.  A case written with ``target_only=True`` (code that sagemaker's rules
rewrite, such as ``torch.autocast``, or that 2.9's import patches) and any other case give none.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import replace

from codemods.engine.rule import Expected
from codemods.targets import DEFAULT_TARGET, TARGETS, Api
from tests.support.rule_cases import CASES, Case

ALIAS = "th"
_IMPORT = "import torch"
_IMPORT_STATEMENT = re.compile(r"^\s*(import|from)\s")
_TORCH = re.compile(r"\btorch\b")


def _torch_names(code: str) -> dict[int, list[int]] | None:
    """Where ``torch`` stands as a name (line -> 0-based columns), outside imports, strings
    and attributes (``x.torch``); None where the renaming does not fit the code: not one
    top-level ``import torch``, torch imported again further in, ``th`` already a name, or
    ``torch`` inside an f-string (one string token before Python 3.12)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):  # a case that is not Python to the tokenizer
        return None
    lines = code.split("\n")
    if [line for line in lines if line.strip() == _IMPORT] != [_IMPORT]:
        return None
    names: dict[int, list[int]] = {}
    previous = ""
    for token in tokens:
        if token.type == tokenize.NAME and token.string == ALIAS:
            return None
        if token.type == tokenize.STRING and token.string.lstrip("rbRB")[:1] in "fF" and _TORCH.search(token.string):
            return None
        row, column = token.start
        if token.string == "torch" and token.type == tokenize.NAME and previous != ".":
            if not _IMPORT_STATEMENT.match(lines[row - 1]):
                names.setdefault(row, []).append(column)
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = token.string
    return names


def _renamed(code: str, names: dict[int, list[int]]) -> str:
    lines = code.split("\n")
    for row, columns in names.items():
        line = lines[row - 1]
        for column in sorted(columns, reverse=True):
            line = line[:column] + ALIAS + line[column + len("torch") :]
        lines[row - 1] = line
    return "\n".join(f"{_IMPORT} as {ALIAS}" if line == _IMPORT else line for line in lines)


def _moved(finding: Expected, names: dict[int, list[int]], rewritten: bool) -> Expected:
    """The finding without its message, its column moved by the renames before it on its
    line; 0 (not checked) on a line the fix rewrote, where the column may count from the
    input's line."""
    before = sum(1 for column in names.get(finding.line, []) if column < finding.column - 1)
    if before and rewritten:
        return replace(finding, column=0, message="")
    return replace(finding, column=finding.column - before * (len("torch") - len(ALIAS)), message="")


def with_alias(case: Case) -> Case | None:
    """The case with ``import torch as th``, or None where the renaming does not fit it."""
    if case.kind == "alias" or case.run_level or not case.filename.endswith(".py"):
        return None
    output = case.after if case.after is not None else case.before
    in_input, in_output = _torch_names(case.before), _torch_names(output)
    if in_input is None or in_output is None:
        return None
    input_lines = set(case.before.split("\n"))
    output_lines = output.split("\n")
    return replace(
        case,
        kind="alias" if case.kind == "positive" else "negative",
        before=_renamed(case.before, in_input),
        after=None if case.after is None else _renamed(case.after, in_output),
        note=f"{case.note or 'case'}-derived-import-torch-as-{ALIAS}",
        expect=tuple(_moved(e, in_output, output_lines[e.line - 1] not in input_lines) for e in case.expect),
    )


# The calls whose spelling alone differs between the targets (codemods/targets.py), each
# target binding them with one import: a 2.9 case whose output uses these, and otherwise only
# torch_xla's APIs that both targets spell alike (``xm.optimizer_step``), is the sagemaker case
# with them and their import respelled (or the import dropped where the output already has
# sagemaker's: the finding lines after it move up by one).
_RESPELLED = ("device", "sync")
# Spelled alike, but written by a fix that reads the target: under a rank check, sagemaker's
# port keeps ``torch.save`` (codemods/targets.py, ``to_cpu``), so a case with them is derived
# only where no ``if`` may guard them (``_save_may_be_guarded``).
_CONDITIONAL_ALIKE = ("save",)
_XLA_NAME = re.compile(r"\b(torch_xla|xm|xr|xmp|pl)\b")


def _import_of(api: Api) -> str:
    return f"import {api.module} as {api.alias}" if api.alias else f"import {api.module}"


def _spellings(target: str) -> tuple[str, list[str]]:
    """The import that binds the respelled calls in ``target``, and the calls."""
    apis = [TARGETS[target].api(concept) for concept in _RESPELLED]
    (binding,) = {_import_of(api) for api in apis}
    return binding, [f"{api.spelled}()" for api in apis]


def _save_may_be_guarded(output: str) -> bool:
    """Whether an ``xm.save`` of the output may stand where only some processes reach it, as
    under a rank check: inside an ``if``, after an ``if`` in its function (an early return), or
    in a function that some call under an ``if`` names."""
    try:
        tree = ast.parse(output)
    except SyntaxError:
        return True
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def enclosing(node: ast.AST) -> list[ast.AST]:
        found = []
        while node in parents:
            node = parents[node]
            found.append(node)
        return found

    conditional = (ast.If, ast.IfExp)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    for call in calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "save" and ast.unparse(func.value) == "xm"):
            continue
        around = enclosing(call)
        if any(isinstance(node, conditional) for node in around):
            return True
        function = next((node for node in around if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        if function is None:
            continue
        if any(isinstance(node, ast.If) and node.lineno < call.lineno for node in ast.walk(function)):
            return True
        for other in calls:
            name = other.func.attr if isinstance(other.func, ast.Attribute) else getattr(other.func, "id", None)
            if name == function.name and any(isinstance(node, conditional) for node in enclosing(other)):
                return True
    return False


def _spelled_alike(target: str, guarded: bool) -> tuple[set[str], list[str]]:
    """The imports and names of the APIs that ``target`` and the default target spell alike
    in an output whose saves may be ``guarded`` or not."""
    default, other = TARGETS[DEFAULT_TARGET].apis, TARGETS[target].apis
    alike = [
        api
        for concept, api in default.items()
        if other.get(concept) == api and not (guarded and concept in _CONDITIONAL_ALIKE)
    ]
    return {_import_of(api) for api in alike}, [f"{api.spelled}(" for api in alike]


def for_target(case: Case, target: str) -> Case | None:
    """The 2.9 case for ``target``, or None where its output uses more than the respelled calls
    and the APIs spelled alike."""
    if case.target != DEFAULT_TARGET or case.run_level or case.target_only:
        return None
    if case.after is None:  # code no rule changes: the same for every target, unless it names torch_xla
        if case.kind != "negative" or _XLA_NAME.search(case.before):
            return None
        return replace(case, target=target, note=f"{case.note or 'case'}-derived-for-{target}")
    (old_import, old_calls), (new_import, new_calls) = _spellings(DEFAULT_TARGET), _spellings(target)
    alike_imports, alike_names = _spelled_alike(target, _save_may_be_guarded(case.after))
    lines = case.after.split("\n")
    if _XLA_NAME.search(case.before) or lines.count(old_import) != 1:
        return None
    rest = "\n".join(line for line in lines if line != old_import and line not in alike_imports)
    for name in (*old_calls, *alike_names):
        rest = rest.replace(name, "")
    if _XLA_NAME.search(rest):
        return None
    dropped = lines.index(old_import) + 1  # the import's line, where the output has sagemaker's already
    if new_import in lines:
        after_lines = [line for line in lines if line != old_import]
    else:
        after_lines, dropped = [new_import if line == old_import else line for line in lines], len(lines) + 1
    return replace(
        case,
        after=_respelled("\n".join(after_lines), old_calls, new_calls),
        target=target,
        note=f"{case.note or 'case'}-derived-for-{target}",
        expect=tuple(
            replace(
                e,
                line=e.line - (e.line > dropped),
                column=_respelled_column(e, lines, old_calls, new_calls),
                message=_respelled(e.message, old_calls, new_calls),
            )
            for e in case.expect
        ),
    )


def _respelled(text: str, old_calls: list[str], new_calls: list[str]) -> str:
    for old, new in zip(old_calls, new_calls, strict=True):
        text = text.replace(old, new)
    return text


def _respelled_column(finding: Expected, lines: list[str], old_calls: list[str], new_calls: list[str]) -> int:
    line = lines[finding.line - 1]
    shift = 0
    for old, new in zip(old_calls, new_calls, strict=True):
        shift += sum(len(new) - len(old) for m in re.finditer(re.escape(old), line) if m.end() <= finding.column - 1)
    return finding.column + shift


# The 2.9 cases for the sagemaker target, then the alias case of each written case and of each of those.
TARGET_CASES = [derived for case in CASES if (derived := for_target(case, "sagemaker")) is not None]
DERIVED_CASES = TARGET_CASES + [derived for case in CASES + TARGET_CASES if (derived := with_alias(case)) is not None]
