"""Files another module of the project writes: a load without a map location whose path reads the
same config attribute as the path of the project's ``torch.save`` calls (voicefilter:
``self.target_mag_list = find_all(hp.form.target.mag)``, ``torch.load(self.target_mag_list[idx])``
in the Dataset; ``path = formatter(dir_, hp.form.target.mag, num)``,
``torch.save(torch.from_numpy(mag), path)`` in the generator script) reads what those saves write.
Where each of them saves host data (host_data.py: numpy arrays made tensors, lists of ids), no CUDA
run can have put a CUDA storage there: the load is no checkpoint (XLA403 says nothing).

A path is matched by its attribute chains of three parts or more, the first part (the config object's
name, which each module calls as it likes) left out: ``form.target.mag``; a chain of two (``args.out``)
names too little to tell one file from another."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from codemods.checkpoint.host_data import host_data
from codemods.engine.nodes import arg_value, dotted, walk

_DEPTH = 3  # names followed through names


def path_chains(
    path: cst.BaseExpression | None, values: Callable[[str], Sequence[cst.BaseExpression]], depth: int = 0
) -> frozenset[str]:
    """The attribute chains (first part left out) that ``path`` reads, also through the names it
    reads (``values``: the values bound to a name chain) and a subscript's value (``paths[i]``)."""
    while type(path) is cst.Subscript:
        path = path.value
    if path is None:
        return frozenset()
    found: set[str] = set()
    nodes = walk(path)
    called = {id(part) for node in nodes if type(node) is cst.Call for part in walk(node.func)}
    inner = {id(node.value) for node in nodes if type(node) is cst.Attribute}
    for node in nodes:
        if type(node) not in (cst.Name, cst.Attribute) or id(node) in called or id(node) in inner:
            continue
        name = dotted(node)
        if name is None:
            continue
        parts = name.split(".")
        if len(parts) >= 3 and parts[0] != "self":
            found.add(".".join(parts[1:]))
        elif depth < _DEPTH:
            for value in values(name):
                found |= path_chains(value, values, depth + 1)
    return frozenset(found)


def host_written(module: cst.Module, chains: frozenset[str]) -> bool | None:
    """Whether every ``torch.save`` of ``module`` whose path reads one of ``chains`` saves host
    data: True, False where one may not, None where none reads them."""
    assigned: dict[str, list[cst.BaseExpression]] = {}
    saves: list[cst.Call] = []
    for node in walk(module):
        if type(node) is cst.Assign:
            for target in node.targets:
                if (name := dotted(target.target)) is not None:
                    assigned.setdefault(name, []).append(node.value)
        elif type(node) is cst.Call and dotted(node.func) == "torch.save":
            saves.append(node)
    answer: bool | None = None
    for save in saves:
        if not path_chains(arg_value(save, 1, "f"), lambda name: assigned.get(name, ())) & chains:
            continue
        saved = arg_value(save, 0, "obj")
        if saved is None or not host_data(saved, assigned, frozenset()):
            return False
        answer = True
    return answer
