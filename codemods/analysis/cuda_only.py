"""CUDA-only settings that the other concerns do not cover: optimizer constructors
that ask for a fused CUDA/CPU kernel (``fused=True``), and NCCL or CUDA environment
variables set by the script (``os.environ["NCCL_DEBUG"] = "INFO"``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods import apis
from codemods.analysis.amp import _optimizer_class
from codemods.analysis.walk import Analysis, Walk
from codemods.syntax import arg_value, string_value

_ENVIRON = "os.environ"
_ENVIRON_SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})


@dataclass
class CudaOnlyFacts:
    # torch.optim constructors given ``fused=`` (other than False or None), with that
    # argument; those that become sync-free optimizers are AMP's (they drop it there).
    fused_optimizers: dict[cst.Call, cst.Arg] = field(default_factory=dict)
    # Where the script sets a CUDA or NCCL environment variable, with its name.
    environment: dict[cst.CSTNode, str] = field(default_factory=dict)


class CudaOnlyAnalysis(Analysis):
    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.cuda_only

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.resolve(node.func)
        if callee is None:
            return
        if _optimizer_class(callee) is not None:
            fused = next((a for a in node.args if a.keyword is not None and a.keyword.value == "fused"), None)
            if fused is not None and not (type(fused.value) is cst.Name and fused.value.value in ("False", "None")):
                self.part.fused_optimizers[node] = fused
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
