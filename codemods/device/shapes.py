"""The shapes of code the device analysis recognises, read off the syntax alone: a move
guarded by ``if X is not None:``, a comparison with "cuda", a condition's names, a value
that is True or False or a string, a name like a GPU index, a block that stops the script,
an ``if not f(): exit`` requirement, a CUDA index or the CPU chosen by comparing the index with a
number, a subscript keyed by a device name (``cfg["device"]``), a comparison of two numbers; and
the spread of a mark through names that hold the same value."""

from __future__ import annotations

import typing
from collections.abc import Callable, Collection

import libcst as cst

from codemods import apis
from codemods.device.config_shapes import config_chain
from codemods.engine.nodes import arg_value, dotted, fold_true, method_name, names_the_cpu, string_value, walk
from codemods.engine.walk import Walk


def is_device_name(name: str | None) -> bool:
    """``device``, ``self.dev``, ``args.device``: not ``device_type``/``device_ids``."""
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1].lower()
    return ("device" in last or last == "dev") and not last.endswith(("type", "name", "count", "ids"))


_CATCH_ALL = frozenset({"Exception", "BaseException"})
_KEEPS = frozenset({"torch.compile", "torch.save"})


def cpu_fallback_moves(node: cst.Try, resolve: Callable[[cst.BaseExpression], str | None]) -> list[cst.Call]:
    """``try: idx = torch.sort(x.cuda())`` / ``except: idx = torch.sort(x)``: the ``.cuda()`` calls the
    ``try`` body hands straight to a tensor op of torch's namespace (not ``torch.compile``: a module
    handed so, ``torch.compile(model.cuda())``, would stay on the CPU where the handler passes), where a handler
    catches what ``.cuda()`` raises without CUDA (a bare ``except``, ``Exception``: AssertionError on a
    CPU build of torch, RuntimeError without a driver) and does not raise again: on an XLA host the
    move raises and the handler's CPU path runs, as on any host without CUDA."""
    if not any(_falls_back(handler) for handler in node.handlers):
        return []
    return [
        arg.value
        for sub in walk(node.body)
        if type(sub) is cst.Call and _tensor_op(resolve(sub.func))
        for arg in sub.args
        if type(arg.value) is cst.Call and method_name(arg.value) == "cuda"
    ]


def _tensor_op(callee: str | None) -> bool:
    """A function of torch's own namespace (``torch.sort``, ``torch.topk``), not one that keeps a module
    (``torch.compile``) or writes it (``torch.save``)."""
    return callee is not None and callee.count(".") == 1 and callee.startswith("torch.") and callee not in _KEEPS


def _falls_back(handler: cst.ExceptHandler) -> bool:
    caught = handler.type
    if caught is not None:
        names = {dotted(e.value) for e in caught.elements} if type(caught) is cst.Tuple else {dotted(caught)}
        if not (names & _CATCH_ALL or {"RuntimeError", "AssertionError"} <= names):
            return False
    return not any(type(sub) is cst.Raise for sub in walk(handler.body))


def cuda_error_test(node: cst.Comparison) -> bool:
    """``"CUDA out of memory" in str(e)`` (``repr(e)``, ``e.args[0]``, ``str(e).lower()``'s "cuda out
    of memory"): a test of a caught error's text for CUDA's own out-of-memory message, which no
    error raised on an XLA host carries (its out-of-memory error is RESOURCE_EXHAUSTED): False there."""
    if len(node.comparisons) != 1 or type(node.comparisons[0].operator) is not cst.In:
        return False
    text = string_value(node.left)
    if text is None or "cuda" not in text.lower() or "out of memory" not in text.lower():
        return False
    searched = node.comparisons[0].comparator
    while type(searched) is cst.Call and type(searched.func) is cst.Attribute and not searched.args:
        searched = searched.func.value  # ``str(e).lower()``
    if type(searched) is cst.Subscript:  # ``e.args[0]``
        return type(searched.value) is cst.Attribute and searched.value.attr.value == "args"
    return type(searched) is cst.Call and dotted(searched.func) in ("str", "repr") and len(searched.args) == 1


