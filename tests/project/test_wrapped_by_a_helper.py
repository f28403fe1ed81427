"""A model that a function of another module returns wrapped in nn.DataParallel, or in DDP with
device_ids (whose forward moved the inputs to the GPU on CUDA), handed with a DataLoader to a
function of a third module that moves only the targets: on XLA the wrapper moves nothing (without
CUDA devices DataParallel calls the model directly; the port drops DDP's device_ids), so the run on
the project wraps the loader in a device loader where it is handed (XLA302), and a loop of the
caller itself (also in a method, the model held on an attribute) that relies on the wrapper is an
error (XLA116)."""

from __future__ import annotations

from pathlib import Path

from codemods import RuleSelection, convert_source
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from codemods.targets import DEFAULT_TARGET
from tests.support.executed import convert_folder
from tests.support.projects import unfixed_findings, write_project

NETS = """\
import torch.nn as nn


def make_parallel(model, device):
    model.to(device)
    model = nn.DataParallel(model)
    return model


def setup(model, optimizer, rank):
    model.to(rank)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[rank], output_device=rank)
    return model, optimizer
"""

LOOPS = """\
def train_epoch(loader, model, criterion, optimizer, device):
    model.train()
    for inputs, targets in loader:
        targets = targets.to(device)
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

MAIN = """\
import torch
import torch.nn as nn

from loops import train_epoch
from nets import make_parallel


