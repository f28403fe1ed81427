"""XLA203's cases for an optimizer a factory builds over a model and returns with it
(``return tokenizer, model, optimizer``), reached through a dict of factories, or built through
a chain of helpers (a library's optimizer class too: transformers' AdamW) and bound through a
conditional, then a move of the model by the caller: the optimizer holds the CPU Parameter
objects the move replaced."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_IMPORTS = "import torch\nfrom torch import nn\n"
_XLA_IMPORTS = "import torch_xla\nimport torch_xla.core.xla_model as xm\n"

# The factory: a model, and an optimizer over it, returned with it.
_BUILD = """def build(cfg):
    biencoder = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return "tokenizer", biencoder, optimizer
"""


def _ported(program: str, *steps: str, more: tuple[tuple[str, str], ...] = ()) -> str:
    """A program that imports ``_IMPORTS`` as the port writes it: the optimizers ``steps`` names
    stepped through torch_xla (the last ends the loop: the barrier follows it), and ``more``."""
    last = f"        xm.optimizer_step({steps[-1]})\n"
    return substituted(
        program,
        (_IMPORTS, _IMPORTS + _XLA_IMPORTS),
        ('"cuda"', '"xla"'),
        *more,
        *((f"        {step}.step()\n", f"        xm.optimizer_step({step})\n") for step in steps),
        (last, last + "        torch_xla.sync()\n"),
    )


# A dict of factories (``FACTORIES[kind](cfg)``) whose factory returns the model and an
# optimizer over it; the caller moves the model.
RETURNED_AND_MOVED = f"""
{_IMPORTS}

{_BUILD}

FACTORIES = {{"linear": build}}


def init_components(kind, cfg):
    return FACTORIES[kind](cfg)


def main(cfg):
    tok, encoder, optimizer = init_components("linear", cfg)
    encoder.to("cuda")
    for x in batches:
        optimizer.zero_grad()
        encoder(x.to("cuda")).sum().backward()
        optimizer.step()
"""


# Built again after the move, built by a factory that moved the model first, or moved to the CPU.
RETURNED_NOTHING_STRANDED = f"""
{_IMPORTS}

{_BUILD}

def build_moved(cfg):
    biencoder = nn.Linear(4, 2).cuda()
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return biencoder, optimizer


FACTORIES = {{"linear": build}}
MOVED = {{"linear": build_moved}}


def init_components(table, kind, cfg):
    return table[kind](cfg)


def main(cfg):
    tok, encoder, optimizer = init_components(FACTORIES, "linear", cfg)
    encoder.to("cuda")
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=cfg["lr"])
    other, other_optimizer = init_components(MOVED, "linear", cfg)
    other.cuda()
    kept, kept_optimizer = build_moved(cfg)
    kept.to("cpu")
    for x in batches:
        optimizer.zero_grad()
        (encoder(x.to("cuda")).sum() + other(x.to("cuda")).sum()).backward()
        optimizer.step()
        other_optimizer.step()
"""


RETURNED_ALIASED = """
import torch.nn as tnn
from torch import optim as o


def make(cfg):
    biencoder = tnn.Linear(4, 2)
    opt = o.SGD(biencoder.parameters(), lr=0.1)
    return biencoder, opt


def main(cfg):
    encoder, opt = make(cfg)
    encoder.cuda()
    for x in batches:
        opt.zero_grad()
        encoder(x.cuda()).sum().backward()
        opt.step()
"""


RETURNED_ALIASED_PORTED = substituted(
    RETURNED_ALIASED,
    ("from torch import optim as o\n", "from torch import optim as o\n" + _XLA_IMPORTS),
    (".cuda()", ".to(torch_xla.device())"),
    ("        opt.step()\n", "        xm.optimizer_step(opt)\n        torch_xla.sync()\n"),
)


# A factory that builds its optimizer through a chain of helpers (the parameter groups from one,
# the optimizer, transformers' AdamW, from another), bound through a conditional, and returns it
# with the model; the caller moves the model: the model is moved before the optimizer is built.
RETURNED_THROUGH_HELPERS = """
import torch
from torch import nn
from transformers import AdamW


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    groups = param_groups(model, 0.01)
    return grouped_optimizer(groups, lr)


def build(cfg, inference_only=False):
    encoder = nn.Linear(4, 2)
    optimizer = get_optimizer(encoder, cfg["lr"]) if not inference_only else None
    return "tokenizer", encoder, optimizer


def main(cfg):
    tok, encoder, optimizer = build(cfg)
    encoder.cuda()
    for x in batches:
        optimizer.zero_grad()
        encoder(x.cuda()).sum().backward()
        optimizer.step()
