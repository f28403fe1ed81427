"""XLA203's cases for a model cast before its move (DALLE-pytorch's ``if args.fp16: dalle =
dalle.half()``, then ``dalle = dalle.cuda()``) whose optimizer is built over what a helper of the
file collects from it (``Adam(get_trainable_params(dalle))``): ``model = model.half()`` binds the
module again (a cast in place that returns it), not a list of its parameters, so an optimizer built
after the move holds the moved parameters; one built before it is still reported."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

CAST_THEN_MOVED = """
import torch
from torch.optim import Adam


def trainable(model):
    return [p for p in model.parameters() if p.requires_grad]


def main(loader, fp16):
    model = torch.nn.Linear(2, 2)
    if fp16:
        model = model.half()
    model = model.cuda()
    optimizer = Adam(trainable(model), lr=1e-3)
    for x in loader:
        optimizer.zero_grad()
        model(x.cuda()).sum().backward()
        optimizer.step()
"""

_PORTED = (
    (
        "from torch.optim import Adam\n",
        "from torch.optim import Adam\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n",
    ),
    ("model = model.cuda()", "model = model.to(torch_xla.device())"),
    ("x.cuda()", "x.to(torch_xla.device())"),
    ("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n        torch_xla.sync()\n"),
)

_BUILT_FIRST = (
    (
        "    model = model.cuda()\n    optimizer = Adam(trainable(model), lr=1e-3)\n",
        "    optimizer = Adam(trainable(model), lr=1e-3)\n    model = model.cuda()\n",
    ),
)


def module_cast_valid() -> tuple[Valid, ...]:
    chained = (("model = model.half()", "model = model.float().eval()"),)
    return (
        valid(
            CAST_THEN_MOVED,
            substituted(CAST_THEN_MOVED, *_PORTED),
            note="a-cast-before-the-move-binds-the-module-again",
        ),
        valid(
            substituted(CAST_THEN_MOVED, *chained),
            substituted(substituted(CAST_THEN_MOVED, *chained), *_PORTED),
            note="casts-and-modes-chained-before-the-move",
        ),
    )


def module_cast_invalid() -> tuple[Invalid, ...]:
    before = substituted(CAST_THEN_MOVED, *_BUILT_FIRST)
    after = substituted(
        substituted(before, *_PORTED),
        ("Adam(trainable(model), lr=1e-3)", "Adam(trainable(model.to(torch_xla.device())), lr=1e-3)"),
    )
    message = (
        "`trainable` collects the optimizer's parameters while `model` is on the CPU and `model.cuda()` in `main` "
        "moves the model later; moving a module to XLA replaces its parameters, so move it first: "
        "trainable(model.to(torch_xla.device()))"
    )
    aliased = (("from torch.optim import Adam\n", "from torch.optim import Adam as A\n"), ("= Adam(", "= A("))
    return (
        invalid(
            before,
            after,
            note="a-cast-model-whose-optimizer-is-built-before-the-move",
            findings=(Expected(15, 22, message),),
        ),
        invalid(
            substituted(before, *aliased),
            substituted(after, *aliased),
            alias=True,
            note="a-cast-model-an-aliased-optimizer",
            findings=(Expected(15, 19, message),),
        ),
    )
