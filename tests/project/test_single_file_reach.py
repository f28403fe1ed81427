"""What a single-file run says of the project modules it does not convert, by what the script reaches
(XLA003, issue 32).  A method named like a project method that takes a plain optimizer step, of a class
whose device the script hands in, is right on XLA as it is on one process (the script's loop gets the
step barrier): no error; an error where the script runs several processes without DDP, or where the
class chooses a CUDA device itself.  A checkpoint load in a method the script never calls (nor its
module, through the instance) is off the script's path: no error at the import."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import script_findings

TARGETS = ["2.9", "sagemaker"]

AGENT = """\
import torch


class Agent:
    def __init__(self, device):
        self.device = device
        self.net = torch.nn.Linear(4, 2).to(device)
        self.opt = torch.optim.Adam(self.net.parameters())

    def update(self, batch):
        loss = self.net(batch.to(self.device)).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def save(self, path):
        torch.save(self.net.state_dict(), path)

    def load(self, path):
        self.net.load_state_dict(torch.load(path))
"""

# The agent's class chooses the CUDA device itself.
CUDA_AGENT = AGENT.replace("self.device = device", 'self.device = torch.device("cuda")')

TRAIN = """\
import torch

from agent import Agent


def make_agent(kind, device):
    if kind == "agent":
        return Agent(device)
    raise ValueError(kind)


def main(batches):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    agent = make_agent("agent", device)
    for step, batch in enumerate(batches):
        agent.update(batch)
    agent.save("agent.pt")
"""

# The same script run in several processes (a process group), with no DDP wrap.
DISTRIBUTED_TRAIN = TRAIN.replace("import torch\n", "import torch\nimport torch.distributed as dist\n", 1).replace(
    "    device = torch.device", '    dist.init_process_group("nccl")\n    device = torch.device'
)

# The script loads a checkpoint through the agent too.
RELOADING_TRAIN = TRAIN.replace('    agent.save("agent.pt")\n', '    agent.load("agent.pt")\n')


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("target", TARGETS)
def test_a_plain_step_of_an_agent_the_script_hands_the_device_is_no_error(tmp_path: Path, target: str) -> None:
    assert script_findings(tmp_path, {"agent.py": AGENT, "train.py": TRAIN}, target, "XLA003") == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_plain_step_in_several_processes_without_ddp_is_an_error(tmp_path: Path, target: str) -> None:
    found = script_findings(tmp_path, {"agent.py": AGENT, "train.py": DISTRIBUTED_TRAIN}, target, "XLA003")
    messages = [message for _, message in found if "cannot tell the class of `agent`" in message]
    assert len(messages) == 1, found
    assert "their plain optimizer step does not reduce the gradients across this script's processes" in messages[0]


@pytest.mark.parametrize("target", TARGETS)
def test_a_step_of_an_agent_that_chooses_cuda_is_an_error(tmp_path: Path, target: str) -> None:
    found = script_findings(tmp_path, {"agent.py": CUDA_AGENT, "train.py": TRAIN}, target, "XLA003")
    messages = [message for _, message in found if "cannot tell the class of `agent`" in message]
    assert len(messages) == 1, found
    assert "the device choice and the optimizer step are not ported" in messages[0]


@pytest.mark.parametrize("target", TARGETS)
def test_a_checkpoint_load_the_script_reaches_is_an_error_at_the_import(tmp_path: Path, target: str) -> None:
    found = script_findings(tmp_path, {"agent.py": AGENT, "train.py": RELOADING_TRAIN}, target, "XLA003")
    assert [line for line, message in found if "checkpoint load" in message] == [3], found


# A package whose __init__ imports its model modules, for a registry that a library's pipeline reads.
MODELS_INIT = "from .m import M\n"

# The same, loading its model modules by a scan of its folder.
SCANNED_MODELS_INIT = """\
import importlib
import os

_names = [f[:-3] for f in os.listdir(os.path.dirname(__file__)) if f.endswith("_model.py")]
_modules = [importlib.import_module(f"myproj.models.{name}") for name in _names]
"""

MODEL = """\
import torch


class M:
    def __init__(self, opt):
        self.net = torch.nn.Linear(4, 2).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def optimize_parameters(self, x):
        self.opt.zero_grad()
        self.net(x.cuda()).sum().backward()
        self.opt.step()
"""

SIDE_EFFECT_TRAIN = """\
from extlib.train import train_pipeline

import myproj.models

