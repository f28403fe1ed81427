"""Files a ``torch.save`` writes that only its own process reads back: an in-memory buffer
(``buf = io.BytesIO(); torch.save(state, buf); buf.seek(0); torch.load(buf)``, DeiT's
``_load_checkpoint_for_ema``), an anonymous temporary file, or a new file opened to be written and
read (``open(path, "w+b")``).  Such a save is no checkpoint: every process writes and reads its own,
so it stays ``torch.save`` (``xm.save`` writes on the master only, and every other process would
read an empty buffer); torch.save pickles XLA tensors through the CPU, and the same process loads
them back.  A load of such a buffer that a ``torch.save`` of the same scope writes reads this run's
own data, never a file a CUDA run saved (a buffer filled by a download is not one)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from codemods.engine.nodes import arg_value, string_value

# The calls that make such a file (a BytesIO only empty: one made from bytes holds what it was given).
_PRIVATE_FILES = frozenset(
    {"io.BytesIO", "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile", "tempfile.NamedTemporaryFile"}
)


def makes_private_file(value: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """``value`` is a call that makes a new in-memory buffer or temporary file, or opens a file
    for writing and reading back."""
    if type(value) is not cst.Call:
        return False
    if type(value.func) is cst.Name and value.func.value == "open" and resolve(value.func) in (None, "open"):
        mode = arg_value(value, 1, "mode")
        written = string_value(mode) if mode is not None else None  # "w+b", "x+b": a new file ("r+b" opens one)
        return written is not None and written[:1] in ("w", "x") and "+" in written
    made = resolve(value.func)
    return made in _PRIVATE_FILES and not (made == "io.BytesIO" and value.args)


def private_file(
    target: cst.BaseExpression | None,
    values: Sequence[cst.BaseExpression] | None,
    resolve: Callable[[cst.BaseExpression], str | None],
) -> bool:
    """The file argument ``target`` (with the values its name is bound to, ``values``) is such a file."""
    if target is None:
        return False
    if type(target) is cst.Call:
        return makes_private_file(target, resolve)
    return bool(values) and all(makes_private_file(value, resolve) for value in values or ())