"""


RETURNED_THROUGH_HELPERS_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm
from transformers import AdamW


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    groups = param_groups(model, 0.01)
    return grouped_optimizer(groups, lr)


def build(cfg, inference_only=False):
    encoder = nn.Linear(4, 2)
    optimizer = get_optimizer(encoder.to(torch_xla.device()), cfg["lr"]) if not inference_only else None
    return "tokenizer", encoder, optimizer


def main(cfg):
    tok, encoder, optimizer = build(cfg)
    encoder.to(torch_xla.device())
    for x in batches:
        optimizer.zero_grad()
        encoder(x.to(torch_xla.device())).sum().backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()
"""


RETURNED_THROUGH_HELPERS_ALIASED = """
import torch
from torch import nn
import transformers as tf


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = tf.AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    groups = param_groups(model, 0.01)
    return grouped_optimizer(groups, lr)


def build(cfg, inference_only=False):
    encoder = nn.Linear(4, 2)
    optimizer = get_optimizer(encoder, cfg["lr"]) if not inference_only else None
    return "tokenizer", encoder, optimizer


def main(cfg):
    tok, encoder, optimizer = build(cfg)
    encoder.cuda()
    for x in batches:
        optimizer.zero_grad()
        encoder(x.cuda()).sum().backward()
        optimizer.step()
"""


RETURNED_THROUGH_HELPERS_ALIASED_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm
import transformers as tf


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = tf.AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    groups = param_groups(model, 0.01)
    return grouped_optimizer(groups, lr)


def build(cfg, inference_only=False):
    encoder = nn.Linear(4, 2)
    optimizer = get_optimizer(encoder.to(torch_xla.device()), cfg["lr"]) if not inference_only else None
    return "tokenizer", encoder, optimizer


def main(cfg):
    tok, encoder, optimizer = build(cfg)
    encoder.to(torch_xla.device())
    for x in batches:
        optimizer.zero_grad()
        encoder(x.to(torch_xla.device())).sum().backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()
"""


# The factory moved the model first: the optimizer holds the moved parameters.
RETURNED_THROUGH_HELPERS_MOVED_FIRST = """
import torch
from torch import nn
from transformers import AdamW


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    groups = param_groups(model, 0.01)
    return grouped_optimizer(groups, lr)


def build(cfg, inference_only=False):
    encoder = nn.Linear(4, 2).cuda()
    optimizer = get_optimizer(encoder, cfg["lr"]) if not inference_only else None
    return "tokenizer", encoder, optimizer


def main(cfg):
    tok, encoder, optimizer = build(cfg)
    encoder.cuda()
    for x in batches:
        optimizer.zero_grad()
        encoder(x.cuda()).sum().backward()
        optimizer.step()
"""


RETURNED_THROUGH_HELPERS_MOVED_FIRST_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm
from transformers import AdamW


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    groups = param_groups(model, 0.01)
    return grouped_optimizer(groups, lr)


def build(cfg, inference_only=False):
    encoder = nn.Linear(4, 2).to(torch_xla.device())
    optimizer = get_optimizer(encoder, cfg["lr"]) if not inference_only else None
    return "tokenizer", encoder, optimizer


def main(cfg):
    tok, encoder, optimizer = build(cfg)
    encoder.to(torch_xla.device())
    for x in batches:
        optimizer.zero_grad()
        encoder(x.to(torch_xla.device())).sum().backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()
"""


# An optimizer class of a library (transformers' Adafactor, timm's), under a name that says
# nothing: built before the move, it is moved first; built after it, nothing.
LIBRARY_OPTIMIZER = """
from transformers import Adafactor
import torch

model = torch.nn.Linear(4, 2)
solver = Adafactor(model.parameters(), lr=1e-3, relative_step=False)
model.cuda()
for x in batches:
    solver.zero_grad()
    model(x.cuda()).sum().backward()
    solver.step()
"""


LIBRARY_OPTIMIZER_PORTED = """
from transformers import Adafactor
import torch
import torch_xla
import torch_xla.core.xla_model as xm

model = torch.nn.Linear(4, 2)
solver = Adafactor(model.to(torch_xla.device()).parameters(), lr=1e-3, relative_step=False)
model.to(torch_xla.device())
for x in batches:
    solver.zero_grad()
    model(x.to(torch_xla.device())).sum().backward()
    xm.optimizer_step(solver)
    torch_xla.sync()
"""


LIBRARY_OPTIMIZER_ALIASED = """
import timm.optim as topt
import torch

model = torch.nn.Linear(4, 2)
solver = topt.Lamb(model.parameters(), lr=1e-3)
model.cuda()
for x in batches:
    solver.zero_grad()
    model(x.cuda()).sum().backward()
    solver.step()
"""