def device_type_checked(node: cst.Comparison) -> str | None:
    """``device.type == 'cuda'``, ``device == "cuda"``, ``'cuda' in str(device)``, ``device.type
    != 'cuda'`` (one comparison, a device name on one side, "cuda" on the other): the name."""
    name = compared_with_cuda(node)
    return name if is_device_name(name) else None


def moves_only_if_given(node: cst.If) -> str | None:
    """``if X is not None:`` (no else) whose body only moves names to ``X``: X."""
    test = node.test
    if (
        node.orelse is not None
        or not isinstance(test, cst.Comparison)
        or len(test.comparisons) != 1
        or not isinstance(test.comparisons[0].operator, cst.IsNot)
        or dotted(test.comparisons[0].comparator) != "None"
        or (index := dotted(test.left)) is None
        or not isinstance(node.body, cst.IndentedBlock)
    ):
        return None
    for statement in node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        small = statement.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if not isinstance(value, cst.Call) or method_name(value) not in ("cuda", "to"):
            return None
        if dotted(arg_value(value, 0, "device")) != index:
            return None
    return index


def compared_with_cuda(node: cst.Comparison) -> str | None:
    """The name compared with "cuda" (``x.type == 'cuda'``, ``x == "cuda"``, ``'cuda' in
    str(x)``: x), whatever it is named."""
    if len(node.comparisons) != 1:
        return None
    operator = type(node.comparisons[0].operator)
    left, right = node.left, node.comparisons[0].comparator
    if operator in (cst.Equal, cst.NotEqual) and string_value(left) == "cuda":
        left, right = right, left
    elif operator in (cst.In, cst.NotIn) and string_value(left) == "cuda":
        if type(right) is cst.Call and dotted(right.func) == "str" and len(right.args) == 1:
            left, right = right.args[0].value, left
        else:
            return None
    elif operator in (cst.In, cst.NotIn) and type(right) in (cst.Tuple, cst.List, cst.Set):
        listed = [string_value(element.value) for element in right.elements]  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
        if "cuda" not in listed or any(s is not None and s.startswith("xla") for s in listed):
            return None  # no "cuda", or one that also takes "xla" (True on XLA)
        right = cst.SimpleString('"cuda"')
    elif operator not in (cst.Equal, cst.NotEqual):
        return None
    if string_value(right) != "cuda":
        return None
    name = dotted(left)
    if name is not None and name.endswith(".type"):
        name = name.removesuffix(".type")
    return name


def prefix_tested(node: cst.Call) -> str | None:
    """``device.type.startswith("cuda")``, ``str(device).startswith("cuda")``, ``name.startswith(("cuda",
    "mps"))``: a CUDA check like ``device.type == "cuda"``; the name tested (``device``, ``name``), or ""
    where it is no name chain.  None: no such call, or one that also takes "xla" (True on XLA)."""
    if method_name(node) != "startswith" or len(node.args) != 1 or node.args[0].keyword or node.args[0].star:
        return None
    prefix = node.args[0].value
    strings = [string_value(e.value) for e in prefix.elements] if type(prefix) is cst.Tuple else [string_value(prefix)]
    if "cuda" not in strings or any(s is None or s.startswith("xla") for s in strings):
        return None
    tested = typing.cast(cst.Attribute, node.func).value
    if type(tested) is cst.Call and dotted(tested.func) == "str" and len(tested.args) == 1:
        tested = tested.args[0].value
    name = dotted(tested)
    return "" if name is None else name.removesuffix(".type")


def checked_for_cuda(node: cst.CSTNode) -> str | None:
    """The name a CUDA check tests (``x.type == "cuda"``, ``x.type.startswith("cuda")``: x)."""
    if isinstance(node, cst.Comparison):
        return compared_with_cuda(node)
    return (prefix_tested(node) or None) if isinstance(node, cst.Call) else None


