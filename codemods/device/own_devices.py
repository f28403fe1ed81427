"""A tensor's own device: ``hidden_states.device``, where ``hidden_states`` is a tensor.

It is wherever the tensor is (the XLA device once the model is there), whatever the file
hands it to: ``torch.cuda.set_device(hidden_states.device)`` (a model-parallel branch) does not
make it a CUDA index, so ``x.to(hidden_states.device)`` and ``torch.zeros(n,
device=hidden_states.device)`` stay (XLA106 still drops the set_device call).

A name is a tensor where the file uses it as one (``x.shape``, ``x.size()``, ``x.view(...)``)
or annotates it as one (``x: torch.Tensor``); ``x.device`` is its own device unless the file
assigns ``x.device`` (``args.device = 0``: an option that holds an index)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Container

    import libcst as cst

# Attributes and methods of tensors that option namespaces and configs do not have.
_TENSOR_ATTRIBUTES = frozenset(
    {
        "shape",
        "ndim",
        "size",
        "dim",
        "numel",
        "view",
        "reshape",
        "unsqueeze",
        "squeeze",
        "permute",
        "transpose",
        "contiguous",
        "masked_fill",
        "is_cuda",
    }
)


class OwnDevices:
    def __init__(self) -> None:
        self.tensors: set[str] = set()

    def saw_attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _TENSOR_ATTRIBUTES and type(node.value).__name__ == "Name":
            self.tensors.add(node.value.value)  # type: ignore[attr-defined]  # a Name (checked by name above)

    def saw_param(self, node: cst.Param) -> None:
        from codemods.engine.nodes import dotted

        annotation = node.annotation.annotation if node.annotation is not None else None
        if (spelled := dotted(annotation)) is not None and spelled.split(".")[-1] in ("Tensor", "FloatTensor"):
            self.tensors.add(node.name.value)

    def own(self, name: str, assigned: Container[str]) -> bool:
        """``name`` (``x.device``) is a tensor's own device; ``assigned``: the names the file assigns."""
        owner, _, attribute = name.rpartition(".")
        return attribute == "device" and owner in self.tensors and owner != "self" and name not in assigned
