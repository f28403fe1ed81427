"""How far the device-value analysis (values.py) follows a value into others: a question is
cut ("not known", which never gives an error) once it is too deep or asked again inside itself,
and within one outermost question each answer is computed once."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol, TypeVar


class Asking(Protocol):
    """What a bounded question keeps on the analysis that asks it."""

    _depth: int  # how deep the current question follows values
    _asking: set[tuple[object, ...]]  # the questions being answered
    _answers: dict[tuple[object, ...], object]  # answers no cut shaped
    _cuts: int  # how many answers a cut made "not known"


# How many values deep a question may follow (a condition on a name whose bindings sit under
# conditions on other names, ...): past it the answer is "not known", which never gives an
# error. Long chains in real code (dgl-ke's model classes) ran out of Python's stack.
_MAX_DEPTH = 40
_Method = TypeVar("_Method", bound=Callable[..., Any])


def bounded(unknown: Callable[[], object]) -> Callable[[_Method], _Method]:
    """A question that follows values into others: ``unknown()`` once it is ``_MAX_DEPTH`` deep
    or when it is asked again inside itself (``DEVICE = get_device(DEVICE)`` with a helper that
    compares its parameter).  Within one outermost question each answer is computed once: an
    answer that no cut shaped is remembered, so branching questions stay polynomial, not
    exponential in the depth."""

    def bound(method: _Method) -> _Method:
        @functools.wraps(method)
        def following(self: Asking, *args: Any) -> Any:
            key = (method.__name__, *args)
            if key in self._answers:
                return self._answers[key]
            if self._depth >= _MAX_DEPTH or key in self._asking:
                self._cuts += 1
                return unknown()
            cuts = self._cuts
            self._depth += 1
            self._asking.add(key)
            try:
                answer = method(self, *args)
            finally:
                self._depth -= 1
                self._asking.discard(key)
            if self._cuts == cuts:
                self._answers[key] = answer
            if not self._depth:
                self._answers.clear()  # the facts may change before the next outermost question
            return answer

        return following  # type: ignore[return-value]  # same signature as ``method``

    return bound
