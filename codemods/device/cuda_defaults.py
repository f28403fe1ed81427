"""Two CUDA choices that act at a distance, for DeviceAnalysis.

A CUDA default for new tensors (``torch.set_default_tensor_type("torch.cuda.FloatTensor")``,
``torch.set_default_device("cuda")``): every tensor made without a device (``torch.tensor(obs)``,
``torch.zeros(n)``, in any module) and every module built after it goes to CUDA.  It is device
code (a check around it picks the device, XLA104), and XLA107 ports it.

A flag that a CUDA check clears (``if config["use_cuda"] and not torch.cuda.is_available():
config["use_cuda"] = False``, pymarl's ``args_sanity_check``), read where the file picks the device
or moves to it (``args.device = "cuda" if args.use_cuda else "cpu"``, ``if args.use_cuda:
learner.cuda()``, with ``args = SimpleNamespace(**config)``): on an XLA host the check clears it
and the run stays on the CPU.  The check picks the device, as ``use_cuda = flag and
torch.cuda.is_available()`` does; it goes (XLA104) unless a condition that reads the flag guards
code that fails without CUDA (then it stays, an error)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.config_shapes import config_chain, index_key
from codemods.engine.nodes import arg_value, fold_true, is_cuda_device_string, string_value, walk
from codemods.engine.walk import Analysis, Walk

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.device.facts import DeviceFacts

_DEFAULT_TYPE = "torch.set_default_tensor_type"
_DEFAULT_DEVICE = "torch.set_default_device"


class CudaDefaults(Analysis):
    """The part of DeviceAnalysis that finds CUDA defaults for new tensors and flags that CUDA
    checks clear."""

    part: DeviceFacts
    device_code: set[cst.CSTNode]
    crash_code: dict[cst.CSTNode, cst.CSTNode]
    availability_ifs: dict[cst.If, cst.FunctionDef | None]
    cond_refs: dict[cst.CSTNode, set[str]]

    other_marked: set[cst.CSTNode]

    if TYPE_CHECKING:

        def mark_device_code(self, picks: bool = True, location: bool = False) -> None: ...

    def _default_for_new_tensors(self, callee: str | None, node: cst.Call) -> None:
        if callee == "torch.set_default_dtype":
            self.part.sets_default_dtype = True
        elif (
            callee in (_DEFAULT_TYPE, _DEFAULT_DEVICE) and (named := cuda_default(node, callee, self.walk)) is not None
        ):
            self.part.cuda_defaults[node] = named
            self.mark_device_code()

    def _flags_cleared_by_checks(self) -> None:
        """A check that clears a flag the file picks the device with is device code (and crash
        code where a condition on the flag guards code that fails without CUDA)."""
        for node in self.availability_ifs:
            if node in self.device_code or (key := cleared_flag(node, self.part.is_available_call)) is None:
                continue
            uses = [cond for cond in self.cond_refs if cond is not node and _reads(cond, key)]
            if not any(use in self.device_code for use in uses):
                continue
            self.device_code.add(node)
            self.other_marked.add(node)
            self.part.cleared_flags[node] = key
            if (blocker := next((self.crash_code[u] for u in uses if u in self.crash_code), None)) is not None:
                self.crash_code[node] = blocker


def cuda_default(node: cst.Call, callee: str, resolver: Walk) -> str | None:
    """The CUDA tensor type (``torch.cuda.FloatTensor``) or device string (``cuda``) a call of
    ``callee`` makes the default for new tensors; None if it is not a CUDA one."""
    if callee == _DEFAULT_DEVICE:
        device = arg_value(node, 0, "device")
        return string_value(device) if device is not None and is_cuda_device_string(device) else None
    kind = arg_value(node, 0, "t")
    if kind is None:
        return None
    named = string_value(kind) if type(kind) is cst.SimpleString else resolver.resolve(kind)
    return named if named is not None and named.startswith("torch.cuda.") else None


def cleared_flag(node: cst.If, is_available_call: Callable[[cst.BaseExpression], bool]) -> str | None:
    """``if cfg["use_cuda"] and not torch.cuda.is_available(): cfg["use_cuda"] = False`` (a log
    call beside it): the flag's name (``use_cuda``); the check never runs on XLA once it holds."""
    if node.orelse is not None or fold_true(node.test, is_available_call) is not False:
        return None
    if type(node.body) is not cst.IndentedBlock:
        return None
    keys = set()
    for line in node.body.body:
        if type(line) is not cst.SimpleStatementLine:
            return None
        for statement in line.body:
            if type(statement) is cst.Expr and type(statement.value) is cst.Call:
                continue  # a warning or a print
            if (
                type(statement) is not cst.Assign
                or len(statement.targets) != 1
                or type(statement.value) is not cst.Name
                or statement.value.value != "False"
                or (key := _key(statement.targets[0].target)) is None
            ):
                return None
            keys.add(key)
    return keys.pop() if len(keys) == 1 else None


def subscript_flag(
    target: cst.BaseExpression, value: cst.BaseExpression, is_available_call: Callable[[cst.BaseExpression], bool]
) -> str | None:
    """``cfg["cuda"] = cfg["cuda"] and torch.cuda.is_available()``: the item as a chain
    (``cfg.cuda``), a flag as ``args.cuda = ...`` is; None for any other item."""
    if type(target) is not cst.Subscript or not any(is_available_call(n) for n in walk(value) if type(n) is cst.Call):
        return None
    return config_chain(target)


def _key(node: cst.BaseExpression) -> str | None:
    """The flag a name, an attribute or a string-keyed item holds (``use_cuda``)."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return index_key(node) if type(node) is cst.Subscript else None


def _reads(cond: cst.CSTNode, key: str) -> bool:
    """The test of ``cond`` (an ``if`` or a conditional expression) reads the flag ``key``."""
    test = getattr(cond, "test", None)
    return test is not None and any(
        isinstance(sub, (cst.Name, cst.Attribute, cst.Subscript)) and _key(sub) == key for sub in walk(test)
    )
