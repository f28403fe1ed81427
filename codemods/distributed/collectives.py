"""Collectives that run with no check that a process group is started (``dist.all_gather(...)``,
``dist.barrier()`` in a model's forward or a training loop, outside any ``if``, ``try`` or
``and``, and after no ``if`` of their function with a branch that returns: ``if ...: return``,
``else: return``): without a process group each
raises ``ValueError: Default process group has not been initialized``.  A script whose process
group only starts under a launcher check that stays (XLA609) crashes there under
torch_xla.launch, rather than training a copy per process.  The module's own go into its
summary, with their lines, for the files that import it.  A function of the module that the
module names only under a check (``map(_meter_reduce if distributed else avg, meters)``) runs
its collectives only where that flag holds, which it does not without a process group."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import walk
from codemods.engine.walk import Analysis, Walk, calls_of

if TYPE_CHECKING:
    from codemods.facts import Facts

# The torch.distributed calls that need a started process group (get_world_size and
# get_rank need one too, but a script reads them under the checks it keeps).
COLLECTIVES = tuple(
    f"torch.distributed.{name}"
    for name in (
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "all_reduce",
        "all_to_all",
        "barrier",
        "broadcast",
        "broadcast_object_list",
        "gather",
        "reduce",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "scatter",
    )
)
_CHECKS = (cst.If, cst.IfExp, cst.Try, cst.BooleanOperation, cst.While)


def _returns_early(node: cst.If) -> bool:
    """An ``if`` one of whose branches ends the function or raises (``if not dist.is_initialized():
    return x``; Deformable-DETR's ``init_distributed_mode``: ``if "RANK" in os.environ: ... else:
    args.distributed = False; return``, then ``init_process_group(...)`` and ``dist.barrier()``):
    what follows runs only where that branch was not taken."""
    branch: cst.If | cst.Else | None = node
    while branch is not None:
        block = branch.body
        body = block.body if isinstance(block, cst.IndentedBlock) else (block,)
        last = body[-1] if body else None
        smalls = last.body if isinstance(last, cst.SimpleStatementLine) else ()
        if any(type(small) in (cst.Return, cst.Raise) for small in smalls):
            return True
        branch = branch.orelse if isinstance(branch, cst.If) else None
    return False


def _main_guard(node: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":``: the script's entry, no flag."""
    return type(node) is cst.If and any(type(n) is cst.Name and n.value == "__name__" for n in walk(node.test))


class CollectiveAnalysis(Analysis):
    facts: Facts

    name = "collectives"
    fills = "distributed"

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        # Per enclosing function, innermost last: the checks the walk is inside there, and
        # whether an ``if ...: return`` came before.
        self.checks: list[int] = [0]
        self.returned: list[bool] = [False]
        self.flags: list[int] = [0]  # the same checks but loops: ``if``, ``try``, ``and``/``or``
        # Each name the module reads, and whether each reading is under a check; the names of
        # the ``def``s (not readings).
        self.readings: dict[str, list[bool]] = {}
        self.defined: set[int] = set()

    def _enter(self, node: cst.CSTNode) -> None:
        self.checks[-1] += 1
        if type(node) is not cst.While and not _main_guard(node):
            self.flags[-1] += 1

    def _leave(self, node: cst.CSTNode) -> None:
        self.checks[-1] -= 1
        if type(node) is not cst.While and not _main_guard(node):
            self.flags[-1] -= 1

    visit_If = visit_IfExp = visit_Try = visit_BooleanOperation = visit_While = _enter
    leave_IfExp = leave_Try = leave_BooleanOperation = leave_While = _leave

    def leave_If(self, node: cst.If) -> None:
        self._leave(node)
        if _returns_early(node):
            self.returned[-1] = True

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.defined:
            self.readings.setdefault(node.value, []).append(bool(self.flags[-1] or self.returned[-1]))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defined.add(id(node.name))
        self.checks.append(0)
        self.flags.append(0)
        self.returned.append(False)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.checks.pop()
        self.flags.pop()
        self.returned.pop()

    @calls_of(COLLECTIVES)
    def _collective(self, node: cst.Call) -> None:
        if self.walk.enclosing_function is None or self.checks[-1] or self.returned[-1]:
            return
        self.part.unchecked_collectives[node] = (self.walk.callee or "", self.walk.qualname)

    def finish(self) -> None:
        """Drop the collectives of a module-level function that the module names only under a
        check (and names at all: a function other modules call is not known to be guarded)."""
        for call, (_, function) in list(self.part.unchecked_collectives.items()):
            readings = self.readings.get(function) if "." not in function else None
            if readings and all(readings):
                del self.part.unchecked_collectives[call]
