"""Property tests: for generated programs, conversion never raises (but a clean
ConversionError on unparseable input), its output parses, converting twice equals
converting once, and a module that mentions no torch, transformers or sagemaker comes
back byte-identical.

Two generators: hypothesmith writes arbitrary Python from the grammar; the other
nests training-script statements (devices, loops, optimizer steps, checkpoints,
torch_xla names...) into random blocks, so that every rule meets odd company.
Seeds are fixed (derandomize) so CI runs the same examples every time.
"""

from __future__ import annotations

import ast

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codemods import ConversionError, convert_source

# Generated code may trip CPython's SyntaxWarnings ("'int' object is not callable").
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")


def fixed(examples: int) -> settings:
    return settings(
        max_examples=examples, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )

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
LOOP_ONLY = ["continue", "break"]
FUNCTION_ONLY = ["return loss", "return"]
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
LOOPS = ["for x, y in train_loader:", "for i, (x, y) in enumerate(loader):", "while step < 10:", "for p in model.parameters():"]
OTHERS = [
    "if use_cuda:",
    "if torch.cuda.is_available():",
    "if not torch.cuda.is_available():",
    "if HAS_XLA:",
    "with torch.no_grad():",
    "if x:",
]
FUNCTIONS = ["def train(model, device, loader, optimizer):", "def closure():", "def _run_batch(self, source):"]


@st.composite
def block(draw, depth: int = 0, in_loop: bool = False, in_function: bool = False) -> list[str]:  # type: ignore[no-untyped-def]
    """A list of source lines (already indented for this block's level)."""
    pool = STATEMENTS + (LOOP_ONLY if in_loop else []) + (FUNCTION_ONLY if in_function else [])
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            header = draw(st.sampled_from(LOOPS + OTHERS + FUNCTIONS))
            loop = header in LOOPS or (in_loop and header in OTHERS)
            function = header in FUNCTIONS or (in_function and header not in FUNCTIONS)
            inner = draw(block(depth + 1, in_loop=loop and header not in FUNCTIONS, in_function=function))
            lines.append(header)
            lines.extend("    " + line for line in inner)
            if header.startswith("if ") and draw(st.booleans()):  # an elif or else branch
                lines.append(draw(st.sampled_from(["elif torch.cuda.is_available():", "elif args.mps:", "else:"])))
                lines.extend("    " + line for line in draw(block(depth + 1, in_loop=in_loop, in_function=in_function)))
        else:
            lines.extend(draw(st.sampled_from(pool)).splitlines())
    return lines


@st.composite
def training_scripts(draw) -> str:  # type: ignore[no-untyped-def]
    imports = draw(st.lists(st.sampled_from(IMPORTS), min_size=1, max_size=4, unique=True))
    body = draw(block())
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join([*imports, "", *body]) + newline


def _module_bindings(tree: ast.Module) -> set[str]:
    """Names bound by module-level imports."""
    bound = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add(alias.asname or alias.name.split(".")[0])
    return bound


def _loaded(tree: ast.Module) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def check(source: str) -> None:
    """The properties every conversion must have."""
    try:
        once = convert_source(source)
    except ConversionError as error:
        assert error.message.startswith(("cannot parse", "cannot decode")), error
        return
    output = once.output
    assert isinstance(output, str)
    before, after = ast.parse(source), ast.parse(output)
    # No import the output still needs was removed (and nothing it uses is unbound).
    assert _loaded(after) & _module_bindings(before) <= _module_bindings(after)
    assert _loaded(after) & {"xm", "xr", "pl", "torch_xla"} <= _module_bindings(after) | _loaded(before)
    twice = convert_source(output)
    assert twice.output == output
    assert not any(f.fixed for f in twice.findings)
    lines = output.splitlines()
    for finding in once.findings:
        assert 1 <= finding.line <= max(len(lines), 1), finding


@fixed(400)
@given(training_scripts())
def test_training_script_properties(source: str) -> None:
    check(source)


@fixed(150)
@given(training_scripts(), st.sampled_from(["2.9", "sagemaker"]))
def test_lint_never_changes_and_targets_agree_on_parsing(source: str, target: str) -> None:
    linted = convert_source(source, target=target, locate="input")
    assert all(1 <= f.line <= len(source.splitlines()) for f in linted.findings)
    converted = convert_source(source, target=target)
    ast.parse(converted.output)
    assert convert_source(converted.output, target=target).output == converted.output


@fixed(100)
@given(hypothesmith.from_grammar())
def test_generated_python_without_torch_is_byte_identical(source: str) -> None:
    if any(word in source for word in ("torch", "sagemaker", "transformers")):
        return
    assert convert_source(source).output == source
    assert convert_source(source.encode("utf-8", "surrogatepass")).output == source.encode("utf-8", "surrogatepass")


@fixed(100)
@given(hypothesmith.from_grammar())
def test_generated_python_with_torch_converts_cleanly(source: str) -> None:
    check("import torch\n" + source)
