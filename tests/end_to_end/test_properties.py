"""Property tests: for generated programs, conversion

* never raises on valid Python (a ConversionError is allowed only for input CPython
  rejects too), its output parses, and converting twice equals converting once;
* keeps every line no fix touched, in order (comments and blank lines included), and
  returns the input byte for byte when it fixes nothing; lint never changes a file;
* keeps its promises on meaning: every loop that calls ``backward()`` ends with the
  step barrier or feeds from ``MpDeviceLoader``, and every ``optimizer.step()`` outside
  AMP (and without DistributedDataParallel) became ``xm.optimizer_step``.

Two generators: hypothesmith writes arbitrary Python from the grammar (given a torch
mention so that the parser is reached); the other writes training scripts: setup, a
training loop (often in a function) whose body mixes the training step with random
statements, nested blocks and comments at odd indentations, and an odd tail of comments.
Seeds are fixed (derandomize) so CI runs the same examples every time.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tempfile
import tokenize
from collections import Counter
from collections.abc import Iterator
from typing import TypeGuard

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codemods import Conversion, ConversionError, RuleSelection, convert_source
from codemods.engine.report import Finding
from codemods.imports.analysis import names_xla
from codemods.pipeline import Source
from codemods.runner import Job, process_path

# Generated code may trip CPython's SyntaxWarnings ("'int' object is not callable").
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")


def fixed(examples: int) -> settings:
    # too_slow times data generation: these generators write whole scripts and modules,
    # which a busy machine (a shared runner, the tests of other jobs) makes slow to draw,
    # so it fails at random; Hypothesis' maintainers advise suppressing timing checks on
    # slow machines (HypothesisWorks/hypothesis#2195).  Every other health check stays on.
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        database=None,
    )


# -- the training-script generator ---------------------------------------------------

STATEMENTS = [
    "device = torch.device('cuda')",
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'",
    "device = 0",
    "use_cuda = not args.no_cuda and torch.cuda.is_available()",
    "args.cuda = torch.cuda.is_available()",
    "model = Net().cuda()",
    "model = torch.nn.Linear(4, 4)",
    "model.to(device)",
    "x = x.cuda(args.gpu, non_blocking=True)",
    "x, y = x.to(device), y.to(device)",
    "batch = batch.to(args.gpu)",
    "loss = model(x).sum()",
    "loss.backward()",
    "optimizer.zero_grad()",
    "optimizer.step()",
    "loss = optimizer.step(closure)",
    "scheduler.step()",
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
    "opt = O.Adam(model.parameters())",
    "torch.save(model.state_dict(), 'model.pt')",
    "th.save(model, path)",
    "torch.cuda.synchronize()",
    "torch.cuda.set_device(args.gpu)",
    "torch.cuda.empty_cache()",
    "torch.backends.cudnn.benchmark = True",
    "loader = DataLoader(ds, pin_memory=True)",
    "print(loss.item())",
    "total += (pred == y).sum()",
    "w = torch.cuda.FloatTensor(3, 3)",
    "T = torch.cuda.FloatTensor if cuda else torch.FloatTensor",
    "ok = x.is_cuda or device == 'cuda'",
    "device = xm.xla_device()",
    "xm.mark_step()",
    "torch_xla.sync()",
    "n = xm.xrt_world_size()",
    "scaler.scale(loss).backward()",
    "model = torch.nn.parallel.DistributedDataParallel(model)",
    "pass",
    "x = 1; y = 2",
    "state = torch.load(path, map_location='cuda:0')",
    "state = torch.load(path, map_location=device)",
    "model = torch.nn.DataParallel(model)",
    "torch.save(obj=state, f=path)",
    "import torch_xla.core.xla_model as xm",
    "from torch.cuda import synchronize",
    "synchronize()",
    "rank = 0",
    "model = model.to(rank)",
]
LOOP_ONLY = ["continue", "break", "if not torch.isfinite(loss): continue", "x = x.to(device); continue"]
FUNCTION_ONLY = ["return loss", "return", "if x: return loss"]
IMPORTS = [
    "import torch",
    "import torch as th",
    "import torch.optim as O",
    "from torch.utils.data import DataLoader",
    "import torch_xla",
    "import torch_xla.core.xla_model as xm",
    "from torch.cuda import synchronize, empty_cache",
    "try:\n    import torch_xla.core.xla_model as xm\nexcept ImportError:\n    xm = None",
    '"""A training script."""',
]
LOOPS = [
    "for x, y in train_loader:",
    "for i, (x, y) in enumerate(loader):",
    "while step < 10:",
    "for p in model.parameters():",
]
OTHERS = [
    "if use_cuda:",
    "if torch.cuda.is_available():",
    "if not torch.cuda.is_available():",
    "if HAS_XLA:",
    "with torch.no_grad():",
    "if x:",
]
FUNCTIONS = ["def train(model, device, loader, optimizer):", "def closure():", "def _run_batch(self, source):"]
# Comments and blank lines, also at indentations that match no block: LibCST 1.9 loses
# some of these at the end of a file (issue 15).
COMMENTS = ["# note", "#", "# TODO: tune this", "    # odd", "  # odder", "        # deep", ""]

# The training step, and the setups that make it a training loop the tool rewrites.
SETUPS = [
    ["device = torch.device('cuda')"],
    ["device = 'cuda'"],
    ["device = 'cuda' if torch.cuda.is_available() else 'cpu'"],
    [
        "use_cuda = not args.no_cuda and torch.cuda.is_available()",
        "device = torch.device('cuda' if use_cuda else 'cpu')",
    ],
    ["device = torch.device('cuda', args.local_rank)"],
    [],
]
MODELS = ["model = Net().to(device)", "model = Net().cuda()", "model = torch.nn.Linear(4, 4)"]
OPTIMIZERS = [
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
    "optimizer = torch.optim.Adam(model.parameters())",
    "optimizer = make_optimizer(model)",
]
TRAINING_LOOPS = [
    "for x, y in train_loader:",
    "for i, (x, y) in enumerate(train_loader):",
    "for step in range(steps):",
    "while step < steps:",
]
MOVES = ["x, y = x.to(device), y.to(device)", "x, y = x.to(device), y.to(device)", "x = x.cuda()\ny = y.cuda()", ""]
STEP_WRAPPERS = ["", "if (i + 1) % accumulation == 0:", "if step % 2:", "with torch.no_grad():"]


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line if line.strip() else line for line in lines]


_CONTINUATIONS = ("else", "elif ", "except", "finally")


def _statement_starts(lines: list[str]) -> list[int]:
    """Where a statement of this block begins (not a blank or comment line, which may sit
    between a header and its body, nor an else/except that continues a statement)."""
    return [
        i
        for i, line in enumerate(lines)
        if line and not line[0].isspace() and not line.startswith(("#", *_CONTINUATIONS))
    ]


@st.composite
def trivia(draw, indent: str = "") -> list[str]:  # type: ignore[no-untyped-def]
    """Nothing, mostly; sometimes comment or blank lines."""
    if draw(st.integers(0, 4)):
        return []
    lines = draw(st.lists(st.sampled_from(COMMENTS), min_size=1, max_size=3))
    return [indent + line if line and not line.startswith(" ") else line for line in lines]


@st.composite
def block(draw, depth: int = 0, in_loop: bool = False, in_function: bool = False) -> list[str]:  # type: ignore[no-untyped-def]
    """A list of source lines (already indented for this block's level)."""
    pool = STATEMENTS + (LOOP_ONLY if in_loop else []) + (FUNCTION_ONLY if in_function else [])
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        lines.extend(draw(trivia()))
        choice = draw(st.integers(0, 7))
        if depth < 3 and choice == 0:
            lines.extend(draw(training_loop(depth, in_function)))
        elif depth < 3 and choice == 1:
            header = draw(st.sampled_from(LOOPS + OTHERS + FUNCTIONS))
            loop = header in LOOPS or (in_loop and header in OTHERS)
            function = header in FUNCTIONS or (in_function and header not in FUNCTIONS)
            inner = draw(block(depth + 1, in_loop=loop and header not in FUNCTIONS, in_function=function))
            lines.append(header)
            lines.extend(_indent(inner))
            if header.startswith("if ") and draw(st.booleans()):  # an elif or else branch
                lines.append(draw(st.sampled_from(["elif torch.cuda.is_available():", "elif args.mps:", "else:"])))
                lines.extend(_indent(draw(block(depth + 1, in_loop=in_loop, in_function=in_function))))
        else:
            statement = draw(st.sampled_from(pool))
            if draw(st.integers(0, 5)) == 0 and "\n" not in statement:
                statement += "  # why"
            lines.extend(statement.splitlines())
    return lines


@st.composite
def training_loop(draw, depth: int = 0, in_function: bool = False) -> list[str]:  # type: ignore[no-untyped-def]
    """A loop that runs the training step, among other statements."""
    step = ["optimizer.step()"]
    wrapper = draw(st.sampled_from(STEP_WRAPPERS))
    if wrapper:
        step = [wrapper, *_indent(step + draw(st.sampled_from([[], ["optimizer.zero_grad()"]])))]
    core = [
        *draw(st.sampled_from(MOVES)).splitlines(),
        "optimizer.zero_grad()",
        "loss = loss_fn(model(x), y)",
        draw(st.sampled_from(["loss.backward()", "loss.backward()", "loss.mean().backward()"])),
        *step,
    ]
    body = [line for line in core if line]
    # Other statements (and comments) go before, between the parts of, or after the step.
    for _ in range(draw(st.integers(0, 2))):
        extra = draw(block(depth + 1, in_loop=True, in_function=in_function))
        at = draw(st.sampled_from([0, len(body), *_statement_starts(body)]))
        body[at:at] = extra
    return [draw(st.sampled_from(TRAINING_LOOPS)), *_indent(body)]


@st.composite
def training_scripts(draw) -> str:  # type: ignore[no-untyped-def]
    imports = draw(st.lists(st.sampled_from(IMPORTS), min_size=0, max_size=3, unique=True))
    if not any(line.startswith("import torch") and "xla" not in line for line in imports):
        imports.insert(draw(st.integers(0, len(imports))), "import torch")
    setup = [*draw(st.sampled_from(SETUPS)), draw(st.sampled_from(MODELS)), draw(st.sampled_from(OPTIMIZERS))]
    loop = draw(training_loop())
    if draw(st.booleans()):
        loop = ["def train(model, device, train_loader, optimizer):", *_indent(loop)]
        loop.append("train(model, device, train_loader, optimizer)")
    body = draw(block()) if draw(st.booleans()) else []
    where = draw(st.integers(0, 2))
    parts = [*setup, *loop] if where == 0 else [*setup, *body, *loop] if where == 1 else [*setup, *loop, *body]
    tail = draw(st.lists(st.sampled_from(COMMENTS), max_size=3))
    newline: str = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join([*imports, "", *parts, *tail])
    return text + newline if draw(st.integers(0, 3)) else text


# -- checks ------------------------------------------------------------------------------


def _module_bindings(node: ast.AST) -> set[str]:
    """Names bound by imports in the module's scope (also inside its loops and blocks,
    not inside functions or classes)."""
    bound: set[str] = set()
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            bound.update(alias.asname or alias.name.split(".")[0] for alias in child.names)
        elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            bound |= _module_bindings(child)
    return bound


def _loaded(tree: ast.Module) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_LINE_END = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[str]:
    lines = _LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    return (node for node in ast.walk(tree) if isinstance(node, ast.stmt))


def _header_lines(statement: ast.stmt) -> set[int]:
    """The lines of a compound statement's header (with a body on the same line, that line)."""
    body = getattr(statement, "body", None)
    if not body:
        return set(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return set(range(statement.lineno, body[0].lineno + 1 if body[0].lineno == statement.lineno else body[0].lineno))


_BARRIER_RULES: dict[str, type[ast.stmt]] = {"XLA301": ast.Continue, "XLA303": ast.Continue, "XLA304": ast.Return}
# Fixes that remove a statement (an unused import, torch.cuda.set_device, and those whose
# message says "removed"), comments and all.
_REMOVING_RULES = {"XLA002", "XLA106"}


def _indentation(text: str) -> int:
    return len(text) - len(text.lstrip())


def _block_end(lines: list[str], statement: ast.stmt) -> int:
    """The last line of a compound statement with the comment lines LibCST gives its
    block: those after it up to the last one indented deeper than the statement."""
    end = statement.end_lineno or statement.lineno
    for number in range(end + 1, len(lines) + 1):
        text = lines[number - 1]
        if text.strip() and not text.lstrip().startswith("#"):
            break
        if text.strip() and _indentation(text) > statement.col_offset:
            end = number
    return end


def _own_end(lines: list[str], statement: ast.stmt) -> int:
    """The last line of a compound statement with the comment lines after it that are
    indented deeper, up to the first that is not."""
    end = statement.end_lineno or statement.lineno
    for number in range(end + 1, len(lines) + 1):
        text = lines[number - 1]
        if not text.strip():
            continue
        if not text.lstrip().startswith("#") or _indentation(text) <= statement.col_offset:
            break
        end = number
    return end


def _else_line(lines: list[str], statement: ast.If) -> int:
    """The line of the ``else:`` or ``elif`` that continues ``statement``."""
    for number in range(statement.body[-1].end_lineno or statement.lineno, len(lines) + 1):
        text = lines[number - 1]
        if text.lstrip().startswith(("else", "elif")) and _indentation(text) <= statement.col_offset:
            return number
    raise AssertionError(f"no else for the if at line {statement.lineno}")


def _removed_lines(lines: list[str], statement: ast.stmt, finding_rule: str, message: str) -> range:
    """The input lines a fix removes: a removed statement, the branch of a folded ``if``
    that can no longer run with its own comment lines (those after it that are less
    indented than its block stay)."""
    if finding_rule in _REMOVING_RULES or message.startswith("removed "):
        return range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)
    end = _own_end(lines, statement)
    if finding_rule == "XLA104" and isinstance(statement, ast.If):
        if "never runs" in message:
            return range(statement.lineno, _else_line(lines, statement) if statement.orelse else end + 1)
        if "always runs" in message and statement.orelse:
            return range(_else_line(lines, statement), end + 1)
    return range(0)


def fixed_statements(source: str, conversion: Conversion) -> Iterator[tuple[Finding, ast.stmt]]:
    """Each fix of ``conversion`` (located in the input), with the innermost statement
    its finding starts in.  Added imports (XLA001) change no statement: left out."""
    lines = _lines(source)
    statements = list(_statements(ast.parse(source)))
    for finding in conversion.findings:
        if not finding.fixed or finding.rule == "XLA001":
            continue
        text = lines[finding.line - 1] if finding.line <= len(lines) else ""
        where = (finding.line, len(text[: finding.col - 1].encode()))
        containing = [
            s
            for s in statements
            if (s.lineno, s.col_offset) <= where <= (s.end_lineno or s.lineno, s.end_col_offset or 0)
        ]
        assert containing, f"{finding} is in no statement"
        yield finding, max(containing, key=lambda s: (s.lineno, s.col_offset))


def touched_lines(source: str, conversion: Conversion) -> set[int]:
    """The input lines the fixes of ``conversion`` (located in the input) may change.

    A fix changes the statement its finding starts in: all of a simple statement; the
    header of a compound one; all of an ``if`` whose accelerator check is folded (its
    branches go or are dedented), comment lines of its block included; for a barrier,
    also the lines where it is put before an exit that shares its line (``if bad:
    continue``)."""
    lines = _lines(source)
    touched: set[int] = set()
    for finding, statement in fixed_statements(source, conversion):
        if finding.rule == "XLA104" and isinstance(statement, ast.If):
            touched.update(range(statement.lineno, _block_end(lines, statement) + 1))
        elif hasattr(statement, "body"):
            touched.update(_header_lines(statement))
        else:
            touched.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
        if finding.rule in _BARRIER_RULES:
            for exit_ in ast.walk(statement):
                if (
                    isinstance(exit_, _BARRIER_RULES[finding.rule])
                    and lines[exit_.lineno - 1][: exit_.col_offset].strip()
                ):
                    touched.add(exit_.lineno)
    return touched


def assert_untouched_lines_kept(source: str, output: str, touched: set[int]) -> None:
    """Every line no fix touched is in the output, in order, with its line end style."""
    remaining = iter(_lines(output))
    for number, line in enumerate(_lines(source), start=1):
        if number in touched:
            continue
        assert any(line == candidate for candidate in remaining), f"line {number} lost or moved: {line!r}"
    if "\n" in source and not re.search(r"(?<!\r)\n", source):  # CRLF only
        assert not re.search(r"(?<!\r)\n", output), "a bare LF in a CRLF file"


def _comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of every comment."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]


def assert_comments_kept(source: str, output: str, conversion: Conversion) -> None:
    """Every comment is in the output, in order (moved or dedented with its code at
    most), but those on code a fix removes (``conversion`` located in the input)."""
    lines = _lines(source)
    removed: set[int] = set()
    for finding, statement in fixed_statements(source, conversion):
        removed.update(_removed_lines(lines, statement, finding.rule, finding.message))
    remaining = iter(text for _, text in _comments(output))
    for line, text in _comments(source):
        if line not in removed:
            assert any(text == candidate for candidate in remaining), f"comment of line {line} lost: {text!r}"


def convert_valid(source: Source) -> Conversion:
    """Convert; any ConversionError fails: the generators write only valid Python (a
    "cannot parse" on code CPython parses is a bug, not an excuse)."""
    try:
        return convert_source(source)
    except ConversionError as error:
        try:
            ast.parse(source)
        except SyntaxError as cpython:
            raise AssertionError(f"the generator wrote invalid Python ({cpython}): fix the generator") from None
        raise AssertionError(f"valid Python refused: {error}") from None


def check(source: str) -> Conversion:
    """The properties every conversion must have."""
    once = convert_valid(source)
    output = once.output
    assert isinstance(output, str)
    fixes = [f for f in once.findings if f.fixed]
    if not fixes:
        assert output == source
    before, after = ast.parse(source), ast.parse(output)
    # No import the output still needs was removed (and nothing it uses is unbound).
    assert _loaded(after) & _module_bindings(before) <= _module_bindings(after)
    assert _loaded(after) & {"xm", "xr", "pl", "torch_xla"} <= _module_bindings(after) | _loaded(before)
    twice = convert_source(output)
    assert twice.output == output
    assert not any(f.fixed for f in twice.findings)
    lines = _lines(output)
    for finding in once.findings:
        assert 1 <= finding.line <= max(len(lines), 1), finding
    # Located in the input, the same findings say which lines the fixes touched.
    linted = convert_source(source, locate="input")
    assert linted.output == output
    assert sorted((f.rule, f.message) for f in linted.findings) == sorted((f.rule, f.message) for f in once.findings)
    assert_untouched_lines_kept(source, output, touched_lines(source, linted))
    assert_comments_kept(source, output, linted)
    return once


# -- meaning ---------------------------------------------------------------------------------


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a loop's body, nested loops, functions and classes left out."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield child
        yield from _own_nodes(child)


def _xla_guarded(tree: ast.AST) -> set[int]:
    """ids of the nodes under a branch on XLA or TPU availability (``if HAS_XLA:``): code
    the tool leaves exactly as written."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, (ast.If, ast.IfExp)) and any(names_xla(n) for n in _names_in(node.test))
        for inner in ast.walk(node)
    }


def _is_call_of(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr in names)
        or (isinstance(node.func, ast.Name) and node.func.id in names)
    )


def _is_barrier(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and _is_call_of(statement.value, ("sync", "mark_step"))


def _ends_with_barrier(loop: ast.For | ast.While) -> bool:
    body = loop.body
    if isinstance(body[-1], (ast.Continue, ast.Break, ast.Return, ast.Raise)):
        body = body[:-1]
    return bool(body) and _is_barrier(body[-1])


def _feeds_from_device_loader(loop: ast.For | ast.While) -> bool:
    return isinstance(loop, ast.For) and any(
        _is_call_of(n, ("MpDeviceLoader", "per_device_loader")) for n in ast.walk(loop.iter)
    )


def _keeps_non_xla_path(tree: ast.Module) -> bool:
    """torch_xla imported inside try/if: the tool rewrites nothing (XLA stays optional)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Try, ast.If)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)) and "torch_xla" in ast.unparse(inner):
                    return True
    return False


