"""XLA403's cases for torchvision's published weights (checkpoint/published_weights.py): a hub load of a URL
under ``https://download.pytorch.org/models/`` or ``https://s3.amazonaws.com/pytorch/models/`` (written
out, or through a module-level ``model_urls`` dict of them, faster-rcnn's ``model_zoo.load_url(
model_urls['resnet101'])``) fetches CPU tensors and gets no map location; a dict that holds another URL, or
a name bound more than once, is still a checkpoint that may hold CUDA storages."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

PUBLISHED = """
import torch.utils.model_zoo as model_zoo
from torch.hub import load_state_dict_from_url as fetch

model_urls = {
    "resnet18": "https://s3.amazonaws.com/pytorch/models/resnet18-5c106cde.pth",
    "resnet50": "https://download.pytorch.org/models/resnet50-0676ba61.pth",
}
WEIGHTS = "https://download.pytorch.org/models/vgg16-397923af.pth"


def resnet18(model):
    model.load_state_dict(model_zoo.load_url(model_urls["resnet18"]))
    model.load_state_dict(fetch(WEIGHTS, progress=True))
    model.load_state_dict(fetch("https://download.pytorch.org/models/resnet50-0676ba61.pth"))
"""

OTHERS = """
import torch.utils.model_zoo as model_zoo

model_urls = {
    "resnet18": "https://download.pytorch.org/models/resnet18-f37072fd.pth",
    "detector": "https://example.com/weights/detector.pth",
}


def detector(model):
    model.load_state_dict(model_zoo.load_url(model_urls["detector"]))
"""


def published_weight_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(PUBLISHED, target=target, note=f"torchvision-weights-{target}") for target in ("2.9", "sagemaker")
    )


def published_weight_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            OTHERS,
            OTHERS.replace('["detector"]))', '["detector"], map_location="cpu"))'),
            target=target,
            alias=True,
            note=f"a-dict-of-other-weights-{target}",
            findings=(Expected(10, 70, 'model_zoo.load_url(...) -> map_location="cpu"'),),
        )
        for target in ("2.9", "sagemaker")
    )
