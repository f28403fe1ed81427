"""A ``torch.load`` without a map location that already falls back to the CPU: ``try: ckpt =
torch.load(p)`` whose handler (a bare ``except:``, ``except Exception``, ``BaseException`` or
``RuntimeError``) loads the same file onto the CPU (``map_location=lambda storage, loc: storage``,
``"cpu"``, ``torch.device("cpu")``, a dict that sends every device there).  Without CUDA a CUDA
checkpoint raises RuntimeError ("Attempting to deserialize object on a CUDA device but
torch.cuda.is_available() is False"), the handler catches it and the fallback loads it on the CPU,
where XLA must load: the load runs on an XLA host as written, so it is no finding (XLA403)."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, names_the_cpu, string_value, walk

# The exceptions a handler may name that catch torch.load's RuntimeError.
_CATCHING = frozenset({"Exception", "BaseException", "RuntimeError"})
_CODE = cst.Module([])


def _catches(handler: cst.ExceptHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    names = [e.value for e in kind.elements] if type(kind) is cst.Tuple else [kind]
    return any(dotted(name) in _CATCHING for name in names)


def _onto_the_cpu(location: cst.BaseExpression) -> bool:
    """``lambda storage, loc: storage``, ``"cpu"``, ``torch.device("cpu")``, ``{"cuda:0": "cpu"}``."""
    if type(location) is cst.Lambda:
        params = location.params.params
        return bool(params) and type(location.body) is cst.Name and location.body.value == params[0].name.value
    if type(location) is cst.Dict:
        return bool(location.elements) and all(
            type(e) is cst.DictElement and string_value(e.value) == "cpu" for e in location.elements
        )
    return names_the_cpu(location)


def guarded_loads(
    tries: list[cst.Try],
    loads: list[cst.Call],
    located: dict[cst.BaseExpression, cst.Call],
) -> set[cst.Call]:
    """Of ``loads`` (without a map location), those in a ``try`` whose handler loads the same file onto the CPU."""
    found: set[cst.Call] = set()
    fallbacks = {load: location for location, load in located.items() if _onto_the_cpu(location)}
    for node in tries:
        caught = [h for h in node.handlers if _catches(h)]
        if not caught:
            continue
        files = {
            _CODE.code_for_node(path)
            for handler in caught
            for sub in walk(handler.body)
            if type(sub) is cst.Call and sub in fallbacks and (path := arg_value(sub, 0, "f")) is not None
        }
        for sub in walk(node.body):
            if type(sub) is cst.Call and sub in loads and (path := arg_value(sub, 0, "f")) is not None:
                if _CODE.code_for_node(path) in files:
                    found.add(sub)
    return found
