"""XLA116's cases of loops whose batches come from a package the tool does not follow (issue 32,
device/library_batches.py): timm's ``create_loader(...)`` with its prefetcher off, bound to a name
(also imported under another name, iterated through ``enumerate(tqdm(...))``) or called in the
``for``; and the loops over such a call that are right: their batches moved (also by a helper
handed the device), the call handed a device, a DataLoader (also through a progress bar of
another package), a followed package, a module of the project.  (The sagemaker cases are derived: tests/support/derived_cases.py.)"""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_TRAINING = """
import torch
from timm.data import create_loader
from tqdm import tqdm

model = torch.nn.Linear(8, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = create_loader(dataset, input_size=(3, 32, 32), batch_size=4, use_prefetcher=False)
for i, (x, y) in enumerate(tqdm(loader)):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
_TRAINING_PORTED = substituted(
    _TRAINING,
    ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
    (".cuda()", ".to(torch_xla.device())"),
    ("    optimizer.step()\n", "    xm.optimizer_step(optimizer)\n    torch_xla.sync()\n"),
)
_ALIASED = (("import create_loader\n", "import create_loader as make_loader\n"), ("= create_loader(", "= make_loader("))

_EVALUATION = """
import timm.data
import torch

device = torch.device("cuda")
model = torch.nn.Linear(8, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
with torch.no_grad():
    for x, y in {source}:
        out = model(x)
"""
_EVALUATION_PORTED = substituted(
    _EVALUATION,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    ('torch.device("cuda")', "torch_xla.device()"),
)
_TIMM_LOADER = "timm.data.create_loader(dataset, (3, 32, 32), 4, use_prefetcher=False{device})"


def _evaluation(source: str, *, ported: bool) -> str:
    return (_EVALUATION_PORTED if ported else _EVALUATION).format(source=source)


def _message(batch: str, source: str) -> str:
    return (
        f"`{batch}` reaches `model` (on the XLA device) unmoved: the batches come from `{source}` of `timm`, "
        "which the tool does not follow"
    )


def library_batch_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _TRAINING,
            _TRAINING_PORTED,
            note="batches-of-an-unfollowed-library-loader",
            findings=(Expected(11, 46, _message("x", "create_loader(...)")),),
        ),
        invalid(
            substituted(_TRAINING, *_ALIASED),
            substituted(_TRAINING_PORTED, *_ALIASED),
            note="batches-of-an-unfollowed-library-loader-imported-under-another-name",
            alias=True,
            findings=(Expected(11, 46, _message("x", "make_loader(...)")),),
        ),
        invalid(
            _evaluation("timm.data.iterate(dataset, 4)", ported=False),
            _evaluation("timm.data.iterate(dataset, 4)", ported=True),
            note="an-evaluation-loop-over-a-call-of-an-unfollowed-library",
            findings=(Expected(10, 15, _message("x", "timm.data.iterate(dataset, 4)")),),
        ),
    )


def library_batch_valid() -> tuple[Valid, ...]:
    moved = substituted(_TRAINING, ("    loss =", "    x, y = x.cuda(), y.cuda()\n    loss ="))
    handed = _TIMM_LOADER.format(device=", device=device")
    return (
        valid(
            moved,
            substituted(
                _TRAINING_PORTED,
                ("    loss =", "    x, y = x.to(torch_xla.device()), y.to(torch_xla.device())\n    loss ="),
            ),
            note="moved-batches-of-an-unfollowed-library-loader",
        ),
        valid(
            _evaluation(handed, ported=False),
            _evaluation(handed, ported=True),
            note="an-unfollowed-library-loader-handed-the-device",
        ),
        valid(
            _evaluation("timm.data.iterate(dataset, device)", ported=False),
            _evaluation("timm.data.iterate(dataset, device)", ported=True),
            note="an-unfollowed-library-call-handed-the-xla-device-by-position",
        ),
        valid(
            substituted(
                _evaluation("timm.data.iterate(dataset, 4)", ported=False),
                ("        out =", "        x = send_to_device(x, device)\n        out ="),
            ),
            substituted(
                _evaluation("timm.data.iterate(dataset, 4)", ported=True),
                ("        out =", "        x = send_to_device(x, device)\n        out ="),
            ),
            note="unfollowed-library-batches-handed-to-a-helper-with-the-device",
        ),
        *(
            valid(
                substituted(_evaluation(source, ported=False), ("import timm.data\n", imports)),
                substituted(_evaluation(source, ported=True), ("import timm.data\n", imports)),
                note=note,
            )
            for source, imports, note in (
                ("torch.utils.data.DataLoader(dataset)", "", "an-evaluation-loop-over-a-dataloader-it-does-not-move"),
                ('torchvision.datasets.MNIST("data")', "import torchvision\n", "batches-of-a-followed-package"),
                (
                    "mmengine.track_iter_progress(torch.utils.data.DataLoader(dataset))",
                    "import mmengine\n",
                    "a-dataloader-through-an-unfollowed-progress-bar",
                ),
                ("make_loader(cfg)", "from data import make_loader\n", "batches-of-a-project-module-loader"),
            )
        ),
    )
