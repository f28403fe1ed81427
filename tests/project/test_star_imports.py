"""``from <project module> import *`` binds that module's names here (issue 32, held-out list 5):
a module that does ``import torch`` hands ``torch`` to the script, whose
``torch.cuda.is_available()`` is then torch's CUDA check, ported as with ``import torch`` (a
whole run and a single-file run alike).  A star import the tool cannot read leaves the check as
written: XLA003 says so, at the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.support.cli import invoke
from tests.support.fixtures import output_bytes

TARGETS = ["2.9", "sagemaker"]

NET = """\
import torch
import torch.nn as nn
{extra}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)
"""

TRAIN = """\
import argparse

{imports}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-cuda", action="store_true", default=False)
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    model = Net()
    if args.cuda:
        model = model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        x, y = torch.randn(8, 4), torch.randn(8, 2)
        if args.cuda:
            x, y = x.cuda(), y.cuda()
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for name, text in {"pyproject.toml": "[project]\nname = 'repo'\n", **files}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo


def _convert(repo: Path, script: str, target: str, whole: bool) -> tuple[str, list[str]]:
    """The converted script and its XLA003 messages (whole: every file of the folder in the run)."""
    path = repo / script
    in_run = sorted(repo.rglob("*.py")) if whole else [path]
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=in_run)
    conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path))
    messages = [f.message for f in conversion.findings if f.rule == "XLA003"]
    return output_bytes(conversion).decode(), messages


def _body(code: str) -> str:
    return code.partition("\n\n\ndef main")[2]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize(
    ("files", "imports"),
    [
        ({"net.py": NET.format(extra="")}, "from net import *"),
        # A package whose __init__ star-imports its module (a star import followed in turn).
        ({"models/__init__.py": "from .net import *\n", "models/net.py": NET.format(extra="")}, "from models import *"),
        # ``__all__`` names what a star import binds.
        ({"net.py": NET.format(extra='\n__all__ = ["Net", "torch", "nn"]\n')}, "from net import *"),
    ],
    ids=["module", "package-star-import", "all"],
)
def test_torch_bound_by_a_star_import_is_torch(
    tmp_path: Path, target: str, whole: bool, files: dict[str, str], imports: str
) -> None:
    repo = _project(tmp_path, {**files, "train.py": TRAIN.format(imports=imports)})
    code, messages = _convert(repo, "train.py", target, whole)
    explicit = _project(
        tmp_path / "explicit",
        {
            "net.py": NET.format(extra=""),
            "train.py": TRAIN.format(imports="import torch\nimport torch.nn as nn\n\nfrom net import Net"),
        },
    )
    want, _ = _convert(explicit, "train.py", target, whole)
    assert "args.cuda = not args.no_cuda\n" in code
    assert _body(code) == _body(want)
    assert not [m for m in messages if "torch.cuda" in m], messages


@pytest.mark.parametrize("target", TARGETS)
def test_the_port_imports_torch_xla_itself_beside_a_star_import_that_binds_it(tmp_path: Path, target: str) -> None:
    """A star-imported module that the same run ports gets ``import torch_xla``, and so binds it
    here too; the port's own uses in this file still get their own import: what another module
    imports is not this file's to rely on (a later single-file run, an edit there)."""
    loss = (
        "import torch\nimport torch.nn as nn\n\n\nclass Loss(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.net = nn.Linear(2, 2).cuda()\n"
    )
    networks = "import torch\nfrom models.loss import *\n\n\ndef build(net):\n    net.cuda()\n    return net\n"
    repo = _project(tmp_path, {"models/__init__.py": networks, "models/loss.py": loss})
    result = invoke("convert", ".", "--target", target, cwd=repo)
    assert result.exit_code == 1, result.output  # the ported CUDA moves are errors the run fixed
    converted = (repo / "models/__init__.py").read_text()
    assert "import torch_xla" in (repo / "models/loss.py").read_text()
    head = converted.partition("from models.loss import *")[0]
    assert "\nimport torch_xla" in head, converted


@pytest.mark.parametrize("target", TARGETS)
def test_a_star_import_the_tool_cannot_read_is_an_error_at_the_cuda_check(tmp_path: Path, target: str) -> None:
    repo = _project(tmp_path, {"train.py": TRAIN.format(imports="from net import *")})
    code, messages = _convert(repo, "train.py", target, whole=False)
    assert "args.cuda = not args.no_cuda and torch.cuda.is_available()" in code
    assert messages == [
        "`torch.cuda.is_available()` names `torch`, which only `from net import *` may bind, and the tool could "
        "not read that module: the CUDA check is left as written, so on an XLA host it is False and the code that "
        "branches on it stays off the XLA device; import torch by name here, or run the tool on the project folder"
    ]


def test_what_a_star_import_binds(tmp_path: Path) -> None:
    """Public names, or ``__all__``; imports as what they import, the module's own names as its
    (None); a cycle of star imports binds what was found before it."""
    repo = _project(
        tmp_path,
        {
            "pkg/__init__.py": "from .a import *\nfrom pkg.b import *\n",
            "pkg/a.py": "import torch.nn as nn\nfrom torch import optim\nimport os.path\n_hidden = 1\n"
            "def helper():\n    pass\n",
            "pkg/b.py": "from pkg import *\nfrom .c import thing\n__all__ = ('thing', 'Model')\nclass Model:\n    pass\n",
            "pkg/c.py": "thing = 1\n",
        },
    )
    project = Project(repo, summarise_with("2.9", RuleSelection(), None))
    imports = project.imports_of(repo / "train.py")
    assert dict(imports.star_names("pkg") or ()) == {
        "nn": "torch.nn",
        "optim": "torch.optim",
        "os": "os",
        "helper": None,
        "thing": None,
        "Model": None,
    }
    assert imports.star_names("missing") is None
