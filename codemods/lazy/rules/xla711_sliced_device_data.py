"""XLA711 sliced-device-data: device data sliced at a per-step offset is the one recompilation
source the tool fixes, where the file builds the data: ``data.to(device)`` becomes ``data`` (it
stays on the host) and each slice ``source[i:i+n]`` becomes ``source[i:i+n].to(device)``, so every
step feeds the same graph fresh input; elsewhere it is reported at the slice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, substituted, valid
from codemods.training.rules.step_loop_cases import TRAINER_HEADS

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A tensor computed on the device (GraphRNN's sampled graphs), sliced per step for the host.
_COMPUTED = """
import torch
import torch_xla


def sample(rnn, n):
    y_pred = torch.zeros(n, 4).to(torch_xla.device())
    x = torch.ones(1, 4).to(torch_xla.device())
    for i in range(n):
        x = rnn(x)
        y_pred = y_pred + x
    y_long = y_pred.long()
    graphs = []
    for i in range(n):
        graphs.append(y_long[i].cpu().numpy())
    return graphs
"""

# A batch's host targets moved where they are bound, then sliced per index (kospeech's validation loop).
_MOVED_WHERE_BOUND = """
import torch
import torch_xla

device = torch_xla.device()


def validate(model, queue, vocab):
    out = []
    while True:
        inputs, targets = queue.get()
        if inputs.shape[0] == 0:
            break
        inputs = inputs.to(device)
        targets = targets[:, 1:].to(device)
        y_hats = model(inputs)
        for idx in range(targets.size(0)):
            out.append(vocab.label_to_string(targets[idx]))
            out.append(vocab.label_to_string(y_hats[idx].cpu().numpy()))
    return out
