"""What a CUDA device count reads on an XLA host after the port (the part of
DeviceValueAnalysis, values.py, that decides it): "1" where the port makes it one device per
process, the runtime count XLA602 reads instead, or "0" where it stays (no CUDA device on an
XLA host); and what a test of one is there (``if cuda and torch.cuda.device_count():``,
``n_gpu > 1``), which values.py reads for the conditions a device value is under."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.bounded_questions import bounded
from codemods.device.call_sites import CallSites
from codemods.device.shapes import compared
from codemods.device.where import Binding
from codemods.engine.nodes import dotted
from codemods.engine.walk import Analysis

if TYPE_CHECKING:
    from codemods.facts import Facts


class DeviceCounts(Analysis):
    """The part of DeviceValueAnalysis that reads CUDA device counts as the port leaves them."""

    facts: Facts
    call_sites: CallSites
    _positions: dict[str, list[str]]
    unpacked: dict[tuple[str, str], list[tuple[cst.Call, int]]]

    if TYPE_CHECKING:

        def _live(self, name: str, scope: str) -> list[Binding]: ...

        def _live_returns(self, function: str) -> list[Binding]: ...

        def _function(self, func: str, scope: str) -> str | None: ...

        def code(self, node: cst.CSTNode) -> str: ...

    def _count_truth(self, test: cst.BaseExpression, scope: str) -> bool | None:
        """A CUDA device count tested for truth (``if cuda and torch.cuda.device_count():``): 0
        where it stays on an XLA host, 1 where the port makes it one device per process."""
        count = self.ported_count(test, scope)
        return None if count not in ("0", "1") else count == "1"

    @bounded(lambda: None)
    def ported_count(self, expr: cst.BaseExpression, scope: str) -> str | None:
        """What a CUDA device count that ``expr`` holds reads after the port: "1" where it says
        how many devices one process drives (one on XLA), the runtime count XLA602 reads
        instead (``local_process_count``, ``world_size``: as many as the host's devices), or
        "0" where it stays (no CUDA device on an XLA host); None where ``expr`` holds no such
        count (or not one alone)."""
        distributed = self.facts.distributed
        if type(expr) is cst.Call:
            if expr in distributed.per_process_counts:
                return "1"
            concept = distributed.runtime_reads.get(expr)
            if concept in ("local_process_count", "world_size"):
                return concept
            return "0" if self.walk.resolve(expr.func) == "torch.cuda.device_count" else None
        name = dotted(expr)
        if name is None:
            return None
        bindings = self._live(name, scope)
        if not bindings:  # a parameter: what every call of the file passes
            passed = self.call_sites.arguments(scope, self._positions.get(scope, []), name)
            counts = {self.ported_count(value, caller) for value, caller in passed} or {None}
            return counts.pop() if len(counts) == 1 else None
        counts = set()
        for binding in bindings:
            if binding.value is not None:
                counts.add(self.ported_count(binding.value, binding.scope))
                continue
            unpacked = self.unpacked.get((binding.scope, name), [])
            function = self._function(dotted(unpacked[0][0].func) or "", binding.scope) if len(unpacked) == 1 else None
            returns = self._live_returns(function) if function is not None else []
            index = unpacked[0][1] if unpacked else 0
            for returned in returns or [Binding(None, binding.scope, ())]:
                value = returned.value
                if type(value) is cst.Tuple and index < len(value.elements):
                    counts.add(self.ported_count(value.elements[index].value, returned.scope))
                else:
                    counts.add(None)
        return counts.pop() if len(counts) == 1 else None

    def count_test(self, test: cst.BaseExpression, scope: str) -> tuple[str, str, bool | None] | None:
        """A comparison of a CUDA device count with a number (``n_gpu == 1``, ``n_gpu > 1``):
        (the count as written, what it reads after the port, the test's truth on an XLA host:
        known where the count is one device per process); None for any other test."""
        if type(test) is not cst.Comparison or len(test.comparisons) != 1:
            return None
        left, comparator = test.left, test.comparisons[0].comparator
        number = comparator if type(comparator) is cst.Integer else left if type(left) is cst.Integer else None
        counted = left if number is comparator else comparator
        if number is None or type(counted) is cst.Integer:
            return None
        count = self.ported_count(counted, scope)
        if count is None:
            return None
        truth = None
        if count in ("0", "1"):
            value, known = int(cst.ensure_type(number, cst.Integer).value, 0), int(count)
            left_value, right_value = (known, value) if number is comparator else (value, known)
            truth = compared(left_value, test.comparisons[0].operator, right_value)
        return self.code(counted), count, truth
