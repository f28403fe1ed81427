"""Distributed training: what the script does with several processes or devices."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from codemods import apis
from codemods.analysis.walk import Analysis, Walk
from codemods.syntax import fold_true, walk


@dataclass
class DistributedFacts:
    # DistributedDataParallel is used: it all-reduces gradients itself.
    ddp: bool = False


class DistributedAnalysis(Analysis):
    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.ddp_references: list[cst.CSTNode] = []

    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if self.walk.resolve(node) == apis.DDP:
            self.ddp_references.append(node)

    visit_Attribute = _reference

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._reference(node.func)

    def finish(self) -> None:
        # DistributedDataParallel in a branch the device rewrite removes does not count.
        removed = {id(sub) for branch in self._removed_branches() for sub in walk(branch)}
        self.facts.distributed.ddp = any(id(ref) not in removed for ref in self.ddp_references)

    def _removed_branches(self) -> list[cst.CSTNode]:
        """Branches of device ifs that cannot run once the accelerator check folds to
        True on XLA: the device rewrite removes them."""
        device = self.facts.device
        branches: list[cst.CSTNode] = []
        for node in device.ifs:
            folded = fold_true(node.test, device.is_available_call)
            branch = node.body if folded is False else node.orelse if folded is True else None
            if branch is not None:
                branches.append(branch)
        return branches