"""
_MOVED_MESSAGE = (
    "(not fixed: `targets` is moved to the device from host data in `validate` (`targets[:, 1:].to(device)`), "
    "a move the tool does not undo: slice the host data before that move and move each slice"
)

SLICED_DEVICE_DATA = Rule(
    code="XLA711",
    name="sliced-device-data",
    severity="warning",
    summary="A device tensor sliced with a per-step Python integer: the data stays on the host and each slice moves",
    fixable=True,
    why="The offset of a slice is compiled into the graph, so `source[i:i+n]` on a device tensor is a new "
    "graph for every `i`.  A slice taken on the host and moved to the device is fresh input data: one graph. "
    "A loop over a constant `range` inside one step (a training loop's iteration, a model's forward, a Trainer's "
    "`compute_loss`: `for i in range(n_heads): logits[i, :, : -(2 + i)]`, `for k in range(1, 3): x.topk(k)`) runs the "
    "same counters every step: the same few graphs, compiled once; its counter is no per-step number. A tensor "
    "computed on the device (a model's sampled output, `y_long = y_pred.long()`) and sliced per step has no host "
    "copy to keep: the report asks for one copy to the host (`.cpu()`) before the loop that slices it. Host data "
    "moved where its name is bound (`targets = targets[:, 1:].to(device)`) has a host copy the tool does not keep: "
    "the report says so, and asks to slice that host data before the move.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nsource = torch.arange(100.0).to(device)\n"
            "w = torch.ones(10, device=device, requires_grad=True)\nfor i in range(0, 90, 10):\n"
            "    loss = (source[i:i + 10] * w).sum()\n    loss.backward()\n    torch_xla.sync()\n",
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nsource = torch.arange(100.0)\n"
            "w = torch.ones(10, device=device, requires_grad=True)\nfor i in range(0, 90, 10):\n"
            "    loss = (source[i:i + 10].to(device) * w).sum()\n    loss.backward()\n    torch_xla.sync()\n",
            findings=(
                Expected(5, 10, "torch.arange(100.0).to(device) -> torch.arange(100.0)"),
                Expected(8, 13, "source[i:i + 10] -> source[i:i + 10].to(device)"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            tokens = torch.randint(0, 100, (1000,))
            for offset in range(0, 900, 32):
                x = tokens[offset:offset + 32].to(device)
                loss = model(x)
                loss.backward()
            """,
            """
            import torch
            import torch_xla

            tokens = torch.randint(0, 100, (1000,))
            for offset in range(0, 900, 32):
                x = tokens[offset:offset + 32].to(device)
                loss = model(x)
                loss.backward()
                torch_xla.sync()
            """,
        ),
        valid(TRAINER_HEADS, note="a-trainers-compute-loss-slices-each-head-at-a-constant-offset"),
    ),
    invalid=lambda: (
        *(
            invalid(
                source,
                target=target,
                note=f"host-data-moved-where-it-is-bound-{target}",
                findings=(
                    Expected(17, 46, _MOVED_MESSAGE),
                    Expected(18, 46, "(not fixed: `y_hats` is computed on the device in `validate`"),
                ),
            )
            for target, source in (
                ("2.9", _MOVED_WHERE_BOUND),
                (
                    "sagemaker",
                    substituted(
                        _MOVED_WHERE_BOUND,
                        ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                        ("torch_xla.device()", "xm.xla_device()"),
                    ),
                ),
            )
        ),
        invalid(
            _COMPUTED,
            note="a-tensor-computed-on-the-device-sliced-at-a-per-step-offset",
            findings=(
                Expected(
                    14,
                    23,
                    "keep `y_long` on the host and move each slice to the device (not fixed: `y_long` is computed on "
                    "the device in `sample`, not moved there once from host data, so there is no host copy to keep: "
                    "copy it to the host once (`.cpu()`) before the loop that slices it)",
                ),
            ),
        ),
        invalid(
            substituted(
                _COMPUTED,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            note="a-tensor-computed-on-the-device-sliced-per-step-on-sagemaker",
            findings=(Expected(14, 23, "(not fixed: `y_long` is computed on the device in `sample`"),),
        ),
        invalid(
            """
            import torch as th
            import torch_xla as tx

            dev = tx.device()


            def batchify(data, bsz):
                data = data[: data.size(0) // bsz * bsz]
                return data.view(bsz, -1).t().contiguous().to(dev)


            def get_batch(source, i):
                n = min(8, len(source) - 1 - i)
                return source[i:i + n], source[i + 1:i + 1 + n].reshape(-1)


            train_data = batchify(th.arange(1000), 4)
            for batch, i in enumerate(range(0, train_data.size(0) - 1, 8)):
                data, targets = get_batch(train_data, i)
                loss = model(data, targets)
                loss.backward()
                tx.sync()
            """,
            """
            import torch as th
            import torch_xla as tx

            dev = tx.device()


            def batchify(data, bsz):
                data = data[: data.size(0) // bsz * bsz]
                return data.view(bsz, -1).t().contiguous()


            def get_batch(source, i):
                n = min(8, len(source) - 1 - i)
                return source[i:i + n].to(dev), source[i + 1:i + 1 + n].to(dev).reshape(-1)


            train_data = batchify(th.arange(1000), 4)
            for batch, i in enumerate(range(0, train_data.size(0) - 1, 8)):
                data, targets = get_batch(train_data, i)
                loss = model(data, targets)
                loss.backward()
                tx.sync()
            """,
            alias=True,
            findings=(
                Expected(9, 12, "data.view(bsz, -1).t().contiguous().to(dev) -> data.view(bsz, -1).t().contiguous()"),
                Expected(14, 12, "source[i:i + n] -> source[i:i + n].to(dev)"),
                Expected(14, 37, "source[i + 1:i + 1 + n] -> source[i + 1:i + 1 + n].to(dev)"),
            ),
        ),
        invalid(
            """
            import torch

            tokens = torch.randint(0, 100, (1000,)).to(device)
            for offset in range(0, 900, 32):
                loss = model(tokens[offset:offset + 32]) + tokens.float().mean()
                loss.backward()
            """,
            """
            import torch
            import torch_xla

            tokens = torch.randint(0, 100, (1000,)).to(device)
            for offset in range(0, 900, 32):
                loss = model(tokens[offset:offset + 32]) + tokens.float().mean()
                loss.backward()
                torch_xla.sync()
            """,
            note="not-fixable",
            findings=(Expected(6, 18, "`tokens[offset:offset + 32]` slices a device tensor at a per-step offset"),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            tokens = torch.randint(0, 100, (1000,)).to(device)
            for step, offset in enumerate(range(0, 900, 32)):
                x = tokens[offset:offset + 32]
                y = tokens[offset + 1:offset + 33]
                loss = model(x, y)
                loss.backward()
                optimizer.step()
            print(tokens.size(0), len(tokens))
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            tokens = torch.randint(0, 100, (1000,))
            for step, offset in enumerate(range(0, 900, 32)):
                x = tokens[offset:offset + 32].to(device)
                y = tokens[offset + 1:offset + 33].to(device)
                loss = model(x, y)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            print(tokens.size(0), len(tokens))
            """,
            findings=(
                Expected(6, 10, "torch.randint(0, 100, (1000,)).to(device) -> torch.randint(0, 100, (1000,))"),
                Expected(8, 9, "tokens[offset:offset + 32] -> tokens[offset:offset + 32].to(device)"),
                Expected(9, 9, "tokens[offset + 1:offset + 33] -> tokens[offset + 1:offset + 33].to(device)"),
            ),
        ),
    ),
)


@on_facts(SLICED_DEVICE_DATA, nodes=lambda facts: facts.recompilation.sliced_data)
def _slice(ctx: Context[Facts], original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
    """A slice of the data: moved to the device after slicing, or reported."""
    import libcst as cst

    sliced = ctx.facts.recompilation.sliced_data[original]
    code = ctx.code(original)
    if sliced.device is None:
        ctx.report(
            SLICED_DEVICE_DATA,
            original,
            f"`{code}` slices a device tensor at a per-step offset: every step compiles a new graph; "
            f"keep `{sliced.name}` on the host and move each slice to the device (not fixed: {sliced.reason})",
        )
        return updated
    device = sliced.device
    why = (
        "sliced on the host, then moved: a device slice at a per-step offset is a new graph every step"
        if sliced.varying
        else f"`{sliced.name}` now stays on the host"
    )
    return ctx.fix_or_keep(
        updated,
        SLICED_DEVICE_DATA,
        original,
        f"{code} -> {{new}}: {why}",
        lambda: cst.Call(func=cst.Attribute(value=updated, attr=cst.Name("to")), args=[cst.Arg(device.deep_clone())]),
    )


@on_facts(SLICED_DEVICE_DATA, nodes=lambda facts: facts.recompilation.host_data_moves)
def _data_stays_on_host(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """The move that made the data device-resident: ``x.to(device)`` -> ``x``."""
    from codemods.engine.nodes import receiver

    names = ctx.facts.recompilation.host_data_moves[original]
    new = ctx.fix(
        SLICED_DEVICE_DATA,
        original,
        f"{ctx.code(original)} -> {{new}}: `{names}` {'stay' if ',' in names else 'stays'} on the host "
        "and each slice moves to the device",
        lambda: receiver(updated),
    )
    if new is None:
        return updated
    ctx.imports.discard(original)
    return new
