"""String comparisons as they read after the port (the part of DeviceValueAnalysis, values.py,
that decides it).  The port rewrites some strings (``backend = "nccl"`` -> ``"xla"``) and leaves
every other as it is, so a comparison of a name with a string asks after the port something the
author did not always mean: a literal compared with a rewritten value that is the CUDA one of a
choice the port made one value is rewritten with it (``backend == "nccl"`` -> ``== "xla"``,
XLA114), a binding that a comparison the port changed drops says so (the port dropped it, not the
author: XLA111's words), and a variable of the environment compared with strings is no CUDA check
unless the file sets it from a value the port changes (environment_flags.py).  Kept apart from
values.py, which follows values through the file: this part asks it what a value holds after
the port (``text``, ``truth``) and decides how the comparisons read."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.environment_flags import compared_variable
from codemods.device.rules.xla111_device_off_xla import condition_changed_by_the_port
from codemods.engine.nodes import dotted, is_cuda_device_string, string_value, walk
from codemods.engine.walk import Analysis

if TYPE_CHECKING:
    from codemods.device.facts import DeviceValueFacts
    from codemods.device.where import Binding
    from codemods.facts import Facts


class PortedComparisons(Analysis):
    """The part of DeviceValueAnalysis that reads string comparisons as the port leaves them."""

    facts: Facts
    part: DeviceValueFacts
    bindings: dict[str, list[Binding]]
    flag_defaults: dict[str, cst.BaseExpression]  # args.device -> its default
    # A name compared with a string literal: the comparison, the name, the literal.
    comparisons: list[tuple[cst.Comparison, str, cst.SimpleString]]
    # ``os.environ["DEVICE"] = value``: the variable -> (the value, the function it is set in).
    environment: dict[str, list[tuple[cst.BaseExpression, str]]]

    if TYPE_CHECKING:

        def _live(self, name: str, scope: str) -> list[Binding]: ...

        def truth(self, test: cst.BaseExpression, scope: str, ported: bool) -> bool | None: ...

        def text(self, expr: cst.BaseExpression | None, scope: str) -> str | None: ...

        def code(self, node: cst.CSTNode) -> str: ...

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        operator = type(node.comparisons[0].operator)
        left, right = node.left, node.comparisons[0].comparator
        if operator in (cst.In, cst.NotIn) and type(right) in (cst.Tuple, cst.List, cst.Set):
            # ``backend in ("nccl", "mpi")``: each string listed is a literal compared with the name.
            if (name := dotted(left)) is not None:
                for element in right.elements:  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
                    if type(element.value) is cst.SimpleString:
                        self.comparisons.append((node, name, element.value))
            return
        if operator not in (cst.Equal, cst.NotEqual):
            return
        if type(left) is cst.SimpleString:
            left, right = right, left
        if type(right) is cst.SimpleString and (name := dotted(left)) is not None:
            self.comparisons.append((node, name, right))

    def _ported_comparisons(self) -> None:
        """A name compared with a string where the port gives the name one new value (``backend ==
        "nccl"`` once ``backend = "nccl"`` is "xla"): the literal becomes that value where it is one
        the new value stands for (``_replaced``), and the comparison asks what it asked (XLA114)."""
        part = self.part
        for comparison, name, literal in self.comparisons:
            scope = next((b.scope for b in self.bindings.get(name, [])), "")
            values = [b.value for b in self._live(name, scope) or self.bindings.get(name, [])]
            flag = not values and "." in name
            if flag and (default := self.flag_defaults.get(name.rsplit(".", 1)[1])) is not None:
                values = [default]  # ``args.backend``: the flag's default
            new = {self.facts.distributed.backend_values.get(v) if v is not None else None for v in values}
            value = new.pop() if len(new) == 1 else None
            if flag and value != "xla":
                continue  # a flag's init method: the port's value is not always what its default says
            compared = string_value(literal)
            if value is not None and compared != value and compared in _replaced(values):
                part.ported_comparisons[literal] = (self.code(comparison), value)

    def _changed_by_the_port(self, name: str, scope: str, live: list[Binding]) -> str | None:
        """Why a binding of ``name`` the author wrote for the accelerator no longer runs, where a
        condition the port changed drops it: it compares a value the port rewrote (``backend ==
        NCCL`` once ``backend`` is "xla") and is False after the port, as it was not before."""
        ported = self.facts.distributed.backend_values
        for binding in self.bindings.get(name, []):
            if binding.scope != scope or binding in live:
                continue
            for cond, in_body in binding.conds:
                test = cond.test
                if type(test) is not cst.Comparison or self.truth(test, scope, False) is not (not in_body):
                    continue  # not a comparison known to drop the binding after the port
                operands = [test.left, *(c.comparator for c in test.comparisons)]
                rewritten = next(
                    (
                        operand
                        for operand in operands
                        if (compared := dotted(operand)) is not None
                        and any(b.value in ported for b in self._live(compared, scope))
                    ),
                    None,
                )
                if rewritten is not None:
                    value = self.text(rewritten, scope) or ""
                    return condition_changed_by_the_port(self.code(test), self.code(rewritten), value)
        return None

    def _environment_flags(self) -> None:
        """A variable of the environment compared with strings is no CUDA check (XLA105's "False
        on the XLA device") unless this file sets it from a value the port changes, or one this
        analysis cannot tell (environment_flags.py)."""
        device = self.facts.device
        for check in list(device.cuda_checks):
            if type(check) is not cst.Comparison:
                continue
            key = compared_variable(check, self.walk.resolve)
            if key is not None and all(self._kept_by_the_port(v, scope) for v, scope in self.environment.get(key, [])):
                device.cuda_checks.discard(check)

    def _kept_by_the_port(self, value: cst.BaseExpression, scope: str) -> bool:
        """Whether ``value`` holds after the port what it held before: strings and choices of
        strings the port leaves as they are, or a value whose one string is known and not XLA's."""
        ported = {*self.facts.device.strings, *self.facts.distributed.backend_values}
        if any(node in ported for node in walk(value)):
            return False
        if _string_choice(value):
            return True
        text = self.text(value, scope)
        return text is not None and text != "xla"


# The backends of CUDA devices: in a choice of backends (``"gloo" if cpu else "nccl"``) the one
# the XLA backend replaces.
_CUDA_BACKENDS = frozenset({"nccl"})


def _replaced(values: list[cst.BaseExpression | None]) -> frozenset[str]:
    """The strings that the port's one new value stands for where it rewrites ``values`` (the
    values a name may hold): one string, itself; a choice between strings (``"gloo" if
    cfg.use_cpu else "nccl"``, or ``backend = "gloo"`` in one branch and ``"nccl"`` in the
    other), the accelerator's (a CUDA backend or device string): the branch the port chose.  A
    comparison with another string of the choice ("gloo") asked for the other branch, and stays."""
    leaves: list[cst.BaseExpression] = []
    pending = [v for v in values if v is not None]
    while pending:
        node = pending.pop()
        if type(node) is cst.IfExp:
            pending += [node.body, node.orelse]
        elif string_value(node) is not None:
            leaves.append(node)
        else:
            return frozenset()  # a value the choice does not spell out
    texts = {string_value(leaf) or "" for leaf in leaves}
    if len(texts) == 1:
        return frozenset(texts)
    return frozenset(
        text for leaf in leaves if (text := string_value(leaf) or "") in _CUDA_BACKENDS or is_cuda_device_string(leaf)
    )


def _string_choice(node: cst.BaseExpression) -> bool:
    """A string, or a choice between strings (``"cpu" if cfg.use_cpu else "cuda"``)."""
    if type(node) is cst.IfExp:
        return _string_choice(node.body) and _string_choice(node.orelse)
    return string_value(node) is not None