LIBRARY_OPTIMIZER_ALIASED_PORTED = """
import timm.optim as topt
import torch
import torch_xla
import torch_xla.core.xla_model as xm

model = torch.nn.Linear(4, 2)
solver = topt.Lamb(model.to(torch_xla.device()).parameters(), lr=1e-3)
model.to(torch_xla.device())
for x in batches:
    solver.zero_grad()
    model(x.to(torch_xla.device())).sum().backward()
    xm.optimizer_step(solver)
    torch_xla.sync()
"""


LIBRARY_OPTIMIZER_AFTER_THE_MOVE = """
from transformers import Adafactor
import torch

model = torch.nn.Linear(4, 2)
model.cuda()
solver = Adafactor(model.parameters(), lr=1e-3, relative_step=False)
for x in batches:
    solver.zero_grad()
    model(x.cuda()).sum().backward()
    solver.step()
"""


LIBRARY_OPTIMIZER_AFTER_THE_MOVE_PORTED = """
from transformers import Adafactor
import torch
import torch_xla
import torch_xla.core.xla_model as xm

model = torch.nn.Linear(4, 2)
model.to(torch_xla.device())
solver = Adafactor(model.parameters(), lr=1e-3, relative_step=False)
for x in batches:
    solver.zero_grad()
    model(x.to(torch_xla.device())).sum().backward()
    xm.optimizer_step(solver)
    torch_xla.sync()
"""


def returned_optimizer_valid() -> tuple[Valid, ...]:
    return (
        valid(
            RETURNED_NOTHING_STRANDED,
            _ported(
                RETURNED_NOTHING_STRANDED,
                "optimizer",
                "other_optimizer",
                more=((".cuda()", ".to(torch_xla.device())"),),
            ),
            note="returned-optimizer-built-again-after-the-move-or-by-a-factory-that-moved-first",
        ),
        valid(
            RETURNED_THROUGH_HELPERS_MOVED_FIRST,
            RETURNED_THROUGH_HELPERS_MOVED_FIRST_PORTED,
            note="optimizer-built-through-helpers-over-a-model-the-factory-moved-first",
        ),
        valid(
            LIBRARY_OPTIMIZER_AFTER_THE_MOVE,
            LIBRARY_OPTIMIZER_AFTER_THE_MOVE_PORTED,
            note="a-library-optimizer-built-after-the-move",
        ),
    )


def returned_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            RETURNED_AND_MOVED,
            _ported(RETURNED_AND_MOVED, "optimizer"),
            note="optimizer-returned-with-its-model-by-a-dict-of-factories-then-moved",
            findings=(
                Expected(
                    22,
                    5,
                    '`encoder.to("cuda")` moves `encoder` to the XLA device after `init_components("linear", cfg)` '
                    "built `optimizer` over its parameters and returned both",
                ),
            ),
        ),
        invalid(
            RETURNED_ALIASED,
            RETURNED_ALIASED_PORTED,
            alias=True,
            note="optimizer-returned-with-its-model-aliased",
            findings=(
                Expected(
                    15,
                    5,
                    "`encoder.cuda()` moves `encoder` to the XLA device after `make(cfg)` built `opt` over its "
                    "parameters and returned both",
                ),
            ),
        ),
        invalid(
            RETURNED_THROUGH_HELPERS,
            RETURNED_THROUGH_HELPERS_PORTED,
            note="optimizer-built-through-a-chain-of-helpers-bound-through-a-conditional-then-moved",
            findings=(
                Expected(
                    27,
                    17,
                    "`get_optimizer` builds an optimizer while `encoder` is on the CPU and `encoder.cuda()` in `main` moves "
                    "the model later",
                ),
            ),
        ),
        invalid(
            RETURNED_THROUGH_HELPERS_ALIASED,
            RETURNED_THROUGH_HELPERS_ALIASED_PORTED,
            alias=True,
            note="optimizer-built-through-a-chain-of-helpers-aliased-transformers",
            findings=(
                Expected(
                    27,
                    17,
                    "`get_optimizer` builds an optimizer while `encoder` is on the CPU and `encoder.cuda()` in `main` moves "
                    "the model later",
                ),
            ),
        ),
        invalid(
            LIBRARY_OPTIMIZER,
            LIBRARY_OPTIMIZER_PORTED,
            note="a-library-optimizer-under-a-name-that-says-nothing-built-before-the-move",
            findings=(
                Expected(
                    7, 20, "the optimizer is built while `model` is on the CPU and `model.cuda()` moves the model later"
                ),
            ),
        ),
        invalid(
            LIBRARY_OPTIMIZER_ALIASED,
            LIBRARY_OPTIMIZER_ALIASED_PORTED,
            alias=True,
            note="a-library-optimizer-built-before-the-move-aliased-timm",
            findings=(
                Expected(
                    7, 20, "the optimizer is built while `model` is on the CPU and `model.cuda()` moves the model later"
                ),
            ),
        ),
    )
