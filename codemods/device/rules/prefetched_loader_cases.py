"""XLA116's cases of timm's prefetching loader (issue 32): ``create_loader(...)`` with its
prefetcher on copies each batch to its ``device=``, which the port sets to the XLA device
(XLA113), so an evaluation loop over it that moves nothing is right, even where the training
loop moves its batches when the prefetcher is switched off; with the prefetcher off
(``use_prefetcher=False``) the loader yields CPU tensors and that loop is reported."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_LOADER = "create_loader(dataset, input_size=(3, 32, 32), batch_size=4, use_prefetcher={switch}{device})"
_SCRIPT = """
import torch
{imports}from timm.data import create_loader

model = torch.nn.Linear(8, 2){model_move}
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = {loader}

for x, y in loader:
    if not args.prefetcher:
        x, y = {moves}
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    {step}

with torch.no_grad():
    for x, y in loader:
        out = model(x)
"""
# The imports, the device and the step barrier the port writes (the sagemaker cases are derived:
# tests/support/derived_cases.py).
_PORTED = ("import torch_xla\nimport torch_xla.core.xla_model as xm\n", "torch_xla.device()", "torch_xla.sync()")


def _script(switch: str, ported: bool) -> str:
    """The script before the port or after it."""
    if not ported:
        imports, device, step = "", "", "optimizer.step()"
        model_move, moves = ".cuda()", "x.cuda(), y.cuda()"
    else:
        imports, xla, barrier = _PORTED
        device, step = f", device={xla}", f"xm.optimizer_step(optimizer)\n    {barrier}"
        model_move, moves = f".to({xla})", f"x.to({xla}), y.to({xla})"
    loader = _LOADER.format(switch=switch, device=device if switch != "False" else "")
    return _SCRIPT.format(imports=imports, model_move=model_move, loader=loader, moves=moves, step=step)


def prefetched_loader_valid() -> tuple[Valid, ...]:
    return (
        valid(
            _script("args.prefetcher", False),
            _script("args.prefetcher", True),
            note="an-evaluation-loop-over-timm-prefetching-loader",
        ),
    )


def _aliased(script: str) -> str:
    """The loader imported under another name."""
    return script.replace("import create_loader", "import create_loader as build_loader").replace(
        "= create_loader(", "= build_loader("
    )


def prefetched_loader_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            aliased(_script("False", False)),
            aliased(_script("False", True)),
            note=f"an-evaluation-loop-over-timm-loader-without-its-prefetcher{suffix}",
            alias=aliased is _aliased,
            findings=(
                Expected(
                    21,  # (on the converted script: imports and a barrier added)
                    15,
                    "`x` reaches `model` (on the XLA device) on the CPU: `loader` yields CPU tensors (the loop that "
                    "trains on it moves them)",
                ),
            ),
        )
        for suffix, aliased in (("", str), ("-aliased", _aliased))
    )
