"""Tests of a ``--local_rank`` flag for "was this run launched?": ``args.local_rank is not None``
(a flag without default: a launcher passes it), ``args.local_rank != -1`` (default -1).

The script's own test of its parsed flag is a launch check (ranks.py), which the port makes
True where torch_xla's launcher starts every process.  A test of the flag as another run saved
it (``ckpt["args"].local_rank is not None``, a resumed checkpoint's arguments) stays: it still
reads None (or -1) for a run that torch_xla.launch started, whose command line carries no
``--local_rank``, while this run's own test, ported, says launched: the two no longer agree
(s3prl's resume assert ``dist.is_initialized() == (ckpt["Args"].local_rank is not None)``)."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import is_none


def local_rank_of_name(node: cst.BaseExpression) -> bool:
    """``args.local_rank`` (a name's, not self's)."""
    return (
        type(node) is cst.Attribute
        and node.attr.value == "local_rank"
        and type(node.value) is cst.Name
        and node.value.value != "self"
    )


def _negative(node: cst.BaseExpression) -> bool:
    return (
        type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer
    )


def saved_flag_test(node: cst.Comparison) -> bool:
    """A launch test of a ``.local_rank`` that is not a name's (``ckpt["Args"].local_rank is not
    None``, ``state.args.local_rank == -1``): a flag another run saved."""
    if len(node.comparisons) != 1:
        return False
    left, target = node.left, node.comparisons[0]
    if type(left) is not cst.Attribute or left.attr.value != "local_rank" or type(left.value) is cst.Name:
        return False
    if type(target.operator) in (cst.Is, cst.IsNot):
        return is_none(target.comparator)
    return type(target.operator) in (cst.Equal, cst.NotEqual) and _negative(target.comparator)
