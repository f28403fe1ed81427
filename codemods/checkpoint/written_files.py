"""Files another module of the project writes: a load without a map location whose path reads the
same config attribute as the path of the project's ``torch.save`` calls, and names the same file
beyond it (voicefilter: ``self.target_mag_list = find_all(hp.form.target.mag)``,
``torch.load(self.target_mag_list[idx])`` in the Dataset; ``path = formatter(dir_, hp.form.target.mag,
num)``, ``torch.save(torch.from_numpy(mag), path)`` in the generator script) reads what those saves write.
Where each of them saves host data (host_data.py: numpy arrays made tensors, lists of ids), no CUDA
run can have put a CUDA storage there: the load is no checkpoint (XLA403 says nothing).

A path is matched by its attribute chains of three parts or more, the first part (the config object's
name, which each module calls as it likes) left out: ``form.target.mag``; a chain of two (``args.out``)
names too little to tell one file from another.  A chain often names a folder (``cfg.data.root``), so
the path must also name the same file beyond it: the string literals that follow the chain (the
file-name part: ``"pretrained.pth"`` of ``os.path.join(cfg.data.root, "pretrained.pth")``, the template
of ``"{}/model.pt".format(...)``) are the same in the load's path and the save's, and no part after the
chain in a join (``os.path.join``, ``/``, ``+``, an f-string, ``joinpath``) is anything but a literal: a
save at ``os.path.join(cfg.data.root, name)`` writes some file of the folder, not one the load can be
told to read.  The chain as the whole path, or handed to a function of the project (a glob or a
formatter of the pattern: ``find_all(hp.form.target.mag)``, ``formatter(dir_, hp.form.target.mag,
num)``), names the file by itself; the names handed along with it are not compared."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from codemods.checkpoint.host_data import host_data
from codemods.engine.nodes import arg_value, dotted, method_name, walk

_DEPTH = 3  # names followed through names

# A chain read in a path, and the literals that name the file beyond it (None: a folder, the file a
# name after it in a join).
ChainPath = tuple[str, tuple[str, ...] | None]

# The calls that join their arguments into a path, the last naming the file.
_JOINS = frozenset({"os.path.join", "path.join", "posixpath.join", "ntpath.join", "Path", "pathlib.Path", "PurePath"})
_JOIN_METHODS = frozenset({"joinpath", "join"})


def _literals(node: cst.CSTNode) -> tuple[str, ...]:
    return tuple(sub.raw_value for sub in walk(node) if type(sub) is cst.SimpleString) + tuple(
        sub.value for sub in walk(node) if type(sub) is cst.FormattedStringText
    )


def _literal(node: cst.CSTNode) -> bool:
    return type(node) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedStringText)


def _beyond(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> tuple[str, ...] | None:
    """The literals that follow ``node`` in the path expression (``parents``: its parent nodes), None
    where a join puts anything else after it."""
    found: tuple[str, ...] = ()
    child = node
    while (parent := parents.get(id(child))) is not None:
        after: Sequence[cst.CSTNode] = ()
        join = False
        if type(parent) is cst.Call:
            func = parent.func
            template = type(func) is cst.Attribute and type(func.value) in (cst.SimpleString, cst.ConcatenatedString)
            if template and type(func) is cst.Attribute:
                found += _literals(func.value)  # ``"{}/model.pt".format(chain)``: the template
            join = (
                dotted(func) in _JOINS
                or (type(func) is cst.Attribute and func.attr.value in _JOIN_METHODS)
                or (template and method_name(parent) == "format")
            )
            args = [a for a in parent.args if a.keyword is None and not a.star]
            if child is func:
                after = [a.value for a in args]
            elif (at := _index(args, child)) is not None:
                after = [a.value for a in args[at + 1 :]]
        elif type(parent) is cst.BinaryOperation:
            if type(parent.operator) is cst.Modulo and child is parent.right:
                found += _literals(parent.left)  # ``"%s/model.pt" % chain``: the template
            elif type(parent.operator) in (cst.Add, cst.Divide) and child is parent.left:
                after, join = [parent.right], True
        elif type(parent) is cst.Tuple and (at := _index(parent.elements, child)) is not None:
            # ``"%s/%s" % (chain, name)``: the values a template joins
            above = parents.get(id(parent))
            if type(above) is cst.BinaryOperation and type(above.operator) is cst.Modulo and above.right is parent:
                after, join = [e.value for e in parent.elements[at + 1 :]], True
        elif type(parent) is cst.FormattedString and (at := _index(parent.parts, child)) is not None:
            after, join = parent.parts[at + 1 :], True
        elif type(parent) is cst.ConcatenatedString and child is parent.left:
            after, join = [parent.right], True
        for part in after:
            if join and not all(_literal(sub) for sub in _path_parts(part)):
                return None
            found += _literals(part)
        child = parent
    return found


def _index(items: Sequence[cst.CSTNode], child: cst.CSTNode) -> int | None:
    return next((at for at, item in enumerate(items) if item is child), None)


def _path_parts(node: cst.CSTNode) -> list[cst.CSTNode]:
    """A joined part as its pieces: a literal, a concatenation of literals, or anything else as one."""
    if type(node) is cst.ConcatenatedString:
        return [*_path_parts(node.left), *_path_parts(node.right)]
    if type(node) is cst.FormattedString:
        return list(node.parts)
    return [node]


def _parents(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            parents[id(child)] = node
            stack.append(child)
    return parents


def path_chains(
    path: cst.BaseExpression | None, values: Callable[[str], Sequence[cst.BaseExpression]], depth: int = 0
) -> frozenset[ChainPath]:
    """The attribute chains (first part left out) that ``path`` reads, also through the names it
    reads (``values``: the values bound to a name chain) and a subscript's value (``paths[i]``), each
    with the literals that name the file beyond it (None: the chain names a folder)."""
    while type(path) is cst.Subscript:
        path = path.value
    if path is None:
        return frozenset()
    found: set[ChainPath] = set()
    nodes = walk(path)
    called = {id(part) for node in nodes if type(node) is cst.Call for part in walk(node.func)}
    inner = {id(node.value) for node in nodes if type(node) is cst.Attribute}
    parents = _parents(path)
    for node in nodes:
        if type(node) not in (cst.Name, cst.Attribute) or id(node) in called or id(node) in inner:
            continue
        name = dotted(node)
        if name is None:
            continue
        parts = name.split(".")
        beyond = _beyond(node, parents)
        if len(parts) >= 3 and parts[0] != "self":
            found.add((".".join(parts[1:]), beyond))
        elif depth < _DEPTH:
            for value in values(name):
                for chain, file in path_chains(value, values, depth + 1):
                    found.add((chain, None if file is None or beyond is None else file + beyond))
    return frozenset(found)


def host_written(module: cst.Module, paths: frozenset[ChainPath]) -> bool | None:
    """Whether every ``torch.save`` of ``module`` that may write one of ``paths`` (a chain, and the
    literals naming the file beyond it) saves host data: True, False where one may not, None where none
    writes them.  A save under the chain names the same file, or a folder's file it cannot tell (then
    it may write there too, but does not make the answer True); one naming another file beyond the chain
    does not write the load's."""
    assigned: dict[str, list[cst.BaseExpression]] = {}
    saves: list[cst.Call] = []
    for node in walk(module):
        if type(node) is cst.Assign:
            for target in node.targets:
                if (name := dotted(target.target)) is not None:
                    assigned.setdefault(name, []).append(node.value)
        elif type(node) is cst.Call and dotted(node.func) == "torch.save":
            saves.append(node)
    chains = {chain for chain, _ in paths}
    answer: bool | None = None
    for save in saves:
        written = path_chains(arg_value(save, 1, "f"), lambda name: assigned.get(name, ()))
        same = bool(written & paths)
        if not same and not any(chain in chains and file is None for chain, file in written):
            continue
        saved = arg_value(save, 0, "obj")
        if saved is None or not host_data(saved, assigned, frozenset()):
            return False
        answer = True if same else answer
    return answer
