"""Which device a device variable names once the port is done (the part of DeviceAnalysis that
answers it): the XLA device on every path, or never CUDA, its values under an availability
check the port folds away not counted."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, fold_true, is_cuda_device_string, string_value
from codemods.engine.walk import Analysis
from codemods.targets import spellings

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.facts import Facts

CUDA = "<cuda>"  # the device of a `.cuda()` move


class PortedDevices(Analysis):
    """The part of DeviceAnalysis that tells which device a device variable names once ported."""

    facts: Facts
    part: DeviceFacts
    # What each device variable is assigned, anywhere in the file.
    device_assignments: dict[str, list[cst.BaseExpression]]
    cuda_string_names: set[str]  # loc = "cuda:{}".format(gpu)
    text_values: dict[str, list[cst.BaseExpression]]  # what each string name is assigned

    def always_xla(self, device: str) -> bool:
        """The device variable is assigned once (not counting the branches of an availability
        check that the port folds away), to something that becomes the XLA device."""
        values = [v for v in self.device_assignments.get(device, []) if not self._folded_away(v)]
        if len(values) != 1:
            return False
        value = fold_true(values[0], self.part.is_available_call)
        if isinstance(value, bool):
            return False
        if type(value) is cst.Integer or (type(value) is cst.Call and value in self.part.calls):
            return True
        qualified = self.walk.resolve(value.func) if type(value) is cst.Call else None
        return qualified in spellings("device") or is_cuda_device_string(value)

    def file_always_xla(self) -> bool:
        """Every device the file picks becomes the XLA device (no CPU fallback), so a
        device that arrives as an argument is the XLA device too."""
        devices = self.device_assignments
        return bool(devices) and all(self.always_xla(name) for name in devices)

    def xla_on_every_path(self, device: str | None) -> bool:
        return device == CUDA or (device is not None and (self.always_xla(device) or self.file_always_xla()))

    def xla_once_flags_switched_on(self, device: str) -> bool:
        """The device variable is assigned once, to a choice on a flag that only holds an
        availability check and picks the device (``self.use_cuda = torch.cuda.is_available()``,
        which XLA104 switches on), and that branch names CUDA: ``torch.device("cuda:0" if
        self.use_cuda else "cpu")`` is the XLA device on every path.  Read before the device
        analysis concludes (which flags it switches on), so a flag that also guards code failing
        without CUDA (XLA104 leaves it, the device stays the CPU) is not counted."""
        values = [v for v in self.device_assignments.get(device, []) if not self._folded_away(v)]
        if len(values) != 1:
            return False
        value = values[0]
        if type(value) is cst.Call and self.walk.resolve(value.func) == "torch.device" and len(value.args) == 1:
            value = value.args[0].value
        if type(value) is not cst.IfExp:
            return False
        chosen = fold_true(value, lambda node: self.part.is_available_call(node) or self._switched_flag(dotted(node)))
        return not isinstance(chosen, bool) and (is_cuda_device_string(chosen) or string_value(chosen) == "cuda")

    def _switched_flag(self, name: str | None) -> bool:
        candidates = self.flag_candidates.get(name, []) if name is not None else []  # type: ignore[attr-defined]  # a mixin: DeviceAnalysis (device/device_walk.py) defines flag_candidates, cond_refs, device_code, crash_code
        if not candidates or not all(fold_true(v, self.part.is_available_call) is True for v in candidates):
            return False
        uses = [node for node, refs in self.cond_refs.items() if name in refs]  # type: ignore[attr-defined]  # (as above)
        return any(use in self.device_code for use in uses) and not any(use in self.crash_code for use in uses)  # type: ignore[attr-defined]  # (as above)

    def _holds_the_xla_device(self, name: str) -> bool:
        """What a CUDA check compares names no CUDA device once converted: a CUDA string (it
        becomes "xla"), a device variable whose every value is or becomes the XLA device or
        another one that is not CUDA, or any name where every device the file picks does
        (``device_type`` derived from them)."""
        devices = self.device_assignments
        return (
            name in self.cuda_string_names
            or self._never_cuda(name)
            or (bool(devices) and all(self._never_cuda(device) for device in devices))
        )

    def _never_cuda(self, device: str) -> bool:
        """Every value the device variable keeps after the port (those under an availability
        check that the port folds away do not run) names a device that is not CUDA there."""
        values = [
            fold_true(v, self.part.is_available_call)
            for v in self.device_assignments.get(device, [])
            if not self._folded_away(v)
        ]
        return bool(values) and all(not isinstance(v, bool) and self._not_cuda_once_ported(v) for v in values)

    def _not_cuda_once_ported(self, value: cst.BaseExpression) -> bool:
        """ "xla", "cpu", a CUDA string (it becomes "xla"), torch.device of one of those or of a
        name holding a CUDA string, a device call the port replaces, the target's device call."""
        text = string_value(value)
        if text is not None:
            return not text.startswith("cuda") or is_cuda_device_string(value)
        if is_cuda_device_string(value):
            return True
        if type(value) is not cst.Call:
            return False
        if value in self.part.calls or self.walk.resolve(value.func) in spellings("device"):
            return True
        if self.walk.resolve(value.func) == "torch.device" and value.args:
            first = value.args[0].value
            name = dotted(first) or ""
            texts = self.text_values.get(name, [])
            return (
                self._not_cuda_once_ported(first)
                or name in self.cuda_string_names
                or (bool(texts) and all(self._not_cuda_once_ported(t) for t in texts))
            )
        return False

    def _folded_away(self, node: cst.CSTNode) -> bool:
        """In the branch of an ``if torch.cuda.is_available():`` (dropped by the port) that
        does not run once the check holds (``if not torch.cuda.is_available(): device = 'cpu'``)."""
        branches = {
            id(branch): (guard, branch is guard.body)
            for guard in self.part.ifs
            for branch in (guard.body, guard.orelse)
            if branch is not None
        }
        parents, key = self.walk.parents, id(node)
        while (key := parents.get(key)) is not None:  # type: ignore[assignment]  # key is None only where the loop stops: parents.get returns int | None
            if key in branches:
                guard, in_body = branches[key]
                holds = fold_true(guard.test, self.part.is_available_call)
                if isinstance(holds, bool) and holds is not in_body:
                    return True
        return False