def spread(names: set[str], pairs: list[tuple[str, str]]) -> None:
    """Add to ``names`` every name that holds the same value as one in it."""
    grown = True
    while grown:
        grown = False
        for a, b in pairs:
            if (a in names) != (b in names):
                names.update((a, b))
                grown = True


def local_params(function_params: dict[str, list[str]], callee: str) -> list[str] | None:
    """The parameters of the file's function ``callee`` runs (``helper``, ``Trainer``, ``self.helper``)."""
    name = callee.removeprefix("self.")
    for qualname, params in function_params.items():
        if qualname in (name, f"{name}.__init__") or (callee != name and qualname.endswith(f".{name}")):
            return params
    return None


def named_like_an_index(name: str) -> bool:
    """``self.gpu_id``, ``args.gpu``, ``local_rank``, ``rank``: what holds a GPU number."""
    last = name.rsplit(".", 1)[-1].lower()
    return "gpu" in last or last in ("rank", "local_rank", "device_id", "dev_id", "cuda_id")


def is_truth(value: cst.BaseExpression) -> bool:
    """A value that is True or False (``not args.no_cuda and torch.cuda.is_available()``,
    ``True if ... else False``), not a count or a device."""
    kind = type(value)
    if kind in (cst.BooleanOperation, cst.Comparison, cst.Call) or (
        kind is cst.UnaryOperation and type(value.operator) is cst.Not  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
    ):
        return True
    if kind is cst.IfExp:
        return all(type(b) is cst.Name and b.value in ("True", "False") for b in (value.body, value.orelse))  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
    return False


def names_in(test: cst.BaseExpression) -> set[str]:
    """The names a condition reads: name chains, and string-keyed items as chains (``cfg["cuda"]``
    is ``cfg.cuda``, a flag as ``args.cuda`` is)."""
    return {d for n in walk(test) if (d := dotted(n) if type(n) is not cst.Subscript else config_chain(n)) is not None}


def is_text(value: cst.BaseExpression, string_names: set[str]) -> bool:
    """A string: a literal, an f-string, or a choice between strings and names that hold one."""
    if type(value) in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
        return True
    if type(value) is cst.IfExp:
        return is_text(value.body, string_names) and is_text(value.orelse, string_names)
    return type(value) is cst.Name and value.value in string_names


def required_call(node: cst.If, walk: Walk, function: cst.FunctionDef | None) -> str | None:
    """``if not verify_min_gpu_count(min_gpus=2): print(...); sys.exit()`` (no else): the
    function's name.  A ``return`` instead of the exit, at the top of ``function``, before code
    that only sets CUDA up (``set_cuda_id``: ``if not use_gpu(spec): return`` then a CUDA
    index computed from ``torch.cuda.device_count()``), is no requirement: the function returns
    there without CUDA, and on XLA there is no CUDA to set up either."""
    test = node.test
    if (
        node.orelse is not None
        or type(test) is not cst.UnaryOperation
        or type(test.operator) is not cst.Not
        or type(test.expression) is not cst.Call
        or type(test.expression.func) is not cst.Name
        or type(node.body) is not cst.IndentedBlock
    ):
        return None
    if not stops(node.body, walk, returning=True):
        return None
    if function is not None and not stops(node.body, walk, returning=False) and _sets_up_cuda(node, function, walk):
        return None
    return test.expression.func.value


# What the code after a helper's early return may call and still only set CUDA up.
_PURE_CALLS = frozenset(("int", "str", "len", "min", "max", "abs", "bool", "hash", "range", "get"))


