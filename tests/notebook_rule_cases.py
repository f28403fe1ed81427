"""Rule cases of the notebook rules (XLN1): notebooks as Jupyter writes them, made by
codemods.notebooks.rules.notebook_text from their code cells (and metadata)."""

from __future__ import annotations

from codemods.notebooks.rules import notebook_text
from tests.rule_cases import Case

TRAINING = (
    "import torch\n\nmodel = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for step in range(3):\n    model(torch.randn(8, 4)).sum().backward()\n    opt.step()\n"
)


def N(rule: str, kind: str, cells: list[str], metadata: dict[str, object] | None = None, *, note: str = "") -> Case:
    """A report-only case: the notebook comes back unchanged."""
    return Case(rule, kind, notebook_text(cells, metadata), None, note=note, filename="notebook.ipynb")


NOTEBOOK_CASES = [
    N("XLN101", "positive", ["!pip install -q torch==2.1.0 torchvision", "import torch"]),
    N("XLN101", "alias", ["%pip install --upgrade torch", "import torch"], note="pip-magic"),
    N("XLN101", "alias", ["import sys\n!{sys.executable} -m pip install torchaudio", "import torch"], note="python-m-pip"),
    N("XLN101", "alias", ["%%bash\npip3 install torch", "import torch"], note="bash-cell"),
    N("XLN101", "negative", ["!pip install torch~=2.9.0 torch_xla[tpu]~=2.9.0", "import torch"], note="with-torch-xla"),
    N("XLN101", "negative", ["!pip install torchmetrics\nlabel = '!pip install torch'", "import torch"], note="other"),
    N("XLN102", "positive", ["import torch"], {"accelerator": "GPU", "colab": {"gpuType": "T4"}}),
    N("XLN102", "alias", ["import torch"], {"kaggle": {"accelerator": "gpu", "isGpuEnabled": True}}, note="kaggle"),
    N("XLN102", "alias", ["import torch"], {"colab": {"gpuType": "L4"}}, note="colab-gpu-type"),
    N("XLN102", "negative", ["import torch"], {"accelerator": "TPU", "colab": {"gpuType": "V28"}}, note="tpu"),
    N("XLN103", "positive", ["%%writefile train.py\n" + TRAINING + "print 'done'\n", "!python train.py"]),
    N("XLN103", "alias", ["%%file -a src/train.py\n" + TRAINING], note="appended"),
    N("XLN103", "negative", ["%%writefile notes.md\n" + TRAINING, "%%writefile util.py\nimport torch\nx = torch.ones(2)"],
      note="nothing-to-port"),
]
