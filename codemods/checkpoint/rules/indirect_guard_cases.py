"""XLA401's cases of a ``torch.save`` that only the master reaches through the script's own calls:
``if acc.process_index == 0: save_all(saver, model)``, whose ``saver.save(...)`` runs
``self._write(...)`` (DALLE2-pytorch's ``save_trainer`` -> ``Tracker.save`` -> ``_save_state_dict``).
On the sagemaker target xm.save waits for every process (torch_xla 1.13), so the save stays
``torch.save`` of the state moved to the CPU; called in every process, it becomes xm.save."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid, substituted

INDIRECT = """
import torch
from accelerate import Accelerator


class Saver:
    def __init__(self, dummy):
        self.dummy = dummy

    def save(self, model, path):
        if self.dummy:
            return
        self._write(model, path)

    def _write(self, model, path):
        torch.save({"model": model.state_dict()}, path)


def save_all(saver, model):
    saver.save(model, "ckpt.pth")


def main():
    acc = Accelerator()
    model = acc.prepare(torch.nn.Linear(4, 1))
    saver = Saver(dummy=acc.process_index != 0)
    for epoch in range(3):
        if acc.process_index == 0:
            save_all(saver, model)
"""

_XM = ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n")


def indirect_guard_invalid() -> tuple[Invalid, ...]:
    everyone = substituted(INDIRECT, ("        if acc.process_index == 0:\n            save_all", "        save_all"))
    return (
        invalid(
            INDIRECT,
            substituted(
                INDIRECT, _XM, ("torch.save({", "torch.save(xm._maybe_convert_to_cpu({"), ("}, path)", "}), path)")
            ),
            target="sagemaker",
            note="a-save-the-master-alone-reaches-through-calls-sagemaker",
            findings=(Expected(16, 20, "`torch.save` under a rank check stays"),),
        ),
        *(
            invalid(
                program,
                substituted(program, _XM, ("torch.save(", "xm.save(")),
                target=target,
                note=f"{what}-{target}",
                findings=(Expected(16, 9, "torch.save -> xm.save"),),
            )
            for program, what, target in (
                (INDIRECT, "a-save-the-master-alone-reaches-through-calls", "2.9"),
                (everyone, "a-save-every-process-reaches-through-calls", "sagemaker"),
            )
        ),
    )
