"""Regressions from real repositories (issue 19; scripts/smoke.py found them, docs/dev/real-world.md
lists the runs): the analysis terminates on any program, the rewrites take every node shape
LibCST gives them, only input CPython refuses is "too deeply nested", and already-ported
code is understood as the code it came from (a second run changes nothing).

Each case is a minimal reproduction written for this suite (no third-party code)."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codemods import Conversion, ConversionError, convert_source, pipeline
from codemods.engine.rule import RuleSelection
from codemods.lazy.flow import FlowAnalysis
from codemods.project import resolver as project
from codemods.runner import Job, process_bytes, process_path
from tests.support.fixtures import output_text
from tests.support.paths import ROOT
from tests.support.training_programs import INIT_DISTRIBUTED_MODE

TARGETS = ("2.9", "sagemaker")

LOOP = """\
import torch

model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
{helpers}
for step, batch in enumerate(loader):
    batch = batch.cuda()
    out = model(batch)
{body}
    loss = out.sum()
    loss.backward()
    optimizer.step()
"""

# Programs whose device inference used to recurse without end (lazy analysis:
# is_device -> _call_is_device -> the callee's returns -> is_device ...).
TERMINATION = {
    "recursive function": (
        "def f(x):\n    if x is None:\n        return f(x)\n    return x\n",
        "    y = f(out)\n    print(y.mean().item())",
    ),
    "mutual recursion": (
        "def g(n):\n    return h(n)\n\ndef h(n):\n    return g(n)\n",
        "    z = g(out)\n    print(z.item())",
    ),
    "three-way recursion": (
        "def a(x):\n    return b(x)\n\ndef b(x):\n    return c(x) + x\n\ndef c(x):\n    return a(x)\n",
        "    w = a(out)\n    print(w.sum().item())",
    ),
    "self-referencing assignment": ("", "    acc = acc_fn(acc, out)\n    acc = acc + out\n    print(acc.item())"),
    "cyclic aliases": (
        "a = None\nb = a\n",
        "    a = b\n    b = a\n    b = out if a is None else a\n    print(b.item())",
    ),
    "function passed to itself": (
        "def apply(fn, x):\n    return fn(fn, x)\n",
        "    r = apply(apply, out)\n    print(r.item())",
    ),
    "recursive method": (
        "class Walker:\n    def walk(self, x, depth):\n        return self.walk(x, depth - 1) if depth else x\n",
        "    v = Walker().walk(out, 3)\n    print(v.item())",
    ),
    "recursion through a device move": (
        "def move(x):\n    return move(x.cuda()) if isinstance(x, list) else x.cuda()\n",
        "    m = move(out)\n    print(m.max().item())",
    ),
}

# Node shapes at the positions the rewrites touch (a logging read moved into a step
# closure, a device call rebuilt): each must convert, parse and be idempotent.
SHAPES = {
    "implicit concatenation, f-string first": '    print(f"loss {out.sum().item()}" " at step")',
    "implicit concatenation, f-string last": '    print("loss " f"{out.sum().item()}")',
    "implicit concatenation of two f-strings": '    print(f"step {step} " f"loss {out.sum()}")',
    "implicit concatenation in a format call": '    print(("a {} " "b").format(out.sum().item()))',
    "three-part concatenation": '    print("x " f"{out.sum().item():.3f}" " y " f"{step}")',
    "nested f-string format spec": '    print(f"{out.sum().item():{width}.{digits}f}")',
    "parenthesised argument": "    print((out.sum().item()))",
    "starred arguments": "    print(*[out.sum().item()], *extra)",
    "walrus in a logging call": "    print((v := out.sum().item()))",
    "logging keyword arguments": '    logger.info("loss %s", out.sum().item(), extra={"step": step})',
    "lambda in a logging call": "    print((lambda: out.sum())().item())",
    "comprehension in a logging call": "    print([t.item() for t in out])",
    "conditional expression": "    print(out.sum().item() if step % 10 == 0 else None)",
    "match statement": "    match step:\n        case 0:\n            print(out.sum().item())\n        case _:\n            pass",
    "decorated nested function": "    @functools.lru_cache\n    def cached():\n        return out.cuda()\n    cached()",
    "async comprehension in an async function": "    async def later():\n        return [x async for x in aiter(out.cuda())]",
    "byte and raw strings": '    print(rb"\\x" b"y", r"{}".format(out.sum().item()))',
    "string device in a concatenation": '    out = out.to("cu" "da")',
}


def _convert(source: str, target: str) -> str:
    conversion = convert_source(source, target=target)
    output = conversion.output
    assert isinstance(output, str)
    ast.parse(output)
    again = convert_source(output, target=target)
    assert again.output == output, f"a second run changes the output for {target}"
    return output


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(TERMINATION))
def test_analysis_terminates_on_recursive_programs(name: str, target: str) -> None:
    helpers, body = TERMINATION[name]
    output = _convert(LOOP.format(helpers=helpers, body=body), target)
    assert "xm.optimizer_step(optimizer)" in output  # converted, not refused


def test_a_device_value_found_through_recursion_is_still_found() -> None:
    """The fixed point settles recursive functions' returns: ``f`` returns a device value
    on its non-recursive path, so logging what it returns is a host read to move."""
    helpers, body = TERMINATION["recursive function"]
    source = LOOP.format(helpers=helpers, body=body)
    conversion = convert_source(source, locate="input")
    line = source.splitlines().index("    print(y.mean().item())") + 1
    moved = [f for f in conversion.findings if f.rule == "XLA701"]
    assert [(f.line, f.col, f.fixed) for f in moved] == [(line, 11, True)], moved
    assert "`y.mean().item()` moved into a step closure" in moved[0].message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_rewrites_take_every_node_shape(name: str, target: str) -> None:
    _convert(LOOP.format(helpers="import functools\n", body=SHAPES[name]), target)


def test_concatenated_strings_keep_their_parts_in_a_step_closure() -> None:
    """Lightning's Fabric image classifier example: a logging call whose implicit
    concatenation reads a tensor crashed rebuilding the ConcatenatedString."""
    output = _convert(LOOP.format(helpers="", body=SHAPES["implicit concatenation of two f-strings"]), "2.9")
    # both parts stay f-strings; the device value is computed now and printed by the closure
    assert (
        'xm.add_step_closure(lambda step, value: print(f"step {step} " f"loss {value}"), args=(step, out.sum()))'
        in output
    )


@pytest.mark.parametrize("limit", [1000, 10_000])  # Python's default; the command line's
def test_only_input_cpython_refuses_is_too_deeply_nested(limit: int) -> None:
    """A 5,000-term sum is deeper than CPython compiles with its default recursion limit:
    too deeply nested, whatever limit the tool runs under (its own recursion there, with
    the command line's higher limit, is still the input's depth, not a bug)."""
    deep = "import torch\nx = " + "+".join(["a"] * 5000) + "\n"
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        with pytest.raises(ConversionError, match="too deeply nested"):
            convert_source(deep)
    finally:
        sys.setrecursionlimit(before)


def test_a_recursion_in_the_tool_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A RecursionError of the tool's own (here: one put into the lazy analysis) is an
    internal error that names the frame, never blamed on the input."""

    def runaway(self: FlowAnalysis) -> None:
        runaway(self)

    monkeypatch.setattr(FlowAnalysis, "finish", runaway)
    report, output = process_bytes(
        "train.py", LOOP.format(helpers="", body="").encode(), Job("check", "2.9", RuleSelection())
    )
    assert report.error is not None
    assert report.error.startswith("internal error (RecursionError"), report.error
    assert (
        f"in {Path(__file__).resolve().relative_to(ROOT)}" not in report.error
    )  # the tool's innermost frame, not the test's
    assert "codemods/" in report.error and "please report it" in report.error
    assert "deeply nested" not in report.error
    assert output == LOOP.format(helpers="", body="").encode()


