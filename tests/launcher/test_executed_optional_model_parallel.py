"""Executed: a trainer module that imports smdistributed model parallel only as an option (``try:
import smdistributed.modelparallel.torch as smp`` / ``except ImportError``, no ``smp.init()``) and
picks CUDA when it can is converted as any other module: on torch_xla (CPU) the model and its
batches train on the XLA device, with the eager run's losses, each step executing its graphs.  The negative control, the same module importing smdistributed unconditionally (a helper
of a model-parallel script, which runs on CUDA GPUs and is left as it is), trains on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, loss_problems, run_script, xla_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

TRAINER = """\
import torch

try:
    import smdistributed.modelparallel.torch as smp
except ImportError:
    smp = None


class Trainer:
    def __init__(self, model):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train(self, batches):
        for step, (x, y) in enumerate(batches):
            x, y = x.to(self.device), y.to(self.device)
            self.opt.zero_grad()
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.opt.step()
            print(f"step {step} loss {loss.item():.6f}")
        print(f"model on {next(self.model.parameters()).device.type}")
"""

MAIN = """\
import torch

from trainer import Trainer

torch.manual_seed(0)
batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(6)]
Trainer(torch.nn.Linear(4, 2)).train(batches)
"""


def test_a_module_with_model_parallel_as_an_option_trains_on_xla(tmp_path: Path) -> None:
    files = {"trainer.py": TRAINER, "main.py": MAIN}
    eager = run_script(write_project(tmp_path / "eager", "opt", files), "main.py", on_xla=False)
    ported = run_script(converted_project(tmp_path / "xla", "opt", files), "main.py")
    assert "model on xla" in ported.output, ported.output
    assert loss_problems(ported, eager) == []
    assert xla_problems(ported) == []


# smdistributed is not installed here: an empty package of that name lets the control import it.
_STUB = {
    "smdistributed/__init__.py": "",
    "smdistributed/modelparallel/__init__.py": "",
    "smdistributed/modelparallel/torch.py": "",
}


def test_with_an_unconditional_import_the_module_is_left_on_the_cpu(tmp_path: Path) -> None:
    unconditional = TRAINER.replace(
        "try:\n    import smdistributed.modelparallel.torch as smp\nexcept ImportError:\n    smp = None\n",
        "import smdistributed.modelparallel.torch as smp\n",
    )
    files = {"trainer.py": unconditional, "main.py": MAIN, **_STUB}
    kept = run_script(converted_project(tmp_path / "kept", "opt", files), "main.py")
    assert '"cuda" if torch.cuda.is_available()' in (tmp_path / "kept" / "trainer.py").read_text()
    assert "model on cpu" in kept.output, kept.output
    assert xla_problems(kept) != []
