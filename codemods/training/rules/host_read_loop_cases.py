"""XLA303's cases of where a loop's host reads run: a read in every branch of an ``if``/``else``
is a read in every iteration (not so with a branch that reads nothing, or a ``continue`` before
the reads), ``.to("cpu")`` reads as ``.cpu()`` does, and a loop in every iteration of a loop that
steps in its own body is part of that step (one under an ``if`` of it, a validation every N steps,
is an evaluation loop)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid, with_barrier

HOST_READ_LOOPS_WHY = (
    " A read in every branch of an `if`/`else` (`if regression: loss += mse(out, y).item() else: loss += "
    "nll(out, y).item()`) is a read in every iteration, unless a `continue`, `break`, `return` or `raise` may "
    'leave the iteration before it; `x.to("cpu")` reads as `x.cpu()` does, and a list of what it gives holds '
    "host tensors. A loop that runs in every iteration of a loop that steps in its own body (an embedder's "
    "forward over a batch's utterances before the model's, `for mel in mels: dvecs.append(embedder(mel))`) is "
    "part of that step, which that loop's barrier ends; one under an `if` of it (a validation every N steps) "
    "is an evaluation loop. A call that hands on a lambda reading what it is given (`nest.map(lambda t: "
    "t.cpu(), outputs)`) reads as that lambda does. A loop over no loader or data set (a decoder's per-token "
    "`for di in range(max_length)`) is named a loop, not an evaluation loop."
)

# A loop over a batcher whose outputs a helper maps to the host through a lambda (torchbeast's inference loop).
_LAMBDA_READ = """
import torch
import torch_xla
import nest

device = torch_xla.device()


def serve(model, batcher):
    with torch.no_grad():
        for batch in batcher:
            outputs = nest.map(lambda t: t.cpu(), model(batch.to(device)))
            batch.set_outputs(outputs)
"""
# A decoder's per-token loop (kospeech's beam search): no loader, no data set.
_DECODE = """
import torch

device = torch.device("cuda")


def decode(decoder, hidden, max_length):
    inputs = torch.zeros(1, 1, dtype=torch.long)
    outputs = []
    for di in range(max_length):
        step, hidden = decoder(inputs.to(device), hidden)
        inputs = step.argmax(-1)
        outputs.append(step)
    return torch.stack(outputs, dim=1)
"""

_BRANCH_READS = """
import torch
import torch.nn.functional as F

device = torch.device("cuda")


def eval_loss(model, loader, regression):
    loss = 0
    for data in loader:
        out = model(data.to(device))
        if regression:
            loss += F.mse_loss(out, data.y).item()
        else:
            loss += F.nll_loss(out, data.y).item()
    return loss
"""

_ELIF_READS = """
import torch
import torch_xla

device = torch_xla.device()


def eval_loss(model, loader, regression):
    loss = 0
    for data in loader:
        out = model(data.to(device))
        if regression:
            loss += (out - data.y).pow(2).sum().item()
        elif data.labelled:
            loss += out.logsumexp(-1).sum().item()
    return loss
"""

_CONTINUE_FIRST = """
import torch
import torch_xla.core.xla_model as xla

device = xla.xla_device()


def eval_loss(model, loader, regression):
    loss = 0
    for data in loader:
        out = model(data.to(device))
        if data.empty:
            continue
        if regression:
            loss += (out - data.y).pow(2).sum().item()
        else:
            loss += out.logsumexp(-1).sum().item()
    return loss
"""

_VALIDATION_EVERY_N_STEPS = """
import torch
import torch_xla as tx
import torch_xla.core.xla_model as xm

device = tx.device()


