"""A script's own CPU choice handed to the project: ``config.use_GPU = False``, then
``Trainer(config, ...)``, where a module of the project that the script imports picks the device
with that flag (``"cuda:0" if config.use_GPU else "cpu"``, which the port makes ``"xla" if
config.use_GPU else "cpu"``): on an XLA host the run stays on the CPU, and the module that picks
the device cannot tell.  Reported at the flag (XLA111).  The port leaves the choice as the author
wrote it, as it leaves the "cpu" default of a device flag: a script that sets the flag to False
may mean it (a CPU run), and a person reads the finding and sets it to True."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.rules.xla111_device_off_xla import cpu_switch_handed

if TYPE_CHECKING:
    from codemods.device.values import DeviceValueAnalysis

# Attributes named for a GPU or CUDA switch (``use_GPU``, ``cuda``, ``use_cuda``, ``gpu``).
_GPU_FLAG = re.compile(r"gpu|cuda", re.IGNORECASE)


def handed_cpu_flags(values: DeviceValueAnalysis) -> Iterator[tuple[cst.BaseExpression, str]]:
    """``name = False`` (every binding of the file) on an object handed to a callable of a
    project module, where a module the file imports picks the device with that attribute: the
    value, and what to say there."""
    project_names = values.facts.imports.project_names
    context = values.facts.project.context
    for name, bindings in values.bindings.items():
        root, _, attr = name.partition(".")
        handed = values.handed.get(root)
        if not handed or not attr or "." in attr or not _GPU_FLAG.search(attr):
            continue
        if not all(type(b.value) is cst.Name and b.value.value == "False" and not b.conds for b in bindings):
            continue
        chooser = next(
            (
                found.summary.path
                for module, imported in project_names.values()
                if (found := context.lookup(module, imported)) is not None
                and found.summary is not None
                and attr in found.summary.condition_attributes
            ),
            None,
        )
        if chooser is None:
            continue
        value = bindings[-1].value
        assert value is not None  # a literal False, checked above
        yield value, cpu_switch_handed(name, root, handed[0][1], chooser, attr)
