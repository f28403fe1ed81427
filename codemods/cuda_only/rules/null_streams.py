"""``torch.cuda.stream(None)``: the null stream. torch 2.9's ``torch.cuda.StreamContext`` does
nothing for ``None`` (checked without CUDA: the ``with`` block runs), so the context runs on an
XLA host and changes nothing there; XLA502 reports it as having no effect, XLA506 not as
CUDA-only. So with ``torch.cuda.stream(torch.cuda.Stream() if device.type == "cuda" else
None)`` (detectron2's trainer): the context itself is the null one wherever the stream is not
made, and the CUDA stream that would be made is reported (or left, under its check) on its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

STREAM_CONTEXT = "torch.cuda.stream"


def _none(node: cst.BaseExpression) -> bool:
    return type(node).__name__ == "Name" and node.value == "None"  # type: ignore[attr-defined]  # a Name (checked by name)


def null_stream(ctx: Context[Facts], original: cst.CSTNode, qualified: str = STREAM_CONTEXT) -> str | None:
    """What ``original`` (``qualified``: ``torch.cuda.stream``, called) is given where it is the null stream:
    "None", or "None where the stream is not made" (a choice between a CUDA stream and None);
    None: a stream the file may have made elsewhere."""
    from codemods.engine.nodes import arg_value

    call = ctx.parent()
    if qualified != STREAM_CONTEXT or type(call).__name__ != "Call" or call.func is not original:  # type: ignore[union-attr]  # a Call (checked by name)
        return None
    stream = arg_value(call, 0, "stream")  # type: ignore[arg-type]  # a Call
    if stream is None or _none(stream):
        return "None"
    if type(stream).__name__ != "IfExp":
        return None
    other = stream.orelse if _none(stream.body) else stream.body if _none(stream.orelse) else None  # type: ignore[attr-defined]  # an IfExp
    if type(other).__name__ == "Call" and (ctx.resolve(other.func) or "").startswith("torch.cuda."):  # type: ignore[union-attr]  # a Call
        return "None where the CUDA stream is not made"
    return None
