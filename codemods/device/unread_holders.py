"""A CUDA mode word a flag or a check sets for code the tool cannot see (for XLA104, beside
device_walk.py): ``cmd_args.mode = 'gpu' if args.cuda else 'cpu'``, where only a star import of a
module the tool cannot read may bind ``cmd_args`` (SEAL's Python/Main.py: ``from main import *`` of
pytorch_DGCNN, cloned beside the project, whose ``Classifier`` and ``loop_dataset`` call ``.cuda()``
when ``cmd_args.mode == 'gpu'``).  Switched on (its ``torch.cuda.is_available()`` dropped), the flag
would make that code take an XLA host for a CUDA one: its ``.cuda()`` raises there ("Found no
NVIDIA driver"), where the original ran on the CPU.  The flag (or a check that makes the choice
itself: ``'gpu' if torch.cuda.is_available() else 'cpu'``) counts as guarding code that fails
without CUDA: it is left as written, with an error that says why.  Only a word that is no device
(``'gpu'``): a device string (``'cuda'``, ``'cuda:0'``) goes to the holder as ``'xla'``, as any
device choice, and the code that receives it moves to the XLA device with it (``.to(cfg.device)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import string_value

if TYPE_CHECKING:
    from codemods.facts import Facts

# Words for CUDA that are no device: ``torch.device`` and ``.to`` refuse them, so the code that reads
# them maps them to its own ``.cuda()`` (a device string, ``"cuda:0"``, is XLA101's, ported to "xla").
_CUDA_WORDS = frozenset({"gpu"})


def holder_candidate(node: cst.Assign) -> bool:
    """``node`` sets an attribute to a CUDA mode word: ``holder.mode = 'gpu' if flag else 'cpu'``."""
    value = node.value
    return (
        len(node.targets) == 1
        and type(node.targets[0].target) is cst.Attribute
        and type(value) is cst.IfExp
        and (_cuda(value.body) or _cuda(value.orelse))
    )


def unread_holder(node: cst.Assign, facts: Facts) -> tuple[cst.ImportFrom, ...]:
    """The star imports that alone may bind the name whose attribute ``node`` (a ``holder_candidate``)
    sets: empty where the file binds that name, or no such import may."""
    root: cst.BaseExpression = node.targets[0].target
    while type(root) is cst.Attribute:
        root = root.value
    if type(root) is not cst.Name:
        return ()
    imports = facts.imports
    return imports.unread_star_sources(root.value, {*imports.table.bindings, *imports.table.rebound})


def _cuda(value: cst.BaseExpression) -> bool:
    text = string_value(value)
    return isinstance(text, str) and text.lower() in _CUDA_WORDS
