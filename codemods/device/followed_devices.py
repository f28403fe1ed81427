"""Devices that follow a tensor handed to a function: ``torch.zeros(n).to(x.device)``,
``torch.zeros(n, device=x.device)`` where ``x`` is a parameter of the function that it reads as
a tensor (its ``.shape``, ``.size()``, ``.dtype``; or any input of a ``forward``).  Such a move
puts the new tensor where the input already is: it names no device of the script's choosing, so
a file whose only device code is of this kind still picks no device (XLA005).  A setting
(``args.device``, ``cfg.device``, ``self.device``) is no tensor: it still names one."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, walk

# What only a tensor is asked: a config object has no shape nor dtype.
_TENSOR_READS = frozenset(
    {"shape", "size", "dtype", "ndim", "dim", "numel", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"}
)


def _parameters(function: cst.FunctionDef) -> set[str]:
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return {param.name.value for param in every}


def _read_as_a_tensor(function: cst.FunctionDef, name: str) -> bool:
    return any(
        type(sub) is cst.Attribute
        and sub.attr.value in _TENSOR_READS
        and type(sub.value) is cst.Name
        and sub.value.value == name
        for sub in walk(function.body)
    )


def follows_a_tensor(device: cst.BaseExpression | None, function: cst.FunctionDef | None) -> bool:
    """``device`` (where a device goes) is ``x.device`` of a tensor ``x`` handed to ``function``."""
    if type(device) is not cst.Attribute or device.attr.value != "device" or type(device.value) is not cst.Name:
        return False
    name = device.value.value
    if function is None or name in ("self", "cls") or name not in _parameters(function):
        return False
    return function.name.value == "forward" or _read_as_a_tensor(function, name)


class FollowedDevices:
    """The device names of a file seen only where they follow a tensor (``x.device`` above),
    and the calls that move or make a tensor there."""

    def __init__(self) -> None:
        self.following: set[str] = set()
        self.chosen: set[str] = set()  # seen where they do not follow a tensor
        self.calls: set[cst.Call] = set()

    def saw_call(
        self, node: cst.Call, method: str | None, keywords: dict[str, cst.Arg], function: cst.FunctionDef | None
    ) -> None:
        keyword = keywords.get("device")
        for device in (arg_value(node, 0, "device") if method == "to" else None, keyword.value if keyword else None):
            name = dotted(device)
            if name is None:
                continue
            if follows_a_tensor(device, function):
                self.following.add(name)
                self.calls.add(node)
            else:
                self.chosen.add(name)

    def only_following(self) -> set[str]:
        """The names (``x.device``) that never name a device of the file's choosing."""
        return self.following - self.chosen