def main(dataset):
    device = torch.device("cuda")
    model = make_parallel(nn.Linear(4, 2), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    train_epoch(loader, model, nn.CrossEntropyLoss(), optimizer, device)
"""

# DDP with device_ids, the model returned in a tuple; the caller's own loop moves only the targets.
DDP_MAIN = """\
import torch
import torch.nn as nn

from nets import setup


def main(dataset, rank):
    torch.distributed.init_process_group("nccl")
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = setup(model, optimizer, rank)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    for inputs, targets in loader:
        targets = targets.to(rank)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def _converted(folder: Path, names: list[str]) -> dict[str, str]:
    convert_folder(folder)
    return {name: (folder / name).read_text() for name in names}


def test_a_loader_handed_with_a_model_a_helper_wraps_gets_the_device_loader(tmp_path: Path) -> None:
    folder = write_project(tmp_path / "p", "p", {"nets.py": NETS, "loops.py": LOOPS, "main.py": MAIN})
    found = unfixed_findings(folder, ["nets.py", "loops.py", "main.py"], "2.9")
    assert not [f for f in found["main.py"] if f[0] in ("XLA116", "XLA302")], found["main.py"]
    converted = _converted(folder, ["nets.py", "loops.py", "main.py"])
    assert (
        "    train_epoch(pl.MpDeviceLoader(loader, torch_xla.device()), model, nn.CrossEntropyLoss(), optimizer, device)\n"
        in converted["main.py"]
    )
    assert "nn.DataParallel(model)" in converted["nets.py"]  # kept: it leaves the file (XLA605)
    assert "targets = targets.to(device)" in converted["loops.py"]


EVALUATION = """\
import torch


def evaluate(loader, model):
    model.eval()
    with torch.no_grad():
        for inputs, targets in loader:
            print((model(inputs).argmax(1) == targets).float().mean())
"""

EVALUATING_MAIN = """\
import torch
import torch.nn as nn

from evaluation import evaluate
from nets import make_parallel


def main(dataset):
    device = torch.device("cuda")
    model = make_parallel(nn.Linear(4, 2), device)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    evaluate(loader, model)
"""


def _alone(folder: Path, name: str) -> str:
    path = folder / name
    project = Project(folder, summarise_with(DEFAULT_TARGET, RuleSelection(), None), in_run=[path])
    return convert_source(path.read_text(), imports=project.imports_of(path)).output  # type: ignore[return-value]


def test_a_file_converted_alone_leaves_the_loader_to_the_unconverted_helper(tmp_path: Path) -> None:
    """main.py converted alone: nets.py, which wraps the model, still moves it on CUDA terms (the
    model stays on the CPU there), so the loader handed to the evaluation (a module that needs no
    converting) stays as it is; converted with the project, it becomes a device loader."""
    files = {"nets.py": NETS, "evaluation.py": EVALUATION, "main.py": EVALUATING_MAIN}
    folder = write_project(tmp_path / "p", "p", files)
    assert "MpDeviceLoader" not in _alone(folder, "main.py")
    assert (
        "evaluate(pl.MpDeviceLoader(loader, torch_xla.device()), model)" in _converted(folder, ["main.py"])["main.py"]
    )


def test_the_same_loader_handed_with_a_model_moved_here_needs_the_same_wrap(tmp_path: Path) -> None:
    """Negative of the helper's part: without the wrap (and without a move here) nothing says
    where the model is, and the loader is left as it is."""
    plain = MAIN.replace("from nets import make_parallel\n", "").replace(
        "make_parallel(nn.Linear(4, 2), device)", "nn.Linear(4, 2)"
    )
    folder = write_project(tmp_path / "p", "p", {"nets.py": NETS, "loops.py": LOOPS, "main.py": plain})
    converted = _converted(folder, ["nets.py", "loops.py", "main.py"])
    assert "MpDeviceLoader" not in converted["main.py"]


def test_a_loop_of_the_caller_that_relied_on_ddp_device_ids_is_an_error(tmp_path: Path) -> None:
    folder = write_project(tmp_path / "p", "p", {"nets.py": NETS, "main.py": DDP_MAIN})
    found = unfixed_findings(folder, ["nets.py", "main.py"], "2.9")
    errors = [f for f in found["main.py"] if f[0] == "XLA116"]
    assert [(line, message.split(":")[0]) for _, line, message in errors] == [
        (15, "`inputs` reaches `model` on the CPU")
    ], found["main.py"]
    assert "nets.py) returns it wrapped in `nn.parallel.DistributedDataParallel`" in errors[0][2]
    moved = DDP_MAIN.replace("targets = targets.to(rank)", "inputs, targets = inputs.to(rank), targets.to(rank)")
    (folder / "main.py").write_text(moved)
    found = unfixed_findings(folder, ["nets.py", "main.py"], "2.9")
    assert not [f for f in found["main.py"] if f[0] == "XLA116"], found["main.py"]


# The model held on an attribute, wrapped under a GPU count and a local rank by a helper that
# returns it with its optimizer; the training loop moves its batches, the evaluation loop only the
# labels (on a machine with several GPUs the wrapper moved the rest).
SETUP = """\
import torch


def setup_for_distributed_mode(model, optimizer, device, n_gpu=1, local_rank=-1):
    model.to(device)
    if n_gpu > 1:
        model = torch.nn.DataParallel(model)
    if local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device], output_device=local_rank)
    return model, optimizer
"""

TRAINER = """\
import torch
import torch.nn as nn

from model_utils import setup_for_distributed_mode


class Trainer:
    def __init__(self, cfg, loader, dev_loader):
        self.device = torch.device("cuda")
        model = nn.Linear(4, 2).to(self.device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.model, self.optimizer = setup_for_distributed_mode(model, optimizer, self.device, cfg.n_gpu, cfg.rank)
        self.loader = loader
        self.dev_loader = dev_loader

    def train(self):
        for inputs, targets in self.loader:
            inputs, targets = inputs.to(self.device), targets.to(self.device)
            loss = nn.functional.cross_entropy(self.model(inputs), targets)
            loss.backward()
            self.optimizer.step()

    def validate(self):
        for ids, labels in self.dev_loader:
            labels = labels.to(self.device)
            with torch.no_grad():
                out = self.model(ids)
            print((out.argmax(1) == labels).float().mean())
"""


def test_an_evaluation_loop_that_relied_on_a_helpers_wrap_of_an_attribute_is_an_error(tmp_path: Path) -> None:
    folder = write_project(tmp_path / "p", "p", {"model_utils.py": SETUP, "trainer.py": TRAINER})
    found = unfixed_findings(folder, ["model_utils.py", "trainer.py"], "2.9")
    errors = [(line, message.split(":")[0]) for rule, line, message in found["trainer.py"] if rule == "XLA116"]
    assert errors == [(27, "`ids` reaches `self.model` on the CPU")], found["trainer.py"]
    moved = TRAINER.replace(
        "labels = labels.to(self.device)", "ids, labels = ids.to(self.device), labels.to(self.device)"
    )
    (folder / "trainer.py").write_text(moved)
    found = unfixed_findings(folder, ["model_utils.py", "trainer.py"], "2.9")
    assert not [f for f in found["trainer.py"] if f[0] == "XLA116"], found["trainer.py"]
