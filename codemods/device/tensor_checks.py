"""A tensor's own CUDA checks (XLA117): ``x.is_cuda`` and ``x.device.type == 'cuda'`` around a
move ask whether ``x`` is on the accelerator, which on XLA is ``x.device.type == 'xla'``; and
``x.get_device()`` where a device goes (a CUDA index, 0 for an XLA tensor) is ``x.device``.
What the analysis recognises (the rule's hooks write the port: rules/xla117_tensor_cuda_check.py)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device import host_tensors, shapes
from codemods.engine.nodes import arg_value, call_args, dotted, is_cuda_device_string, method_name, walk

if TYPE_CHECKING:
    pass


def checks_in(test: cst.BaseExpression) -> list[cst.Attribute | cst.Comparison]:
    """The tensor CUDA checks of a condition's test (``x.is_cuda``; not a call of a method
    ``is_cuda()``, which no tensor has: CandidateChecks follows it)."""
    called = {id(sub.func) for sub in walk(test) if type(sub) is cst.Call}
    return [
        sub
        for sub in walk(test)
        if (type(sub) is cst.Attribute and sub.attr.value == "is_cuda" and id(sub) not in called)
        or (type(sub) is cst.Comparison and _tensor_device_checked(sub))
    ]


class CandidateChecks:
    """The tensor checks in conditions' tests, each with its condition; and a method of the
    file that returns one (``def is_cuda(self): return self.lstm.bias_hh_l0.data.is_cuda``),
    called in a test (``... if self.is_cuda() else ...``): its returned check counts with that
    condition (the port asks the tensor there; the call stays)."""

    def __init__(self) -> None:
        self.in_tests: list[tuple[cst.Attribute | cst.Comparison, cst.If | cst.IfExp]] = []
        self.returned: dict[str, list[cst.Attribute | cst.Comparison]] = {}
        self.method_calls: list[tuple[str, cst.If | cst.IfExp]] = []
        # ``FT = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor`` whose CPU tensors only
        # meet XLA tensors where torch_xla takes them (host_tensors.py): it runs on XLA as it is.
        self.cpu_type_choices: set[cst.IfExp] = set()

    def saw_test(self, condition: cst.If | cst.IfExp, function: cst.FunctionDef | None = None) -> None:
        checks = checks_in(condition.test)
        self.in_tests.extend((check, condition) for check in checks)
        if type(condition) is cst.IfExp and checks and host_tensors.cpu_type_choice_safe(condition, function):
            self.cpu_type_choices.add(condition)
        self.method_calls.extend(
            (sub.func.attr.value, condition)  # type: ignore[attr-defined]  # method_name(sub) is not None: an Attribute
            for sub in walk(condition.test)
            if type(sub) is cst.Call and method_name(sub) is not None and dotted(sub.func.value) == "self"  # type: ignore[attr-defined]  # as above
        )

    def saw_def(self, node: cst.FunctionDef) -> None:
        # (the whole def's subtree, not its body's: the same returns in the same order, and the
        # subtree the training analysis walks again for what each function returns)
        returns = [sub.value for sub in walk(node) if type(sub) is cst.Return and sub.value is not None]
        checks = [check for value in returns for check in checks_in(value)]
        if checks:
            self.returned.setdefault(node.name.value, []).extend(checks)

    def pairs(self) -> list[tuple[cst.Attribute | cst.Comparison, cst.If | cst.IfExp]]:
        through_methods = [
            (check, condition) for name, condition in self.method_calls for check in self.returned.get(name, ())
        ]
        return self.in_tests + through_methods


def _tensor_device_checked(node: cst.Comparison) -> bool:
    """``x.device.type == 'cuda'``, ``'cuda' in str(x.device)``, ``x.device.type != 'cuda'``:
    the device of a value (``x``), compared with "cuda"."""
    name = shapes.compared_with_cuda(node)
    return name is not None and name.endswith(".device") and name != "self.device"


def around_moves(
    candidates: CandidateChecks,
    device_code: Collection[cst.CSTNode],
    crash_code: Mapping[cst.CSTNode, cst.CSTNode],
    picked_device_checks: Collection[cst.CSTNode],
    device_variables: Collection[str],
) -> dict[cst.Attribute | cst.Comparison, cst.CSTNode | None]:
    """The checks whose condition guards device code or a move (the value: code there that fails
    without CUDA), but those of the device the script picked (XLA110's) and comparisons of a
    device variable of the file (``self.device = ...``)."""
    return {
        check: crash_code.get(condition)
        for check, condition in candidates.pairs()
        if check not in picked_device_checks
        and condition not in candidates.cpu_type_choices
        and (condition in device_code or guards_a_move(condition) or copies_to_the_host(check, condition))
        and not (type(check) is cst.Comparison and shapes.compared_with_cuda(check) in device_variables)
    }


def chosen_cuda_strings(
    candidates: CandidateChecks, ported: Mapping[cst.Attribute | cst.Comparison, cst.CSTNode | None]
) -> set[cst.SimpleString]:
    """``'cuda' if x.is_cuda else 'cpu'`` (``... if x.device.type == 'cuda' else ...``): the CUDA
    string a ported check chooses when ``x`` is on the accelerator, which there names the XLA
    device (only the check as the whole test; its branch a string literal naming CUDA)."""
    chosen: set[cst.SimpleString] = set()
    for check, condition in candidates.in_tests:
        if type(condition) is not cst.IfExp or condition.test is not check or ported.get(check, False) is not None:
            continue
        if type(check) is cst.Comparison and type(check.comparisons[0].operator) is not cst.Equal:
            continue
        body = condition.body
        if type(body) is cst.SimpleString and is_cuda_device_string(body):
            chosen.add(body)
    return chosen


def guards_a_move(condition: cst.If | cst.IfExp) -> bool:
    """What a condition guards moves a value or makes one on a device (``.to(...)``, ``device=``)."""
    return any(
        type(sub) is cst.Call and (method_name(sub) == "to" or "device" in call_args(sub)[1])
        for branch in (condition.body, condition.orelse)
        if branch is not None
        for sub in walk(branch)
    )


def copies_to_the_host(check: cst.Attribute | cst.Comparison, condition: cst.If | cst.IfExp) -> bool:
    """``t.cpu() if t.is_cuda else t``, ``if t.is_cuda: return t.cpu()``: the check guards a copy of
    its own tensor to the host, which a tensor on the XLA device needs as much (before ``.numpy()``)."""
    if isinstance(check, cst.Attribute):
        tensor = dotted(check.value)
    else:
        name = shapes.compared_with_cuda(check)
        tensor = name.removesuffix(".device") if name is not None else None
    return tensor is not None and any(
        type(sub) is cst.Call and method_name(sub) == "cpu" and dotted(sub.func.value) == tensor  # type: ignore[attr-defined]  # method_name(sub) is not None: sub.func is an Attribute
        for sub in walk(condition.body)
    )


class TensorIndices:
    """``t.to(x.get_device())``, ``torch.zeros(n, device=x.get_device())``: x's CUDA index
    where a device goes (``.cuda(x.get_device())`` is XLA102's), when ``x`` is a tensor.  A
    ``get_device()`` the file defines (a model's own method, which returns its device), and one
    asked of a value the file calls (``model(x)``: a module, not a tensor), are left alone."""

    def __init__(self) -> None:
        self.candidates: list[tuple[cst.Call, str | None]] = []  # with the receiver's name
        self.called: set[str] = set()
        self.defines_get_device = False

    def saw_call(self, node: cst.Call, method: str | None, keywords: dict[str, cst.Arg]) -> None:
        if (called := dotted(node.func)) is not None:
            self.called.add(called)
        for device in (arg_value(node, 0, "device") if method == "to" else None, keywords.get("device")):
            at = device.value if isinstance(device, cst.Arg) else device
            if type(at) is cst.Call and method_name(at) == "get_device" and not at.args and method != "cuda":
                self.candidates.append((at, dotted(at.func.value)))  # type: ignore[attr-defined]  # method_name(at) is not None: at.func is an Attribute

    def saw_def(self, node: cst.FunctionDef) -> None:
        self.defines_get_device = self.defines_get_device or node.name.value == "get_device"

    def of_tensors(self) -> set[cst.Call]:
        if self.defines_get_device:
            return set()
        return {call for call, receiver in self.candidates if receiver not in self.called and receiver != "self"}
