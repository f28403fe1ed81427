"""XLA703 device-control-flow: control flow in a training loop that decides on a device
value (a read, or a test of a device tensor) is reported where it reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.lazy.rules.programs import PYTHON_NUMBERS, _loop, python_numbers_ported

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DEVICE_CONTROL_FLOW = Rule(
    code="XLA703",
    name="device-control-flow",
    severity="warning",
    summary="Control flow on a device value (`if loss.item() > x`, `while t.sum() > 0`) syncs every step",
    fixable=False,
    why="Python needs the value to choose a branch, so the graph runs there; a branch that changes "
    "which operations run also changes the graph.  Use torch.where, or decide once per log interval. "
    "What a function or method of the file or of the project returns when its every return is a host read "
    "(`def get_step(self): return self.step.data.item()`) is a Python number: `step = model.get_step()` "
    "then `if step % 1000 == 0` tests no device tensor (the read is the `.item()` inside it).",
    examples=lambda: (
        Invalid(
            _loop("if loss.item() > 10:\n    break"),
            findings=(Expected(13, 8, "`loss.item()` decides control flow from a device value"),),
        ),
    ),
    valid=lambda: (
        valid(
            PYTHON_NUMBERS,
            python_numbers_ported("sagemaker"),
            target="sagemaker",
            note="python-numbers-beside-a-tensor-1.13",
        ),
        valid(
            """
            import torch
            import torch_xla

            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                if step % 10 == 0 and x.shape[0] == 8 and loss is not None:
                    pass
                torch_xla.sync()
            """,
        ),
        valid(
            """
            import torch
            import torch_xla


            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.step = torch.nn.Parameter(torch.zeros(1).long(), requires_grad=False)

                def get_step(self):
                    return self.step.data.item()


            model = Net().to(torch_xla.device())
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                step = model.get_step()
                k = step // 1000
                if step % 1000 == 0:
                    save(f"ck_{k}.pt")
                torch_xla.sync()
            """,
            note="method-returning-an-item-is-a-number",
        ),
        valid(
            """
            import torch as th
            import torch_xla.core.xla_model as xm


            def current_step(model):
                return int(model.step)


            model = Net().to(xm.xla_device())
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                if current_step(model) % 1000 == 0:
                    save(model)
                xm.mark_step()
            """,
            target="sagemaker",
            note="function-returning-int-is-a-number-1.13",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla


            class Net(torch.nn.Module):
                def get_step(self):
                    return self.step.data


            model = Net().to(torch_xla.device())
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                step = model.get_step()
                if step % 1000 == 0:
                    save(model)
                torch_xla.sync()
            """,
            note="method-returning-a-tensor-is-tested",
            findings=(Expected(15, 8, "`step % 1000 == 0` tests a device tensor"),),
        ),
        invalid(
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            while True:
                out = model(th.randn(4, 4).to(dev))
                out.sum().backward()
                xm.optimizer_step(opt, barrier=True)
                if th.isnan(out).any():
                    break
            """,
            alias=True,
            findings=(Expected(8, 8, "`th.isnan(out).any()` tests a device tensor"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            best = 1e9
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                if loss < best:
                    best = loss
                if loss.item() > 100:
                    break
                torch_xla.sync()
            """,
            findings=(
                Expected(8, 8, "`loss < best` tests a device tensor"),
                Expected(10, 8, "`loss.item()` decides control flow from a device value"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def prepare():
                model = torch.nn.Linear(2, 2).to(torch_xla.device())
                return model, Batcher(40, 4), torch.ones(1, device=torch_xla.device())


            model, batcher, scale = prepare()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            while not batcher.end():
                loss = model(batcher.next().to(torch_xla.device())).sum() * scale
                loss.backward()
                xm.optimizer_step(opt)
                if scale > 1:
                    break
                torch_xla.sync()
            """,
            note="a tuple a function returns, unpacked: each name holds its own element (a batcher beside a model is "
            "no tensor)",
            findings=(Expected(17, 8, "`scale > 1` tests a device tensor"),),
        ),
    ),
)


def _decisions(facts: Facts) -> list[cst.CSTNode]:
    """Reads that decide control flow, and tests of device tensors that are no other
    kind of read (a logging read may be one too)."""
    reads = facts.host_reads.reads
    decided = [node for node, read in reads.items() if read.kind == "control"]
    tested = [node for node in facts.host_reads.device_tests if node not in reads or reads[node].kind == "logging"]
    return decided + tested


@reports_facts(DEVICE_CONTROL_FLOW, nodes=_decisions)
def _report(ctx: Context[Facts], original: cst.CSTNode) -> str:
    code = ctx.code(original)
    if original in ctx.facts.host_reads.reads and ctx.facts.host_reads.reads[original].kind == "control":
        message = (
            f"`{code}` decides control flow from a device value: the pending graph runs here every step; "
            "decide every N steps, or keep it on the device (torch.where)"
        )
    else:
        message = (
            f"`{code}` tests a device tensor: Python reads it to the host every step (an extra graph execution); "
            "decide every N steps, or use torch.where"
        )
    return message
