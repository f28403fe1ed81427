"""XLA116's cases of batches moved through a helper of the project (DAB-DETR's ``evaluate``):
``targets = [{k: to_device(v, device) for k, v in t.items()} for t in targets]``, where
``to_device`` returns ``item.to(device)``, moves each batch as ``v.to(device)`` would; a helper that
moves nothing leaves them on the CPU.  (A helper of another module: tests/project/test_helper_moves.py.)"""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# An evaluation function that moves its targets through a helper of this file, inside a
# comprehension, and reads its loader's data set (so the loader cannot be wrapped).
_HELPER_MOVES = """\
import torch


def to_device(item, device):
    if isinstance(item, torch.Tensor):
        return item.to(device)
    return {k: to_device(v, device) for k, v in item.items()}


def evaluate(model, data_loader, device):
    for samples, targets in data_loader:
        samples = samples.to(device)
        targets = [{k: to_device(v, device) for k, v in t.items()} for t in targets]
        print(model(samples, targets))
    print(len(data_loader.dataset))


device = torch.device("cuda")
model = torch.nn.Linear(4, 4).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(train_set, batch_size=8)
evaluate(model, loader, device)
"""

_PORTED = (
    ("import torch\n", "import torch\nimport torch_xla\n"),
    ('device = torch.device("cuda")', "device = torch_xla.device()"),
)

# The helper hands each item back where it is: the targets stay on the CPU.
_NO_MOVE = ("return item.to(device)", "return item")


def helper_move_valid() -> tuple[Valid, ...]:
    keywords = ("to_device(v, device) for k", "to_device(item=v, device=device) for k")
    return (
        valid(_HELPER_MOVES, substituted(_HELPER_MOVES, *_PORTED), note="a-helper-that-moves-its-argument"),
        valid(
            substituted(_HELPER_MOVES, keywords),
            substituted(_HELPER_MOVES, keywords, *_PORTED),
            note="a-helper-that-moves-its-argument-by-keyword",
        ),
    )


def helper_move_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            substituted(_HELPER_MOVES, _NO_MOVE),
            substituted(_HELPER_MOVES, _NO_MOVE, *_PORTED),
            note="a-helper-that-moves-nothing",
            findings=(
                Expected(
                    23,
                    1,
                    "`loader` goes to `evaluate` (in this file), which feeds the batches of its `data_loader` "
                    "(`targets`) to `model` (on the XLA device) without moving them; it uses `data_loader` "
                    "otherwise than by iterating it",
                ),
            ),
        ),
    )
