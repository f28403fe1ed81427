"""XLA301's cases for loops over the parts of one step inside a training iteration
(training/part_loops.py, pydreamer's ``for loss in losses: scaler.scale(loss).backward()`` and
``for opt in optimizers: scaler.step(opt)``): the loop around them is the training loop and its
iteration ends with the one barrier; the inner loops get none."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_PARTS = """
import torch
from torch.cuda.amp import GradScaler

device = torch.device("cuda")
model = torch.nn.Linear(4, 2).to(device)
optimizers = [torch.optim.Adam(model.parameters()), torch.optim.Adam(model.parameters())]
scaler = GradScaler(enabled=False)
while True:
    x = next(batches).to(device)
    losses = [model(x).sum(), model(x).mean()]
    for opt in optimizers:
        opt.zero_grad()
    for loss in losses:
        scaler.scale(loss).backward()
    for opt in optimizers:
        scaler.step(opt)
    scaler.update()
"""

_PARTS_PORTED = substituted(
    _PARTS,
    ("from torch.cuda.amp import GradScaler\n", "import torch_xla\nimport torch_xla.amp.syncfree as syncfree\n"),
    ('torch.device("cuda")', "torch_xla.device()"),
    ("torch.optim.Adam", "syncfree.Adam"),
    ("GradScaler(enabled=False)", 'torch.amp.GradScaler("xla", enabled=False)'),
    ("    scaler.update()\n", "    scaler.update()\n    torch_xla.sync()\n"),
)

# Plain steps over a zip of losses and optimizers, aliased torch, in a function (the loop variable
# of a zip is not known as an optimizer: its step stays ``opt.step()``, which on one device is what
# ``xm.optimizer_step`` runs).
_ZIPPED = """
import torch as th


def train(model, heads, batches):
    optimizers = [th.optim.SGD(h.parameters(), lr=0.1) for h in heads]
    for x in batches:
        feats = model(x.cuda())
        losses = [h(feats).sum() for h in heads]
        for loss, opt in zip(losses, optimizers):
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
"""

# A loop that computes its own loss per micro-batch is a loop of steps: it keeps its barrier.
_STEPS_PER_CHUNK = """
import torch


def train(model, optimizer, batches):
    for x in batches:
        for chunk in x.split(4):
            chunk = chunk.cuda()
            optimizer.zero_grad()
            model(chunk).sum().backward()
            optimizer.step()
"""

# Gradient accumulation over micro-batches (Multimodal-Transformer's ``for i in range(batch_chunk)``,
# run only when the batch is split): the inner loop backs each chunk and steps nothing; the loop
# around it steps the optimizer once per batch, and its iteration ends with the one barrier.
_ACCUMULATED = """
import torch


def train(model, optimizer, loader, chunks):
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        optimizer.zero_grad()
        if chunks > 1:
            for i in range(chunks):
                loss = torch.nn.functional.mse_loss(model(x.chunk(chunks)[i]), y.chunk(chunks)[i]) / chunks
                loss.backward()
        else:
            torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
"""


def _accumulated(device: str, barrier: str, imported: str) -> str:
    return substituted(
        _ACCUMULATED,
        ("import torch\n", f"import torch\n{imported}import torch_xla.core.xla_model as xm\n"),
        ("x.cuda(), y.cuda()", f"x.to({device}), y.to({device})"),
        ("        optimizer.step()\n", f"        xm.optimizer_step(optimizer)\n        {barrier}\n"),
    )


# A whole epoch's gradients over a loader, stepped once per epoch: the inner loop over the loader
# keeps a barrier of its own (each batch's graph would add up over the epoch).
_EPOCH_OF_GRADIENTS = """
import torch


def train(model, optimizer, train_loader, epochs):
    for epoch in range(epochs):
        optimizer.zero_grad()
        for x, y in train_loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
        optimizer.step()
"""


# A count of a loader's batches drawn with ``next(it)`` (``range(len(loader))``): a whole epoch's
# gradients, stepped once per epoch; the inner loop keeps a barrier of its own.
_LOADER_COUNT = """
import torch


def train(model, optimizer, loader, epochs):
    for epoch in range(epochs):
        it = iter(loader)
        for i in range(len(loader)):
            x, y = next(it)
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""

# The same, drawn from an iterator by ``next(batches)`` under a count named like micro-batches.
_NEXT_BATCHES = """
import torch


def train(model, optimizer, batches, n_batches, epochs):
    for epoch in range(epochs):
        for i in range(n_batches):
            x, y = next(batches)
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""

# A count bounded by a number of steps per epoch of a data set (under an alias of torch).
_STEPS_PER_EPOCH = """
import torch as T


def train(model, optimizer, train_set, epochs):
    steps_per_epoch = len(train_set) // 8
    for epoch in range(epochs):
        for i in range(steps_per_epoch):
            x, y = train_set[i]
            loss = T.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""

