"""Moves guarded by a flag whose value the file does not show CUDA-wise, for XLA119 (beside
device/guarded_moves.py, which finds the CUDA checks that stay):

- a flag read from ``CUDA_VISIBLE_DEVICES`` (``ids = [int(x) for x in os.environ.get(
  "CUDA_VISIBLE_DEVICES", "").split(",") if x]``, ``on_gpu = len(ids) > 0``, then ``if on_gpu:
  model.cuda()``; ProDiff's utils/trainer.py).  The port leaves the environment alone, and on an
  XLA host (a TPU VM) the variable is normally unset: the flag is False and the move, ported to the
  XLA device, never runs.  Only a read whose value reaches a condition around a move counts (by the
  names it is assigned to, a few hops): a read that only feeds a log line chooses nothing.
- a flag that is an attribute of a parameter (``def initiate(hyp_params, ...): if
  hyp_params.use_cuda: model = model.cuda()``, Multimodal-Transformer's src/train.py), which the
  file neither sets nor declares as a command-line switch, in a file that no file of the run
  imports, where another file of the project sets that attribute on a namespace beside a
  ``torch.cuda.is_available()`` check (main.py's ``hyp_params.use_cuda = use_cuda``): a run on
  this file alone leaves that check as it is, False on an XLA host, so the move never runs.  A run
  on the project converts that file too (its check is dropped, XLA104), and no error is made then.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

import libcst as cst

from codemods.engine.nodes import dotted, string_value, walk

_VARIABLE = "CUDA_VISIBLE_DEVICES"
_READERS = ("os.environ.get", "os.getenv", "os.environ.__getitem__")
_NEVER_RUNS = "on XLA that move never runs, and what it moves stays on the CPU"
_CODE = cst.Module([])

Assigned = Mapping[tuple[str, str], Sequence[cst.BaseExpression]]


def _code(node: cst.CSTNode) -> str:
    code = " ".join(_CODE.code_for_node(node).split())
    return code if len(code) <= 80 else code[:77] + "..."


def cuda_env_read(node: cst.CSTNode, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """``node`` reads ``CUDA_VISIBLE_DEVICES``: ``os.environ.get(...)``, ``os.getenv(...)``,
    ``os.environ[...]`` (through any import alias)."""
    if type(node) is cst.Call and node.args and string_value(node.args[0].value) == _VARIABLE:
        return resolve(node.func) in _READERS
    if type(node) is cst.Subscript and len(node.slice) == 1:
        index = node.slice[0].slice
        return (
            type(index) is cst.Index and string_value(index.value) == _VARIABLE and resolve(node.value) == "os.environ"
        )
    return False


def _key(assigned: Assigned, name: str, scope: str) -> tuple[str, str] | None:
    for key in (("" if "." in name else scope, name), ("", name)):
        if key in assigned:
            return key
    return None


def env_tainted(assigned: Assigned, reads: Collection[int]) -> dict[tuple[str, str], str]:
    """The names (keys of ``assigned``) whose value comes from a read of ``CUDA_VISIBLE_DEVICES``
    (``reads``: the ids of the reading nodes), directly or through other such names: key -> the
    name the chain starts from (the one assigned the read)."""
    tainted: dict[tuple[str, str], str] = {}
    grew = True
    while grew:
        grew = False
        for key, values in assigned.items():
            if key in tainted:
                continue
            for value in values:
                source = _source(value, key[0], assigned, reads, tainted)
                if source is not None:
                    tainted[key] = source or key[1]
                    grew = True
                    break
    return tainted


def _source(
    node: cst.CSTNode,
    scope: str,
    assigned: Assigned,
    reads: Collection[int],
    tainted: Mapping[tuple[str, str], str],
) -> str | None:
    """The empty string where ``node`` holds a read itself, the tainted name it starts from where it reads one, else None."""
    for sub in walk(node):
        if id(sub) in reads:
            return ""
        if type(sub) in (cst.Name, cst.Attribute) and (name := dotted(sub)) is not None:
            key = _key(assigned, name, scope)
            if key is not None and key in tainted:
                return tainted[key] or key[1]
    return None


def env_guard(
    test: cst.BaseExpression,
    scope: str,
    assigned: Assigned,
    reads: Collection[int],
    tainted: Mapping[tuple[str, str], str],
    move: cst.CSTNode,
) -> str | None:
    """The message for a move under ``test`` when ``test`` reads ``CUDA_VISIBLE_DEVICES``
    (itself, or through names assigned from it); None otherwise."""
    source = _source(test, scope, assigned, reads, tainted)
    if source is None:
        return None
    through = f" (through `{source}`)" if source and source != dotted(test) else ""
    return (
        f"`{_code(test)}` is decided by `{_VARIABLE}`{through}, and `{_code(move)}` moves to the device only "
        f"under it: on an XLA host (a TPU VM) `{_VARIABLE}` is normally unset, so the test is False, {_NEVER_RUNS}; "
        "decide with the XLA device instead (`torch_xla.device()`, or count the devices with "
        "`torch_xla.runtime.global_runtime_device_count()`), or move on every path"
    )


def enclosing_parameter(root: str, scope: str, params: Mapping[str, Sequence[str]]) -> bool:
    """``root`` is a parameter of the function ``scope`` or of a function it is nested in."""
    while scope:
        if root in params.get(scope, ()):
            return True
        scope = scope.rpartition(".")[0]
    return False


def handed_flag(
    test: cst.BaseExpression,
    scope: str,
    params: Mapping[str, Sequence[str]],
    keyword_only: Mapping[str, Sequence[str]],
    assigned: Assigned,
    switches: Collection[str],
) -> tuple[str, str] | None:
    """``test`` is ``<parameter>.<attribute>`` (of the function ``scope`` or one around it) that
    the file neither sets (``x.<attribute> = ...``) nor declares as a switch (``--<attribute>``):
    (the flag as written, the attribute)."""
    name = dotted(test)
    if name is None or name.count(".") != 1:
        return None
    root, _, attribute = name.partition(".")
    if root in ("self", "cls") or not (
        enclosing_parameter(root, scope, params) or enclosing_parameter(root, scope, keyword_only)
    ):
        return None
    if any(key[1] == attribute or key[1].endswith("." + attribute) for key in assigned):
        return None
    if attribute in switches or attribute.replace("_", "-") in switches:
        return None
    return name, attribute


def handed_message(flag: str, move: cst.CSTNode, setter: str) -> str:
    return (
        f"`{flag}` decides whether `{_code(move)}` runs, and this file does not set it: the caller hands it in, "
        f"and {setter}, which this run does not convert, sets `.{flag.partition('.')[2]}` beside a "
        "`torch.cuda.is_available()` check, which stays there and is False on an XLA host: then the flag is "
        f"False, {_NEVER_RUNS} (training runs on the CPU without an error); convert the project "
        "(`xla-codemod convert .` at its root), which follows the flag there, or make it True on XLA"
    )
