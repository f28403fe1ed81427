"""Executed: a CUDA availability flag handed to project classes that pick the device with it
(tests/project/test_handed_cuda_flags.py's project), converted as one run and run on torch_xla 2.9
(CPU): the port switches the flag on, so the model and the batches are on the XLA device and the
optimizer steps XLA parameters, with the same losses as the original run eagerly on the CPU.

Negative control: the converted project with the flag's check put back (the port as it used to be
written: ``use_cuda = torch.cuda.is_available()``) trains on the CPU, the XLA device unused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_handed_cuda_flags import FILES, MAIN
from tests.support.executed import eager_and_converted_runs

pytestmark = pytest.mark.executed

TRAIN = MAIN.replace(
    "lib.Trainer(model, opt, use_cuda).train([(torch.randn(8, 4), torch.randn(8, 1))])\n",
    """batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]
trainer = lib.Trainer(model, opt, use_cuda)
for step, batch in enumerate(batches):
    trainer.train([batch])
    x, y = batch[0].to(model.device), batch[1].to(model.device)
    print(f"step {step} loss {torch.nn.functional.mse_loss(model(x), y).item()}")
print("model on", next(model.parameters()).device.type)
""",
)
TRAIN = TRAIN.replace("import lib\n", "import lib\n\ntorch.manual_seed(0)\n")
PROJECT = {**FILES, "train.py": TRAIN}


def test_the_switched_flag_trains_on_xla(tmp_path: Path) -> None:
    eager, ported = eager_and_converted_runs(tmp_path, "p", PROJECT, "use_cuda = True\n")
    assert len(eager.losses) == 5
    assert "model on cpu" in eager.output
    assert "model on xla" in ported.output
    assert ported.losses == pytest.approx(eager.losses, rel=1e-4)
    assert set(ported.stepped_devices) <= {"xla"}


def test_the_check_put_back_trains_on_the_cpu(tmp_path: Path) -> None:
    _, ported = eager_and_converted_runs(
        tmp_path, "p", PROJECT, "use_cuda = True\n", "use_cuda = torch.cuda.is_available()\n"
    )
    assert "model on cpu" in ported.output
    assert "xla" not in set(ported.stepped_devices)