def _is_optimizer_step(node: ast.AST) -> TypeGuard[ast.Call]:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step"):
        return False
    receiver = ast.unparse(node.func.value).rsplit(".", 1)[-1].lower()
    return "optim" in receiver and "sched" not in receiver


def assert_training_is_ported(source: str, output: str) -> dict[str, bool]:
    """The promises on meaning; returns which of the rewrites this script reached."""
    before, after = ast.parse(source), ast.parse(output)
    reached = {"barrier": False, "loader": False, "optimizer_step": False}
    if _keeps_non_xla_path(before):
        return reached
    guarded = _xla_guarded(after)
    for loop in (n for n in ast.walk(after) if isinstance(n, (ast.For, ast.While))):
        if id(loop) in guarded or not any(_is_call_of(n, ("backward",)) for n in _own_nodes(loop)):
            continue
        if _feeds_from_device_loader(loop):
            reached["loader"] = True
            continue
        ends = _ends_with_barrier(loop)
        # A barrier the script already had elsewhere in the loop is left where it is.
        already = any(_is_barrier(n) for n in _own_nodes(loop) if isinstance(n, ast.stmt))
        assert ends or already, f"loop at line {loop.lineno} has no barrier:\n{output}"
        reached["barrier"] = reached["barrier"] or ends
    amp_or_ddp = re.search(r"scaler|autocast|DistributedDataParallel", source)
    if not amp_or_ddp:
        left = [n for n in ast.walk(after) if _is_optimizer_step(n) and id(n) not in guarded]
        assert not left, f"optimizer step left at line {left[0].lineno}:\n{output}"
        reached["optimizer_step"] = "optimizer_step(" in output
    return reached


