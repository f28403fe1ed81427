"""Names bound to the CPU device (FCOS's ``cpu_device = torch.device("cpu")``): a move to one
(``o.to(cpu_device)``) copies to the host as ``.to("cpu")`` and ``.cpu()`` do, so a loop that makes
it in every iteration reads its graph back each iteration (no evaluation-loop barrier is needed)."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import dotted, names_the_cpu


class CpuNames:
    """What each name of a scope (a function's qualified name, "" for the module) is bound to so far,
    in the order of the walk: True where every binding is the CPU device."""

    def __init__(self) -> None:
        self._bound: dict[str, dict[str, bool]] = {}

    def note(self, scope: str, name: str, value: cst.BaseExpression) -> None:
        """``name = value`` in ``scope``."""
        names = self._bound.setdefault(scope, {})
        names[name] = names.get(name, True) and names_the_cpu(value)

    def names_cpu(self, scope: str, device: cst.BaseExpression | None) -> bool:
        """``device`` is ``"cpu"``, ``torch.device("cpu")`` or a plain name bound only to one of them,
        in ``scope`` or, where ``scope`` binds no such name, at the module level."""
        if device is None:
            return False
        if names_the_cpu(device):
            return True
        name = dotted(device)
        if name is None or "." in name:
            return False
        local = self._bound.get(scope, {})
        if name in local:
            return local[name]
        return self._bound.get("", {}).get(name, False)
