"""CUDA-only settings that the other concerns do not cover: optimizer constructors
that ask for a fused CUDA/CPU kernel (``fused=True``), embeddings with sparse gradients
(``nn.Embedding(..., sparse=True)``) and the optimizer made for them (SparseAdam), and
NCCL or CUDA environment variables set by the script (``os.environ["NCCL_DEBUG"] = "INFO"``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods import apis
from codemods.amp.analysis import _optimizer_class
from codemods.distributed.launch import TORCH_SPAWN
from codemods.engine.nodes import arg_value, string_value, walk
from codemods.engine.walk import Analysis, Walk

_ENVIRON = "os.environ"
# Values that may hold a call (a device count): calls and expressions built of them.
_COMPUTED = (cst.Call, cst.IfExp, cst.BinaryOperation, cst.BooleanOperation)
_ENVIRON_SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})


@dataclass(repr=False, eq=False)
class CudaOnlyFacts:
    # torch.optim constructors given ``fused=`` (other than False or None), with that
    # argument; those that become sync-free optimizers are AMP's (they drop it there).
    fused_optimizers: dict[cst.Call, cst.Arg] = field(default_factory=dict)
    # Embeddings given ``sparse=`` (other than False or None), with that argument, and
    # torch.optim.SparseAdam constructions: sparse gradients do not run on XLA.
    sparse_embeddings: dict[cst.Call, cst.Arg] = field(default_factory=dict)
    sparse_optimizers: set[cst.Call] = field(default_factory=set)
    # Where the script sets a CUDA or NCCL environment variable, with its name.
    environment: dict[cst.CSTNode, str] = field(default_factory=dict)
    # A CUDA device count that the launching process hands to its workers (which read the
    # XLA one: XLA602) and also uses itself, where it is 0 on XLA: each such use, with the
    # assignment of the count.
    launcher_count_uses: dict[cst.Name, cst.Assign] = field(default_factory=dict)


class CudaOnlyAnalysis(Analysis):
    name = "cuda_only"
    settle_reads = ("amp", "distributed")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.cuda_only
        # ``n = torch.cuda.device_count()``: the call, by the name and scope it is assigned in.
        self.counts: dict[tuple[str, str], tuple[cst.Call, cst.Assign]] = {}
        self.count_names: set[str] = set()
        self.uses: list[tuple[cst.Name, tuple[str, str]]] = []
        self.not_uses: set[int] = set()  # assignment targets
        # Inside an mp.spawn(...) call (what it hands to the workers) or a print (a log line).
        self.handing = 0
        self.handed: list[bool] = []  # per Call being walked: whether it counts in ``handing``

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if type(target.target) is cst.Name:
                self.not_uses.add(id(target.target))
            elif self.count_names:
                self.not_uses.update(id(n) for n in walk(target.target) if type(n) is cst.Name)
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name or type(node.value) not in _COMPUTED:
            return
        count = next(
            (n for n in walk(node.value) if type(n) is cst.Call and self.walk.resolve(n.func) == "torch.cuda.device_count"),
            None,
        )
        if count is not None and not self._guarded_by_availability(node.value):
            self.counts[(node.targets[0].target.value, self.walk.qualname)] = (count, node)
            self.count_names.add(node.targets[0].target.value)

    def _guarded_by_availability(self, value: cst.BaseExpression) -> bool:
        """Under ``if torch.cuda.is_available():`` (False on XLA) the count is never read there."""
        tests = [value, *(cond.test for cond in self.walk.conds)]  # type: ignore[attr-defined]
        return any(
            isinstance(n, cst.Call) and self.walk.resolve(n.func) in apis.AVAILABILITY_CHECKS for t in tests for n in walk(t)
        )

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.count_names and not self.handing and id(node) not in self.not_uses:
            key = (node.value, self.walk.qualname)
            if key in self.counts:
                self.uses.append((node, key))

    def leave_Call(self, node: cst.Call) -> None:
        if self.handed.pop():
            self.handing -= 1

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.callee
        hands_on = callee in TORCH_SPAWN or (callee is None and type(node.func) is cst.Name and node.func.value == "print")
        self.handed.append(hands_on)
        self.handing += hands_on
        if callee is None:
            return
        if callee in apis.SPARSE_OPTIMIZERS:
            self.part.sparse_optimizers.add(node)
        elif _optimizer_class(callee) is not None:
            fused = _keyword_set(node, "fused")
            if fused is not None:
                self.part.fused_optimizers[node] = fused
        elif callee in apis.SPARSE_EMBEDDINGS:
            sparse = _keyword_set(node, "sparse")
            if sparse is not None:
                self.part.sparse_embeddings[node] = sparse
        elif callee in _ENVIRON_SETTERS:
            self._environment(node, string_value(arg_value(node, 0, "key")))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if type(target) is cst.Subscript and self.walk.resolve(target.value) == _ENVIRON and len(target.slice) == 1:
            index = target.slice[0].slice
            if type(index) is cst.Index:
                self._environment(target, string_value(index.value))

    def _environment(self, node: cst.CSTNode, name: str | None) -> None:
        if name is not None and name.startswith(apis.CUDA_ENVIRONMENT):
            self.part.environment[node] = name

    def settle(self) -> None:
        for call in self.facts.amp.syncfree:
            self.part.fused_optimizers.pop(call, None)
        handed = self.facts.distributed.launcher_counts
        for name, key in self.uses:
            call, assignment = self.counts[key]
            if call in handed:
                self.part.launcher_count_uses[name] = assignment


def _keyword_set(call: cst.Call, keyword: str) -> cst.Arg | None:
    """The call's ``keyword=`` argument, unless it is False or None."""
    arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    return None if arg is None or (type(arg.value) is cst.Name and arg.value.value in ("False", "None")) else arg