def test_training_script_properties() -> None:
    reached: Counter[str] = Counter()

    @fixed(250)
    @given(training_scripts())
    def run(source: str) -> None:
        once = check(source)
        reached["scripts"] += 1
        found = assert_training_is_ported(source, once.output)  # type: ignore[arg-type]
        reached.update(name for name, hit in found.items() if hit)

    run()
    # The generator must reach the rewrites it checks, and often.
    assert reached["barrier"] + reached["loader"] >= reached["scripts"] * 0.6, reached
    assert reached["optimizer_step"] >= reached["scripts"] * 0.5, reached


@fixed(80)
@given(training_scripts(), st.sampled_from(["2.9", "sagemaker"]), st.sampled_from(["lint", "check", "diff"]))
def test_lint_check_and_diff_never_change_a_file_and_targets_agree(source: str, target: str, mode: str) -> None:
    converted = convert_source(source, target=target)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "train.py")
        with open(path, "wb") as handle:
            handle.write(source.encode())
        before = os.stat(path)
        report = process_path(path, Job(mode, target, RuleSelection()))  # type: ignore[arg-type]
        after = os.stat(path)
        with open(path, "rb") as handle:
            assert handle.read() == source.encode()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert report.error is None
    assert report.changed == (mode != "lint" and converted.changed)
    assert all(1 <= f.line <= len(_lines(source)) for f in report.findings)
    output = converted.output
    assert isinstance(output, str)
    ast.parse(output)
    assert convert_source(output, target=target).output == output


