"""A module that imports smdistributed model parallel only under an ``if`` or a ``try`` and never
calls ``smp.init()`` (the tenth held-out list's ChatGLM-6B: a copy of transformers' Trainer,
``if is_sagemaker_mp_enabled(): import smdistributed.modelparallel.torch as smp``) has model
parallel as an option, not as what it runs on: it is converted as any other module (it was left
as it was, and said nothing). A model-parallel script (``smp.init()``), and a module that imports
it unconditionally (a helper of such a script), still get only the launcher checks: they run on
CUDA GPUs under SageMaker model parallel."""

from __future__ import annotations

import pytest

from codemods import convert_source

TARGETS = ["2.9", "sagemaker"]

OPTIONAL = """\
import torch
from transformers.utils import is_sagemaker_mp_enabled

if is_sagemaker_mp_enabled():
    import smdistributed.modelparallel.torch as smp


def prepare(batch):
    if is_sagemaker_mp_enabled():
        return smp.dp_rank(), batch
    return 0, batch.cuda()
"""

TRY_IMPORT = """\
import torch as th

try:
    from smdistributed.modelparallel import torch as smp
except ImportError:
    smp = None


def prepare(batch):
    return batch.cuda()
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", [OPTIONAL, TRY_IMPORT], ids=["under-if", "under-try-alias"])
def test_an_optional_model_parallel_import_leaves_the_module_converted(target: str, source: str) -> None:
    conversion = convert_source(source, target=target, filename="trainer.py")
    assert [f.rule for f in conversion.findings if f.rule == "XLA102"] == ["XLA102"], conversion.findings
    output = conversion.output
    assert isinstance(output, str)
    assert "batch.cuda()" not in output
    assert "smdistributed" in output  # its model-parallel path stays as it is
    again = convert_source(output, target=target, filename="trainer.py")
    assert again.output == conversion.output


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "source",
    [
        OPTIONAL.replace("if is_sagemaker_mp_enabled():\n    import", "import").replace("\n    import", "\nimport"),
        OPTIONAL.replace(
            "import smdistributed.modelparallel.torch as smp\n",
            "import smdistributed.modelparallel.torch as smp\n    smp.init()\n",
        ),
    ],
    ids=["unconditional-import", "calls-smp-init"],
)
def test_a_model_parallel_module_stays_on_cuda(target: str, source: str) -> None:
    conversion = convert_source(source, target=target, filename="trainer.py")
    assert not any(f.rule.startswith("XLA") for f in conversion.findings), conversion.findings
    assert "batch.cuda()" in conversion.output


@pytest.mark.parametrize("target", TARGETS)
def test_a_trainer_copy_with_its_own_xla_path_is_left_as_it_is_and_says_so(target: str) -> None:
    """Model parallel and XLA both options of the module (``if is_torch_tpu_available(): import
    torch_xla...``): its XLA path is its own, so nothing is rewritten, nor reported per CUDA path;
    SM108's info says so at the model-parallel import."""
    source = OPTIONAL.replace(
        "\nif is_sagemaker_mp_enabled():",
        "\nif is_torch_tpu_available():\n    import torch_xla.core.xla_model as xm\n\nif is_sagemaker_mp_enabled():",
    ).replace("import is_sagemaker_mp_enabled", "import is_sagemaker_mp_enabled, is_torch_tpu_available")
    conversion = convert_source(source, target=target, filename="trainer.py")
    assert conversion.output == source
    assert [(f.rule, f.line) for f in conversion.findings] == [("SM108", 8)], conversion.findings