def _sets_up_cuda(node: cst.If, function: cst.FunctionDef, walk_: Walk) -> bool:
    """The statements of ``function`` after ``node`` (one of its own) use a ``torch.cuda`` API
    and call nothing else but a few pure builtins (and ``dict.get``)."""
    body = function.body.body if type(function.body) is cst.IndentedBlock else ()
    at = next((i for i, statement in enumerate(body) if statement is node), None)
    if at is None:
        return False
    cuda = False
    for statement in body[at + 1 :]:
        for sub in walk(statement):
            if type(sub) is cst.Call:
                if (walk_.resolve(sub.func) or "").startswith("torch.cuda."):
                    cuda = True
                elif (method_name(sub) or dotted(sub.func)) not in _PURE_CALLS:
                    return False
            elif type(sub) in (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Yield, cst.Await):
                return False
    return cuda


def stops(block: cst.BaseSuite, walk: Walk, *, returning: bool) -> bool:
    """The block ends by raising or ending the process (or, if ``returning``, by returning)."""
    if type(block) is not cst.IndentedBlock:
        return False
    last = block.body[-1]
    if type(last) is not cst.SimpleStatementLine or len(last.body) != 1:
        return False
    small = last.body[0]
    return (returning and type(small) is cst.Return) or walk.ends_the_process(small)


def demands_cuda(node: cst.If, is_available_call: Callable[[cst.BaseExpression], bool], walk: Walk) -> bool:
    """``if not torch.cuda.is_available(): raise ...``, ``if torch.cuda.is_available(): ...
    else: sys.exit(...)``: without CUDA the script stops here, and on XLA it always would
    (the check is False there, where the XLA device is always present). So does an ``else:``
    that only asserts a configuration without accelerators (``assert cfg.NUM_GPUS == 0``): on
    XLA, with the default configuration, that assert fails where the accelerator branch runs."""
    folded = fold_true(node.test, is_available_call)
    if folded is False:
        return stops(node.body, walk, returning=False)
    return (
        folded is True
        and type(node.orelse) is cst.Else
        and (stops(node.orelse.body, walk, returning=False) or _only_asserts(node.orelse.body))
    )


def _only_asserts(block: cst.BaseSuite) -> bool:
    """Every statement of the block is an ``assert``."""
    return type(block) is cst.IndentedBlock and all(
        type(line) is cst.SimpleStatementLine and all(type(small) is cst.Assert for small in line.body)
        for line in block.body
    )


def is_cpu_device(node: cst.CSTNode, walk: Walk) -> bool:
    if string_value(node) == "cpu":
        return True
    return (
        isinstance(node, cst.Call)
        and walk.resolve(node.func) == "torch.device"
        and string_value(arg_value(node, 0, "type")) == "cpu"
    )


def wrapper_of(call: cst.Call, wrappers: Collection[str]) -> str | None:
    """The function or method of the file (of ``wrappers``, qualified names) that ``call`` runs."""
    func = call.func
    if type(func) is cst.Name:
        name = func.value
        return next((q for q in wrappers if q == name or q.endswith(f".{name}")), None)
    if type(func) is cst.Attribute:
        return next((q for q in wrappers if "." in q and q.endswith(f".{func.attr.value}")), None)
    return None


def asks_for_cuda(
    value: cst.BaseExpression, is_available_call: Callable[[cst.BaseExpression], bool], walk: Walk
) -> bool:
    """``torch.cuda.is_available()``, ``torch.cuda.device_count() > 0`` (``>= 1``, ``!= 0``), or
    ``x and`` one of them (``torch.cuda.is_available() and torch.cuda.device_count() > 0``): False
    on an XLA host."""
    if is_available_call(value) or _counts_some(value, walk):
        return True
    return (
        type(value) is cst.BooleanOperation
        and type(value.operator) is cst.And
        and (asks_for_cuda(value.left, is_available_call, walk) or asks_for_cuda(value.right, is_available_call, walk))
    )


