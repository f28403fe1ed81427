"""A CUDA choice a flag makes for code the tool cannot see (for XLA104, beside device_walk.py):
``cmd_args.mode = 'gpu' if args.cuda else 'cpu'``, where only a star import of a module the tool
cannot read may bind ``cmd_args`` (SEAL's Python/Main.py: ``from main import *`` of pytorch_DGCNN,
cloned beside the project, whose ``Classifier`` and ``loop_dataset`` call ``.cuda()`` when
``cmd_args.mode == 'gpu'``).  Switched on (its ``torch.cuda.is_available()`` dropped), the flag
would make that code take an XLA host for a CUDA one: its ``.cuda()`` raises there ("Found no
NVIDIA driver"), where the original ran on the CPU.  The flag counts as guarding code that fails
without CUDA: it is left as written, with an error that says why."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import is_cuda_device_string, string_value
from codemods.training.unresolved_callees import star_sources

if TYPE_CHECKING:
    from codemods.facts import Facts

# ``"xla"``: a CUDA device string XLA101 ported (``"cuda:0" if flag else "cpu"``), so that a second run
# leaves the flag as the first did.
_CUDA_WORDS = frozenset({"gpu", "cuda", "xla"})


def holder_candidate(node: cst.Assign) -> bool:
    """``node`` sets an attribute to a CUDA choice: ``holder.mode = 'gpu' if flag else 'cpu'``."""
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
    return star_sources(root.value, {*imports.table.bindings, *imports.table.rebound}, imports.unfollowed_stars)


def _cuda(value: cst.BaseExpression) -> bool:
    text = string_value(value)
    return is_cuda_device_string(value) or (isinstance(text, str) and text.lower() in _CUDA_WORDS)
