"""A factory of another module builds an optimizer over a model and returns both
(``return tokenizer, model, optimizer``), reached directly, through a dict of factories of its
module (``FACTORIES[kind](cfg)``), or through a package that hands such a dict to a router
(``init_comp(COMPONENTS, kind, cfg)`` returning ``table[kind](cfg)``); the caller moves the model
afterwards, itself or through a helper of a third module that moves what it is handed: the
optimizer steps the stale CPU copies (XLA203 at the move or the helper's call), in a whole run and
when the script is converted alone. Built again after the move, moved to the CPU, or built by a
factory that moved the model first: nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings

MODELS = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def get_optimizer(model, lr):
    groups = [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr)


def get_components(cfg):
    model = Net()
    optimizer = get_optimizer(model, cfg["lr"])
    return "tokenizer", model, optimizer


def get_moved_components(cfg):
    model = Net().to(cfg["device"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    return "tokenizer", model, optimizer


FACTORIES = {"net": get_components}


def init_components(kind, cfg):
    return FACTORIES[kind](cfg)
"""

# The optimizer built through a chain of helpers (the parameter groups from one, transformers'
# AdamW, under a version check, from another), bound through a conditional.
CHAINED_MODELS = """import torch
import transformers
from torch import nn

if transformers.__version__.startswith("4"):
    from transformers import AdamW
else:
    from transformers.optimization import AdamW


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def param_groups(model, weight_decay):
    return [
        {"params": [p for n, p in model.named_parameters() if "bias" not in n], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},
    ]


def grouped_optimizer(groups, lr):
    optimizer = AdamW(groups, lr=lr)
    return optimizer


def get_optimizer(model, lr):
    return grouped_optimizer(param_groups(model, 0.01), lr)


def get_components(cfg, inference_only=False, **kwargs):
    model = Net()
    optimizer = (
        get_optimizer(model, cfg["lr"])
        if not inference_only
        else None
    )
    return "tokenizer", model, optimizer


def get_moved_components(cfg):
    model = Net().to(cfg["device"])
    return "tokenizer", model, get_optimizer(model, cfg["lr"])


FACTORIES = {"net": get_components}


def init_components(kind, cfg):
    return FACTORIES[kind](cfg)
"""

ROUTER = """import importlib


def init_net_components(cfg, **kwargs):
    if importlib.util.find_spec("transformers") is None:
        raise RuntimeError("Please install transformers")
    from .models import get_components

    return get_components(cfg, **kwargs)


COMPONENTS = {"net": init_net_components}


def init_comp(table, kind, cfg, **kwargs):
    if kind in table:
        return table[kind](cfg, **kwargs)
    raise RuntimeError(kind)


def routed_components(kind, cfg, **kwargs):
    return init_comp(COMPONENTS, kind, cfg, **kwargs)
"""

UTILS = """import torch


def setup_for_distributed_mode(model, optimizer, device):
    model.to(device)
    return model, optimizer
"""

TRAIN = """import torch

from pkg import routed_components
from pkg.models import get_components, get_moved_components, init_components
from pkg.utils import setup_for_distributed_mode


def main(cfg):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    {build}
    {move}
    for step in range(5):
        optimizer.zero_grad()
        model(torch.randn(8, 4).to(device)).pow(2).mean().backward()
        optimizer.step()


if __name__ == "__main__":
    main({{"lr": 0.1, "device": "cuda"}})
"""

HELPER = "model, optimizer = setup_for_distributed_mode(model, optimizer, device)"


def _findings(
    root: Path, build: str, move: str, target: str, alone: bool, models: str = MODELS
) -> list[tuple[int, str]]:
    (root / "pyproject.toml").write_text("[project]\nname = 'components'\n")
    files = {
        "pkg/__init__.py": ROUTER,
        "pkg/models.py": models,
        "pkg/utils.py": UTILS,
        "train.py": TRAIN.format(build=build, move=move),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    found = unfixed_findings(root, ["train.py"] if alone else list(files), target)
    assert not [f for name in ("models.py", "utils.py", "__init__.py") for f in found.get(name, []) if f[0] == "XLA203"]
    return [(line, message) for rule, line, message in found["train.py"] if rule == "XLA203"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize(
    ("build", "move", "expected"),
    [
        (
            "tok, model, optimizer = get_components(cfg)",
            "model.to(device)",
            "`model.to(device)` moves `model` to the XLA device after `get_components(cfg)` (pkg/models.py) built "
            "`optimizer` over its parameters and returned both",
        ),
        (
            'tok, model, optimizer = init_components("net", cfg)',
            HELPER,
            "`setup_for_distributed_mode(model, optimizer, device)` moves `model` to the XLA device through "
            '`setup_for_distributed_mode` (pkg/utils.py) after `init_components("net", cfg)` (pkg/models.py) built '
            "`optimizer` over its parameters and returned both",
        ),
        (
            'tok, model, optimizer = routed_components("net", cfg)',
            HELPER,
            "`setup_for_distributed_mode(model, optimizer, device)` moves `model` to the XLA device through "
            '`setup_for_distributed_mode` (pkg/utils.py) after `routed_components("net", cfg)` (pkg/__init__.py) '
            "built `optimizer` over its parameters and returned both",
        ),
    ],
)
def test_an_optimizer_returned_with_its_model_then_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, alone: bool, build: str, move: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _findings(tmp_path, build, move, target, alone)
    assert [line for line, _ in found] == [11], found
    assert found[0][1].startswith(expected), found


@pytest.mark.parametrize(
    ("build", "move"),
    [
        (
            'tok, model, optimizer = init_components("net", cfg)',
            "model.to(device); optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
        ),
        ('tok, model, optimizer = routed_components("net", cfg)', 'model.to("cpu")'),
        ("tok, model, optimizer = get_moved_components(cfg)", HELPER),
    ],
)
def test_built_again_on_the_cpu_or_after_the_factorys_own_move_strands_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: str, move: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _findings(tmp_path, build, move, "2.9", False) == []


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (
            'tok, model, optimizer = init_components("net", cfg)',
            '`init_components("net", cfg)` (pkg/models.py)',
        ),
        (
            'tok, model, optimizer = routed_components("net", cfg)',
            '`routed_components("net", cfg)` (pkg/__init__.py)',
        ),
    ],
)
def test_an_optimizer_built_through_a_chain_of_helpers_returned_then_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, alone: bool, build: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _findings(tmp_path, build, HELPER, target, alone, CHAINED_MODELS)
    assert [line for line, _ in found] == [11], found
    assert found[0][1].startswith(
        "`setup_for_distributed_mode(model, optimizer, device)` moves `model` to the XLA device through "
        f"`setup_for_distributed_mode` (pkg/utils.py) after {expected} built `optimizer` over its parameters"
    ), found


@pytest.mark.parametrize(
    "build",
    [
        "tok, model, optimizer = get_moved_components(cfg)",
        'tok, model, _ = init_components("net", cfg)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)',
    ],
)
def test_a_chain_over_a_model_moved_first_or_a_discarded_optimizer_strands_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _findings(tmp_path, build, HELPER, "2.9", False, CHAINED_MODELS) == []
