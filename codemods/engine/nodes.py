"""Small, pure helpers over LibCST nodes, shared by the analysis and the rewrites."""

from __future__ import annotations

import ast
import collections.abc
import contextlib
import dataclasses
import functools
import re
import typing
from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from codemods.engine.nodemap import NodeCache, node_cache

_CUDA_DEVICE_STRING = re.compile(r"cuda(:\d+)?")


def dotted(node: cst.CSTNode | None) -> str | None:
    """``self.optimizer`` -> "self.optimizer"; None for anything but a name chain.
    (Exact type tests: isinstance on LibCST's ABC-based classes costs far more, and this
    runs for most nodes of a file.)"""
    if type(node) is cst.Name:  # the most common chain: one name
        return node.value
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def parse_dotted(text: str) -> cst.Name | cst.Attribute:
    """ "a.b.c" -> the Attribute chain (no parsing of arbitrary source)."""
    head, *rest = text.split(".")
    node: cst.Name | cst.Attribute = cst.Name(head)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def string_value(node: cst.CSTNode | None) -> str | None:
    """The value of a plain string literal (not f-strings, not concatenations)."""
    if type(node) is not cst.SimpleString:
        return None
    literal = node.value
    quote = literal[0]
    if quote in "'\"" and "\\" not in literal and literal[:3] != quote * 3:
        return literal[1:-1]  # 'cuda': no prefix, escape or triple quotes to read
    return _evaluated_literal(literal)


# Only the literals that need evaluating are kept, so that a run's plain strings do not push them
# out: ast.literal_eval leaves reference cycles (its nested functions) for the collector to walk.
@functools.lru_cache(maxsize=4096)
def _evaluated_literal(literal: str) -> str | None:
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def is_true(node: cst.CSTNode | None) -> bool:
    """The literal ``True``."""
    return type(node) is cst.Name and node.value == "True"


def is_false(node: cst.CSTNode | None) -> bool:
    """The literal ``False``."""
    return type(node) is cst.Name and node.value == "False"


def is_none(node: cst.CSTNode | None) -> bool:
    """The literal ``None``."""
    return type(node) is cst.Name and node.value == "None"


def is_cuda_device_string(node: cst.CSTNode | None) -> bool:
    """A string that names a CUDA device: "cuda", "cuda:1", f"cuda:{rank}",
    "cuda:{}".format(i), "cuda:%d" % i, "cuda:" + str(i)."""
    value = string_value(node)
    if value is not None:
        return bool(_CUDA_DEVICE_STRING.fullmatch(value))
    if type(node) is cst.FormattedString:
        first = node.parts[0] if node.parts else None
        return type(first) is cst.FormattedStringText and first.value.startswith("cuda:")
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        prefix = string_value(node.func.value)
        return node.func.attr.value == "format" and prefix is not None and prefix.startswith("cuda:")
    if type(node) is cst.BinaryOperation and type(node.operator) in (cst.Modulo, cst.Add):
        prefix = string_value(node.left)
        return prefix is not None and prefix.startswith("cuda:")
    return False


def quoted_like(template: cst.CSTNode, text: str) -> cst.SimpleString:
    """A string literal holding ``text`` in the quote style of ``template``."""
    quote = '"'
    if type(template) is cst.SimpleString:
        quote = template.quote if template.quote in ("'", '"') else '"'
    elif type(template) is cst.FormattedString:
        quote = template.start[-1]
    return cst.SimpleString(
        f"{quote}{text}{quote}", lpar=getattr(template, "lpar", ()), rpar=getattr(template, "rpar", ())
    )


def call_args(call: cst.Call) -> tuple[list[cst.Arg], dict[str, cst.Arg]]:
    """Positional and keyword arguments of a call (``*args``/``**kw`` are positional here)."""
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    return positional, keywords