def _counts_some(value: cst.BaseExpression, walk: Walk) -> bool:
    """``torch.cuda.device_count() > 0`` (``>= 1``, ``!= 0``): whether there is a CUDA device."""
    if type(value) is not cst.Comparison or len(value.comparisons) != 1 or type(value.left) is not cst.Call:
        return False
    if walk.resolve(value.left.func) not in apis.DEVICE_COUNTS or value.left.args:
        return False
    operator, bound = type(value.comparisons[0].operator), value.comparisons[0].comparator
    number = bound.value if type(bound) is cst.Integer else None
    return (operator, number) in ((cst.GreaterThan, "0"), (cst.GreaterThanEqual, "1"), (cst.NotEqual, "0"))


def count_truths(test: cst.BaseExpression, walk: Walk) -> list[cst.CSTNode]:
    """The CUDA device counts a condition tests for truth (``if torch.cuda.device_count():``,
    ``if not ... and torch.cuda.device_count() > 0:``): each comparison and its call, or the call."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return count_truths(test.expression, walk)
    if type(test) is cst.BooleanOperation:
        return [*count_truths(test.left, walk), *count_truths(test.right, walk)]
    if type(test) is cst.Call and not test.args and walk.resolve(test.func) in apis.DEVICE_COUNTS:
        return [test]
    if _counts_some(test, walk):
        return [test, typing.cast(cst.Comparison, test).left]
    return []


def compared(left: int, operator: cst.BaseCompOp, right: int) -> bool | None:
    comparisons: dict[type, Callable[[int, int], bool]] = {
        cst.Equal: lambda a, b: a == b,
        cst.NotEqual: lambda a, b: a != b,
        cst.LessThan: lambda a, b: a < b,
        cst.LessThanEqual: lambda a, b: a <= b,
        cst.GreaterThan: lambda a, b: a > b,
        cst.GreaterThanEqual: lambda a, b: a >= b,
    }
    compare = comparisons.get(type(operator))
    return compare(left, right) if compare is not None else None


def index_or_cpu(expr: cst.IfExp) -> str | None:
    """``args.device if args.device >= 0 else "cpu"`` (or ``"cpu" if args.device < 0 else
    args.device``): a CUDA index or the CPU, chosen by comparing the index with a number; the
    index as written."""
    test = expr.test
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    number = test.comparisons[0].comparator
    if type(number) is cst.UnaryOperation and type(number.operator) is cst.Minus:
        number = number.expression
    index = dotted(test.left)
    if type(number) is not cst.Integer or index is None:
        return None
    body, other = (expr.body, expr.orelse) if dotted(expr.body) == index else (expr.orelse, expr.body)
    return index if dotted(body) == index and names_the_cpu(other) else None


def device_key(node: cst.Subscript) -> str | None:
    index = node.slice[0].slice if len(node.slice) == 1 else None
    key = string_value(index.value) if isinstance(index, cst.Index) else None
    return key if key is not None and is_device_name(key) else None


def lookup_default(expr: cst.CSTNode) -> cst.BaseExpression | None:
    """The default of a device key's lookup: ``config.get('device', 'cuda:0')``,
    ``getattr(args, "device", "cuda")`` (what the device is where the config has no key)."""
    if type(expr) is not cst.Call or len(expr.args) not in (2, 3) or any(a.star or a.keyword for a in expr.args):
        return None
    func = expr.func
    if type(func) is cst.Attribute and func.attr.value == "get" and len(expr.args) == 2:
        key, default = expr.args
    elif type(func) is cst.Name and func.value == "getattr" and len(expr.args) == 3:
        key, default = expr.args[1:]
    else:
        return None
    text = string_value(key.value)
    return default.value if text is not None and is_device_name(text) else None


def field_default(expr: cst.CSTNode, resolve: Callable[[cst.BaseExpression], str | None]) -> cst.BaseExpression | None:
    """The default of a dataclass field: ``field(default="cuda:0")`` (``dataclasses.field``), the
    value the parsed arguments hold where the run names none (HfArgumentParser reads it as an
    argparse default)."""
    if type(expr) is not cst.Call or resolve(expr.func) != "dataclasses.field":
        return None
    return next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "default"), None)