IMPROVED_DIFFUSION_SAVE = textwrap.dedent(
    """\
    import torch as th
    import torch.distributed as dist


    class TrainLoop:
        def save(self):
            def save_checkpoint(rate, params):
                state_dict = self._state_dict(params)
                if dist.get_rank() == 0:
                    with open(f"model{rate}.pt", "wb") as f:
                        th.save(state_dict, f)

            save_checkpoint(0, self.master_params)
            if dist.get_rank() == 0:
                with open("opt.pt", "wb") as f:
                    th.save(self.opt.state_dict(), f)
            dist.barrier()
    """
)


def test_a_ported_rank_check_is_still_a_rank_check() -> None:
    """openai/improved-diffusion's train_util.py for the sagemaker target: the saves under
    ``dist.get_rank() == 0`` stay torch.save (torch_xla 1.13's xm.save waits for every process)
    of the state moved to the CPU; once the check reads ``xm.get_ordinal() == 0`` a second run
    must still keep them, as they are."""
    first = convert_source(IMPROVED_DIFFUSION_SAVE, target="sagemaker")
    assert "if xm.get_ordinal() == 0:" in first.output and "xm.save" not in first.output
    assert output_text(first).count("xm._maybe_convert_to_cpu(") == 2, first.output
    assert all("under a rank check" in f.message for f in first.findings if f.rule == "XLA401")
    second = convert_source(output_text(first), target="sagemaker")
    assert second.output == first.output
    assert not [f for f in second.findings if f.rule == "XLA401"]


