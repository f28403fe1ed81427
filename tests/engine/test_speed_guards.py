"""Guards over the speed machinery (codemods/engine/speed.py): the shortcuts change no
result.

- The pruned traversal (the rewrite enters only ``Facts.nodes_to_visit``, found through the
  fact sheet's annotated fields) gives the same output and findings as the full one
  (LibCST's own traversal of every node, every field searched, no node cache), on every
  fixture for both targets and on every rule case.
- The generated child readers (engine/nodes.py ``children``, which the walk, the subtree
  searches and the rewriter use instead of LibCST's ``.children``) give ``.children``
  without whitespace, comments, punctuation and operators, in the same order, for every
  node type LibCST defines (built by parsing the snippets below; the test checks they
  hold one of each).
- NodeMap and node_cache key by identity and hold their nodes.
- The walk's keyed hooks (``@calls_of``, ``@attributes_named``) are dispatched by key with
  the shortcuts on and filter every call or attribute themselves without them: the
  pruned-versus-full conversions above run both.
- The resolved paths the run keeps are what ``Path.resolve`` gives, relative paths from
  the current folder at the time of asking.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from operator import attrgetter
from pathlib import Path

import libcst as cst
import pytest

from codemods import TARGETS, Conversion, convert_source
from codemods.analyse import analyse
from codemods.engine import speed
from codemods.engine.nodemap import NodeMap, node_cache
from codemods.engine.nodes import children, walk
from codemods.project.roots import resolved
from tests.support.derived_cases import TARGET_CASES
from tests.support.fixtures import convert_fixture, fixture_scripts
from tests.support.paths import FIXTURES
from tests.support.rule_cases import CASES, Case

LAUNCHERS = sorted(p.relative_to(FIXTURES) for p in (FIXTURES / "launchers").glob("*.py"))


def _both_ways(convert: Callable[[], Conversion]) -> tuple[Conversion, Conversion]:
    fast = convert()
    with speed.full_traversal():
        assert not speed.shortcuts()
        full = convert()
    assert speed.shortcuts()
    return fast, full


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_pruned_conversion_of_a_fixture_equals_the_full_one(script: Path, target: str) -> None:
    fast, full = _both_ways(lambda: convert_fixture(script, target))
    assert fast.output == full.output
    assert fast.findings == full.findings


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=str)
def test_pruned_conversion_of_a_launcher_equals_the_full_one(launcher: Path) -> None:
    source = (FIXTURES / launcher).read_bytes()
    fast, full = _both_ways(lambda: convert_source(source, filename=launcher.name))
    assert fast.output == full.output
    assert fast.findings == full.findings


@pytest.mark.parametrize("case", CASES + TARGET_CASES, ids=lambda c: c.id)
def test_pruned_conversion_of_a_rule_case_equals_the_full_one(case: Case) -> None:
    fast, full = _both_ways(lambda: convert_source(case.before, target=case.target, filename=case.filename))
    assert fast.output == full.output
    assert fast.findings == full.findings


@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_the_annotated_fields_of_the_fact_sheet_hold_every_node_it_names(script: Path) -> None:
    """The fact-sheet scan that skips fields whose annotations hold no nodes finds the
    same nodes to visit as a scan of every field (the same parsed module, analysed twice)."""
    module = cst.parse_module((FIXTURES / script).read_bytes())
    pruned = analyse(module)
    with speed.full_traversal():
        every_field = analyse(module)
    assert pruned.nodes_to_visit == every_field.nodes_to_visit
    assert pruned.parents == every_field.parents


# -- the child readers ------------------------------------------------------------------

SNIPPETS = [
    '''"""doc"""
# comment
from __future__ import annotations
import os, sys as system
from . import sibling
from ..pkg.mod import (a as b, c,)
from mod import *
x: int = 1
y: "str"
a = b = c = 1; d, *e = f
a += 1; a -= 1; a *= 1; a /= 1; a //= 1; a %= 1; a **= 1; a @= m
a <<= 1; a >>= 1; a &= 1; a |= 1; a ^= 1
z = (a + b - c * d / e // f % g ** h @ m << 1 >> 2 & 3 | 4 ^ 5)
w = -a, +b, ~c, not d
v = a and b or c
u = a < b <= c > d >= e == f != g in h not in i is j is not k
t = [1, 2.5, 3j, 0x10, 'single', "double", b"bytes", r"raw", """triple""", "con" "cat"]
s = {1, 2}; r = {1: 2, **other}; q = (1,); p = ()
o = f"{a!r:>{width}} {b=} text {{}}"
n = [i for i in range(3) if i] + list(i async for i in aiter() if i)
m = {i for i in x}; l = {k: v for k, v in items}; g = (i for i in x)
k = lambda a, /, b=1, *args, c, d=2, **kw: a
j = lambda *, e: e
i = a if b else c
h = x[1], x[1:2], x[::3], x[a, b:c], x[*idx]
(walrus := 10)
print(*args, sep="", **kwargs)
assert x, "message"
del x, y[0]
global gg
@decorator
@decorator.attr(arg)
class C(Base, metaclass=Meta):
    attr: int
    def method(self) -> None:
        nonlocal_name = 1
        def inner():
            nonlocal nonlocal_name
            yield
            yield from g
            yield nonlocal_name
        return inner
    async def amethod(self):
        await thing
        async with a as b, c:
            pass
        async for x in y:
            continue
        else:
            break
if a:
    pass
elif b:
    ...
else:
    raise ValueError("x") from err
while x:
    break
else:
    pass
for i, j in pairs:
    pass
else:
    pass
try:
    pass
except (ValueError, TypeError) as error:
    pass
except Exception:
    raise
else:
    pass
finally:
    pass
try:
    pass
except* ValueError as group:
    pass
with open(p) as f, lock:
    pass
with (open(p) as f, open(q) as g,):
    pass
if x: pass
class Empty: ...
def positional(a, b, /, c, *, d): return a
match command:
    case [x, y, *rest]:
        pass
    case (1 | 2) as number:
        pass
    case {"key": value, **others}:
        pass
    case Point(x=0, y=yy) | Point(1, 2):
        pass
    case None | True | False:
        pass
    case -1 | 1.5 | "s" | a.b:
        pass
    case (x, y):
        pass
    case [*_]:
        pass
    case _ if guard:
        pass
type Alias = int
type Generic[T, *Ts, **P] = dict[T, P]
def generic[T: int, U = str](x: T) -> U: ...
class Box[T]: ...
x = (  # comment in parentheses
    1
)
''',
    't = t"{a} text {b!r:>{w}}"\n',  # a template string (Python 3.14)
    "lazy import os\nlazy from a import b\n",  # lazy imports (PEP 810)
    "x = {**a for a in b}\n",  # a starred dict comprehension
]

# What ``children`` leaves out: whitespace, comments, punctuation, operators, `async`, `/`.
_LAYOUT = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
    cst.Comma,
    cst.Colon,
    cst.Dot,
    cst.Semicolon,
    cst.AssignEqual,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.Asynchronous,
    cst.ParamSlash,
)


def _node_types() -> set[type]:
    """Every concrete node class LibCST defines: not its ``Base*`` classes, and as its
    module names it (LibCST's slot classes replace the classes they were made from, which
    stay among the subclasses)."""
    found: set[type] = set()
    stack = [cst.CSTNode]
    while stack:
        kind = stack.pop()
        stack.extend(kind.__subclasses__())
        if inspect.isabstract(kind) or kind.__name__.startswith("Base"):
            continue
        if getattr(sys.modules[kind.__module__], kind.__name__, None) is kind:
            found.add(kind)
    return found


def _every_node() -> list[cst.CSTNode]:
    nodes: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [cst.parse_module(snippet) for snippet in SNIPPETS]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.children)
    return nodes


NODES = _every_node()


def test_the_snippets_hold_every_node_type_libcst_defines() -> None:
    defined = _node_types()
    assert len(defined) > 150  # the enumeration found LibCST's classes
    assert defined - {type(node) for node in NODES} == set()


@pytest.mark.parametrize("kind", sorted(_node_types(), key=attrgetter("__name__")), ids=attrgetter("__name__"))
def test_the_child_reader_of_a_node_type_gives_its_children(kind: type) -> None:
    instances = [node for node in NODES if type(node) is kind]
    assert instances
    for node in instances:
        expected = [child for child in node.children if not isinstance(child, _LAYOUT)]
        read = list(children(node))
        assert [type(c).__name__ for c in read] == [type(c).__name__ for c in expected]
        assert all(a is b for a, b in zip(read, expected, strict=True))


def test_walk_reaches_every_node_but_layout() -> None:
    for module in (cst.parse_module(snippet) for snippet in SNIPPETS):
        expected: list[cst.CSTNode] = []
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            expected.append(node)
            stack.extend(child for child in node.children if not isinstance(child, _LAYOUT))
        assert sorted(map(id, walk(module))) == sorted(map(id, expected))


# -- node maps ----------------------------------------------------------------------------


def test_a_node_map_keys_by_identity_and_holds_its_nodes() -> None:
    first, second = cst.Name("x"), cst.Name("x")  # equal by value, two nodes
    names: NodeMap[int] = NodeMap()
    names[first] = 1
    names[second] = 2
    assert (names[first], names[second], len(names)) == (1, 2, 2)
    assert names.get(cst.Name("x")) is None and cst.Name("x") not in names
    assert list(names) == [first, second] and list(names.values()) == [1, 2]
    assert names.pop(first) == 1 and first not in names and names.pop(first, 0) == 0
    assert names.setdefault(second, 5) == 2 and names.setdefault(first, 7) == 7
    kept: NodeMap[None] = NodeMap()
    kept[cst.Name("temporary")] = None  # the map holds it: its id cannot be reused
    assert [node.value for node, _ in kept.items()] == ["temporary"]  # type: ignore[attr-defined]


def test_a_node_cache_computes_once_per_node_and_every_time_without_shortcuts() -> None:
    calls: list[cst.CSTNode] = []

    def compute(node: cst.CSTNode) -> str:
        calls.append(node)
        return type(node).__name__

    node = cst.Name("x")
    cache = node_cache(compute)
    assert (cache(node), cache(node), len(calls)) == ("Name", "Name", 1)
    cache.clear()
    assert cache(node) == "Name" and len(calls) == 2
    with speed.full_traversal():
        uncached = node_cache(compute)
    assert (uncached(node), uncached(node), len(calls)) == ("Name", "Name", 4)


def test_the_ids_of_a_node_map_follow_its_entries() -> None:
    node = cst.Name("x")
    names: NodeMap[int] = NodeMap()
    assert id(node) not in names.ids
    names[node] = 1
    assert id(node) in names.ids
    names.pop(node)
    assert id(node) not in names.ids


def test_resolved_paths_are_kept_per_folder_and_computed_every_time_without_shortcuts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text("")
    (tmp_path / "link.py").symlink_to(tmp_path / "a" / "train.py")
    monkeypatch.chdir(tmp_path / "a")
    assert resolved("train.py") == (tmp_path / "a" / "train.py").resolve()
    monkeypatch.chdir(tmp_path / "b")  # the same relative path, another file
    assert resolved("train.py") == (tmp_path / "b" / "train.py").resolve()
    assert resolved(tmp_path / "link.py") == (tmp_path / "a" / "train.py").resolve()
    (tmp_path / "link.py").unlink()
    (tmp_path / "link.py").symlink_to(tmp_path / "b" / "train.py")
    assert resolved(tmp_path / "link.py") == (tmp_path / "a" / "train.py").resolve()  # kept for the run
    with speed.full_traversal():
        assert resolved(tmp_path / "link.py") == (tmp_path / "b" / "train.py").resolve()
