"""Sparse tensors (the part of CudaOnlyAnalysis that follows them): which functions return
one, which moves take one to the device (they raise on XLA), and what the calls of a
function handing ``sparse`` to an embedding pass for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.cuda_only.code_shapes import calls, passes_not_false, sparse_core
from codemods.cuda_only.facts import SparseParameter
from codemods.engine.nodes import dotted, is_false, is_none, method_name
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.cuda_only.facts import CudaOnlyFacts, SparseEvent
    from codemods.facts import Facts


class SparseTensors(Analysis):
    """The part of CudaOnlyAnalysis that follows sparse tensors (its walk records the events)."""

    facts: Facts
    part: CudaOnlyFacts
    # What may bind or move a sparse tensor, in order, decided once the functions that
    # return one are known (conclude).
    sparse_events: list[SparseEvent]
    sparse_returning: set[str]  # functions of this file that return a sparse tensor
    # Embeddings given ``sparse=<a parameter defaulting to False>``: (function, index, parameter).
    sparse_parameter_uses: dict[cst.Call, tuple[str, int, str]]

    def _makes_sparse(self, value: cst.BaseExpression) -> bool:
        """``torch.sparse_coo_tensor(...)``, ``torch.sparse.FloatTensor(...)``, ``x.to_sparse()``,
        also followed by ``.coalesce()``; a call of a function of this file or of the
        project that returns one (``self._to_sparse_tensor(adj)``)."""
        value = sparse_core(value)
        if type(value) is not cst.Call:
            return False
        if self.walk.resolve(value.func) in apis.SPARSE_CONSTRUCTORS or method_name(value) in apis.SPARSE_METHODS:
            return True
        callee = dotted(value.func)
        if callee is None:
            return False
        if callee.removeprefix("self.") in self.sparse_returning:
            return True
        found = self.walk.analysis(ProjectAnalysis).origin(callee)
        return found is not None and found.summary is not None and found.name in found.summary.sparse_returns

    def _sparse_parameter(self, node: cst.Call, sparse: cst.Arg) -> None:
        """``sparse=sparse``, a parameter of the enclosing function that defaults to False
        (or None): noted with its place, for the calls that decide it (conclude)."""
        function = self.walk.enclosing_function
        if function is None or type(sparse.value) is not cst.Name:
            return
        name = sparse.value.value
        positional = [*function.params.posonly_params, *function.params.params]
        if positional and positional[0].name.value in ("self", "cls") and self.walk.class_depth:
            positional = positional[1:]
        for index, param in [*enumerate(positional), *((-1, p) for p in function.params.kwonly_params)]:
            if param.name.value == name and (is_false(param.default) or is_none(param.default)):
                self.sparse_parameter_uses[node] = (self.walk.qualname, index, name)

    def _sparse_calls(self) -> None:
        """What the calls of a function handing ``sparse`` to an embedding pass for it: of
        this file's functions (they decide its findings), and of another module's (told to
        that module's findings through this file's summary: cuda_only/held_conditions.py)."""
        project = self.walk.analysis(ProjectAnalysis)
        functions = set(self.sparse_parameter_uses.values())
        self.part.sparse_functions.update(functions)
        local: dict[str, list[str]] = {qualname: [] for qualname, _, _ in functions}
        called: set[str] = set()
        for call, callee in project.calls:
            for qualname, index, param in functions:
                if calls(callee, qualname):
                    called.add(qualname)
                    if (passed := passes_not_false(call, index, param)) is not None:
                        local[qualname].append(passed)
            found = project.origin(callee)
            if found is None or found.summary is None:
                continue
            for function, index, param in found.summary.sparse_functions:
                if (
                    function in (found.name, f"{found.name}.__init__")
                    and (passed := passes_not_false(call, index, param)) is not None
                ):
                    self.part.sparse_calls.add((found.summary.path, function, passed))
        for node, (qualname, _, param) in self.sparse_parameter_uses.items():
            self.part.sparse_parameters[node] = SparseParameter(
                qualname, param, tuple(local[qualname]), qualname in called
            )

    def _sparse_moves(self) -> None:
        """Replays what binds, returns and moves tensors: a move of a name bound to a sparse
        tensor (``adj.cuda()``, ``self.Graph.coalesce().to(device)``) or of a sparse value
        (``self._to_sparse(a).coalesce().to(device)``) raises on XLA."""
        names: set[str] = set()
        for event in self.sparse_events:
            if event[0] == "return" and self._makes_sparse(event[2]):
                self.part.sparse_returns.add(event[1])
                self.sparse_returning.add(event[1].rsplit(".", 1)[-1])
        # Only what is moved somewhere needs its value looked at (a project callee is looked up).
        moved_names = {dotted(sparse_core(event[2])) for event in self.sparse_events if event[0] == "move"}
        for event in self.sparse_events:
            if event[0] == "bind":
                bound = {n for n in event[1] if n is not None}
                names.difference_update(bound)
                if bound & moved_names and self._makes_sparse(event[2]):
                    names.update(bound)
            elif event[0] == "move":
                subject = event[1]
                moved = sparse_core(event[2])
                if (held := dotted(moved)) is not None and held in names:
                    self.part.sparse_moves[subject] = (held, False)
                elif self._makes_sparse(moved):
                    self.part.sparse_moves[subject] = (code_of(moved), True)