# -- generated programs: termination and node shapes -------------------------------------

_DEVICE_VALUES = ["x", "x.cuda()", "x.to(device)", "model(x)", "x * 2", "x[0]", "torch.relu(x)"]
_STRINGS = [  # V: the value logged
    '"{}".format(V)',
    'f"{V}"',
    '"a " f"{V}"',
    'f"{V}" " b"',
    '"a" "b" f"{V:.3f}"',
    '"%s" % V',
    "str(V)",
    'f"{(V)!r}"',
    "V",
]


@st.composite
def recursive_modules(draw) -> str:  # type: ignore[no-untyped-def]
    """Functions that call each other (any call graph, self-calls and cycles included)
    on device values, cyclic assignments, and a training loop that logs their results
    with every string form."""
    count = draw(st.integers(1, 5))
    names = [f"f{i}" for i in range(count)]
    lines = ["import torch", "device = torch.device('cuda')", "model = Net().to(device)"]
    for name in names:
        callees = draw(st.lists(st.sampled_from(names), max_size=3))
        value = draw(st.sampled_from(_DEVICE_VALUES))
        lines.append(f"def {name}(x, fn=None):")
        for callee in callees:
            lines.append(f"    x = {callee}(x, {draw(st.sampled_from(names))})")
        if draw(st.booleans()):
            lines.append(f"    if fn is not None:\n        return fn(fn, {value})")
        returned = draw(
            st.sampled_from(
                [value, f"{draw(st.sampled_from(names))}({value})", f"{draw(st.sampled_from(names))}(x) + x"]
            )
        )
        lines.append(f"    return {returned}")
    lines += ["a = b = None", "for step, x in enumerate(loader):", "    x = x.to(device)"]
    for _ in range(draw(st.integers(1, 4))):
        target, source = draw(st.sampled_from(["a", "b", "y"])), draw(st.sampled_from(["a", "b", "y", "x"]))
        lines.append(f"    {target} = {draw(st.sampled_from(names))}({source})")
    lines += ["    loss = model(x).sum()", "    loss.backward()", "    optimizer.step()"]
    for _ in range(draw(st.integers(1, 3))):
        value = draw(st.sampled_from(["loss", "loss.item()", "a", "y.item()", "b.mean()"]))
        lines.append(f"    print({draw(st.sampled_from(_STRINGS)).replace('V', value)})")
    return "\n".join(lines) + "\n"


