"""Moves to an element of a list of CUDA device indices (``net.to(gpu_ids[0])``, pix2pix/CUT's
``init_net``, ``gpu_ids`` parsed from ``--gpu_ids 0``): an int element is cuda:N, which raises
without CUDA ("Found no NVIDIA driver").  Such a move is ported (XLA103) where the file says the
list holds CUDA indices (an element handed to ``.cuda()`` or ``set_device()``, the list handed as
``device_ids=`` or to ``DataParallel``), or where the function asserts CUDA is available around
the move; a list named for GPU indices that nothing marks is reported, like ``.to(rank)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device import shapes
from codemods.engine.nodes import arg_value, dotted

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.engine.walk import Walk

_PARALLEL = ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel")


def listed(device: cst.BaseExpression | None) -> str | None:
    """``gpu_ids[0]``, ``self.opt.gpu_ids[i]``: the list's name (one index, not a slice)."""
    if type(device) is not cst.Subscript or len(device.slice) != 1 or type(device.slice[0].slice) is not cst.Index:
        return None
    return dotted(device.value)


def named_for_indices(name: str) -> bool:
    """``gpu_ids``, ``self.gpu_ids``, ``device_ids``, ``gpus``: a list of GPU numbers by its name."""
    return shapes.named_like_an_index(name) or name.rsplit(".", 1)[-1].lower() == "device_ids"


class ListedIndices:
    """What the device analysis hands on about lists of CUDA indices and moves to their elements."""

    def __init__(self) -> None:
        # (the call, its device argument, the list, the function, the conditions around, a `.to`)
        self.moves: list[tuple[cst.Call, cst.Subscript, str, str, tuple[cst.CSTNode, ...], bool]] = []
        self.marked: set[str] = set()  # lists the file says hold CUDA indices
        self.asserted: list[tuple[str, tuple[cst.CSTNode, ...]]] = []  # `assert torch.cuda.is_available()`

    def saw_call(
        self, node: cst.Call, method: str | None, callee: str | None, keywords: dict[str, cst.Arg], walk: Walk
    ) -> None:
        if method == "to":
            device = arg_value(node, 0, "device")
        elif "device" in keywords and method != "cuda" and not (callee or "").startswith(("torch.cuda.", "torch.Gen")):
            device = keywords["device"].value
        else:
            device = None
        if (name := listed(device)) is not None:
            self.moves.append((node, device, name, walk.qualname, tuple(walk.conds), method == "to"))  # type: ignore[arg-type]  # listed() is not None only for a Subscript
        if method == "cuda" or callee in apis.SET_DEVICE_CALLS:
            self.marked.update(n for n in (listed(arg_value(node, 0, "device")),) if n is not None)
        ids = keywords["device_ids"].value if "device_ids" in keywords else None
        if ids is None and callee in _PARALLEL:
            ids = arg_value(node, 1, "device_ids")
        if (name := dotted(ids)) is not None:
            self.marked.add(name)

    def saw_assert(self, walk: Walk) -> None:
        self.asserted.append((walk.qualname, tuple(walk.conds)))

    def finish(self, part: DeviceFacts) -> None:
        """The moves ported (``index_moves``, with why) and those reported (``unsure_index_moves``)."""
        for call, device, name, scope, conds, to in self.moves:
            if name in self.marked:
                part.index_moves[call] = device
                part.index_why[call] = (
                    f"an element of `{name}`, a list this file hands to `.cuda()`, `set_device()` or `device_ids=`, "
                    "is a CUDA index (cuda:N), which fails without CUDA"
                )
            elif named_for_indices(name) and any(s == scope and conds[: len(c)] == c for s, c in self.asserted):
                part.index_moves[call] = device
                part.index_why[call] = (
                    f"an element of `{name}`, a list of GPU numbers (the function asserts "
                    "`torch.cuda.is_available()` around the move), is a CUDA index (cuda:N), which fails without CUDA"
                )
            elif to and named_for_indices(name):
                part.unsure_index_moves.add(call)
