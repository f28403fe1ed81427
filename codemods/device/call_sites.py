"""What a parameter of a function of the file holds when every call the file shows
passes it (``compute_init(autodetect_device_type())``): the arguments, each with the
function it is passed from."""

from __future__ import annotations

from collections import defaultdict

import libcst as cst

from codemods.engine.nodes import arg_value, dotted


class CallSites:
    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[cst.Call, str]]] = defaultdict(list)  # function -> (call, caller)

    def saw(self, node: cst.Call, resolved: str | None, caller: str) -> None:
        """A call of a plain name the imports do not resolve: maybe a function of the file."""
        if resolved is None and type(node.func) is cst.Name:
            self.calls[node.func.value].append((node, caller))

    def arguments(self, function: str, positions: list[str], name: str | None) -> list[tuple[cst.BaseExpression, str]]:
        """The argument each call passes for the parameter ``name``; none when some call does
        not show it (a star argument, a default), ``name`` is no positional parameter, or the
        function is a method (its calls are not followed)."""
        if name is None or name not in positions or "." in function:
            return []
        calls = self.calls.get(function, [])
        found = []
        for call, caller in calls:
            value = arg_value(call, positions.index(name), name)
            if value is None or any(a.star for a in call.args) or dotted(value) == name and caller == function:
                return []
            found.append((value, caller))
        return found
