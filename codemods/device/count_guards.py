"""Batch moves that a CUDA device count decides (``if n_gpu == 1:``): on an XLA host the port
reads the count from the XLA runtime, and a test that may be False there leaves the batches on
the CPU (XLA116) unless the guard can go (obligation (3) of obligations.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device import batch_shapes
from codemods.device.obligation_records import Loop, code
from codemods.device.rules.xla116_batch_off_xla import BATCH_OFF_XLA, batches_moved_only_if
from codemods.engine.nodes import walk

if TYPE_CHECKING:
    from codemods.device.facts import ObligationFacts
    from codemods.device.values import DeviceValueAnalysis


def guard_batch_moves(values: DeviceValueAnalysis, loops: Iterable[Loop], part: ObligationFacts) -> None:
    """Batch moves that a CUDA device count decides (``if n_gpu == 1:``).  On CUDA the other
    path had ``DDP(device_ids=[rank])`` or DataParallel move the inputs; the port drops both,
    and reads the count from the XLA runtime: the processes on this host (more than one
    where it has several devices), or one where the count says how many devices a process
    drives.  A test that may be False there leaves the batches on the CPU: the guard goes
    where it holds nothing but the moves, and is reported otherwise."""
    for loop in loops:
        inside: set[int] | None = None
        for conds in loop.guarded_moves:
            for cond, in_body in conds:
                found = values.count_test(cond.test, loop.scope)
                if found is None or found[2] is in_body or cond in part.count_guards:
                    continue
                if inside is None:
                    inside = {id(n) for n in walk(loop.node.body)}
                if id(cond) not in inside:
                    continue
                count, ported, truth = found
                becomes = {
                    "0": "is 0 on an XLA host (no CUDA device there)",
                    "1": "becomes 1 (one device per process)",
                }.get(
                    ported,
                    f"becomes the XLA runtime's {ported.replace('_', ' ')} (more than 1 on a host with several "
                    "devices)",
                )
                why = (
                    f"`{count}` {becomes}, so `{code(cond.test)}` {'is' if truth is not None else 'may be'} "
                    f"{not in_body} on XLA, and nothing else moves the batches there (DDP on XLA does not move "
                    "its inputs)"
                )
                if in_body and cond.orelse is None and only_moves(cond):
                    part.count_guards[cond] = why
                else:
                    part.broken.setdefault(
                        cond.test,
                        (BATCH_OFF_XLA, batches_moved_only_if(code(cond.test), why)),
                    )


def only_moves(cond: cst.If) -> bool:
    """The ``if`` holds nothing but assignments of moved batches (``x = x.to(device)``)."""
    body = cond.body
    return type(body) is cst.IndentedBlock and all(
        type(statement) is cst.SimpleStatementLine
        and len(statement.body) == 1
        and type(small := statement.body[0]) is cst.Assign
        and batch_shapes.moves(small.value)
        for statement in body.body
    )
