"""XLA203's cases for an optimizer a factory builds over a model and returns with it
(``return tokenizer, model, optimizer``), reached through a dict of factories, then a move of
the model by the caller: the optimizer holds the CPU Parameter objects the move replaced."""

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
    )
