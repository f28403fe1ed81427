"""XLA116's cases for inputs that a wrapper the port unwraps used to move: nn.DataParallel
scattered every tensor of its inputs to the GPUs (also inside lists, tuples and dicts)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_NN = "import torch.nn as nn\n"
_XLA_IMPORTS = "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
_TO_XLA = (".cuda()", ".to(torch_xla.device())")
_CUDA_DEVICE = ('torch.device("cuda")', "torch_xla.device()")


def _stepped(indent: str, optimizer: str = "optimizer", ported: str = "xm.optimizer_step({})") -> tuple[str, str]:
    """The optimizer step that ends a training loop, and its port (``ported``: the step as the
    port writes it), followed by the barrier."""
    step = ported.format(optimizer)
    return f"{indent}{optimizer}.step()\n", f"{indent}{step}\n{indent}torch_xla.sync()\n"


# A detector whose forward takes its inputs in a list or tuple.
_DET = """
import torch
import torch.nn as nn


class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)

    def forward(self, inputs, scale=1.0):
        img, annot = inputs
        return ((self.backbone(img) - annot[:, :4]) ** 2).mean() * scale

"""


def _det_ported(program: str, indent: str) -> str:
    """A program of ``_DET`` as the port writes it: DataParallel removed, the step ending at ``indent``."""
    return substituted(
        program,
        (_NN, _NN + _XLA_IMPORTS),
        ("nn.DataParallel(Det()).cuda()", "Det().to(torch_xla.device())"),
        _TO_XLA,
        _stepped(indent),
    )


# A batch element and a CPU tensor that only DataParallel's scatter moved.
SCATTERED_INPUTS = (
    _DET
    + """
def train(loader, epochs):
    model = nn.DataParallel(Det()).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for data in loader:
            loss = model([data["img"].cuda().float(), data["annot"]], 0.5)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        noise = torch.randn(8, 5)
        print(model((torch.randn(8, 4).cuda(), noise)).item())
"""
)


# Every tensor moved by the script (a name bound to a move, a move in the call), and numbers.
MOVED_INPUTS = (
    substituted(_DET, ("scale=1.0)", "scale=1.0, tag=None)"))
    + """
model = nn.DataParallel(Det()).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(10):
    img, annot = torch.randn(8, 4), torch.randn(8, 5).cuda()
    scale = 0.5
    loss = model([img.cuda(), annot], scale, tag="train")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
for img, annot in loader:
    img, annot = img.cuda(), annot.cuda()
    print(model((img, annot), step).item())
"""
)


# A batch that only DDP(device_ids=[rank]) moved: the port drops device_ids.
DDP_MOVED_INPUTS = """
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank, loader):
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(4, 2).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        ((model(x) - y.cuda(rank)) ** 2).mean().backward()
        optimizer.step()
"""


DDP_MOVED_INPUTS_PORTED = substituted(
    DDP_MOVED_INPUTS,
    (
        "as DDP\n",
        'as DDP\nimport torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)\n',
    ),
    ('"nccl")', '"xla", init_method="xla://")'),
    (".cuda(rank), device_ids=[rank])", ".to(torch_xla.device()))"),
    (".cuda(rank)", ".to(torch_xla.device())"),
    _stepped(" " * 8, ported="{}.step()"),
)


DDP_MOVED_INPUTS_SAGEMAKER = substituted(
    DDP_MOVED_INPUTS_PORTED,
    ("as DDP\n", "as DDP\nimport os\nimport torch_xla.core.xla_model as xm\n"),
    (
        '    dist.init_process_group("xla", init_method="xla://")\n',
        '    os.environ.setdefault("MASTER_ADDR", "localhost")\n'
        '    os.environ.setdefault("MASTER_PORT", "12355")\n'
        '    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())\n',
    ),
    ("torch_xla.device()", "xm.xla_device()"),
    ("torch_xla.sync()", "xm.mark_step()"),
)


# Batches a loop hands to a trainer's step method, which gives parts of them to the model.
HANDED_BATCHES = """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, net):
        self.model = nn.DataParallel(net).cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, batch):
        images, targets, names = batch
        loss = self.model({"x": images.cuda(), "y": targets, "names": names})
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def fit(self, loader):
        for batch in loader:
            self.step(batch)
        for images, targets in loader:
            print(self.model({"x": images.cuda(), "y": targets}).item())
