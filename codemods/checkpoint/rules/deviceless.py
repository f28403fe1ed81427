"""A file that names no device and trains nothing: a checkpoint conversion script (load, rename the
keys, save), a preprocessing script (audio to mel spectrograms, saved one per file).  Nothing in it
moves a tensor anywhere, so what it builds and saves from what it binds itself (``ckpt =
torch.load(p)``, ``model = ckpt["model"]``, ``mel = stft.mel_spectrogram(wav)``) is on the host as the
port leaves it (its loads get ``map_location="cpu"``, XLA403), and where one process writes, torch.save
stays (XLA401): xm.save would move nothing.  A name the save reads that the file does not bind (a
parameter, a free name: ``torch.save(model.state_dict(), p)`` in a helper handed the model) may hold
device tensors of another module: that save stays a checkpoint.

A file names a device when any of its names or attributes reads as one (a word ``cuda``,
``device``, ``gpu``, ``xla``, ``tpu``, ``accelerator``), any string mentions one, or a ``.to(...)`` call moves something; it trains
when it calls ``backward``, ``step``, ``zero_grad`` or ``fit``, or names an optimizer (``optim``)."""

from __future__ import annotations

import builtins
import re
import sys

import libcst as cst

from codemods.engine.nodes import dotted, parents_of, target_names, walk

# A word of a name or string (not inside another word: ``output`` names no TPU).
_DEVICE_WORD = re.compile(r"(?<![a-z])(cuda|devices?|n?gpus?|xla|tpus?|mps|accelerator)(?![a-z])", re.IGNORECASE)
_TRAINS = frozenset({"backward", "step", "zero_grad", "fit", "optimizer_step"})


def names_no_device(module: cst.Module) -> bool:
    """No name, attribute or string of ``module`` reads as a device, no ``.to(...)`` moves, and
    nothing trains (see the module docstring)."""
    for node in walk(module):
        if isinstance(node, cst.Name):
            if _DEVICE_WORD.search(node.value) or node.value in _TRAINS or "optim" in node.value.lower():
                return False
        elif isinstance(node, cst.SimpleString | cst.FormattedStringText):
            if _DEVICE_WORD.search(node.value):
                return False
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
            return False
    return True


def bound_here(
    saved: cst.BaseExpression, scope: cst.Module | cst.FunctionDef, module: cst.Module, models: set[str]
) -> bool:
    """Every name ``saved`` reads is bound in ``scope`` to what the file builds itself, followed through
    the values bound to it (assignments, ``for`` and comprehension targets, ``with ... as``): a parameter
    only where every call of the function in the file hands it such a value (a function nothing in the
    file calls is handed its parameters by another module), never a free or imported name.  A call
    is built here where it calls a method of such a name, a builtin, a class (of the file, or one it
    imports: ``TacotronSTFT(...)``, built here with no device), a host library (``_HOST_LIBRARIES``:
    torch's builders and ``torch.load``, whose load XLA403 locates on the CPU, numpy, the standard
    library), or a function of the file whose calls are all such calls.  Any other function the
    file imports (``from trainer import train_model``) returns what another module built: device
    tensors, maybe.  A model of the file (``models``) is left out: a module is what a training
    script moves, and its whole-module save is XLA402's."""
    read = _read_names(saved)
    if any(_root(name) in models for name in read):
        return False
    return _built_here(read, scope, module, 0)


def _built_here(names: set[str], scope: cst.Module | cst.FunctionDef, module: cst.Module, depth: int) -> bool:
    if not names or depth > _DEPTH:
        return False
    bound = _bindings(scope)
    parameters = _parameters(scope)
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name.endswith("()"):
            callee, name = name[:-2], _root(name)
            if name not in bound and name not in parameters:
                if _host_call(callee, module, set()):
                    continue  # a builtin, a class, a host library's call or a host function of the file
                return False
        if name in parameters:
            if not _handed_built(scope, name, parameters[name], module, depth):  # type: ignore[arg-type]  # a module has no parameters
                return False
            continue
        if name not in bound:
            return False
        for value in bound[name]:
            todo.extend(_read_names(value))
    return True


_DEPTH = 3
_BUILTINS = frozenset(dir(builtins))
_CONSTANTS = frozenset({"True", "False", "None", "Ellipsis"})


