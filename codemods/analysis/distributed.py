"""Distributed training: what the script does with several processes or devices."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from codemods import apis
from codemods.analysis.walk import Analysis


@dataclass
class DistributedFacts:
    # DistributedDataParallel is used: it all-reduces gradients itself.
    ddp: bool = False


class DistributedAnalysis(Analysis):
    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if self.walk.resolve(node) == apis.DDP:
            self.facts.distributed.ddp = True

    visit_Attribute = _reference

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._reference(node.func)