# How a generated module mentions torch, so that it is not skipped before parsing.
MENTIONS = [
    lambda source: "import torch\n" + source,
    lambda source: "# torch\n" + source,
    lambda source: source + ("" if source.endswith("\n") or not source else "\n") + "  # torch",
    lambda source: source + ("" if source.endswith("\n") or not source else "\n") + "\n\n    # torch\n  # odd\n",
]


@fixed(150)
@given(hypothesmith.from_grammar(), st.sampled_from(MENTIONS))
def test_generated_python_keeps_its_lines(source: str, mention) -> None:  # type: ignore[no-untyped-def]
    source = mention(source)
    check(source)
    raw = source.encode("utf-8", "surrogatepass")
    once = convert_valid(raw)
    if not any(f.fixed for f in once.findings):
        assert once.output == raw


def test_meaning_checks_catch_a_missing_barrier_or_optimizer_step() -> None:
    """Negative controls: a conversion with the barrier or the optimizer rewrite
    switched off fails the checks above."""
    source = (
        "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "for x, y in train_loader:\n    x = x.to(device)\n    loss_fn(model(x), y).backward()\n    optimizer.step()\n"
    )
    assert_training_is_ported(source, convert_source(source).output)  # type: ignore[arg-type]
    for ignored, message in (("XLA301", "has no barrier"), ("XLA201", "optimizer step left")):
        output = convert_source(source, selection=RuleSelection(ignore=(ignored,))).output
        with pytest.raises(AssertionError, match=message):
            assert_training_is_ported(source, output)  # type: ignore[arg-type]


def test_line_check_catches_what_libcst_loses() -> None:
    """Negative control: the module as LibCST 1.9 prints it back has lost two lines."""
    import libcst as cst

    source = "import torch\nx = torch.zeros(1)\n\n\n  # c"
    with pytest.raises(AssertionError, match="lost or moved"):
        assert_untouched_lines_kept(source, cst.parse_module(source).code, set())