def _bindings(scope: cst.Module | cst.FunctionDef) -> dict[str, list[cst.BaseExpression]]:
    """The values bound to each name of ``scope`` (not of the functions and classes inside it)."""
    bound: dict[str, list[cst.BaseExpression]] = {}
    mutations: list[tuple[str, cst.Call]] = []

    def bind(target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        for name in target_names(target):
            bound.setdefault(name, []).append(value)
        if isinstance(target, cst.Subscript | cst.Attribute):  # ``out[name] = value``: ``out`` holds it
            root = _store_root(target)
            if root is not None:
                bound.setdefault(root, []).append(value)

    body = scope.body
    stack: list[cst.CSTNode] = [body] if isinstance(body, cst.CSTNode) else list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            continue
        if isinstance(node, cst.Assign):
            for target in node.targets:
                bind(target.target, node.value)
        elif isinstance(node, cst.AnnAssign | cst.AugAssign) and node.value is not None:
            bind(node.target, node.value)
        elif isinstance(node, cst.For | cst.CompFor):
            bind(node.target, node.iter)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            bind(node.asname.name, node.item)
        elif isinstance(node, cst.Import | cst.ImportFrom):
            continue
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            root = _store_root(node.func.value)
            if root is not None:
                mutations.append((root, node))
        stack.extend(node.children)
    for root, call in mutations:  # ``out.update(...)``, ``out.append(...)``: what it is handed may go in
        if root in bound:
            bound[root].append(call)
    return bound


def _store_root(target: cst.BaseExpression) -> str | None:
    """The name a subscript or attribute chain stores into (``out`` of ``out[k].x``)."""
    while isinstance(target, cst.Subscript | cst.Attribute):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


def _imports(module: cst.Module) -> dict[str, str]:
    """The names the file imports, each to what it names (``np`` -> ``numpy``, ``train_model`` ->
    ``trainer.train_model``; a relative import's starts with a dot)."""
    names: dict[str, str] = {}
    for node in walk(module):
        if isinstance(node, cst.Import | cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            base = ""
            if isinstance(node, cst.ImportFrom):
                base = "." * len(node.relative) + (dotted(node.module) or "") + "."
            for alias in node.names:
                full = dotted(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    names[alias.asname.name.value] = base + full
                elif isinstance(node, cst.ImportFrom):
                    names[full] = base + full
                else:
                    names[full.split(".")[0]] = full.split(".")[0]
    return names


# The libraries whose calls build host values in a file that names no device: torch's builders
# (a device would be named) and ``torch.load`` (XLA403 locates it on the CPU), numpy, the standard
# library.
_HOST_LIBRARIES = frozenset({"torch", "numpy", *sys.stdlib_module_names})


def _host_call(callee: str, module: cst.Module, seen: set[str]) -> bool:
    """A call of ``callee`` (not bound in its scope) builds a host value: a builtin, a class of the
    file or one it imports, a call into a host library, or a function of the file whose every call
    of what the file imports or defines is one too (``seen``: the functions being tested)."""
    root = _root(callee)
    if root in _BUILTINS and root not in _imports(module):
        return True
    if (imported := _imports(module).get(root)) is not None:
        full = imported + callee[len(root) :]
        return full.split(".")[0] in _HOST_LIBRARIES or full.rsplit(".", 1)[-1][:1].isupper()
    defined = next(
        (s for s in module.body if isinstance(s, cst.FunctionDef | cst.ClassDef) and s.name.value == root), None
    )
    if isinstance(defined, cst.ClassDef):
        return True
    if not isinstance(defined, cst.FunctionDef) or callee != root:
        return False
    if root in seen:
        return True
    seen.add(root)
    local = _bindings(defined).keys() | _parameters(defined).keys()
    return all(
        _root(name) in local or _host_call(name[:-2], module, seen)
        for node in walk(defined.body)
        if isinstance(node, cst.Call)
        for name in _read_names(node)
        if name.endswith("()")
    )


def _parameters(scope: cst.Module | cst.FunctionDef) -> dict[str, int]:
    """A function's parameters: name -> position; -1 for one given only by keyword, -2 for ``*args``
    and ``**kwargs``."""
    if isinstance(scope, cst.Module):
        return {}
    params = scope.params
    found = {p.name.value: i for i, p in enumerate([*params.posonly_params, *params.params])}
    found.update((p.name.value, -1) for p in params.kwonly_params)
    found.update((star.name.value, -2) for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param))
    return found


def _handed_built(function: cst.FunctionDef, name: str, position: int, module: cst.Module, depth: int) -> bool:
    """Every call of ``function`` by its name in the file (there is one at least) hands its parameter
    ``name`` (at ``position``) a value built in the file, read in the scope of the call (the module's,
    or a function's)."""
    if position == -2:
        return False
    parents = parents_of(module)
    calls = [
        n
        for n in walk(module)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == function.name.value
    ]
    if not calls:
        return False
    for call in calls:
        if any(arg.star for arg in call.args):
            return False
        given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
        positional = [a for a in call.args if a.keyword is None]
        if given is None and 0 <= position < len(positional):
            given = positional[position].value
        if given is None:
            continue  # the parameter's default
        scope: cst.CSTNode | None = parents.get(id(call))
        while scope is not None and not isinstance(scope, cst.FunctionDef | cst.Module):
            scope = parents.get(id(scope))
        if scope is None or scope is function:
            return False
        read = _read_names(given)
        if read and not _built_here(read, scope, module, depth + 1):
            return False
    return True


def _read_names(value: cst.BaseExpression) -> set[str]:
    """The names ``value`` reads: the roots of its attribute chains, the names it hands to calls, and
    what it calls, marked ``()``: the name chain (``torch.load()``), or the root of another callee
    (an attribute's name and a keyword aside); the targets of its comprehensions are its own."""
    skipped: set[int] = set()
    callees: dict[int, str] = {}
    own: set[str] = set()
    for node in walk(value):
        if isinstance(node, cst.Attribute):
            skipped.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif isinstance(node, cst.Call):
            func: cst.BaseExpression = node.func
            chain = dotted(func)
            while isinstance(func, cst.Attribute):
                func = func.value
            if isinstance(func, cst.Name):
                callees[id(func)] = chain or func.value
        elif isinstance(node, cst.CompFor):
            own.update(n.value for n in walk(node.target) if isinstance(n, cst.Name))
    names = {
        callees[id(node)] + "()" if id(node) in callees else node.value
        for node in walk(value)
        if isinstance(node, cst.Name) and id(node) not in skipped and node.value not in _CONSTANTS
    }
    return {n for n in names if _root(n) not in own}


def _root(name: str) -> str:
    """The name a read (``ckpt``) or a call's chain (``stft.mel_spectrogram()``) starts with."""
    return name.removesuffix("()").split(".", 1)[0]
