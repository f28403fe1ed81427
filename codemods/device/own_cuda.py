"""``obj.cuda()`` where ``obj`` is an instance of a project class that defines its own ``cuda``
method and is no torch module or tensor (CMC's ``AliasMethod``: ``self.multinomial =
AliasMethod(probs); self.multinomial.cuda()``): the call runs that method, whose body moves the
instance's tensors (``self.prob = self.prob.cuda()``), and the instance has no ``.to``.  XLA102
leaves such a call as it is (the method's body is ported where its module is converted), and
reports it where that module is not converted in this run.  The part of DeviceAnalysis that finds
them, from what each name chain is bound to (a call of a class: of this file, or of the project).
Where the class is not known (a parameter, anything but a class's call), the call is XLA102's."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.name_bindings import binding_at
from codemods.engine.nodes import dotted, method_name, receiver
from codemods.engine.walk import Analysis, assignments
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.device.facts import DeviceFacts
    from codemods.engine.walk import Walk
    from codemods.facts import Facts
    from codemods.project.module_summary import Found, ModuleSummary

    _Lookup = Callable[[str], "tuple[tuple[str, ...], tuple[str, ...]] | None"]  # class -> (bases, methods)

# Calls that hand back an instance of the same class as their argument.
_COPIES = frozenset({"copy.deepcopy", "copy.copy"})
# Bases that make a class no plain object (the rest, a project class among them, are followed).
_PLAIN_BASES = frozenset({"object"})


class OwnCudaCalls(Analysis):
    """The part of DeviceAnalysis that finds ``.cuda()`` calls of a project class's own method."""

    facts: Facts
    part: DeviceFacts
    function_params: dict[str, list[str]]
    module_seen: cst.Module | None  # (device/string_indices.py's)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        # ``utils.cuda(...)``: the functions enclosing the call (None: a lambda), innermost last.
        self.cuda_call_functions: dict[cst.Call, list[cst.FunctionDef | None]] = {}
        # What each name chain is bound to, by scope (the class for ``self.x``, else the function,
        # "" at module level): the call bound (what it builds is the project analysis's
        # ``call_builders``, or a class of this file), a parameter of the function binding it
        # (``self.mac = mac``, ``copy.deepcopy(mac)``: (function, index, parameter)), None for anything else.
        self.own_cuda_bound: dict[tuple[str, str], list[cst.Call | tuple[str, int, str] | None]] = defaultdict(list)
        self.own_cuda_receivers: list[tuple[cst.Call, str, str]] = []  # (call, scope, receiver)
        self.own_cuda_built: list[tuple[cst.Call, str]] = []  # (a call bound to a name, its scope)
        self.self_cuda_methods: dict[cst.Call, str] = {}  # ``self.cuda()``: the method it is in
        # ``x.cuda(gpu)``: the call and the name handed as its device, a CUDA index where the call is a
        # move (no project function's or class's own ``cuda``: ``self.cuda(device)`` of a ``Graph``).
        self.cuda_index_args: list[tuple[cst.Call, str]] = []

    def _scope_of(self, name: str) -> str:
        qualname = self.walk.qualname
        if name.split(".")[0] in ("self", "cls") and self.walk.class_depth and "." in qualname:
            return qualname.rsplit(".", 1)[0]  # the method's class
        return qualname

    @assignments()
    def _own_cuda_binding(self, name: str, value: cst.BaseExpression) -> None:
        bound: cst.Call | tuple[str, int, str] | None = value if type(value) is cst.Call else None
        if type(value) is cst.Call and self.walk.resolve(value.func) in _COPIES and len(value.args) == 1:
            value = value.args[0].value  # ``self.target_mac = copy.deepcopy(mac)``: the same class
        params = self.function_params.get(qualname := self.walk.qualname, [])
        if type(value) is cst.Name and value.value in params:
            bound = (qualname, params.index(value.value), value.value)
        elif type(bound) is cst.Call:
            self.own_cuda_built.append((bound, qualname))
        self.own_cuda_bound[(self._scope_of(name), name)].append(bound)

    def leave_Call(self, node: cst.Call) -> None:
        if method_name(node) == "cuda" and (name := dotted(receiver(node))) is not None:
            self.own_cuda_receivers.append((node, self._scope_of(name), name))
            if "." not in name:
                self.cuda_call_functions[node] = list(self.walk.functions)
            if name == "self" and self.walk.class_depth:
                self.self_cuda_methods[node] = self.walk.qualname

    def _own_cuda_calls(self) -> None:
        """Take out of ``dot_cuda`` the calls of a project class's own ``cuda``; those of a module this
        run does not convert are reported (``own_cuda_pending``).  Record what the file hands such
        classes (``own_cuda_arguments``, for the files that define them).  Take out, too, the calls
        of a project module's function ``cuda`` (``utils.cuda(batch)``) and ``self.cuda()`` in a class
        with its own ``cuda`` or, in its own ``to``, where ``self.to(...)`` would call that method itself."""
        for call, scope, name in self.own_cuda_receivers:
            if call in self.part.dot_cuda and self._not_a_move(call, scope, name):
                self.part.dot_cuda.discard(call)
        for call, scope, name in self.own_cuda_receivers:
            if call not in self.part.dot_cuda or (classes := self._classes_of(scope, name, call)) is None:
                continue
            self.part.dot_cuda.discard(call)
            pending = [(cls, path) for cls, path in classes if path is not None]
            if pending:
                self.part.own_cuda_pending[call] = pending[0]
        for call, scope in self.own_cuda_built:
            self._handed(call, scope)
        self.part.cuda_indices.update(name for call, name in self.cuda_index_args if call in self.part.dot_cuda)

    def _not_a_move(self, call: cst.Call, scope: str, name: str) -> bool:
        """``call`` (``name.cuda(...)``) is no Tensor.cuda or Module.cuda that XLA102 may make a ``.to``:
        a project module's function (reported where its module is not converted in this run:
        ``module_cuda_pending``), or ``self.cuda()`` of a class of this file that defines ``cuda`` (that
        method runs, ported with the file), or ``self.cuda()`` in the class's own ``to`` (reported:
        ``self_to_recursion``)."""
        if name == "self":
            entry = self.facts.project.classes.get(scope)
            if entry is None or (method := self.self_cuda_methods.get(call)) is None:
                return False
            if (owner := self._cuda_owner(scope, None, set())) is not None:
                if owner[1] is not None:  # a base's, of a module this run does not convert
                    self.part.self_cuda_pending[call] = (owner[0], owner[1])
                return True
            if "to" in entry[1] and method == f"{scope}.to":
                self.part.self_to_recursion[call] = scope
                return True
            return False
        if "." in name or name not in self.facts.imports.project_names:
            return False
        bound = binding_at(name, call, self.cuda_call_functions.get(call, []), self.module_seen)
        if bound == "local":
            return False  # (a parameter, ``for utils in ...``: no module)
        project = self.walk.analysis(ProjectAnalysis)
        module = project.origin(name)
        if module is None or module.name or module.summary is None:
            return False  # a class, a function or an instance the module binds; or no module read
        if bound == "unsure":
            self.part.module_cuda_unsure[call] = name
            return True
        function = project.origin(f"{name}.cuda")
        if function is not None and function.summary is not None and function.summary.pending:
            self.part.module_cuda_pending[call] = (function.summary.path, function.name or "cuda")
        return True

    def _cuda_owner(self, cls: str, summary: ModuleSummary | None, seen: set[str]) -> tuple[str, str | None] | None:
        """The class whose own ``cuda`` ``self.cuda()`` in ``cls`` runs: ``cls`` or a base of it, of this file
        (``summary`` None) or of a project module (``summary``); with that module's path where this run does
        not convert it.  None: no class of the project on the way defines ``cuda`` (a torch module's)."""
        entry = self.facts.project.classes.get(cls) if summary is None else _summary_class(summary, cls)
        if entry is None or (key := f"{summary.path if summary else ''}:{cls}") in seen:
            return None
        seen.add(key)
        bases, methods = entry
        if "cuda" in methods:
            return cls, summary.path if summary is not None and summary.pending else None
        for base in bases:
            if summary is not None and _summary_class(summary, base) is not None:
                found = self._cuda_owner(base, summary, seen)
            elif summary is None and base in self.facts.project.classes:
                found = self._cuda_owner(base, None, seen)
            elif summary is None and (origin := self.walk.analysis(ProjectAnalysis).origin(base)) is not None:
                there = origin.summary
                found = self._cuda_owner(origin.name, there, seen) if there is not None and origin.name else None
            else:
                found = None
            if found is not None:
                return found
        return None

    def _handed(self, call: cst.Call, scope: str) -> None:
        """What ``call`` (a call of project classes with their own ``cuda``) hands them."""
        project = self.walk.analysis(ProjectAnalysis)
        context = self.facts.project.context
        for module, callable_ in project.call_builders.get(call, ()):
            found = context.lookup(module, callable_)
            if found is None or found.summary is None or self._own_cuda_found(found) is None:
                continue
            for index, arg in enumerate(call.args):
                if arg.star:
                    break
                handed = dotted(arg.value)
                classes = self._classes_of(scope, handed, None) if handed is not None else None
                cls, pending = (classes[0][0], classes[0][1] or "") if classes else ("", "")
                at, keyword = (-1, arg.keyword.value) if arg.keyword is not None else (index, "")
                self.part.own_cuda_arguments.add((found.summary.path, found.name, at, keyword, cls, pending))

    def _classes_of(self, scope: str, name: str, call: cst.Call | None) -> list[tuple[str, str | None]] | None:
        """The classes whose own ``cuda`` the name's instance may run: (the class as a finding names it,
        the path of its module where this run does not convert it); None where any binding of the
        name is not such a class's call, or a parameter no file of the run is seen to hand one
        (``call``: the ``.cuda()`` whose message then says so)."""
        bound = self.own_cuda_bound.get((scope, name))
        root = name.split(".")[0]
        if bound is None and root not in ("self", "cls") and root not in self.function_params.get(scope, ()):
            bound = self.own_cuda_bound.get(("", name))  # a module-level name
        if not bound or root in self.function_params.get(scope, ()):
            return None
        found: list[tuple[str, str | None]] = []
        for value in bound:
            classes = self._handed_in(scope, value, call) if isinstance(value, tuple) else self._built(value)
            if not classes:
                return None
            found.extend(classes)
        return found

    def _built(self, call: cst.Call | None) -> list[tuple[str, str | None]] | None:
        """The classes with their own ``cuda`` that ``call`` may build; None where one is not such a class."""
        if call is None:
            return None
        project = self.walk.analysis(ProjectAnalysis)
        builders = project.call_builders.get(call)
        if builders is None and type(call.func) is cst.Subscript and (table := dotted(call.func.value)) is not None:
            found = [self._own_cuda_class(value) for value in self.facts.project.name_tables.get(table, ())]
            return None if not found or None in found else [cls for cls in found if cls is not None]
        if builders is None:
            callee = dotted(call.func)
            cls = self._own_cuda_class(callee) if callee is not None else None
            return [cls] if cls is not None else None
        found = [self._own_cuda_built(module, callable_) for module, callable_ in builders]
        return None if None in found else [cls for cls in found if cls is not None]

    def _handed_in(
        self, scope: str, value: tuple[str, int, str], call: cst.Call | None
    ) -> list[tuple[str, str | None]] | None:
        """``self.mac = mac`` in ``__init__`` of a class of this file with its own ``cuda``: the classes
        the run's other files hand it there, where every one is known to have its own ``cuda``."""
        function, index, parameter = value
        classes = self.facts.project.classes
        if function != f"{scope}.__init__" or not _plain_own_cuda(scope, classes.get, set()):
            return None
        handed = self.facts.project.context.own_cuda_handed(scope, index, parameter)
        if handed and all(cls for cls, _ in handed):
            return [(cls, pending or None) for cls, pending in handed]
        if call is not None:
            self.part.own_cuda_unproven[call] = (scope, parameter)
        return None

    def _own_cuda_built(self, module: str, callable_: str) -> tuple[str, str | None] | None:
        found = self.facts.project.context.lookup(module, callable_)
        return self._own_cuda_found(found) if found is not None else None

    def _own_cuda_class(self, callee: str) -> tuple[str, str | None] | None:
        project = self.walk.analysis(ProjectAnalysis)
        classes = self.facts.project.classes
        if callee in classes:  # a class of this file: its method is ported with it
            return (callee, None) if _plain_own_cuda(callee, classes.get, set()) else None
        found = project.origin(callee)
        return self._own_cuda_found(found) if found is not None else None

    @staticmethod
    def _own_cuda_found(found: Found) -> tuple[str, str | None] | None:
        if found.summary is None or not found.name or not found.summary.defines_class(found.name):
            return None
        summary = found.summary
        if not _plain_own_cuda(found.name, lambda c: _summary_class(summary, c), set()):
            return None
        return found.name, summary.path if summary.pending else None


def _summary_class(summary: ModuleSummary, name: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    return next(((bases, methods) for cls, bases, methods in summary.classes if cls == name), None)


def _plain_own_cuda(cls: str, get: _Lookup, seen: set[str]) -> bool:
    """``cls`` (or a plain base of it) defines ``cuda``, and every base is ``object`` or a plain class
    of the same module: no torch module or tensor, whose ``.to`` the port may call."""
    entry = get(cls)
    if entry is None or cls in seen or not _plain(cls, get, set()):
        return False
    seen.add(cls)
    bases, methods = entry
    return "cuda" in methods or any(_plain_own_cuda(base, get, seen) for base in bases if base not in _PLAIN_BASES)


def _plain(cls: str, get: _Lookup, seen: set[str]) -> bool:
    """Every base of ``cls`` is ``object`` or such a class of the module (nn.Module, a class of elsewhere: not known plain)."""
    entry = get(cls)
    if entry is None or cls in seen:
        return False
    seen.add(cls)
    return all(base in _PLAIN_BASES or _plain(base, get, seen) for base in entry[0])
