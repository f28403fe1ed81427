"""A layer whose forward calls a compiled extension imported relatively (``from ._ext import
deform_conv``, built in place by the project's setup.py: no Python module of the project) is
an error (XLA512) in a run that knows the project; a relative import of a module the project
has is not, and a file whose folder is not known cannot tell the two apart (nothing said)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

LAYER = """\
import torch
from torch.autograd import Function

from .{module} import deform_conv as backend


class DeformFunction(Function):
    @staticmethod
    def forward(ctx, x, offset):
        out = x.new_empty(x.shape)
        backend.forward(x, offset, out)
        return out
"""

HELPER = """\
def forward(x, offset, out):
    out.copy_(x + offset)
"""


def _findings(tmp_path: Path, module: str, target: str, located: bool = True) -> list[Finding]:
    repo = tmp_path / "repo"
    (repo / "layers").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "layers" / "__init__.py").write_text("")
    (repo / "layers" / "dcn.py").write_text(LAYER.format(module=module))
    (repo / "layers" / "helpers.py").write_text(HELPER)
    path = repo / "layers" / "dcn.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[path])
    imports = project.imports_of(path) if located else None
    conversion = convert_source(path.read_bytes(), target=target, imports=imports)
    return [f for f in conversion.findings if f.rule == "XLA512"]


@pytest.mark.parametrize("target", TARGETS)
def test_an_op_of_an_extension_built_in_place_is_an_error_in_the_forward(tmp_path: Path, target: str) -> None:
    (finding,) = _findings(tmp_path, "_ext", target)
    assert finding.line == 11
    assert "`backend.forward(...)` runs an op of a compiled extension" in finding.message
    assert "`from ._ext import deform_conv`, no Python module of the project" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_of_the_project_is_no_extension(tmp_path: Path, target: str) -> None:
    assert _findings(tmp_path, "helpers", target) == []


def test_a_file_whose_folder_is_not_known_says_nothing(tmp_path: Path) -> None:
    assert _findings(tmp_path, "_ext", "2.9", located=False) == []