@settings(
    max_examples=60,
    derandomize=True,
    database=None,
    # a bound on each generated file: an analysis that does not terminate fails here
    deadline=20_000,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(recursive_modules(), st.sampled_from(TARGETS))
def test_generated_recursive_programs_convert(source: str, target: str) -> None:
    ast.parse(source)
    _convert(source, target)


SPAWNING_METHOD = textwrap.dedent(
    """\
    import torch


    class SpawnExecutor:
        def __call__(self, address):
            nprocs = torch.cuda.device_count() if torch.cuda.is_available() else 1
            torch.multiprocessing.spawn(self.dispatch, args=(self.work, address, nprocs), nprocs=nprocs)

        @staticmethod
        def dispatch(local_rank, work, address, nprocs):
            work.run(local_rank, nprocs)
    """
)


@pytest.mark.parametrize("target", TARGETS)
def test_a_count_handed_to_a_ported_launcher_stays_the_launching_process_count(target: str) -> None:
    """Lightning 1.9's PyTorchSpawnRunExecutor: a method spawns its workers with a CUDA
    count. Once the spawn is the XLA launcher, the method is still the launching
    process's code: a second run must not read the count from the XLA runtime there."""
    first = _convert(SPAWNING_METHOD, target)
    assert ("torch_xla.launch(" if target == "2.9" else "xmp.spawn(") in first
    assert "nprocs = torch.cuda.device_count() if torch.cuda.is_available() else 1" in first


def test_summaries_made_on_demand_nest_no_deeper_than_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """diffusers' models import each other many modules deep: converting one file alone
    summarises its imports on demand, each summary converting the module, whose analysis
    asks for its own imports' summaries.  That nesting is bounded, whatever the depth of
    the project's imports, and the file still converts."""
    (tmp_path / "pyproject.toml").write_text("")
    depth = 40
    for i in range(depth):
        body = (
            f"from m{i + 1} import step\n\n\ndef step_{i}(model, batch, scaler):\n    return step(model, batch, scaler)\n"
            if i < depth - 1
            else "import torch\n\n\ndef step(model, batch, scaler):\n    with torch.cuda.amp.autocast():\n"
            "        loss = model(batch).sum()\n    scaler.scale(loss).backward()\n    return loss\n"
        )
        (tmp_path / f"m{i}.py").write_text("import torch\n" + body)
    (tmp_path / "train.py").write_text(
        "import torch\nfrom m0 import step_0\n\nmodel = Net().cuda()\nscaler = torch.cuda.amp.GradScaler()\n"
        "for batch in loader:\n    step_0(model, batch.cuda(), scaler)\n    scaler.step(optimizer)\n    scaler.update()\n"
    )
    nesting = [0, 0]  # now, deepest
    real = pipeline.convert_source

    def counting(*args: Any, **kwargs: Any) -> Conversion:  # convert_source's, passed on
        nesting[0] += 1
        nesting[1] = max(nesting)
        try:
            return real(*args, **kwargs)
        finally:
            nesting[0] -= 1

    monkeypatch.setattr(pipeline, "convert_source", counting)
    job = Job("check", "2.9", RuleSelection())
    report = process_path(str(tmp_path / "train.py"), job)
    assert report.error is None and report.changed
    assert nesting[1] == project._MAX_NESTED_SUMMARIES


MEGATRON_DEVICE = textwrap.dedent(
    """\
    import torch


    def test_scale():
        device = (
            torch.device('cuda', torch.cuda.current_device())
            if torch.cuda.is_available()
            else torch.device('cpu')
        )
        return torch.ones(2, device=device)
    """
)


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_choice_whose_index_calls_cuda_folds_at_once(target: str) -> None:
    """Megatron-LM's tests pick ``torch.device('cuda', torch.cuda.current_device())``
    under an availability check.  The whole call becomes the XLA device, so the CUDA call
    in its index goes with it: it neither blocks folding the check (which a second run
    then did) nor stays reported as CUDA-only code to remove."""
    conversion = convert_source(MEGATRON_DEVICE, target=target, locate="input")
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    assert f"    device = {device}\n" in conversion.output
    assert [(f.rule, f.line, f.fixed) for f in conversion.findings if f.rule != "XLA001"] == [("XLA104", 6, True)]
    assert _convert(MEGATRON_DEVICE, target) == conversion.output


OLD_XLA_LOGGING = textwrap.dedent(
    """\
    import time
    import torch
    import torch_xla.core.xla_model as xm


    def train_loop_fn(loader, model, optimizer):
        for x, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = model(data).sum()
            loss.backward()
            xm.optimizer_step(optimizer)
            if x % 10 == 0:
                print('[xla:{}]({}) Loss={:.5f} Time={}'.format(
                    xm.get_ordinal(), x, loss.item(), time.asctime()), flush=True)
            xm.mark_step()
    """
)


def test_a_logging_statement_with_an_upgraded_name_moves_into_its_closure_at_once() -> None:
    """pytorch/xla 2.1's Colab notebooks: the printed values include ``xm.get_ordinal()``,
    which the 2.9 target upgrades; the closure passes the upgraded value in (the first run
    used to leave the statement, and a second run then moved it)."""
    conversion = convert_source(OLD_XLA_LOGGING, locate="input")
    assert (
        "xm.add_step_closure(lambda value, x, loss, value_2: print('[xla:{}]({}) Loss={:.5f} Time={}'.format(\n"
        "                value, x, loss.item(), value_2), flush=True), args=(xr.global_ordinal(), x, loss, time.asctime()))"
    ) in conversion.output
    assert [(f.rule, f.line, f.fixed) for f in conversion.findings if f.rule in ("XLA701", "XLA901")] == [
        ("XLA901", 14, True),
        ("XLA701", 14, True),
        ("XLA901", 15, True),
    ]
    for target in TARGETS:
        _convert(OLD_XLA_LOGGING, target)


LIGHTNING_PARITY = textwrap.dedent(
    """\
    import torch


    def measure_loops(loop):
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
        return loop(device_type=device_type)


    def vanilla_loop(device_type: str = "cuda"):
        return torch.device(device_type)
    """
)


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_flag_is_not_folded_to_a_cuda_string_that_stays(target: str) -> None:
    """Lightning 1.9's parity benchmark: ``device_type = "cuda" if available else "cpu"``,
    used as a device only in another function.  The flag fold dropped the check and left
    ``device_type = "cuda"`` (a CUDA device on XLA), which a second run then changed: now
    the choice stays, reported as an error."""
    conversion = convert_source(LIGHTNING_PARITY, target=target, locate="input")
    assert conversion.output == LIGHTNING_PARITY
    assert [(f.rule, f.line, f.fixed) for f in conversion.findings] == [("XLA104", 5, False)]
    assert "make it the XLA device by hand" in conversion.findings[0].message


# pytorch/examples distributed/rpc/ddp_rpc (minGPT's check), with either device API
# (``{api}`` is ``cuda`` or ``accelerator``).
MINIMUM_DEVICES_EXIT = textwrap.dedent(
    """
    import sys

    import torch
    import torch.multiprocessing as mp


    def verify_min_gpu_count(min_gpus: int = 2) -> bool:
        has_gpu = torch.{api}.is_available()
        gpu_count = torch.{api}.device_count()
        return has_gpu and gpu_count >= min_gpus


    def run_worker(rank, world_size):
        torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)


    if __name__ == "__main__":
        if not verify_min_gpu_count(min_gpus=2):
            print("Requires at least 2 GPUs to run.")
            sys.exit()
        mp.spawn(run_worker, args=(4,), nprocs=4, join=True)
    """
)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("api", ["accelerator", "cuda"])
def test_a_count_left_by_a_removed_minimum_devices_exit_stays(api: str, target: str) -> None:
    """pytorch/examples distributed/rpc/ddp_rpc: the exit under the minimum-device check
    goes (XLA104), leaving the counting function uncalled; a second run must not port the
    count in it (``_convert`` checks the second run changes nothing): its function returns
    False on XLA whatever the count."""
    first = _convert(MINIMUM_DEVICES_EXIT.format(api=api), target)
    assert "if not verify_min_gpu_count" not in first
    assert f"gpu_count = torch.{api}.device_count()" in first


INDEX_AS_DEVICE_KEYWORD = textwrap.dedent(
    """
    import torch
    import torch.distributed as dist


    def main():
        dist.init_process_group("nccl")
        device = dist.get_rank() % torch.cuda.device_count()
        torch.cuda.set_device(device)
        model = torch.nn.Linear(4, 4).to(device)
        total = torch.tensor(0.0, device=device)
        seed = torch.Generator(device=device)
        return model, total, seed
    """
)


@pytest.mark.parametrize("target", TARGETS)
def test_a_cuda_index_given_as_a_device_keyword_becomes_the_xla_device(target: str) -> None:
    """facebookresearch/DiT train.py: ``device = rank % torch.cuda.device_count()`` fed
    ``set_device`` and ``.to(device)`` (both ported) and ``torch.tensor(x, device=device)``,
    which stayed: a tensor made on cuda:N, with no finding.  A ``device=`` keyword naming a
    CUDA index is a move to it (generators keep their own rewrite: no device)."""
    output = _convert(INDEX_AS_DEVICE_KEYWORD, target)
    assert "device=device" not in output
    assert "torch.tensor(0.0, device=torch_xla.device())" in output or "device=xm.xla_device()" in output
    assert "torch.Generator()" in output


LOCAL_RANK_ZERO_CHECKS = {
    # A Trainer's file: the environment reads stay (the Trainer reads the ranks itself).
    "under a Trainer": (
        """\
import os
from transformers import Trainer


def train(model, data):
    Trainer(model=model, train_dataset=data).train()
    if int(os.environ.get("LOCAL_RANK", 0)) == 0:
        model.save_pretrained("out")
""",
        ('if int(os.environ.get("LOCAL_RANK", 0)) == 0:\n',) * 2,
    ),
    "in a process group's script": (
        """\
import os
import torch


def main():
    torch.distributed.init_process_group("nccl")
    if int(os.environ.get("LOCAL_RANK", 0)) == 0:
        torch.save(torch.zeros(2).cuda(), "out.pt")
""",
        ("if xr.local_ordinal() == 0:\n", "if xm.get_local_ordinal() == 0:\n"),
    ),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(LOCAL_RANK_ZERO_CHECKS))
def test_a_rank_compared_with_a_default_a_launcher_sets_is_not_a_launch_check(name: str, target: str) -> None:
    """tloen/alpaca-lora finetune.py: ``int(os.environ.get("LOCAL_RANK", 0)) == 0`` was read
    as "not launched" (the read equals its default) and folded to ``False``: the code under
    it (a save) never ran, with no error.  A default a launcher can set (rank 0, size 1)
    makes it a rank check; only an impossible one (``RANK`` -1) asks whether it was launched
    (XLA602's cases)."""
    source, checks = LOCAL_RANK_ZERO_CHECKS[name]
    output = _convert(source, target)
    assert "if False" not in output
    assert checks[TARGETS.index(target)] in output


SYNC_BATCH_NORM = """\
import torch
import torch.nn as nn
from torch.nn import SyncBatchNorm

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)).cuda()
if torch.cuda.is_available():
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
layer = SyncBatchNorm(8)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_torch_sync_batch_norm_is_reported(target: str) -> None:
    """facebookresearch/dino main_dino.py (and Swin, moco-style scripts): torch's SyncBatchNorm
    raises on XLA tensors once a process group is started (it takes CUDA and XPU tensors
    only), and nothing said so.  Each use is an error; under an accelerator check, which is
    False on XLA, the check stays (the conversion is skipped there)."""
    conversion = convert_source(SYNC_BATCH_NORM, target=target, locate="input")
    reported = [f.line for f in conversion.findings if "torch's SyncBatchNorm" in f.message]
    assert reported == [7, 8, 9]
    assert all(f.severity == "error" for f in conversion.findings if f.line in reported)
    assert "if torch.cuda.is_available():" in _convert(SYNC_BATCH_NORM, target)


@pytest.mark.parametrize("target", TARGETS)
def test_a_print_right_before_an_exit_stays_where_it_is(target: str) -> None:
    """facebookresearch/dino main_dino.py: ``print("Loss is {}".format(loss.item()))`` then
    ``sys.exit(1)`` under a non-finite check; the print was moved into a step closure, which
    runs at the next step barrier: the process exits first and the message is lost.  A read
    right before an exit (or a raise) is read once: it stays."""
    body = (
        "    if not math.isfinite(loss.item()):\n"
        '        print("loss is {}".format(loss.item()))\n'
        "        sys.exit(1)\n"
        '    if loss.item() > 1e9:\n        print(f"diverged at {loss.item()}"); raise SystemExit(2)'
    )
    source = "import math\nimport sys\n" + LOOP.format(helpers="", body=body)
    output = _convert(source, target)
    assert '        print("loss is {}".format(loss.item()))\n        sys.exit(1)\n' in output
    assert 'print(f"diverged at {loss.item()}"); raise SystemExit(2)' in output
    assert "add_step_closure" not in output


@pytest.mark.parametrize("target", TARGETS)
def test_a_pin_memory_call_goes(target: str) -> None:
    """Lightning-AI/lit-llama finetune scripts: ``fabric.to_device((x.pin_memory(),
    y.pin_memory()))``; ``Tensor.pin_memory()`` raises without CUDA ("Found no NVIDIA
    driver"), and it stayed with no finding.  Pinning only speeds up copies to a CUDA
    device: the call goes, the tensor stays."""
    body = "    x, y = batch.pin_memory().cuda(non_blocking=True), (batch).pin_memory()\n    out = model(x + y)"
    output = _convert(LOOP.format(helpers="", body=body), target)
    assert "pin_memory" not in output
    assert "(batch)\n" in output


SET_DEVICE_OF_A_CUDA_CALL = textwrap.dedent(
    """
    import os
    import torch
    import torch.distributed as dist


    def init():
        local_rank = int(os.getenv("LOCAL_RANK", "0"))
        if torch.cuda.is_available():
            device_id = local_rank
            torch.cuda.set_device(torch.cuda.device(device_id))
            backend = "nccl"
        else:
            raise NotImplementedError("CUDA was not found")
        dist.init_process_group(backend=backend)
    """
)


@pytest.mark.parametrize("target", TARGETS)
def test_a_cuda_call_in_a_removed_set_device_goes_with_it(target: str) -> None:
    """huggingface/nanotron distributed.py: ``torch.cuda.set_device(torch.cuda.device(i))``
    under ``if torch.cuda.is_available(): ... else: raise``.  The set_device statement was
    removed (XLA106), but the CUDA call in it still counted as code that fails without
    CUDA, so the check stayed (the converted script raised on XLA) and a second run folded
    it.  What a removed set_device reads goes with it (no XLA506 for it either)."""
    conversion = convert_source(SET_DEVICE_OF_A_CUDA_CALL, target=target)
    output = _convert(SET_DEVICE_OF_A_CUDA_CALL, target)
    assert "is_available" not in output and "NotImplementedError" not in output
    assert "XLA506" not in {f.rule for f in conversion.findings}


OWN_LAUNCHERS = {
    # The rank variables in a copy of the environment, handed to each worker.
    "env keywords": """\
import os
import subprocess
import sys

import torch


def main():
    world_size = torch.cuda.device_count()
    if "WORLD_SIZE" in os.environ:
        world_size = int(os.environ["WORLD_SIZE"])
    workers = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
        workers.append(subprocess.Popen([sys.executable, "train.py"], env=env))
    for worker in workers:
        worker.wait()


if __name__ == "__main__":
    sys.exit(main())
""",
    # The launcher's own environment set for each worker, then the worker exec'd.
    "environ writes": """\
import os
import sys

import torch

if __name__ == "__main__":
    os.environ["WORLD_SIZE"] = str(torch.cuda.device_count())
    for local_rank in range(int(os.environ["WORLD_SIZE"])):
        os.environ["LOCAL_RANK"] = os.environ["RANK"] = str(local_rank)
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "train.py"])
""",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(OWN_LAUNCHERS))
def test_a_launcher_of_its_own_stays_a_launcher(name: str, target: str) -> None:
    """mosaicml/composer ``composer/cli/launcher.py``: a launcher that starts its workers
    with ``subprocess.Popen``, RANK/WORLD_SIZE/LOCAL_RANK in their environment, and starts
    no process group itself.  Its main guard became ``torch_xla.launch(_mp_fn)`` (every XLA
    process then started all the workers again) and its own environment reads became the
    XLA runtime's, in the process that must not touch it.  It stays as it is, with one
    XLA609 at the start of its workers; its environment reads and checks are its inputs."""
    source = OWN_LAUNCHERS[name]
    output = _convert(source, target)
    assert "torch_xla" not in output and "_mp_fn" not in output and "if True" not in output
    conversion = convert_source(source, target=target, locate="input")
    manual = [f for f in conversion.findings if f.rule == "XLA609"]
    assert len(manual) == 1 and "a launcher of its own" in manual[0].message
    start = "subprocess.Popen" if name == "env keywords" else "os.execv"
    assert source.splitlines()[manual[0].line - 1].lstrip().startswith(("workers.append(" + start, start))


def test_a_script_that_sets_its_own_ranks_is_no_launcher() -> None:
    """mosaicml/composer's submitit notebook: the script runs one command (``scontrol``)
    to find its master host, then sets RANK/WORLD_SIZE in its own environment for the
    training it runs itself.  One program started outside a loop, without an environment
    of its own, starts no worker: no "launcher of its own" finding."""
    source = """\
