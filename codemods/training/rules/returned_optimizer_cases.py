"""XLA203's cases for an optimizer a factory builds over a model and returns with it
(``return tokenizer, model, optimizer``), reached through a dict of factories, then a move of
the model by the caller: the optimizer holds the CPU Parameter objects the move replaced."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A dict of factories (``FACTORIES[kind](cfg)``) whose factory returns the model and an
# optimizer over it; the caller moves the model.
RETURNED_AND_MOVED = """
import torch
from torch import nn


def build(cfg):
    biencoder = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return "tokenizer", biencoder, optimizer


FACTORIES = {"linear": build}


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


RETURNED_AND_MOVED_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


def build(cfg):
    biencoder = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return "tokenizer", biencoder, optimizer


FACTORIES = {"linear": build}


def init_components(kind, cfg):
    return FACTORIES[kind](cfg)


def main(cfg):
    tok, encoder, optimizer = init_components("linear", cfg)
    encoder.to("xla")
    for x in batches:
        optimizer.zero_grad()
        encoder(x.to("xla")).sum().backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()
"""


# Built again after the move, built by a factory that moved the model first, or moved to the CPU.
RETURNED_NOTHING_STRANDED = """
import torch
from torch import nn


def build(cfg):
    biencoder = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return "tokenizer", biencoder, optimizer


def build_moved(cfg):
    biencoder = nn.Linear(4, 2).cuda()
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return biencoder, optimizer


FACTORIES = {"linear": build}
MOVED = {"linear": build_moved}


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


RETURNED_NOTHING_STRANDED_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


def build(cfg):
    biencoder = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return "tokenizer", biencoder, optimizer


def build_moved(cfg):
    biencoder = nn.Linear(4, 2).to(torch_xla.device())
    optimizer = torch.optim.AdamW(biencoder.parameters(), lr=cfg["lr"])
    return biencoder, optimizer


FACTORIES = {"linear": build}
MOVED = {"linear": build_moved}


def init_components(table, kind, cfg):
    return table[kind](cfg)


def main(cfg):
    tok, encoder, optimizer = init_components(FACTORIES, "linear", cfg)
    encoder.to("xla")
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=cfg["lr"])
    other, other_optimizer = init_components(MOVED, "linear", cfg)
    other.to(torch_xla.device())
    kept, kept_optimizer = build_moved(cfg)
    kept.to("cpu")
    for x in batches:
        optimizer.zero_grad()
        (encoder(x.to("xla")).sum() + other(x.to("xla")).sum()).backward()
        xm.optimizer_step(optimizer)
        xm.optimizer_step(other_optimizer)
        torch_xla.sync()
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


RETURNED_ALIASED_PORTED = """
import torch.nn as tnn
from torch import optim as o
import torch_xla
import torch_xla.core.xla_model as xm


def make(cfg):
    biencoder = tnn.Linear(4, 2)
    opt = o.SGD(biencoder.parameters(), lr=0.1)
    return biencoder, opt


def main(cfg):
    encoder, opt = make(cfg)
    encoder.to(torch_xla.device())
    for x in batches:
        opt.zero_grad()
        encoder(x.to(torch_xla.device())).sum().backward()
        xm.optimizer_step(opt)
        torch_xla.sync()
"""


def returned_optimizer_valid() -> tuple[Valid, ...]:
    return (
        valid(
            RETURNED_NOTHING_STRANDED,
            RETURNED_NOTHING_STRANDED_PORTED,
            note="returned-optimizer-built-again-after-the-move-or-by-a-factory-that-moved-first",
        ),
    )


def returned_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            RETURNED_AND_MOVED,
            RETURNED_AND_MOVED_PORTED,
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
    )