def arg_value(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    positional, keywords = call_args(call)
    if keyword in keywords:
        return keywords[keyword].value
    plain = [a for a in positional if not a.star]
    return plain[position].value if len(plain) > position else None


def counterpart(original: cst.Call, updated: cst.Call, arg: cst.Arg) -> cst.Arg | None:
    """What the argument ``arg`` of ``original`` became in ``updated``.  A concern that ran
    before may have dropped arguments (``pin_memory=True``), so places differ: keywords are
    matched by name, the others by their place among the positional ones; None if it went."""
    if len(original.args) == len(updated.args):
        return updated.args[original.args.index(arg)]
    if arg.keyword is not None:
        name = arg.keyword.value
        return next((a for a in updated.args if a.keyword is not None and a.keyword.value == name), None)
    place = [a for a in original.args if a.keyword is None].index(arg)
    positional = [a for a in updated.args if a.keyword is None]
    return positional[place] if place < len(positional) else None


def method_name(call: cst.Call) -> str | None:
    """``x.step(...)`` -> "step"."""
    return call.func.attr.value if type(call.func) is cst.Attribute else None


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    return call.func.value if type(call.func) is cst.Attribute else None


def with_comma(arg: cst.Arg) -> cst.Arg:
    """The argument followed by ", " (for building argument lists)."""
    return arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))


KEYWORD_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def with_keyword(args: list[cst.Arg], name: str, value: cst.BaseExpression) -> list[cst.Arg]:
    """``args`` plus ``name=value`` at the end, in the layout of the list (one per line
    with a trailing comma, or inline)."""
    new = cst.Arg(value, keyword=cst.Name(name), equal=KEYWORD_EQUAL)
    if not args:
        return [new]
    last = args[-1]
    if type(last.comma) is cst.Comma:  # trailing comma: the new argument takes the same place
        previous = args[-2].comma if len(args) > 1 else last.comma
        return [*args[:-1], last.with_changes(comma=previous), new.with_changes(comma=last.comma)]
    if (
        len(args) > 1
        and type(args[-2].comma) is cst.Comma
        and type(args[-2].comma.whitespace_after) is cst.ParenthesizedWhitespace
    ):
        # One per line, no trailing comma: the new argument goes on a line of its own, before
        # the closing parenthesis's.
        moved = last.with_changes(comma=args[-2].comma, whitespace_after_arg=cst.SimpleWhitespace(""))
        return [*args[:-1], moved, new.with_changes(whitespace_after_arg=last.whitespace_after_arg)]
    return [*args[:-1], last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), new]


def without_args(args: list[cst.Arg], to_remove: list[int]) -> list[cst.Arg]:
    """``args`` without those at the ``to_remove`` positions; the list ends as it did (the
    last one kept takes the comma of the last one, and with it the layout before the
    closing parenthesis)."""
    if not to_remove:
        return args
    kept = [arg for index, arg in enumerate(args) if index not in to_remove]
    if kept and kept[-1] is not args[-1]:
        kept[-1] = kept[-1].with_changes(comma=args[-1].comma)
    return kept


def lone_call(statement: cst.CSTNode) -> cst.Call | None:
    """The call of a statement line that is nothing but one call (``f(x)``)."""
    if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1:
        small = statement.body[0]
        if type(small) is cst.Expr and type(small.value) is cst.Call:
            return small.value
    return None


def walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node of a subtree but whitespace and punctuation, parents before their
    children (in no particular order among siblings).  Inside ``subtrees_kept()`` the
    list is made once per subtree (the analyses search the same assignment values and
    conditions, each for its own reasons)."""
    kept = _KEPT
    return _subtree(node) if kept is None else kept(node)


def in_source_order(node: cst.CSTNode, *, enter_scopes: bool = True) -> Iterator[cst.CSTNode]:
    """The nodes below ``node`` in source order (``walk`` keeps no order among siblings); with
    ``enter_scopes=False``, not entering nested functions, classes or lambdas (a body's own nodes)."""
    for child in node.children:
        if not enter_scopes and type(child) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        yield child
        yield from in_source_order(child, enter_scopes=enter_scopes)


def _subtree(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children(current))
    return found


def parents_of(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """The parent of each node under ``root`` (whitespace and punctuation left out), by the child's id."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            stack.append(child)
    return parents


_KEPT: NodeCache[list[cst.CSTNode]] | None = None


@contextlib.contextmanager
def subtrees_kept() -> Iterator[None]:
    """Keep what ``walk`` finds until the block ends (for one module's analysis)."""
    global _KEPT
    outer = _KEPT
    if outer is None:
        _KEPT = node_cache(_subtree)
    try:
        yield
    finally:
        _KEPT = outer


# Fields that hold only whitespace, comments, punctuation (the dots of a relative import,
# the `|` between match patterns) or plain strings (tests/engine/test_speed_guards.py checks
# the readers against LibCST's `.children` for every node type).
_LAYOUT = re.compile(
    r"whitespace|^(lpar|rpar|lbrace|rbrace|lbracket|rbracket|comma|semicolon|equal|colon|first_colon|second_colon|dot"
    r"|star_tok|star|operator|posonly_ind|leading_lines|lines_after_decorators|header|footer|newline|indent|start|end"
    r"|conversion|default_indent|default_newline|encoding|has_trailing_newline|asynchronous"
    r"|relative|separator|comment|first_line|empty_lines|last_line)$"
)
# Where the order of the fields is not the order of the code.
_LEXICAL = {
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.Arg: ("keyword", "value"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
    cst.MatchCase: ("pattern", "guard", "body"),
}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(kind: type) -> tuple[str, ...]:
    """The names of a node type's fields that may hold nodes of interest, in the order
    of the code.  (LibCST's ``children`` builds a visitor on every access: far slower
    than reading fields.)"""
    names = _FIELDS.get(kind)
    if names is None:
        present = {f.name for f in dataclasses.fields(kind)}
        names = _LEXICAL.get(kind) or tuple(f.name for f in dataclasses.fields(kind))  # type: ignore[call-overload]  # kind is a libcst node class (a dataclass): dataclasses.fields accepts it, its stub wants an instance or DataclassInstance type
        names = tuple(n for n in names if n in present and not _LAYOUT.search(n))
        _FIELDS[kind] = names
    return names


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The node's children but whitespace and punctuation, in the order of the code."""
    kind = type(node)
    reader = _READERS.get(kind)
    if reader is None:
        reader = _READERS[kind] = _reader(kind)
    return reader(node)


def children_reader(kind: type) -> Callable[[cst.CSTNode], Sequence[cst.CSTNode]]:
    """``children`` for nodes of type ``kind`` (for a walk that looks it up once per type)."""
    reader = _READERS.get(kind)
    if reader is None:
        reader = _READERS[kind] = _reader(kind)
    return reader


# Per node type, a function that reads its children: written out from the type's field
# annotations, so that reading a node's children is a few attribute reads (this runs for
# every node the analysis, the import cleanup and the subtree searches pass).
_READERS: dict[type, Callable[[cst.CSTNode], Sequence[cst.CSTNode]]] = {}
_NONE: tuple[cst.CSTNode, ...] = ()


def _reader(kind: type) -> Callable[[cst.CSTNode], Sequence[cst.CSTNode]]:
    shapes = field_shapes(kind)
    if not shapes:
        return lambda node: _NONE
    lines = ["def read(node):", "    found = []"]
    for name, shape in shapes:
        if shape == "nodes":
            lines.append(f"    found.extend(node.{name})")
        elif shape == "node":
            lines.append(f"    found.append(node.{name})")
        elif shape == "optional node":
            lines += [f"    value = node.{name}", "    if value is not None:", "        found.append(value)"]
        else:  # a value of several shapes (a sentinel, a string, a node or a sequence)
            lines += [
                f"    value = node.{name}",
                "    kind = type(value)",
                "    if kind is list or kind is tuple:",
                "        found.extend(value)",
                "    elif value is not None:",
                "        known = _NODE_KINDS.get(kind)",  # a dict lookup, not a call, for most values
                "        if known is None:",
                "            known = _is_node_type(kind)",
                "        if known:",
                "            found.append(value)",
            ]
    lines.append("    return found")
    namespace: dict[str, object] = {"_is_node_type": _is_node_type, "_NODE_KINDS": _NODE_KINDS}
    exec("\n".join(lines), namespace)
    return namespace["read"]  # type: ignore[return-value]  # exec() fills namespace (dict[str, object]): ``read`` is the function the generated source defines


def is_node_class(kind: type, bases: tuple[type, ...] = (cst.CSTNode,)) -> bool:
    """``issubclass(kind, bases)`` for LibCST's node classes, read from the class's MRO.
    LibCST's abstract classes register no virtual subclasses, so the answer is the same;
    ABCMeta's check of a class outside them asks every node class in turn (about 17,000
    calls at a start)."""
    mro = kind.__mro__
    return any(base in mro for base in bases)


def field_shapes(kind: type) -> tuple[tuple[str, str], ...]:
    """(name, shape) of the fields ``children`` reads, in the order of the code; shapes
    as ``_shape`` gives them."""
    shapes = _SHAPES.get(kind)
    if shapes is None:
        hints = typing.get_type_hints(kind)
        shapes = _SHAPES[kind] = tuple((name, _shape(hints.get(name))) for name in _fields_of(kind))
    return shapes


_SHAPES: dict[type, tuple[tuple[str, str], ...]] = {}


def _shape(hint: object) -> str:
    """ "node", "optional node", "nodes" (a sequence of nodes) or "mixed", from an annotation."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and is_node_class(hint):
        return "node"
    if origin is collections.abc.Sequence and args and _is_node_hint(args[0]):
        return "nodes"
    if origin is typing.Union and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if all(_is_node_hint(a) for a in rest):
            return "optional node"
    return "mixed"


def _is_node_hint(hint: object) -> bool:
    if isinstance(hint, type):
        return is_node_class(hint)
    return typing.get_origin(hint) is typing.Union and all(_is_node_hint(a) for a in typing.get_args(hint))


_NODE_KINDS: dict[type, bool] = {}


def _is_node_type(kind: type) -> bool:
    known = _NODE_KINDS.get(kind)
    if known is None:
        known = _NODE_KINDS[kind] = is_node_class(kind)
    return known


def names_in(node: cst.CSTNode) -> Iterator[str]:
    for sub in walk(node):
        if type(sub) is cst.Name:
            yield sub.value


Predicate = Callable[[cst.BaseExpression], bool]


def fold_true(expr: cst.BaseExpression, is_true: Predicate) -> cst.BaseExpression | bool:
    """Replace the sub-expressions for which ``is_true`` holds with True and simplify
    the boolean operators around them.  Returns a bool when the whole folds to a
    constant.  A child that replaces its parent never needs new parentheses: it binds
    at least as tightly as the parent did."""
    if is_true(expr):
        return True
    if type(expr) is cst.Name and expr.value in ("True", "False"):
        return expr.value == "True"
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Not:
        inner = fold_true(expr.expression, is_true)
        if isinstance(inner, bool):
            return not inner
        return expr.with_changes(expression=inner)
    if type(expr) is cst.BooleanOperation:
        left = fold_true(expr.left, is_true)
        right = fold_true(expr.right, is_true)
        is_and = type(expr.operator) is cst.And
        for this, other in ((left, right), (right, left)):
            if isinstance(this, bool):
                if this is is_and:  # True and x -> x ; False or x -> x
                    return other
                return this  # False and x -> False ; True or x -> True
        return expr.with_changes(left=left, right=right)
    if type(expr) is cst.IfExp:
        test = fold_true(expr.test, is_true)
        if isinstance(test, bool):
            chosen = expr.body if test else expr.orelse
            return fold_true(chosen, is_true)
        return expr.with_changes(test=test)
    return expr


def as_expression(value: cst.BaseExpression | bool) -> cst.BaseExpression:
    return cst.Name(str(value)) if isinstance(value, bool) else value


def mentions(expr: cst.CSTNode, predicate: Callable[[cst.Call], bool]) -> bool:
    """Some call in ``expr`` is one ``predicate`` holds for."""
    return any(type(n) is cst.Call and predicate(n) for n in walk(expr))


def assigned_values(node: cst.Assign | cst.AnnAssign) -> list[tuple[str, cst.BaseExpression]]:
    """(dotted target, value) of an assignment: each name chain it binds, and the pairs of
    a tuple unpacked from a tuple (``a, b = x, y``)."""
    if type(node) is cst.AnnAssign:
        name = dotted(node.target)
        return [(name, node.value)] if node.value is not None and name is not None else []
    assert type(node) is cst.Assign  # (the AnnAssign returned above)
    pairs: list[tuple[str, cst.BaseExpression]] = []
    for target in node.targets:
        name = dotted(target.target)
        if name is not None:
            pairs.append((name, node.value))
        elif type(target.target) is cst.Tuple and type(node.value) is cst.Tuple:
            for element, value in zip(target.target.elements, node.value.elements):
                if (element_name := dotted(element.value)) is not None:
                    pairs.append((element_name, value.value))
    return pairs


def flag_dest(call: cst.Call) -> str | None:
    """``parser.add_argument("-p", "--dist-backend", ...)``: the attribute the parsed flag is
    read from (``dest=``, else the long option, else the first name; dashes become underscores)."""
    names = [name for arg in call.args if arg.keyword is None and (name := string_value(arg.value))]
    keywords = call_args(call)[1]
    if "dest" in keywords:
        return string_value(keywords["dest"].value)
    long = next((name for name in names if name.startswith("--")), names[0] if names else None)
    return long.lstrip("-").replace("-", "_") if long else None


def target_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment target binds (``a``, ``a, (b, c)``, ``[a, *b]``); none for
    ``x.attr`` or ``x[i]``, which bind no name."""
    if type(target) is cst.Name:
        return [target.value]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for element in target.elements for n in target_names(element.value)]
    return []


def args_by_position(call: cst.Call, parameters: tuple[str, ...]) -> Iterator[tuple[str, cst.Arg]]:
    """(parameter, argument) of a call's arguments: keywords by name, positional ones by
    ``parameters`` (unpacked ones are skipped)."""
    for index, arg in enumerate(call.args):
        if arg.keyword is not None:
            yield arg.keyword.value, arg
        elif not arg.star and index < len(parameters):
            yield parameters[index], arg


def names_the_cpu(device: cst.BaseExpression | None) -> bool:
    """``"cpu"`` or ``torch.device("cpu")``: a move that leaves a tensor or module on the CPU."""
    strings = [sub for sub in walk(device) if type(sub) is cst.SimpleString] if device is not None else []
    return bool(strings) and all(string_value(sub) == "cpu" for sub in strings)


def unpacked_keywords(values: Sequence[cst.BaseExpression]) -> list[tuple[str, cst.BaseExpression]]:
    """The keyword arguments that ``**kwargs`` may pass, for the values ``kwargs`` is assigned: a dict
    literal's string keys, both branches of a conditional (``{"device_map": "auto"} if multi else {}``)
    and the keywords of ``dict(...)`` (``dict(**other)`` and non-literal keys are not read)."""
    found: list[tuple[str, cst.BaseExpression]] = []
    todo = list(values)
    while todo:
        value = todo.pop(0)
        if type(value) is cst.IfExp:
            todo[:0] = [value.body, value.orelse]
        elif type(value) is cst.Dict:
            for element in value.elements:
                if type(element) is cst.DictElement and (key := string_value(element.key)) is not None:
                    found.append((key, element.value))
        elif type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "dict":
            found += [(a.keyword.value, a.value) for a in value.args if a.keyword is not None and not a.star]
    return found
