"""XLA702 host-read-value: a host read in a training loop whose value the loop keeps
(an accumulation, a variable) is reported where it reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.lazy.rules.programs import PYTHON_NUMBERS, _loop, python_numbers_ported

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

HOST_READ_VALUE = Rule(
    code="XLA702",
    name="host-read-value",
    severity="warning",
    summary="A host read whose value the loop keeps (accumulation, a variable) syncs every step",
    fixable=False,
    why="Each read runs the pending graph before the step ends.  Keep running sums on the device "
    "(`total += loss.detach()`) and read them once per log interval, or read inside xm.add_step_closure. "
    "A read under an `if` of the loop (`if (step + 1) % save_steps == 0:`) runs only in the steps where the "
    "test holds: the finding says so, and there is nothing to do when that is seldom.",
    examples=lambda: (
        Invalid(
            _loop("total += loss.item()"),
            findings=(
                Expected(13, 14, "`loss.item()` reads a device value to the host every step to accumulate it (an"),
            ),
        ),
    ),
    valid=lambda: (
        # deep_gcns_torch's ogbn_proteins: the dataset's tensors move to the device in slices, so the
        # dataset holds them on the host and reading one there runs no graph.
        *(
            valid(
                f"""
                import torch
                {imports}

                def train(dataset, model, optimizer, device, clusters):
                    for nodes in clusters:
                        x = dataset.x[nodes].float().to(device)
                        inter = [n for n in nodes if n in dataset.train_idx.tolist()]
                        loss = model(x)[inter].sum()
                        loss.backward()
                        xm.optimizer_step(optimizer)
                        {barrier}
                """,
                target=target,
                note=f"an-attribute-of-an-object-moved-in-slices-{target}",
            )
            for target, imports, barrier in (
                ("2.9", "import torch_xla\n                import torch_xla.core.xla_model as xm", "torch_xla.sync()"),
                ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.mark_step()"),
            )
        ),
        valid(
            PYTHON_NUMBERS,
            python_numbers_ported("2.9"),
            target="2.9",
            note="python-numbers-beside-a-tensor",
        ),
        valid(
            """
            import torch
            import torch_xla

            total = torch.zeros((), device=device)
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                total += loss.detach()
                torch_xla.sync()
            print(total.item())
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def train(dataset, model, optimizer, device, clusters):
                for nodes in clusters:
                    x = dataset.x.to(device)[nodes]
                    inter = [n for n in nodes if n in dataset.train_idx.tolist()]
                    loss = model(x)[inter].sum()
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="an-attribute-of-an-object-moved-whole-is-still-reported",
            findings=(Expected(8, 43, "`dataset.train_idx.tolist()` reads a device value to the host every step"),),
        ),
        # A string formatted from a tensor and kept reads it every step.
        invalid(
            _loop('msg = "loss {:.3f}".format(loss)\nline = format(loss, ".3f")'),
            note="str-format-kept",
            findings=(
                Expected(13, 32, "`loss` reads a device value to the host every step"),
                Expected(14, 19, "`loss` reads a device value to the host every step"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            for x in loader:
                loss = model(x.to(device)).mean()
                loss.backward()
                xm.optimizer_step(optimizer)
                msg = "loss {:.3f}".format(loss)
                xm.mark_step()
            """,
            target="sagemaker",
            note="str-format-kept-1.13",
            findings=(Expected(9, 32, "`loss` reads a device value to the host every step"),),
        ),
        invalid(
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.parallel_loader as pl

            for batch in pl.MpDeviceLoader(loader, dev):
                loss = model(batch).mean()
                loss.backward()
                xm.optimizer_step(opt)
                values = loss.detach().cpu().numpy()
            """,
            alias=True,
            findings=(Expected(9, 14, "`loss.detach().cpu()` reads a device value to the host every step (an extra"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                if (step + 1) % save_steps == 0:
                    last = loss.item()
                torch_xla.sync()
            """,
            note="read-under-an-if-of-the-loop",
            findings=(
                Expected(
                    8,
                    16,
                    "`loss.item()` reads a device value to the host in each step where the `if` around "
                    "it holds (an extra graph execution each time): nothing to do if that is seldom (every N steps)",
                ),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla

            total = 0.0
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                total += loss.item()
                history.append(loss.item())
                last = loss.item()
                torch_xla.sync()
            """,
            findings=(
                Expected(8, 14, "`loss.item()` reads a device value to the host every step to accumulate it (an"),
                Expected(9, 20, "`loss.item()` reads a device value to the host every step to accumulate it (an"),
                Expected(
                    10, 12, "`loss.item()` reads a device value to the host every step (an extra graph execution)"
                ),
            ),
        ),
    ),
)


@reports_facts(
    HOST_READ_VALUE,
    nodes=lambda facts: [
        node for node, read in facts.host_reads.reads.items() if read.kind in ("accumulation", "value")
    ],
)
def _report(ctx: Context[Facts], original: cst.CSTNode) -> str:
    code = ctx.code(original)
    read = ctx.facts.host_reads.reads[original]
    # Under an ``if`` of the loop it runs in the steps where the test holds, which may be seldom.
    when = "in each step where the `if` around it holds" if read.conditional else "every step"
    if read.kind == "accumulation":
        message = (
            f"`{code}` reads a device value to the host {when} to accumulate it (an extra graph execution): "
            "keep the sum on the device (`+= x.detach()`) and read it once per log interval"
        )
    elif read.conditional:
        message = (
            f"`{code}` reads a device value to the host {when} (an extra graph execution each time): nothing to "
            "do if that is seldom (every N steps); if it holds in most steps, read it inside xm.add_step_closure"
        )
    else:
        message = (
            f"`{code}` reads a device value to the host {when} (an extra graph execution): read it inside "
            "xm.add_step_closure, or only every N steps"
        )
    return message
