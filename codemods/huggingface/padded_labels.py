"""Labels copied from a tokenizer's input_ids: where padding to max_length would put pad
tokens into the loss.

``labels = input_ids.clone()`` (or ``copy.deepcopy(input_ids)``, ``enc["labels"] =
enc["input_ids"]``, ``model(..., labels=enc.input_ids)``) keeps ``pad_token_id`` at every pad
position: padding each text to its longest (``padding=True``/``"longest"``, often no padding at
all on a single text) left few or none, padding to max_length leaves ``max_length - n`` of them,
each a target of the loss unless masked to -100.  The port of XLA804 would change what the model
learns; it stays where the function that tokenizes builds labels from input_ids without masking
the pad positions (a statement naming ``pad_token_id`` or the ``attention_mask`` together with
-100 or an ignore index)."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import string_value, walk

# Names whose statement with -100 masks the pad positions: the pad id, or the attention mask
# (0 exactly at the pads a tokenizer added).
_PAD_MARKERS = frozenset({"pad_token_id", "attention_mask"})


def labels_from_input_ids(scope: cst.CSTNode) -> bool:
    """Whether ``scope`` (the function that tokenizes, or the module) builds labels from
    input_ids and leaves the pad positions unmasked."""
    copied = False
    for node in walk(scope):
        if type(node) is cst.Assign:
            if any(_mentions_input_ids(v) for t in node.targets for v in _label_values(t.target, node.value)):
                copied = True
        elif type(node) is cst.Arg:
            if node.keyword is not None and node.keyword.value == "labels" and _mentions_input_ids(node.value):
                copied = True
        elif type(node) is cst.DictElement:
            if string_value(node.key) == "labels" and _mentions_input_ids(node.value):
                copied = True
    return copied and not _masks_pads(scope)


def _label_values(target: cst.BaseExpression, value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a label-named target of the assignment is bound to: the matching element of a
    tuple value (``input_ids, labels = enc["input_ids"], y``: ``y``), else the whole value."""
    if isinstance(target, (cst.Tuple, cst.List)):
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
            pairs = zip(target.elements, value.elements)
            return [v for t, e in pairs for v in _label_values(t.value, e.value)]
        return [value] if _names_labels(target) else []
    return [value] if _names_labels(target) else []


def _names_labels(target: cst.BaseExpression) -> bool:
    """``labels``, ``x.labels``, ``enc["labels"]`` (and ``label_ids``, ``lm_labels``)."""
    if type(target) is cst.Name:
        return "label" in target.value.lower()
    if type(target) is cst.Attribute:
        return "label" in target.attr.value.lower()
    if type(target) is cst.Subscript and len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index:
        key = string_value(target.slice[0].slice.value)
        return key is not None and "label" in key.lower()
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_names_labels(e.value) for e in target.elements)
    return False


def _mentions_input_ids(value: cst.CSTNode) -> bool:
    """``input_ids``, ``x.input_ids``, ``x["input_ids"]`` anywhere in ``value``."""
    for node in walk(value):
        if type(node) is cst.Name and node.value == "input_ids":
            return True
        if type(node) is cst.SimpleString and string_value(node) == "input_ids":
            return True
    return False


def _masks_pads(scope: cst.CSTNode) -> bool:
    """A statement naming ``pad_token_id`` or the ``attention_mask`` with -100 (or an
    ``IGNORE``/``ignore`` name): the pad positions of the labels are masked out of the loss
    (``labels[labels == tok.pad_token_id] = -100``, ``ids.masked_fill(enc.attention_mask == 0, -100)``)."""
    for node in walk(scope):
        if not isinstance(node, cst.BaseSmallStatement):
            continue
        pads = ignored = False
        for inner in walk(node):
            if type(inner) is cst.Name and inner.value in _PAD_MARKERS:
                pads = True
            elif type(inner) is cst.SimpleString and string_value(inner) == "attention_mask":
                pads = True
            elif type(inner) is cst.Name and "ignore" in inner.value.lower():
                ignored = True
            elif type(inner) is cst.UnaryOperation and type(inner.operator) is cst.Minus:
                ignored = ignored or (type(inner.expression) is cst.Integer and inner.expression.value == "100")
        if pads and ignored:
            return True
    return False
