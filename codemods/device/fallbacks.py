"""CPU fallbacks of a device that another module sets: ``if not torch.cuda.is_available():
config.device = "cpu"`` in a function that updates a config object whose default (``config.device =
"cuda"``) sits in another module.  The port reads the check as one that never runs on XLA and
would remove it; with the default left as it is, the converted script then sends the model to CUDA
and fails on an XLA host, where the original at least ran on the CPU.  Such a check stays, and is
reported (XLA104): the port cannot tie the fallback to the default it guards.  Where this file sets
the attribute too (``config.device = "cuda"`` before the check, an argparse ``--device`` default),
that value is ported with it and the check goes as before."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

import libcst as cst

from codemods.device.shapes import is_cpu_device, is_device_name
from codemods.engine.nodes import dotted, fold_true, walk
from codemods.engine.walk import Walk


def unset_fallback(
    node: cst.If,
    is_available_call: Callable[[cst.BaseExpression], bool],
    assignments: Mapping[str, Sequence[cst.BaseExpression]],
    flag_dests: Collection[str],
    resolver: Walk,
) -> str | None:
    """The device attribute ``node`` falls back to the CPU for (``config.device``), where the
    check never runs on XLA and nothing else in the file sets that attribute (not under the
    check, nor as an argparse default of that name); None otherwise."""
    if node.orelse is not None or fold_true(node.test, is_available_call) is not False:
        return None
    body = node.body
    if type(body) is not cst.IndentedBlock:
        return None
    names = set()
    for line in body.body:
        if type(line) is not cst.SimpleStatementLine:
            return None
        for statement in line.body:
            if (
                type(statement) is not cst.Assign
                or len(statement.targets) != 1
                or (name := dotted(statement.targets[0].target)) is None
                or "." not in name
                or not is_device_name(name.rsplit(".", 1)[1])
                or not is_cpu_device(statement.value, resolver)
            ):
                return None
            names.add(name)
    if len(names) != 1:
        return None
    name = names.pop()
    inside = {id(sub) for sub in walk(body)}
    if name.rsplit(".", 1)[1] in flag_dests or any(id(v) not in inside for v in assignments.get(name, ())):
        return None
    return name
