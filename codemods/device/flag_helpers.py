"""A device flag the port rewrote ("cuda" -> "xla" in its default and choices, XLA101) handed to a
function of the file that turns the flag's string into a device (``init_device(args.device)``), for
DeviceValueAnalysis (values.py).  The function's conditions on that string are read with "xla", the
value the port wrote: they are conditions the port changed.  Where the function then returns a
device off XLA (``return torch.device("cpu")`` after ``if "cuda" in s`` and ``if s == "mps"``: a
helper that never knew "xla"), the value the run names to train on the XLA device trains on the CPU;
the answer names the function and its caller (XLA111 at that return)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.rules.xla111_device_off_xla import ported_flag_helper
from codemods.device.where import UNKNOWN, XLA, Where, either
from codemods.engine.nodes import arg_value, dotted, method_name, walk
from codemods.engine.walk import Analysis

if TYPE_CHECKING:
    from codemods.device.analysis import DeviceAnalysis
    from codemods.device.call_sites import CallSites
    from codemods.device.facts import DeviceValueFacts
    from codemods.device.where import Binding
    from codemods.facts import Facts
    from codemods.project.analysis import ProjectAnalysis
    from codemods.project.module_summary import ModuleSummary

# The string the port writes into a device flag's default and choices.
_PORTED = "xla"


class FlagHelpers(Analysis):
    """The part of DeviceValueAnalysis that reads a function of the file with a ported device flag."""

    facts: Facts
    part: DeviceValueFacts
    device: DeviceAnalysis
    call_sites: CallSites
    bindings: dict[str, list[Binding]]
    returned: dict[str, list[Binding]]
    _positions: dict[str, list[str]]
    project: ProjectAnalysis
    # The calls of the file's functions handed a ported device flag, and where the device they
    # return ends with the flag "xla" (off XLA only: anything else is not said here).
    flag_helper_calls: dict[cst.Call, Where]

    if TYPE_CHECKING:

        def _live(self, name: str, scope: str) -> list[Binding]: ...
        def where_returned(self, function: str) -> Where: ...
        def where(self, expr: cst.BaseExpression | None, scope: str = "") -> Where: ...
        def truth(self, test: cst.BaseExpression, scope: str, ported: bool) -> bool | None: ...
        def text(self, expr: cst.BaseExpression | None, scope: str) -> str | None: ...
        def code(self, node: cst.CSTNode) -> str: ...

    def _flag_helpers(self) -> None:
        """Every call of a function of the file that is handed a ported device flag: where the
        device it returns ends when the flag is "xla"."""
        self.flag_helper_calls = {}
        for function, calls in self.call_sites.calls.items():
            if function not in self.returned:
                continue
            positions = self._positions.get(function, [])
            for call, _caller in calls:
                for index, param in enumerate(positions):
                    dest = self._ported_flag(arg_value(call, index, param))
                    if dest is None or self._rebound(function, param):
                        continue
                    found = self._returns_with(function, param)
                    if found.on_xla is False:
                        why = ported_flag_helper(function, found.why, dest, self.code(call))
                        self.flag_helper_calls[call] = Where(False, why, found.node)
                        self.part.flag_helpers.setdefault(dest, function)
                        break
        self._xla_string_returns()
        self.part.ported_flags = set(self.device.ported_flags)

    def _xla_string_returns(self) -> None:
        """For other files: the functions of the file (not methods) whose returns end off XLA with a
        parameter that their conditions read "xla" (and not without it)."""
        for function, returns in self.returned.items():
            if "." in function:
                continue
            for index, param in enumerate(self._positions.get(function, [])):
                if self._rebound(function, param) or not any(
                    _mentions(cond.test, param) for binding in returns for cond, _ in binding.conds
                ):
                    continue
                found = self._returns_with(function, param)
                if found.on_xla is False and self.where_returned(function).on_xla is not False:
                    self.part.xla_string_returns[(function, index)] = found.why

    def project_flag_helper(self, call: cst.Call, function: str, summary: ModuleSummary, scope: str) -> Where | None:
        """``init_device(args.device)`` of a function of another module of the project that returns a
        device off XLA for "xla", handed a flag the port rewrote: off XLA, at the call."""
        for index, arg in enumerate(call.args):
            if arg.keyword is not None or arg.star:
                break
            dest = self._ported_flag(arg.value, scope)
            why = summary.xla_string_return(function, index) if dest is not None else None
            if dest is not None and why is not None:
                name = dotted(call.func) or function
                return Where(False, ported_flag_helper(name, why, dest, self.code(call), summary.path), call)
        return None

    def _ported_flag(self, arg: cst.BaseExpression | None, scope: str = "") -> str | None:
        """The flag ``arg`` reads (``args.device``), if the port rewrote its default or a choice: a
        flag of this file's parser, or of the project module whose parser made the namespace
        (``args = build_parser().parse_args()``)."""
        name = dotted(arg) if arg is not None else None
        if name is None or name.count(".") != 1:
            return None
        namespace, _, dest = name.partition(".")
        if dest in self.device.ported_dests and (namespace in self.device.ported_namespaces or namespace == "args"):
            return dest
        return dest if dest in self._project_parser_flags(namespace, scope) else None

    def _project_parser_flags(self, namespace: str, scope: str) -> frozenset[str]:
        """The ported device flags of the project module whose function built the parser that the
        namespace was parsed with (``build_parser().parse_args()``, ``get_args()``)."""
        values = self._live(namespace, scope)
        value = values[0].value if len(values) == 1 else None
        while type(value) is cst.Call:
            head = value.func
            if type(head) is cst.Attribute and type(head.value) is cst.Call:
                value = head.value  # build_parser().parse_args(): the parser's builder
                continue
            found = self.project.origin(dotted(head) or "")
            return found.summary.ported_flags if found is not None and found.summary is not None else frozenset()
        return frozenset()

    def _rebound(self, function: str, param: str) -> bool:
        """The function binds the parameter again (``s = s.lower()``): its conditions read another value."""
        return any(b.scope == function for b in self.bindings.get(param, []))

    def _returns_with(self, function: str, param: str) -> Where:
        """Where the function's returns end with ``param`` "xla": up to the first return whose
        conditions all hold, those under a condition False then skipped."""
        live: list[Binding] = []
        for binding in self.returned.get(function, []):
            open_conds = False
            runs = True
            for cond, in_body in binding.conds:
                test = self._truth_with(cond.test, function, param, cond in self.facts.device.ifs)
                if test is None:
                    open_conds = True
                elif test is not in_body:
                    runs = False
                    break
            if not runs:
                continue
            live.append(binding)
            if not open_conds:
                break
        if not live:
            return UNKNOWN
        return either([self._value_with(b.value, function, param) for b in live])

    def _value_with(self, value: cst.BaseExpression | None, function: str, param: str) -> Where:
        if value is None:
            return UNKNOWN
        if dotted(value) == param:
            return XLA  # the string "xla" names the XLA device
        if (
            type(value) is cst.Call
            and dotted(arg_value(value, 0, "type")) == param
            and self.walk.resolve(value.func) == "torch.device"
        ):
            return XLA  # torch.device("xla")
        if _mentions(value, param):
            return UNKNOWN
        return self.where(value, function)

    def _truth_with(self, test: cst.BaseExpression, function: str, param: str, ported: bool) -> bool | None:
        """What ``test`` is with ``param`` "xla" (None: not known)."""
        if not _mentions(test, param):
            return self.truth(test, function, ported)
        if test in self.part.widened_checks:
            return None  # ``s == "cuda"`` that XLA123 makes accept "xla" too
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            inner = self._truth_with(test.expression, function, param, ported)
            return None if inner is None else not inner
        if type(test) is cst.BooleanOperation:
            left = self._truth_with(test.left, function, param, ported)
            right = self._truth_with(test.right, function, param, ported)
            if type(test.operator) is cst.And:
                return False if False in (left, right) else True if left is right is True else None
            return True if True in (left, right) else False if left is right is False else None
        if dotted(test) == param:
            return True  # "xla" is not empty
        if type(test) is cst.Call and method_name(test) in ("startswith", "endswith") and len(test.args) == 1:
            owner = test.func.value if type(test.func) is cst.Attribute else None
            text = self.text(test.args[0].value, function)
            if dotted(owner) != param or text is None:
                return None
            return _PORTED.startswith(text) if method_name(test) == "startswith" else _PORTED.endswith(text)
        if type(test) is cst.Comparison and len(test.comparisons) == 1:
            return self._compare_with(test, function, param)
        return None

    def _compare_with(self, test: cst.Comparison, function: str, param: str) -> bool | None:
        operator = type(test.comparisons[0].operator)
        comparator = test.comparisons[0].comparator
        left = self._text_with(test.left, function, param)
        if operator in (cst.In, cst.NotIn) and isinstance(comparator, (cst.List, cst.Tuple, cst.Set)):
            options = [self._text_with(e.value, function, param) for e in comparator.elements]
            if left is None or None in options:
                return None
            return (left in options) is (operator is cst.In)
        right = self._text_with(comparator, function, param)
        if left is None or right is None:
            return None
        if operator in (cst.In, cst.NotIn):
            return (left in right) is (operator is cst.In)  # ``"cuda" in s``: a substring
        if operator in (cst.Equal, cst.NotEqual):
            return (left == right) is (operator is cst.Equal)
        return None

    def _text_with(self, expr: cst.BaseExpression, function: str, param: str) -> str | None:
        if dotted(expr) == param:
            return _PORTED
        return None if _mentions(expr, param) else self.text(expr, function)


def _mentions(node: cst.CSTNode, param: str) -> bool:
    return any(type(sub) is cst.Name and sub.value == param for sub in walk(node))