if __name__ == "__main__":
    train_pipeline(".")
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "files",
    [
        {"myproj/__init__.py": "", "myproj/models/__init__.py": MODELS_INIT, "myproj/models/m.py": MODEL},
        {
            "myproj/__init__.py": "",
            "myproj/models/__init__.py": SCANNED_MODELS_INIT,
            "myproj/models/m_model.py": MODEL,
        },
    ],
    ids=["imported", "scanned"],
)
def test_a_side_effect_import_of_a_package_follows_the_modules_its_init_imports(
    tmp_path: Path, files: dict[str, str], target: str
) -> None:
    found = script_findings(tmp_path, {**files, "train.py": SIDE_EFFECT_TRAIN}, target, "XLA003")
    assert [line for line, _ in found] == [3], found
    (message,) = [message for _, message in found]
    assert "myproj/models/m" in message and "`M` " in message and ".cuda()" in message, message


# A library whose model's ``fit`` builds a Hugging Face Trainer (the default optimizer: fused AdamW),
# beside an older ``old_fit`` with a CUDA gradient scaler that the script never calls.
FIT_MIXIN = """\
import torch
from transformers import Trainer, TrainingArguments


class FitMixin:
    def fit(self, train_dataset, epochs=1, use_amp=False):
        args = TrainingArguments(output_dir="out", num_train_epochs=epochs, fp16=use_amp)
        Trainer(model=self, args=args, train_dataset=train_dataset).train()

    def old_fit(self, loader):
        scaler = torch.cuda.amp.GradScaler()
        return scaler
"""

LIB_MODEL = """\
import torch

from .fit_mixin import FitMixin


class Model(torch.nn.Sequential, FitMixin):
    def __init__(self, width):
        super().__init__(torch.nn.Linear(width, width))
"""

FIT_SCRIPT = """\
from mylib import Model

model = Model(4)
model.fit(None, epochs=1, use_amp=True)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_the_script_calls_that_builds_a_trainer_is_an_error_at_the_call(tmp_path: Path, target: str) -> None:
    files = {
        "mylib/__init__.py": "from .model import Model\n",
        "mylib/model.py": LIB_MODEL,
        "mylib/fit_mixin.py": FIT_MIXIN,
        "train.py": FIT_SCRIPT,
    }
    found = script_findings(tmp_path, files, target, "XLA003")
    assert [line for line, _ in found] == [4], found
    (message,) = [message for _, message in found]
    assert message.startswith("`model.fit` runs `FitMixin.fit` in mylib/fit_mixin.py, which this run does not convert")
    assert "a Hugging Face Trainer" in message and "GradScaler" not in message, message


# A helper of another module that the script calls, which calls the agent's ``load``.
RESTORE = """\
def restore(agent, path):
    agent.load(path)
"""

RESTORING_TRAIN = TRAIN.replace(
    "from agent import Agent\n", "from agent import Agent\nfrom ckpt import restore\n"
).replace('    agent.save("agent.pt")\n', '    restore(agent, "agent.pt")\n')


@pytest.mark.parametrize("target", TARGETS)
def test_a_checkpoint_load_that_a_helper_the_script_calls_reaches_is_an_error(tmp_path: Path, target: str) -> None:
    found = script_findings(
        tmp_path, {"agent.py": AGENT, "ckpt.py": RESTORE, "train.py": RESTORING_TRAIN}, target, "XLA003"
    )
    assert [line for line, message in found if "checkpoint load" in message] == [3], found


# A class whose methods the script calls, each holding a CUDA move; its ``__init__`` holds one too.
LOADER = """\
import torch


class Batches:
    def __init__(self, n):
        self.full = torch.ones(n).cuda()

    def one_batch(self):
        return self.full[:2].cuda()
"""

LOADER_TRAIN = """\
from batches import Batches


def main(model, steps):
    batches = Batches(8)
    first = batches.one_batch()
    for step in range(steps):
        model(batches.one_batch())
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_the_script_calls_is_named_at_its_first_call_and_the_rest_at_the_import(
    tmp_path: Path, target: str
) -> None:
    found = script_findings(tmp_path, {"batches.py": LOADER, "train.py": LOADER_TRAIN}, target, "XLA003")
    assert [line for line, _ in found] == [1, 6], found
    at_import, at_call = (message for _, message in found)
    assert "`Batches` has `torch.ones(n).cuda()` (line 6)" in at_import, at_import
    assert at_call.startswith("`batches.one_batch` runs `Batches.one_batch` in batches.py"), at_call