# A GAN's critic steps: the inner loop steps its optimizer through the gradient scaler
# (``scaler.step(optimizer_d)``), so it is a training loop of its own, not micro-batches.
_SCALED_CRITIC = """
import torch


def train(G, D, optimizer_g, optimizer_d, scaler, iterations):
    for it in range(iterations):
        for _ in range(5):
            d_loss = D(G(torch.randn(8, 4).cuda()).detach()).mean()
            scaler.scale(d_loss).backward()
            scaler.step(optimizer_d)
            scaler.update()
            optimizer_d.zero_grad()
        g_loss = -D(G(torch.randn(8, 4).cuda())).mean()
        g_loss.backward()
        optimizer_g.step()
        optimizer_g.zero_grad()
"""

# Micro-batches scaled by the gradient scaler, stepped by it after the inner loop: accumulation.
_SCALED_ACCUMULATED = """
import torch


def train(model, optimizer, scaler, loader, chunks):
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        for i in range(chunks):
            loss = torch.nn.functional.mse_loss(model(x.chunk(chunks)[i]), y.chunk(chunks)[i]) / chunks
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
"""


def _epoch_loop(source: str, device: str, barrier: str, imported: str) -> str:
    return substituted(
        source,
        ("\n\n\ndef train", f"{imported}\nimport torch_xla.core.xla_model as xm\n\n\ndef train"),
        ("x.cuda()", f"x.to({device})"),
        ("y.cuda()", f"y.to({device})"),
        ("            loss.backward()\n", f"            loss.backward()\n            {barrier}\n"),
        (
            "        optimizer.step()\n        optimizer.zero_grad()\n",
            f"        xm.optimizer_step(optimizer)\n        optimizer.zero_grad()\n        {barrier}\n",
        ),
    )


_SYNC = ("torch_xla.device()", "torch_xla.sync()", "\nimport torch_xla")
_MARK = ("xm.xla_device()", "xm.mark_step()", "")


def _critic(source: str, device: str, barrier: str, imported: str) -> str:
    return substituted(
        source,
        ("\n\n\ndef train", f"{imported}\nimport torch_xla.core.xla_model as xm\n\n\ndef train"),
        (".cuda()", f".to({device})"),
        ("            optimizer_d.zero_grad()\n", f"            optimizer_d.zero_grad()\n            {barrier}\n"),
        ("        optimizer_g.step()\n", "        xm.optimizer_step(optimizer_g)\n"),
        ("        optimizer_g.zero_grad()\n", f"        optimizer_g.zero_grad()\n        {barrier}\n"),
    )


PART_LOOP_VALID: tuple[Valid, ...] = (valid(_PARTS_PORTED, note="a-ported-step-over-its-parts-needs-nothing-more"),)

