"""argparse flags that choose the device (``parser.add_argument("--device", default="cuda",
choices=["cpu", "cuda"])``): their default and choices are device strings, ported with the
others ("cuda" -> "xla").  A "cpu" default beside a "cuda" (or "xla") choice is where the model
trains unless the run names another device (or a function of the project sets it): reported at
the default (XLA111), where the module that reads the flag cannot say so (it only receives
``args``)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from codemods.device.shapes import is_device_name
from codemods.engine.nodes import call_args, flag_dest, is_cuda_device_string, string_value


@dataclass(frozen=True)
class DeviceFlag:
    dest: str  # the attribute of the parsed arguments (``device``)
    default: cst.BaseExpression | None
    choices: tuple[cst.BaseExpression, ...]

    @property
    def cpu_beside_accelerator(self) -> bool:
        """The default is "cpu" and a choice is a CUDA device (or "xla", once ported): an
        accelerator is meant, the CPU is what runs."""
        return string_value(self.default) == "cpu" and any(
            is_cuda_device_string(c) or string_value(c) == "xla" for c in self.choices
        )


def device_flag(call: cst.Call) -> DeviceFlag | None:
    """The device flag ``call`` (an ``add_argument``) adds, if it adds one."""
    dest = flag_dest(call)  # (``"-d", "--device"``: the long option names it, as argparse does)
    if dest is None or not is_device_name(dest):
        return None
    keywords = call_args(call)[1]
    default, choices = keywords.get("default"), keywords.get("choices")
    listed = choices.value if choices is not None else None
    return DeviceFlag(
        dest,
        default.value if default is not None else None,
        tuple(e.value for e in listed.elements) if isinstance(listed, (cst.List, cst.Tuple)) else (),
    )
