"""What the obligations analysis (obligations.py) records as it walks a file: the moves of a
module (with the conditions around each) and the loops that may feed one (what they iterate,
the batches they move, their forward calls, their guarded moves); and the small readers of code
it shares with the checks that read these records."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.engine.nodes import walk

_CODE = cst.Module([])
ITERATION_WRAPPERS = frozenset({"enumerate", "tqdm", "tqdm.tqdm", "iter"})


def code(node: cst.CSTNode) -> str:
    return _CODE.code_for_node(node)


@dataclass(repr=False)
class Move:
    call: cst.Call
    device: cst.BaseExpression | None  # None: ``.cuda()``
    scope: str
    conds: tuple[tuple[cst.If, bool], ...]


@dataclass(repr=False)
class Loop:
    node: cst.For
    scope: str
    targets: set[str]
    source: str | None  # what it iterates, dotted
    # The names its source is made from, in order: ``loader`` of ``loader``; ``loader``, ``freq``
    # of ``log_every(loader, freq)`` (the first is taken for what it iterates).
    iterated: list[str] = field(default_factory=list)
    moved: set[str] = field(default_factory=set)
    # Batch names made by a callable of a project module (``x, y = model.parse_batch(batch)``):
    # name -> (the call, the callable).
    through: dict[str, tuple[cst.Call, str]] = field(default_factory=dict)
    # Forward calls: (call, the module called, the loop's batch names it is given).
    forwards: list[tuple[cst.Call, str, list[str]]] = field(default_factory=list)
    # Its batch moves under an ``if`` (``if n_gpu == 1: batch = tuple(t.to(device) for t in
    # batch)``): the conditions around each.
    guarded_moves: list[tuple[tuple[cst.If, bool], ...]] = field(default_factory=list)
    # Its batch names read on the host in a way a tensor on the XLA device refuses (``meta["c"].numpy()``,
    # ``np.array(meta["c"])``): (the batch name, the read as written).
    host_reads: list[tuple[str, str]] = field(default_factory=list)


def positional(scope: str, params: list[str]) -> list[str]:
    """The parameters callers hand in by position (a method's without ``self``)."""
    return params[1:] if "." in scope and params[:1] in (["self"], ["cls"]) else params


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    return [sub for sub in walk(node) if type(sub) is cst.Call]