import os
import subprocess

import torch


def set_up_env(rank):
    host = subprocess.check_output(["scontrol", "show", "hostnames"]).decode().split()[0]
    os.environ["MASTER_ADDR"] = host
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(torch.cuda.device_count())
"""
    conversion = convert_source(source, target="2.9")
    assert not any("a launcher of its own" in f.message for f in conversion.findings)


def test_a_launcher_that_also_starts_a_process_group_is_ported() -> None:
    """The same start of workers in a script that also runs as one (it starts its process
    group in the worker branch) is a training script: the group is ported as before."""
    source = OWN_LAUNCHERS["env keywords"].replace(
        "def main():\n",
        'def main():\n    if "RANK" in os.environ:\n        torch.distributed.init_process_group("nccl")\n        return\n',
    )
    output = _convert(source, "2.9")
    assert 'init_process_group("xla", init_method="xla://")' in output
    assert not any("a launcher of its own" in f.message for f in convert_source(source, target="2.9").findings)


SCRIPT_OF_THE_HELPER = """\
import torch

import helpers


def main(args):
    helpers.init_distributed_mode(args)
    model = torch.nn.Linear(2, 2).cuda()
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])


if __name__ == "__main__":
    main(parse_args())
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_check_in_a_helper_is_reported_where_the_xla_launcher_starts_the_script(
    tmp_path: Path, target: str
) -> None:
    """torchvision's references (and the many scripts copied from them): ``utils.init_distributed_mode``
    starts the process group only when RANK and WORLD_SIZE are set.  In its own module no
    entry point starts it, so the check stays (right for torchrun); but the training
    script's main guard becomes the XLA launcher, which sets neither: every process would
    skip the distributed setup and go through all the data.  The script's call of the helper is an error that says so."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(INIT_DISTRIBUTED_MODE)
    (tmp_path / "train.py").write_text(SCRIPT_OF_THE_HELPER)
    job = Job("check", target, RuleSelection())
    report = process_path(str(tmp_path / "train.py"), job)
    assert report.error is None
    manual = [f for f in report.findings if f.rule == "XLA609"]
    assert [(f.line, f.col) for f in manual] == [(7, 5)]
    assert manual[0].message.startswith("`helpers.init_distributed_mode` (")
    assert "helpers.py) starts the process group only when a launcher's variables" in manual[0].message
    helper = process_path(str(tmp_path / "helpers.py"), job)
    assert not any(f.rule == "XLA609" for f in helper.findings)


@pytest.mark.parametrize("target", TARGETS)
def test_an_autocast_that_switches_autocast_off_sets_up_no_mixed_precision_for_other_files(
    tmp_path: Path, target: str
) -> None:
    """lucidrains/x-transformers: the model's module runs its rotary embeddings under
    ``@autocast('cuda', enabled=False)``, kept in float32.  A script that builds that model
    trains without mixed precision: its optimizer is not swapped for a sync-free one and no
    finding says the module sets up CUDA mixed precision."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "layers.py").write_text(
        "import torch\nfrom torch.amp import autocast\n\n\n@autocast('cuda', enabled=False)\n"
        "def rotate(t):\n    return t.float()\n\n\nclass Net(torch.nn.Module):\n"
        "    def forward(self, x):\n        with autocast('cuda', enabled=False):\n            return rotate(x)\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom layers import Net\n\nmodel = Net().cuda()\n"
        "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
    )
    job = Job("check", target, RuleSelection())
    report = process_path(str(tmp_path / "train.py"), job)
    assert report.error is None
    assert not [f for f in report.findings if f.rule in ("XLA206", "XLA003")]
    layers = process_path(str(tmp_path / "layers.py"), job)
    assert [f.rule for f in layers.findings].count("XLA214") == 2
