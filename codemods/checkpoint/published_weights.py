"""torchvision's published weights: a state dict fetched from ``https://download.pytorch.org/models/`` (or
the older ``https://s3.amazonaws.com/pytorch/models/``, which ``model_zoo.load_url(model_urls['resnet18'])``
of torchvision 0.2 and the scripts that copied its ``model_urls`` read) holds CPU tensors: torchvision loads
them with ``load_state_dict_from_url(url)`` and no map location (``WeightsEnum.get_state_dict``; before it
``model_zoo.load_url``), and ``resnet18(pretrained=True)`` works on hosts without CUDA.  Such a load
needs no map location on XLA either."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import dotted, string_value

PUBLISHED = ("https://download.pytorch.org/models/", "https://s3.amazonaws.com/pytorch/models/")


def published_weights(url: cst.BaseExpression | None, module: cst.Module | None) -> bool:
    """``url`` is one of torchvision's published weights: a string literal, or a name, or a
    subscript of a name, that the module binds once at its top level to such a literal or to a
    dict literal whose values all are (``model_urls = {'resnet18': 'https://...'}``)."""
    if url is None:
        return False
    if (text := string_value(url)) is not None:
        return text.startswith(PUBLISHED)
    held = url.value if type(url) is cst.Subscript else url
    name = dotted(held)
    if name is None or module is None:
        return False
    values = [
        statement.value
        for line in module.body
        if type(line) is cst.SimpleStatementLine
        for statement in line.body
        if type(statement) is cst.Assign and any(dotted(target.target) == name for target in statement.targets)
    ]
    if len(values) != 1:
        return False
    value = values[0]
    if type(url) is cst.Subscript:
        if type(value) is not cst.Dict or not value.elements:
            return False
        return all(
            type(element) is cst.DictElement
            and (text := string_value(element.value)) is not None
            and text.startswith(PUBLISHED)
            for element in value.elements
        )
    return (text := string_value(value)) is not None and text.startswith(PUBLISHED)
