"""The names a file stores, by scope and in the order of the code: what a name in a test
around CUDA code holds there (``log_timings = log_timings and torch.cuda.is_available()``,
then ``if log_timings:``), for the CUDA concern's analysis to evaluate on an XLA host.

A name is known at a test only where one store decides it on every path: the last store
of the name in the test's function (parameters count, as stores of what callers pass), a
plain assignment among the function's own statements (not under an ``if``, a loop or a
``try``: it runs whenever the function gets past it), made before the test.  A name the
function never stores is the module's: its last store, made at module level the same way.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class Store:
    scope: str  # the function's qualified name; "" at module level
    value: cst.BaseExpression | None  # None: what the tool does not follow (a parameter, ``a, b = f()``)
    at: int  # its place in the order of the code
    decides: bool  # a plain assignment among its scope's own statements: it runs on every path past it


class StoredNames:
    def __init__(self) -> None:
        self.stores: dict[tuple[str, str], list[Store]] = defaultdict(list)
        self.position = 0

    def tick(self) -> int:
        """The place of what the walk reaches now, in the order of the code."""
        self.position += 1
        return self.position

    def store(self, scope: str, name: str, value: cst.BaseExpression | None, decides: bool) -> None:
        self.stores[(scope, name)].append(Store(scope, value, self.tick(), decides))

    def deciding(self, scope: str, name: str, before: int | None) -> Store | None:
        """The store that decides what ``name`` holds at the place ``before`` in ``scope``
        (None: not one known store; ``before`` None: anywhere, a module name read from a function)."""
        stores = self.stores.get((scope, name))
        if not stores:
            return self.deciding("", name, None) if scope else None
        last = stores[-1]
        if last.value is None or not last.decides or (before is not None and last.at >= before):
            return None
        return last
