"""Expressions lazy mode's analyses tell apart by their form alone, with no data flow: a
read of a value to the host, a logging call, a device's name, an identity test; and the
method and attribute names that read a tensor's values or only its metadata."""

from __future__ import annotations

import libcst as cst

from codemods import apis
from codemods.device.shapes import is_device_name
from codemods.engine.nodes import dotted, method_name, receiver, string_value
from codemods.engine.walk import Walk
from codemods.targets import XM, spellings

# Reading a value to the host: explicit methods, and builtins that convert a tensor.
READ_METHODS = apis.HOST_READ_METHODS
READ_BUILTINS = frozenset({"float", "int", "bool", "str"})
# Methods and attributes that read a tensor's metadata, not its values.
METADATA_METHODS = frozenset(
    {
        "size",
        "dim",
        "numel",
        "nelement",
        "element_size",
        "is_floating_point",
        "is_contiguous",
        "get_device",
        "type",
        "ndimension",
        "stride",
        "storage_offset",
    }
)
METADATA_ATTRIBUTES = frozenset(
    {"shape", "dtype", "device", "ndim", "requires_grad", "is_leaf", "is_cuda", "layout", "names"}
)
TENSOR_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "real", "imag", "values", "indices"})
NOT_TENSORS = frozenset(
    {
        "parameters",
        "named_parameters",
        "state_dict",
        "modules",
        "children",
        "buffers",
        "named_buffers",
        "zero_grad",
        "train",
        "eval",
        "backward",
        "step",
        "keys",
        "items",
    }
)

# Logging calls: the statement only reports values, so it can run later, at the barrier.
LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})
PROGRESS_METHODS = frozenset({"set_postfix", "set_postfix_str", "set_description", "set_description_str"})
WRITER_METHODS = frozenset({"add_scalar", "add_scalars", "add_histogram", "add_text", "log_metrics", "log_metric"})
LOGGING_FUNCTIONS = frozenset(
    {"wandb.log", "mlflow.log_metric", "mlflow.log_metrics", "tqdm.tqdm.write", "tqdm.write", f"{XM}.master_print"}
)


def is_logging(call: cst.Call, walk_: Walk) -> bool:
    """A call that only reports values (print, a logger, a progress bar, a metrics writer)."""
    func = call.func
    if type(func) is cst.Name:
        return func.value == "print" and walk_.resolve(func) is None
    if walk_.resolve(func) in LOGGING_FUNCTIONS:
        return True
    method = method_name(call) or ""
    owner = (dotted(receiver(call)) or "").rsplit(".", 1)[-1].lower()
    return (
        (method in LOGGER_METHODS and "log" in owner)
        or (method == "print" and "accelerator" in owner)
        or method in PROGRESS_METHODS
        or method in WRITER_METHODS
        or (method == "write" and any(w in owner for w in ("tqdm", "bar")))
    )


def reads_to_host(node: cst.CSTNode) -> bool:
    """The expression's value comes from a host read (``loss.item()``, ``float(t)``)."""
    if type(node) is cst.Call:
        if method_name(node) in READ_METHODS:
            return True
        return type(node.func) is cst.Name and node.func.value in READ_BUILTINS
    return False


def names_a_device(node: cst.CSTNode | None, walk_: Walk) -> bool:
    if node is None:
        return False
    name = dotted(node)
    if name is not None:
        return is_device_name(name)
    text = string_value(node)
    if text is not None:
        return text.split(":")[0] in ("cuda", "xla")
    return type(node) is cst.Call and (
        walk_.resolve(node.func) in spellings("device") or (walk_.resolve(node.func) == "torch.device")
    )


def is_identity_test(node: cst.Comparison) -> bool:
    """``x is None``, ``k in d``: Python-level tests, not tensor comparisons."""
    return any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in node.comparisons)
