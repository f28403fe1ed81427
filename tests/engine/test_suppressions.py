"""The one parser of suppression comments (codemods/engine/suppressions.py), for Python
files (the comment's own line) and Dockerfiles (the line after a comment line)."""

from __future__ import annotations

from codemods.containers.rules import SAGEMAKER_TRAINING, SUBMIT_DIRECTORY
from codemods.device.rules.xla101_cuda_device import CUDA_DEVICE
from codemods.device.rules.xla102_dot_cuda import DOT_CUDA
from codemods.engine.suppressions import suppressions
from codemods.training.rules.xla201_optimizer_step import OPTIMIZER_STEP

PYTHON = (
    "import torch\n"
    "device = torch.device('cuda')  # xla-codemod: ignore[XLA101]\n"
    "model.cuda()  # xla-codemod: ignore\n"
    "optimizer.step()  # xla-codemod: ignore[ XLA1 , SM3 ]\n"
    "x = 1  # xla-codemod: ignore[]\n"
)


def test_a_python_comment_silences_its_own_line() -> None:
    comments = suppressions(PYTHON)
    assert comments.silences(CUDA_DEVICE, 2)
    assert not comments.silences(DOT_CUDA, 2)  # another code
    assert not comments.silences(CUDA_DEVICE, 1) and not comments.silences(CUDA_DEVICE, 13)


def test_a_bare_comment_silences_every_rule_and_a_prefix_its_family() -> None:
    comments = suppressions(PYTHON)
    assert comments.silences(OPTIMIZER_STEP, 3) and comments.silences(SUBMIT_DIRECTORY, 3)
    assert comments.silences(DOT_CUDA, 4) and comments.silences(SAGEMAKER_TRAINING, 4)  # spaces around codes
    assert not comments.silences(OPTIMIZER_STEP, 4)  # XLA201 is not in XLA1
    assert comments.by_line[5] == ("ALL",)  # empty brackets: the bare form


DOCKERFILE = (
    "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n"
    "# xla-codemod: ignore[SM303]\n"
    "RUN pip install torch\n"
    "ENV A=1  # xla-codemod: ignore[SM302]\n"
    "ENV B=2\n"
)


def test_a_dockerfile_comment_line_silences_the_instruction_after_it() -> None:
    comments = suppressions(DOCKERFILE, comment_lines_only=True)
    assert comments.silences(SAGEMAKER_TRAINING, 3)
    assert not comments.silences(SAGEMAKER_TRAINING, 2)
    # Not a comment line (Dockerfile comments take whole lines): no suppression anywhere.
    assert not comments.silences(SUBMIT_DIRECTORY, 4) and not comments.silences(SUBMIT_DIRECTORY, 5)
    assert comments.by_line == {3: ("SM303",)}
