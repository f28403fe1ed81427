"""Moves guarded by a flag whose value the file does not show CUDA-wise, for XLA119 (beside
device/guarded_moves.py, which finds the CUDA checks that stay):

- a flag read from ``CUDA_VISIBLE_DEVICES`` (``ids = [int(x) for x in os.environ.get(
  "CUDA_VISIBLE_DEVICES", "").split(",") if x]``, ``on_gpu = len(ids) > 0``, then ``if on_gpu:
  model.cuda()``; ProDiff's utils/trainer.py).  The port leaves the environment alone, and on an
  XLA host (a TPU VM) the variable is normally unset: the flag is False and the move, ported to the
  XLA device, never runs.  Only a read whose value reaches a condition around a move counts (by the
  names it is assigned to, a few hops): a read that only feeds a log line chooses nothing.  The
  test is evaluated with the variable unset (the read gives None, or the default handed to
  ``.get``/``getenv``): True (``os.environ.get(..., "0") != "-1"``, ``visible is None or ...``)
  means the move runs and is ported, no finding; False is the error above; where it cannot be
  told (``len(ids) > 0`` over a comprehension) the message says the test "may" be False and it
  stays an error: on XLA the move can be skipped, and training then runs on the CPU silently.
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
    *,
    negated: bool = False,
) -> str | None:
    """The message for a move under ``test`` (``negated``: in its ``else``) when ``test`` reads
    ``CUDA_VISIBLE_DEVICES`` (itself, or through names assigned from it) and, with the variable
    unset (as on an XLA host: the read gives None, or the default of ``.get``/``getenv``), is
    False or cannot be told; None otherwise (True then: the move runs, and is ported)."""
    source = _source(test, scope, assigned, reads, tainted)
    if source is None:
        return None
    value = _unset_value(test, scope, assigned, reads, tainted, 0)
    if value is not _UNKNOWN and bool(value) != negated:
        return None  # ``os.environ.get("CUDA_VISIBLE_DEVICES", "0") != "-1"``: True when unset
    through = f" (through `{source}`)" if source and source != dotted(test) else ""
    branch = " (its `else`)" if negated else ""
    outcome = (
        f"so the test may be False, and then {_NEVER_RUNS.replace('that move never runs', 'that move does not run')}"
        if value is _UNKNOWN
        else f"so the test is {'True' if negated else 'False'}, {_NEVER_RUNS}"
    )
    return (
        f"`{_code(test)}` is decided by `{_VARIABLE}`{through}, and `{_code(move)}` moves to the device only "
        f"under it{branch}: on an XLA host (a TPU VM) `{_VARIABLE}` is normally unset, {outcome}; "
        "decide with the XLA device instead (`torch_xla.device()`), or move on every path"
    )


_UNKNOWN = object()
_COMPARE: dict[type[cst.BaseCompOp], Callable[[object, object], bool]] = {
    cst.Equal: lambda a, b: a == b,
    cst.NotEqual: lambda a, b: a != b,
    cst.Is: lambda a, b: a is b,
    cst.IsNot: lambda a, b: a is not b,
    cst.LessThan: lambda a, b: a < b,  # type: ignore[operator]  # the values of literals; a TypeError is caught
    cst.GreaterThan: lambda a, b: a > b,  # type: ignore[operator]  # the values of literals; a TypeError is caught
    cst.LessThanEqual: lambda a, b: a <= b,  # type: ignore[operator]  # the values of literals; a TypeError is caught
    cst.GreaterThanEqual: lambda a, b: a >= b,  # type: ignore[operator]  # the values of literals; a TypeError is caught
    cst.In: lambda a, b: a in b,  # type: ignore[operator]  # the values of literals; a TypeError is caught
    cst.NotIn: lambda a, b: a not in b,  # type: ignore[operator]  # the values of literals; a TypeError is caught
}


def _unset_value(
    node: cst.CSTNode,
    scope: str,
    assigned: Assigned,
    reads: Collection[int],
    tainted: Mapping[tuple[str, str], str],
    depth: int,
) -> object:
    """What ``node`` gives with ``CUDA_VISIBLE_DEVICES`` unset: literals, the read (None, or its
    default), names assigned once from such a value, comparisons, ``and``/``or``/``not``; else _UNKNOWN."""
    if depth > 8:
        return _UNKNOWN
    if id(node) in reads:
        if type(node) is not cst.Call:
            return _UNKNOWN  # ``os.environ[...]`` raises KeyError
        default = next((a.value for a in node.args[1:2] if a.keyword is None), None) or next(
            (a.value for a in node.args if a.keyword is not None and a.keyword.value == "default"), None
        )
        return None if default is None else _unset_value(default, scope, assigned, reads, tainted, depth + 1)
    if type(node) is cst.SimpleString:
        text = string_value(node)
        return _UNKNOWN if text is None else text
    if type(node) is cst.Integer:
        return int(node.value, 0) if node.value.isdigit() else _UNKNOWN
    if type(node) is cst.Name and node.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[node.value]
    if type(node) in (cst.Name, cst.Attribute) and (name := dotted(node)) is not None:
        key = _key(assigned, name, scope)
        if key is None or key not in tainted or len(assigned[key]) != 1:
            return _UNKNOWN
        return _unset_value(assigned[key][0], key[0], assigned, reads, tainted, depth + 1)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
        value = _unset_value(node.expression, scope, assigned, reads, tainted, depth + 1)
        return _UNKNOWN if value is _UNKNOWN else not value
    if type(node) is cst.BooleanOperation:
        left = _unset_value(node.left, scope, assigned, reads, tainted, depth + 1)
        right = _unset_value(node.right, scope, assigned, reads, tainted, depth + 1)
        is_or = type(node.operator) is cst.Or
        if left is _UNKNOWN:  # only the truth of the whole can be told, where the right decides it
            return right if right is not _UNKNOWN and bool(right) == is_or else _UNKNOWN
        return left if bool(left) == is_or else right
    if type(node) is cst.Comparison:
        left = _unset_value(node.left, scope, assigned, reads, tainted, depth + 1)
        for target in node.comparisons:
            right = _unset_value(target.comparator, scope, assigned, reads, tainted, depth + 1)
            compare = _COMPARE.get(type(target.operator))
            if left is _UNKNOWN or right is _UNKNOWN or compare is None:
                return _UNKNOWN
            try:
                if not compare(left, right):
                    return False
            except TypeError:
                return _UNKNOWN
            left = right
        return True
    return _UNKNOWN


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
