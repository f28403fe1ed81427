"""XLN1: Jupyter notebooks (``.ipynb``): what a notebook holds besides its Python code.

The code cells of a notebook are ported as one program by the other rules (findings
name the cell); these rules are about the rest: shell lines that install packages, the
runtime the notebook asks Colab or Kaggle for, and ``%%writefile`` scripts that cannot be ported.
"""

from __future__ import annotations

import json

from codemods.engine.rule import Example, Rule

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


def _example(cells: list[str], metadata: dict[str, object] | None = None) -> tuple[Example, ...]:
    return (Example(notebook_text(cells, metadata), None, filename=_NOTEBOOK),)


PIP_INSTALL_TORCH = Rule(
    "XLN101", "pip-install-torch", "error",
    "A notebook shell line or `%pip` magic installs torch (or torchvision, torchaudio) without torch_xla",
    False,
    why="torch_xla is built against one torch release; installing another torch over it (a TPU runtime has both "
    "installed, matched) makes `import torch_xla` fail with undefined symbols. Install both in one line at "
    "matching versions (`pip install torch==2.9.0 'torch_xla[tpu]==2.9.0'`), or drop the line where the "
    "runtime provides them.",
    examples=_example(["!pip install -q torch torchvision", "import torch\nprint(torch.__version__)"]),
)

GPU_RUNTIME = Rule(
    "XLN102", "gpu-runtime", "error",
    "The notebook's metadata selects a GPU runtime on Colab (`accelerator`, `gpuType`) or Kaggle "
    "(`kaggle.accelerator`)",
    False,
    why="Colab and Kaggle open the notebook on the runtime its metadata names: a GPU runtime has no TPU and no "
    "torch_xla, so the ported notebook fails at `import torch_xla`. Select a TPU runtime (Colab: Runtime > "
    "Change runtime type; Kaggle: Settings > Accelerator) and save the notebook.",
    examples=_example(["import torch"], {"accelerator": "GPU", "colab": {"gpuType": "T4"}}),
)

WRITTEN_SCRIPT = Rule(
    "XLN103", "unported-written-script", "error",
    "A `%%writefile` cell writes a Python script that cannot be ported (it does not parse, or the cell appends "
    "to a file); other such scripts are ported as files of their own",
    False,
    why="The script the cell writes runs later (`!python train.py`, a launcher) on whatever device it names. A "
    "whole script is ported where it stands, in the cell, as `xla-codemod convert train.py` would port the file; "
    "one that does not parse, or that several `%%writefile -a` cells put together, is left as it is and reported.",
    examples=_example([
        "%%writefile train.py\nimport torch\n\ndevice = torch.device('cuda')\nprint 'training on', device\n",
        "!python train.py",
    ]),
)

RULES = (PIP_INSTALL_TORCH, GPU_RUNTIME, WRITTEN_SCRIPT)