PART_LOOP_INVALID: tuple[Invalid, ...] = (
    invalid(
        _PARTS,
        _PARTS_PORTED,
        target_only=True,  # (the sagemaker port imports torch_xla.amp for its scaler: the case below)
        note="loops-over-losses-and-optimizers-are-parts-of-the-iterations-step",
        findings=(Expected(19, 5, "training loop: torch_xla.sync() ends every iteration"),),
    ),
    invalid(
        _PARTS,
        substituted(
            _PARTS,
            (
                "from torch.cuda.amp import GradScaler\n",
                "import torch_xla.amp\nimport torch_xla.amp.syncfree as syncfree\nimport torch_xla.core.xla_model as xm\n",
            ),
            ('torch.device("cuda")', "xm.xla_device()"),
            ("torch.optim.Adam", "syncfree.Adam"),
            ("GradScaler(enabled=False)", "torch_xla.amp.GradScaler(enabled=False)"),
            ("    scaler.update()\n", "    scaler.update()\n    xm.mark_step()\n"),
        ),
        target="sagemaker",
        note="loops-over-losses-and-optimizers-are-parts-of-the-iterations-step-sagemaker",
        findings=(Expected(20, 5, "training loop: xm.mark_step() ends every iteration"),),
    ),
    invalid(
        _ZIPPED,
        substituted(
            _ZIPPED,
            ("import torch as th\n", "import torch as th\nimport torch_xla\n"),
            ("x.cuda()", "x.to(torch_xla.device())"),
            ("            opt.step()\n", "            opt.step()\n        torch_xla.sync()\n"),
        ),
        alias=True,
        note="a-zip-of-losses-and-optimizers-is-a-part-of-the-iterations-step",
        findings=(Expected(14, 9, "training loop: torch_xla.sync() ends every iteration"),),
    ),
    invalid(
        _STEPS_PER_CHUNK,
        substituted(
            _STEPS_PER_CHUNK,
            ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
            ("chunk = chunk.cuda()", "chunk = chunk.to(torch_xla.device())"),
            (
                "            optimizer.step()\n",
                "            xm.optimizer_step(optimizer)\n            torch_xla.sync()\n",
            ),
        ),
        note="a-loop-computing-its-own-loss-per-chunk-keeps-its-barrier",
        findings=(Expected(13, 13, "training loop: torch_xla.sync() ends every iteration"),),
    ),
    invalid(
        _ACCUMULATED,
        _accumulated("torch_xla.device()", "torch_xla.sync()", "import torch_xla\n"),
        note="a-loop-of-micro-batches-that-steps-nothing-is-a-part-of-the-iterations-step",
        findings=(Expected(17, 9, "training loop: torch_xla.sync() ends every iteration"),),
    ),
    invalid(
        _ACCUMULATED,
        _accumulated("xm.xla_device()", "xm.mark_step()", ""),
        target="sagemaker",
        note="a-loop-of-micro-batches-that-steps-nothing-is-a-part-of-the-iterations-step-sagemaker",
        findings=(Expected(16, 9, "training loop: xm.mark_step() ends every iteration"),),
    ),
    invalid(
        _EPOCH_OF_GRADIENTS,
        substituted(
            _EPOCH_OF_GRADIENTS,
            ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
            ("x.cuda()", "x.to(torch_xla.device())"),
            ("y.cuda()", "y.to(torch_xla.device())"),
            ("            loss.backward()\n", "            loss.backward()\n            torch_xla.sync()\n"),
            ("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n        torch_xla.sync()\n"),
        ),
        note="an-inner-loop-over-a-loader-that-steps-nothing-keeps-its-barrier",
        findings=(
            Expected(12, 13, "training loop: torch_xla.sync() ends every iteration"),
            Expected(14, 9, "training loop: torch_xla.sync() ends every iteration"),
        ),
    ),
    invalid(
        _LOADER_COUNT,
        _epoch_loop(_LOADER_COUNT, *_SYNC),
        note="a-count-of-a-loaders-batches-drawn-with-next-keeps-its-barrier",
        findings=(
            Expected(13, 13, "training loop: torch_xla.sync() ends every iteration"),
            Expected(16, 9, "training loop: torch_xla.sync() ends every iteration"),
        ),
    ),
    invalid(
        _LOADER_COUNT,
        _epoch_loop(_LOADER_COUNT, *_MARK),
        target="sagemaker",
        note="a-count-of-a-loaders-batches-drawn-with-next-keeps-its-barrier-sagemaker",
        findings=(
            Expected(12, 13, "training loop: xm.mark_step() ends every iteration"),
            Expected(15, 9, "training loop: xm.mark_step() ends every iteration"),
        ),
    ),
    invalid(
        _NEXT_BATCHES,
        _epoch_loop(_NEXT_BATCHES, *_MARK),
        target="sagemaker",
        note="a-count-whose-body-draws-batches-with-next-keeps-its-barrier-sagemaker",
        findings=(
            Expected(11, 13, "training loop: xm.mark_step() ends every iteration"),
            Expected(14, 9, "training loop: xm.mark_step() ends every iteration"),
        ),
    ),
    invalid(
        _STEPS_PER_EPOCH,
        _epoch_loop(_STEPS_PER_EPOCH, *_SYNC),
        alias=True,
        note="a-count-of-steps-per-epoch-of-a-data-set-keeps-its-barrier",
        findings=(
            Expected(13, 13, "training loop: torch_xla.sync() ends every iteration"),
            Expected(16, 9, "training loop: torch_xla.sync() ends every iteration"),
        ),
    ),
    invalid(
        _SCALED_CRITIC,
        _critic(_SCALED_CRITIC, "torch_xla.device()", "torch_xla.sync()", "\nimport torch_xla"),
        note="an-inner-loop-stepping-through-the-gradient-scaler-keeps-its-barrier",
        findings=(
            Expected(14, 13, "training loop: torch_xla.sync() ends every iteration"),
            Expected(19, 9, "training loop: torch_xla.sync() ends every iteration"),
        ),
    ),
    invalid(
        _SCALED_CRITIC,
        _critic(_SCALED_CRITIC, "xm.xla_device()", "xm.mark_step()", ""),
        target="sagemaker",
        note="an-inner-loop-stepping-through-the-gradient-scaler-keeps-its-barrier-sagemaker",
        findings=(
            Expected(13, 13, "training loop: xm.mark_step() ends every iteration"),
            Expected(18, 9, "training loop: xm.mark_step() ends every iteration"),
        ),
    ),
    invalid(
        substituted(_SCALED_CRITIC, ("scaler", "amp")),
        substituted(
            _critic(_SCALED_CRITIC, "torch_xla.device()", "torch_xla.sync()", "\nimport torch_xla"), ("scaler", "amp")
        ),
        alias=True,
        note="an-inner-loop-stepping-through-a-scaler-of-another-name-keeps-its-barrier",
        findings=(
            Expected(14, 13, "training loop: torch_xla.sync() ends every iteration"),
            Expected(19, 9, "training loop: torch_xla.sync() ends every iteration"),
        ),
    ),
    invalid(
        _SCALED_ACCUMULATED,
        substituted(
            _SCALED_ACCUMULATED,
            ("\n\n\ndef train", "\nimport torch_xla\n\n\ndef train"),
            (".cuda()", ".to(torch_xla.device())"),
            ("        optimizer.zero_grad()\n", "        optimizer.zero_grad()\n        torch_xla.sync()\n"),
        ),
        note="scaled-micro-batches-stepped-by-the-scaler-after-them-are-a-part-of-the-iterations-step",
        findings=(Expected(14, 9, "training loop: torch_xla.sync() ends every iteration"),),
    ),
)
