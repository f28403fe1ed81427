"""Parameter lists filled in a loop over a model's parameters (faster-rcnn's
``for key, value in dict(model.named_parameters()).items(): params += [{'params': [value], ...}]``):
the loop says the name holds that model's parameters, so the model is a module whatever built it
(a project constructor the tool does not know as a module class: ``model = vgg16(classes)``)."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import dotted, walk
from codemods.engine.positions import code_of
from codemods.training.parameter_sources import PARAMETER_METHODS


def filled_from(root: cst.CSTNode | None, name: str, models: set[str]) -> tuple[str, str] | None:
    """The model of ``models`` whose parameters a loop in ``root`` walks (its iterable calls
    ``model.parameters()`` or ``model.named_parameters()``) while its body adds to ``name``
    (``name += ...``, ``name.append(...)``, ``name.extend(...)``): (the model, the call as written)."""
    if root is None or not models:
        return None
    for node in walk(root):
        if type(node) is not cst.For or not _adds_to(node.body, name):
            continue
        for sub in walk(node.iter):
            if (
                type(sub) is cst.Call
                and type(func := sub.func) is cst.Attribute
                and func.attr.value in PARAMETER_METHODS
                and (model := dotted(func.value)) in models
                and model is not None
            ):
                return model, code_of(sub)
    return None


def _adds_to(body: cst.CSTNode, name: str) -> bool:
    for node in walk(body):
        if type(node) is cst.AugAssign and type(node.operator) is cst.AddAssign and dotted(node.target) == name:
            return True
        if (
            type(node) is cst.Call
            and type(func := node.func) is cst.Attribute
            and func.attr.value in ("append", "extend")
            and dotted(func.value) == name
        ):
            return True
    return False
