"""A module class whose base is a module class of another project module (ControlNet's
``ControlledUnetModel(UNetModel)``, ``UNetModel(nn.Module)`` in another file): its ``forward`` runs
within a training step, as a direct ``nn.Module`` subclass's does, so a loop of it that carries a
value under ``torch.no_grad()`` (``for module in self.input_blocks: h = module(h, emb)``) needs no
barrier of its own (XLA704): the step's barrier ends the graph, and a sync in the forward would cut
every step into one graph per block.  Also through a chain of bases across files, an aliased import
and a module attribute; a base of another file that is no module class keeps the error."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import project_reports, write_project

BASE = """\
import torch.nn as nn


class UNetModel(nn.Module):
    pass
"""

PLAIN = """\
class UNetModel:
    pass
"""

MID = """\
from base import UNetModel


class Mid(UNetModel):
    pass
"""

UNET = """\
import torch
IMPORT


class Controlled(BASE):
    def forward(self, x, emb):
        hs = []
        with torch.no_grad():
            h = x
            for module in self.input_blocks:
                h = module(h, emb)
                hs.append(h)
        for module in self.output_blocks:
            h = module(torch.cat([h, hs.pop()], 1), emb)
        return h
"""

MESSAGE = "loop without autograd carries `h` across iterations on the device: "


def _unet(import_line: str, base: str) -> str:
    return UNET.replace("IMPORT", import_line).replace("BASE", base)


def _xla704(folder: Path, files: dict[str, str], target: str) -> list[tuple[int, str]]:
    reports = project_reports(folder, files, target, ["unet.py"])
    return [(f.line, f.message) for f in reports["unet.py"].findings if f.rule == "XLA704"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize(
    ("import_line", "base", "extra"),
    [
        ("from base import UNetModel", "UNetModel", {}),
        ("from base import UNetModel as Base", "Base", {}),  # alias
        ("import base", "base.UNetModel", {}),  # a module's attribute
        ("from mid import Mid", "Mid", {"mid.py": MID}),  # a chain of bases across files
    ],
)
def test_a_forward_of_a_module_class_of_another_files_base_gets_no_barrier(
    tmp_path: Path, target: str, import_line: str, base: str, extra: dict[str, str]
) -> None:
    files = {"base.py": BASE, **extra, "unet.py": _unet(import_line, base)}
    assert _xla704(tmp_path / "p", files, target) == []


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_base_of_another_file_that_is_no_module_keeps_the_barrier(tmp_path: Path, target: str) -> None:
    files = {"base.py": PLAIN, "unet.py": _unet("from base import UNetModel", "UNetModel")}
    found = _xla704(tmp_path / "p", files, target)
    assert [line for line, _ in found] == [10], found  # the loop over the input blocks
    assert found[0][1].startswith(MESSAGE), found
    assert "ends every iteration" in found[0][1]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_converted_project_is_left_as_it_is(tmp_path: Path, target: str) -> None:
    """Idempotence: the module class's forward is not changed, and a second run changes nothing."""
    unet = _unet("from base import UNetModel", "UNetModel")
    folder = write_project(tmp_path / "p", "proj", {"base.py": BASE, "unet.py": unet})
    for _ in range(2):
        job = Job("write", target, RuleSelection())
        reports = run([(str(folder / name), job) for name in ("base.py", "unet.py")], workers=1)
        assert not any(r.changed for r in reports), [r.diff for r in reports]
    assert (folder / "unet.py").read_text() == unet
