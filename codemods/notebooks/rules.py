"""XLN1: Jupyter notebooks (``.ipynb``): what a notebook holds besides its Python code.

The code cells of a notebook are ported as one program by the other rules (findings
name the cell); these rules are about the rest: shell lines that install packages, the
runtime the notebook asks Colab or Kaggle for, and ``%%writefile`` scripts that cannot be ported.
"""

from __future__ import annotations

import json

from codemods.engine.rule import Example, Expected, Invalid, Rule, invalid, valid

_NOTEBOOK = "notebook.ipynb"


def notebook_text(cells: list[str], metadata: dict[str, object] | None = None) -> str:
    """A notebook of code cells, written as Jupyter writes it (indent 1, sorted keys,
    non-ASCII as is, final newline): for examples and tests."""
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{number}",
                "metadata": {},
                "outputs": [],
                "source": source.splitlines(True),
            }
            for number, source in enumerate(cells, 1)
        ],
        "metadata": metadata or {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _example(
    cells: list[str], metadata: dict[str, object] | None = None, *, findings: tuple[Expected, ...] = ()
) -> tuple[Example, ...]:
    return (Invalid(notebook_text(cells, metadata), None, filename=_NOTEBOOK, findings=findings),)


# A training script, for the cases of written scripts.
_TRAINING = (
    "import torch\n\nmodel = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for step in range(3):\n    model(torch.randn(8, 4)).sum().backward()\n    opt.step()\n"
)


PIP_INSTALL_TORCH = Rule(
    code="XLN101",
    name="pip-install-torch",
    severity="error",
    summary="A notebook shell line or `%pip` magic installs torch (or torchvision, torchaudio) without torch_xla",
    fixable=False,
    why="torch_xla is built against one torch release; installing another torch over it (a TPU runtime has both "
    "installed, matched) makes `import torch_xla` fail with undefined symbols. Install both in one line at "
    "matching versions (`pip install torch==2.9.0 'torch_xla[tpu]==2.9.0'`), or drop the line where the "
    "runtime provides them.",
    examples=lambda: _example(
        ["!pip install -q torch torchvision", "import torch\nprint(torch.__version__)"],
        findings=(Expected(1, 2, "`!pip install -q torch torchvision` installs torch, torchvision without torch_xla"),),
    ),
    valid=lambda: (
        valid(
            notebook_text(["!pip install torch~=2.9.0 torch_xla[tpu]~=2.9.0", "import torch"]),
            filename="notebook.ipynb",
            note="with-torch-xla",
        ),
        valid(
            notebook_text(["!pip install torchmetrics\nlabel = '!pip install torch'", "import torch"]),
            filename="notebook.ipynb",
            note="other",
        ),
    ),
    invalid=lambda: (
        invalid(
            notebook_text(["!pip install -q torch==2.1.0 torchvision", "import torch"]),
            filename="notebook.ipynb",
            findings=(
                Expected(
                    1, 2, "`!pip install -q torch==2.1.0 torchvision` installs torch, torchvision without torch_xla"
                ),
            ),
        ),
        invalid(
            notebook_text(["%pip install --upgrade torch", "import torch"]),
            filename="notebook.ipynb",
            note="pip-magic",
            alias=True,
            findings=(Expected(1, 2, "`%pip install --upgrade torch` installs torch without torch_xla"),),
        ),
        invalid(
            notebook_text(["import sys\n!{sys.executable} -m pip install torchaudio", "import torch"]),
            filename="notebook.ipynb",
            note="python-m-pip",
            alias=True,
            findings=(
                Expected(2, 22, "`!{sys.executable} -m pip install torchaudio` installs torchaudio without torch_xla"),
            ),
        ),
        invalid(
            notebook_text(["%%bash\npip3 install torch", "import torch"]),
            filename="notebook.ipynb",
            note="bash-cell",
            alias=True,
            findings=(Expected(2, 1, "`pip3 install torch` installs torch without torch_xla"),),
        ),
    ),
)

GPU_RUNTIME = Rule(
    code="XLN102",
    name="gpu-runtime",
    severity="error",
    summary="The notebook's metadata selects a GPU runtime on Colab (`accelerator`, `gpuType`) or Kaggle "
    "(`kaggle.accelerator`)",
    fixable=False,
    why="Colab and Kaggle open the notebook on the runtime its metadata names: a GPU runtime has no TPU and no "
    "torch_xla, so the ported notebook fails at `import torch_xla`. Select a TPU runtime (Colab: Runtime > "
    "Change runtime type; Kaggle: Settings > Accelerator) and save the notebook.",
    examples=lambda: _example(
        ["import torch"],
        {"accelerator": "GPU", "colab": {"gpuType": "T4"}},
        findings=(Expected(15, 3, "the notebook's metadata selects a GPU runtime (Colab runtime accelerator 'GPU')"),),
    ),
    valid=lambda: (
        valid(
            notebook_text(["import torch"], {"accelerator": "TPU", "colab": {"gpuType": "V28"}}),
            filename="notebook.ipynb",
            note="tpu",
        ),
    ),
    invalid=lambda: (
        invalid(
            notebook_text(["import torch"], {"kaggle": {"accelerator": "gpu", "isGpuEnabled": True}}),
            filename="notebook.ipynb",
            note="kaggle",
            alias=True,
            findings=(Expected(16, 4, "the notebook's metadata selects a GPU runtime (Kaggle accelerator 'gpu')"),),
        ),
        invalid(
            notebook_text(["import torch"], {"colab": {"gpuType": "L4"}}),
            filename="notebook.ipynb",
            note="colab-gpu-type",
            alias=True,
            findings=(Expected(16, 4, "the notebook's metadata selects a GPU runtime (Colab runtime gpuType 'L4')"),),
        ),
    ),
)

WRITTEN_SCRIPT = Rule(
    code="XLN103",
    name="unported-written-script",
    severity="error",
    summary="A `%%writefile` cell writes a Python script that cannot be ported (it does not parse, or the cell appends "
    "to a file); other such scripts are ported as files of their own",
    fixable=False,
    why="The script the cell writes runs later (`!python train.py`, a launcher) on whatever device it names. A "
    "whole script is ported where it stands, in the cell, as `xla-codemod convert train.py` would port the file; "
    "one that does not parse, or that several `%%writefile -a` cells put together, is left as it is and reported.",
    examples=lambda: _example(
        [
            "%%writefile train.py\nimport torch\n\ndevice = torch.device('cuda')\nprint 'training on', device\n",
            "!python train.py",
        ],
        findings=(Expected(1, 1, "this cell writes train.py, which cannot be ported (line 5"),),
    ),
    valid=lambda: (
        valid(
            notebook_text(
                ["%%writefile notes.md\n" + _TRAINING, "%%writefile util.py\nimport torch\nx = torch.ones(2)"]
            ),
            filename="notebook.ipynb",
            note="nothing-to-port",
        ),
    ),
    invalid=lambda: (
        invalid(
            notebook_text(["%%writefile train.py\n" + _TRAINING + "print 'done'\n", "!python train.py"]),
            filename="notebook.ipynb",
            findings=(Expected(1, 1, "this cell writes train.py, which cannot be ported (line 9"),),
        ),
        invalid(
            notebook_text(["%%file -a src/train.py\n" + _TRAINING]),
            filename="notebook.ipynb",
            note="appended",
            alias=True,
            findings=(Expected(1, 1, "this cell appends to src/train.py, whose other parts are elsewhere"),),
        ),
    ),
)

RULES = (PIP_INSTALL_TORCH, GPU_RUNTIME, WRITTEN_SCRIPT)
