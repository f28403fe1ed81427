"""Assertions on the process group's backend read at run time (detectron2's ``comm.py``:
``backend = dist.get_backend(group)`` then ``assert backend in ["gloo", "nccl"]``).  The port
starts every NCCL group with the "xla" backend (XLA601; NCCL needs CUDA, so no group of a run on
an XLA host is NCCL's), and ``dist.get_backend()`` then returns "xla": an assertion that lists
the CUDA backend and not "xla" fails where the original passed, and one that asks for "nccl"
alone (``assert dist.get_backend() == "nccl"``) too.  Adding "xla" to the choices (or asking for
it in place of "nccl") only lets the assertion pass where the group is XLA's: it cannot make a
run fail that passed, so it is a fix-it (XLA114's "the choices an assertion lists gain it").
Conditions that branch on the backend (``if dist.get_backend() == "nccl": new_group(backend=
"gloo")``) are left as they are: on XLA they take the branch of a group that is not NCCL's,
which is the one the XLA group needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, string_value
from codemods.engine.walk import Analysis, Walk, assignments

if TYPE_CHECKING:
    from codemods.facts import Facts

GET_BACKEND = "torch.distributed.get_backend"
# The CUDA backend as a literal and as torch's constant; the XLA one likewise.
_NCCL = frozenset({"nccl", "torch.distributed.Backend.NCCL"})
_XLA = frozenset({"xla", "torch.distributed.Backend.XLA"})


class QueriedBackendAnalysis(Analysis):
    facts: Facts

    name = "queried_backends"
    fills = "distributed"

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        # (scope, name) -> whether every value bound to it is the backend read at run time.
        self.queried: dict[tuple[str, str], bool] = {}
        self.asserts: list[tuple[cst.Assert, str]] = []

    @assignments()
    def _bound(self, name: str, value: cst.BaseExpression) -> None:
        key = (self.walk.qualname, name)
        self.queried[key] = self.queried.get(key, True) and self._query(value)

    def visit_Assert(self, node: cst.Assert) -> None:
        self.asserts.append((node, self.walk.qualname))

    def _query(self, value: cst.BaseExpression) -> bool:
        return type(value) is cst.Call and self.walk.resolve(value.func) == GET_BACKEND

    def _backend(self, value: cst.BaseExpression, scope: str) -> bool:
        """``dist.get_backend(...)``, or a name of the scope bound only to it."""
        return self._query(value) or self.queried.get((scope, dotted(value) or ""), False)

    def _named(self, value: cst.BaseExpression) -> str | None:
        """The backend a literal or torch's constant names (``"nccl"``, ``dist.Backend.NCCL``)."""
        text = string_value(value)
        if text is not None:
            return text.lower()
        return self.walk.resolve(value) if type(value) is cst.Attribute else None

    def finish(self) -> None:
        for assertion, scope in self.asserts:
            test = assertion.test
            if type(test) is not cst.Comparison or len(test.comparisons) != 1:
                continue
            operator = type(test.comparisons[0].operator)
            left, right = test.left, test.comparisons[0].comparator
            if operator is cst.In and type(right) in (cst.List, cst.Tuple, cst.Set) and self._backend(left, scope):
                named = {self._named(e.value) for e in right.elements}  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above
                if named & _NCCL and not named & _XLA and all(type(e) is cst.Element for e in right.elements):  # type: ignore[attr-defined]  # likewise
                    self.part.asserted_backends[right] = assertion
            elif operator is cst.Equal:
                if self._backend(right, scope):
                    left, right = right, left
                if self._backend(left, scope) and type(right) is cst.SimpleString and self._named(right) in _NCCL:
                    self.part.asserted_backends[right] = assertion