def train(model, optimizer, loader, val_loader, val_losses):
    for step, (x, y) in enumerate(loader):
        loss = (model(x.to(device)) - y.to(device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
        if step % 100 == 0:
            total = 0
            for vx, vy in val_loader:
                total += (model(vx.to(device)) - vy.to(device)).pow(2).sum()
            val_losses.append(total)
        tx.sync()
"""

_NO_READ = "(no call in every iteration reads a value to the host"


def host_read_loop_valid() -> tuple[Valid, ...]:
    return (
        valid(
            _BRANCH_READS,
            _BRANCH_READS.replace(
                "import torch.nn.functional as F\n", "import torch.nn.functional as F\nimport torch_xla\n"
            ).replace('torch.device("cuda")', "torch_xla.device()"),
            note="a-read-in-every-branch-of-an-if-else",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()


            def features(model, loader):
                feats = []
                for data in loader:
                    out = model(data.to(device))
                    if out.dim() > 2:
                        feats.append(out.flatten(1).to("cpu"))
                    elif out.dim() == 2:
                        feats.append(out.to(device=torch.device("cpu")))
                    else:
                        raise ValueError("a feature per sample")
                return torch.cat(feats)
            """,
            target="sagemaker",
            note="to-cpu-in-every-branch-that-goes-on",
        ),
        valid(
            """
            import torch
            import torch_xla

            device = torch_xla.device()


            def features(model, loader):
                feats = []
                for data in loader:
                    feats.append(model(data.to(device)).to("cpu"))
                return torch.cat(feats)
            """,
            note="a-list-of-what-to-cpu-gives-holds-host-tensors",
        ),
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()


            def train(model, embedder, optimizer, loader):
                for mels, target in loader:
                    dvecs = []
                    for mel in mels:
                        dvecs.append(embedder(mel.to(device)))
                    loss = (model(torch.stack(dvecs)) - target.to(device)).pow(2).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="a-loop-in-every-iteration-of-a-training-loop-is-part-of-the-step",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()


            def train(model, embedder, optimizer, loader):
                for mels, target in loader:
                    with torch.no_grad():
                        dvecs = [embedder(mel.to(device)) for mel in mels]
                        for mel in mels:
                            dvecs.append(embedder(mel.to(device)))
                    loss = (model(torch.stack(dvecs)) - target.to(device)).pow(2).mean()
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    xm.mark_step()
            """,
            target="sagemaker",
            note="the-same-under-a-with-sagemaker",
        ),
        valid(_LAMBDA_READ, note="a-lambda-a-call-applies-reads-to-the-host"),
        valid(
            _LAMBDA_READ.replace("import torch_xla\n", "import torch_xla.core.xla_model as xla\n")
            .replace("torch_xla.device()", "xla.xla_device()")
            .replace("t.cpu()", 't.to("cpu")'),
            target="sagemaker",
            note="a-lambda-reading-with-to-cpu-sagemaker",
        ),
    )


def host_read_loop_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _ELIF_READS,
            with_barrier(
                _ELIF_READS,
                "            loss += out.logsumexp(-1).sum().item()\n",
                indent="        ",
                imported_after=None,
            ),
            note="an-elif-without-else-reads-not-every-iteration",
            findings=(Expected(15, 9, _NO_READ),),
        ),
        invalid(
            _CONTINUE_FIRST,
            with_barrier(
                _CONTINUE_FIRST.replace(
                    "            continue\n", "            xla.mark_step()\n            continue\n"
                ),
                "            loss += out.logsumexp(-1).sum().item()\n",
                target="sagemaker",
                indent="        ",
                imported_after=None,
                barrier="xla.mark_step()",
            ),
            target="sagemaker",
            alias=True,
            note="a-continue-before-the-branch-reads",
            findings=(Expected(18, 9, _NO_READ),),
        ),
        invalid(
            _VALIDATION_EVERY_N_STEPS,
            with_barrier(
                _VALIDATION_EVERY_N_STEPS,
                "                total += (model(vx.to(device)) - vy.to(device)).pow(2).sum()\n",
                imported_after=None,
                barrier="tx.sync()",
            ),
            alias=True,
            note="a-validation-every-n-steps-inside-a-training-loop-evaluates",
            findings=(Expected(18, 17, _NO_READ),),
        ),
        invalid(
            _LAMBDA_READ.replace("t.cpu()", "t.float()"),
            with_barrier(
                _LAMBDA_READ.replace("t.cpu()", "t.float()"),
                "            batch.set_outputs(outputs)\n",
                imported_after=None,
            ),
            note="a-lambda-that-reads-nothing",
            findings=(Expected(13, 13, f"evaluation loop over the device {_NO_READ}"),),
        ),
        *(
            invalid(
                _DECODE,
                with_barrier(
                    _DECODE.replace('torch.device("cuda")', device),
                    "        outputs.append(step)\n",
                    target=target,
                ),
                target=target,
                note=f"a-decoders-per-token-loop-is-a-loop-{target}",
                findings=(Expected(14, 9, f"loop over the device {_NO_READ}"),),
            )
            for target, device in (("2.9", "torch_xla.device()"), ("sagemaker", "xm.xla_device()"))
        ),
    )
