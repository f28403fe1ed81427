"""DataLoaders: which names hold a DataLoader the file builds (assigned one, the result of
a function of the file that returns one, or handed on: ``self.train_data = train_data``),
for the training analysis (is this loop's iterable a loader?) and the distributed
samplers (which ``DataLoader(...)`` feeds this training loop?)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import dotted
from codemods.engine.walk import Analysis, Walk, assignments, calls_of

if TYPE_CHECKING:
    from codemods.facts import Facts


class LoaderAnalysis(Analysis):
    facts: Facts

    name = "loaders"

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.loaders
        self.assigned: dict[str, list[cst.BaseExpression]] = defaultdict(list)  # dotted target -> values
        self.calls: dict[str, cst.Call] = {}  # dotted target -> DataLoader(...)
        self.returned: dict[str, cst.Call] = {}  # function -> the DataLoader it returns
        self.made: set[cst.Call] = set()  # every DataLoader(...) of the file

    @assignments()
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        self.assigned[name].append(value)
        core = value
        while (
            type(core) is cst.Call
            and type(attribute := core.func) is cst.Attribute  # (method_name and receiver, at once)
            and attribute.attr.value in ("to", "cuda")
        ):
            core = attribute.value
        if type(core) is cst.Call and self.walk.resolve(core.func) in apis.DATA_LOADERS:
            self.calls[name] = core

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if type(value) is cst.Call and self.walk.resolve(value.func) in apis.DATA_LOADERS and self.walk.scopes:
            self.returned[self.walk.scopes[-1]] = value

    @calls_of(apis.DATA_LOADERS)
    def _loader(self, node: cst.Call) -> None:
        self.made.add(node)

    def finish(self) -> None:
        loaders = self.calls
        grew = True
        while grew:
            grew = False
            for name, values in self.assigned.items():
                if name in loaders:
                    continue
                for value in values:
                    found = None
                    if type(value) is cst.Call and type(value.func) is cst.Name:
                        found = self.returned.get(value.func.value)
                    elif (source := dotted(value)) is not None and source != name:
                        found = loaders.get(source)
                    if found is not None:
                        loaders[name] = found
                        grew = True
                        break
        self.part.names = set(loaders)

    def call_of(self, name: str | None) -> cst.Call | None:
        """The DataLoader(...) that the name holds, if the file shows it."""
        return self.calls.get(name) if name is not None else None