"""


HANDED_BATCHES_PORTED = substituted(
    HANDED_BATCHES,
    (_NN, _NN + _XLA_IMPORTS),
    _TO_XLA,
    ("self.optimizer.step()", "xm.optimizer_step(self.optimizer)"),
    ("            self.step(batch)\n", "            self.step(batch)\n            torch_xla.sync()\n"),
)


# Batches that a removed wrapper's scatter did not have to move: a project iterator given the
# device moves the stream itself (not reported).
ITERATOR_GIVEN_THE_DEVICE = """
import torch
import torch.nn as nn


class StreamIterator:
    def __init__(self, data, batch_size, device):
        self.data = data.to(device)
        self.batch_size = batch_size

    def __iter__(self):
        for i in range(0, self.data.size(0) - 1, self.batch_size):
            yield self.data[i:i + self.batch_size], self.data[i + 1:i + 1 + self.batch_size]


def train(model, tokens, loader, device):
    para_model = nn.DataParallel(model).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for data, target in StreamIterator(tokens, 8, device=device):
        loss = (para_model(data) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, tokens, dataset, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    train(model, tokens, loader, device)
"""

# DataParallel removed (the port also drops the import of nn that it leaves unused).
_DATA_PARALLEL_REMOVED = ("nn.DataParallel(model).to(device)", "model.to(device)")

ITERATOR_GIVEN_THE_DEVICE_PORTED = substituted(
    ITERATOR_GIVEN_THE_DEVICE, (_NN, _XLA_IMPORTS), _DATA_PARALLEL_REMOVED, _stepped(" " * 8)
)


# A DataLoader handed in to an evaluation loop: the port wraps only training loops' loaders, so
# its batches reach the unwrapped model on the CPU (reported).
HANDED_TO_AN_EVALUATION = """
import torch
import torch.nn as nn


def evaluate(model, loader, device):
    para_model = nn.DataParallel(model).to(device)
    for crops in loader:
        print(para_model(crops).sum().item())


def main(model, dataset, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    evaluate(model, loader, device)
"""


HANDED_TO_AN_EVALUATION_PORTED = substituted(HANDED_TO_AN_EVALUATION, (_NN, ""), _DATA_PARALLEL_REMOVED)


# A model that a function of the file returns wrapped in DDP with device_ids (or DataParallel): the
# loop of its caller moves the targets and hands the inputs to it unmoved, as the wrapper moved them.
WRAPPED_BY_A_FUNCTION = """
import torch
import torch.nn as nn


def make_parallel(model, rank):
    model.to(rank)
    return nn.parallel.DistributedDataParallel(model, device_ids=[rank])


def main(loader, rank):
    model = make_parallel(nn.Linear(4, 2), rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for inputs, targets in loader:
        targets = targets.to(rank)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
"""

# The inputs moved too, beside the targets.
MOVED_BESIDE_A_FUNCTION_WRAP = substituted(
    WRAPPED_BY_A_FUNCTION,
    ("        targets = targets.to(rank)\n", "        inputs, targets = inputs.to(rank), targets.to(rank)\n"),
)


def _function_wrap_ported(program: str) -> str:
    """A program of ``WRAPPED_BY_A_FUNCTION`` as the port writes it: DDP's device_ids dropped."""
    return substituted(
        program,
        (_NN, _NN + "import torch_xla\n"),
        (".to(rank)", ".to(torch_xla.device())"),
        (", device_ids=[rank])", ")"),
        _stepped(" " * 8, ported="{}.step()"),
    )


WRAPPED_BY_A_FUNCTION_ALIASED = """
import torch as th
from torch.nn import DataParallel as DP


def make_parallel(model, device):
    model = DP(model.to(device))
    return model


def main(dataset):
    device = th.device("cuda")
    net = make_parallel(th.nn.Linear(4, 2), device)
    optimizer = th.optim.SGD(net.parameters(), lr=0.1)
    loader = th.utils.data.DataLoader(dataset, batch_size=8)
    for inputs, targets in loader:
        loss = th.nn.functional.cross_entropy(net(inputs), targets.to(device))
        loss.backward()
        optimizer.step()
"""

WRAPPED_BY_A_FUNCTION_ALIASED_PORTED = substituted(
    WRAPPED_BY_A_FUNCTION_ALIASED,
    ("as DP\n", "as DP\n" + _XLA_IMPORTS),
    ('th.device("cuda")', "torch_xla.device()"),
    _stepped(" " * 8),
)


# A removed DataParallel beside a loop that moves only the targets: one finding at the forward.
REMOVED_WRAPPER_TARGETS_MOVED = """
import torch
import torch.nn as nn

device = torch.device("cuda")
model = nn.Linear(4, 2).to(device)
model = nn.DataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(dataset, batch_size=8)
for inputs, targets in loader:
    targets = targets.to(device)
    loss = nn.functional.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
"""

REMOVED_WRAPPER_TARGETS_MOVED_PORTED = substituted(
    REMOVED_WRAPPER_TARGETS_MOVED,
    (_NN, _NN + _XLA_IMPORTS),
    _CUDA_DEVICE,
    ("model = nn.DataParallel(model)\n", ""),
    _stepped(" " * 4),
)


# A batch that a helper of the file moves in place before the model wrapped in DDP with device_ids takes it.
MOVED_BY_A_HELPER = """
import torch


def to_device(batch):
    for key, val in batch.items():
        batch[key] = val.cuda()


def evaluate(model, loader, rank):
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    for batch in loader:
        to_device(batch)
        model(batch)
"""
MOVED_BY_A_HELPER_PORTED = substituted(
    MOVED_BY_A_HELPER,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    _TO_XLA,
    (", device_ids=[rank])", ")"),
)
# The helper runs after the forward: the forward gets the batch on the CPU.
MOVED_AFTER_THE_FORWARD = substituted(
    MOVED_BY_A_HELPER,
    ("        to_device(batch)\n        model(batch)\n", "        model(batch)\n        to_device(batch)\n"),
)

# Every value of a dict batch moved by a loop over its keys, through a helper that returns it moved
# (audioset_tagging_cnn's ``batch[key] = move_data_to_device(batch[key], device)``).
MOVED_BY_KEY = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, lam=None):
        return self.fc(x)


def to_device(x, device):
    return torch.as_tensor(x).to(device)


def train(data):
    device = torch.device("cuda")
    model = nn.DataParallel(Net()).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    loader = torch.utils.data.DataLoader(data, batch_size=2, drop_last=True)
    for batch in loader:
        for key in batch.keys():
            batch[key] = to_device(batch[key], device)
        loss = model(batch["waveform"], batch["lam"]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def _by_key_ported(program: str) -> str:
    """A program of ``MOVED_BY_KEY`` as the port writes it (DataParallel removed; the sagemaker
    cases are derived from it)."""
    return substituted(
        program, (_NN, _NN + _XLA_IMPORTS), _CUDA_DEVICE, ("nn.DataParallel(Net())", "Net()"), _stepped(" " * 8)
    )


# The near variant whose loop over the keys only casts: the values stay on the CPU.
CAST_BY_KEY = substituted(MOVED_BY_KEY, ("to_device(batch[key], device)", "batch[key].float()"))


def scattered_input_valid() -> tuple[Valid, ...]:
    return (
        valid(MOVED_BY_KEY, _by_key_ported(MOVED_BY_KEY), note="every value of a dict batch moved by key"),
        valid(MOVED_INPUTS, _det_ported(MOVED_INPUTS, " " * 4), note="data-parallel-inputs-the-script-moves"),
        valid(
            ITERATOR_GIVEN_THE_DEVICE, ITERATOR_GIVEN_THE_DEVICE_PORTED, note="batches-of-an-iterator-given-the-device"
        ),
        valid(
            MOVED_BESIDE_A_FUNCTION_WRAP,
            _function_wrap_ported(MOVED_BESIDE_A_FUNCTION_WRAP),
            note="inputs-moved-beside-a-wrap-a-function-returns",
        ),
        valid(MOVED_BY_A_HELPER, MOVED_BY_A_HELPER_PORTED, note="a batch a helper of the file moves in place first"),
        valid(
            MOVED_BY_A_HELPER,
            substituted(
                MOVED_BY_A_HELPER_PORTED,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            note="a batch a helper of the file moves in place first (sagemaker)",
        ),
    )


def scattered_input_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            CAST_BY_KEY,
            _by_key_ported(CAST_BY_KEY),
            note="the values of a dict batch only cast by key",
            findings=(Expected(28, 16, '`batch["waveform"]`, `batch["lam"]` reach `model` on the CPU'),),
        ),
        invalid(
            MOVED_AFTER_THE_FORWARD,
            substituted(
                MOVED_BY_A_HELPER_PORTED,
                (
                    "        to_device(batch)\n        model(batch)\n",
                    "        model(batch)\n        to_device(batch)\n",
                ),
            ),
            note="a batch a helper of the file moves only after the forward",
            findings=(Expected(13, 9, "`batch` reaches `model` on the CPU"),),
        ),
        invalid(
            HANDED_TO_AN_EVALUATION,
            HANDED_TO_AN_EVALUATION_PORTED,
            note="a-loader-handed-in-to-an-evaluation",
            findings=(Expected(7, 15, "`crops` reaches `para_model` on the CPU"),),
        ),
        invalid(
            HANDED_TO_AN_EVALUATION,
            HANDED_TO_AN_EVALUATION_PORTED,
            target="sagemaker",
            note="a-loader-handed-in-to-an-evaluation-sagemaker",
            findings=(Expected(7, 15, "`crops` reaches `para_model` on the CPU"),),
        ),
        invalid(
            SCATTERED_INPUTS,
            _det_ported(SCATTERED_INPUTS, " " * 12),
            note="inputs-only-data-parallel-moved",
            findings=(
                Expected(
                    22,
                    20,
                    '`data["annot"]` reaches `model` on the CPU: `nn.DataParallel` scattered every tensor of its '
                    "inputs to the GPUs, and the port removes it",
                ),
                Expected(28, 15, "`noise` reaches `model` on the CPU"),
            ),
        ),
        invalid(
            DDP_MOVED_INPUTS,
            DDP_MOVED_INPUTS_PORTED,
            note="a-batch-only-ddp-device-ids-moved",
            findings=(
                Expected(
                    14,
                    11,
                    "`x` reaches `model` on the CPU: `DDP` moved every tensor of its inputs to the GPU of its "
                    "device_ids, which the port drops",
                ),
            ),
        ),
        invalid(
            DDP_MOVED_INPUTS,
            DDP_MOVED_INPUTS_SAGEMAKER,
            target="sagemaker",
            note="a-batch-only-ddp-device-ids-moved-sagemaker",
            findings=(Expected(18, 11, "move it to the device first if it is a tensor (`x.to(device)`)"),),
        ),
        invalid(
            REMOVED_WRAPPER_TARGETS_MOVED,
            REMOVED_WRAPPER_TARGETS_MOVED_PORTED,
            note="inputs-only-a-removed-data-parallel-moved-one-finding",
            findings=(
                Expected(
                    12,
                    40,
                    "`inputs` reaches `model` on the CPU: `nn.DataParallel` scattered every tensor of its inputs "
                    "to the GPUs, and the port removes it",
                ),
            ),
        ),
        invalid(
            WRAPPED_BY_A_FUNCTION,
            _function_wrap_ported(WRAPPED_BY_A_FUNCTION),
            note="inputs-only-a-wrap-a-function-returns-moved",
            findings=(
                Expected(
                    16,
                    44,
                    "`inputs` reaches `model` on the CPU: `make_parallel()` (in this file) returns it wrapped in "
                    "`nn.parallel.DistributedDataParallel`, whose forward moved them to the GPU of its device_ids on "
                    "CUDA; the port drops device_ids (XLA604), and without them it moves no inputs",
                ),
            ),
        ),
        invalid(
            WRAPPED_BY_A_FUNCTION_ALIASED,
            WRAPPED_BY_A_FUNCTION_ALIASED_PORTED,
            note="inputs-only-a-data-parallel-a-function-returns-moved-aliased",
            alias=True,
            findings=(
                Expected(
                    18,
                    47,
                    "`inputs` reaches `net` on the CPU: `make_parallel()` (in this file) returns it wrapped in `DP`, "
                    "whose forward scattered them to the GPUs on CUDA; without CUDA devices it calls the model directly",
                ),
            ),
        ),
        invalid(
            HANDED_BATCHES,
            HANDED_BATCHES_PORTED,
            note="batches-handed-to-a-step-method",
            findings=(
                Expected(14, 16, "`targets`, `names` reach `self.model` on the CPU"),
                Expected(24, 19, "`targets` reaches `self.model` on the CPU"),
            ),
        ),
    )
