"""For other files: the parameters a callable picks the device with (``def __init__(self, use_cuda):
self.device = torch.device("cuda" if use_cuda else "cpu")``, the port's ``"xla" if use_cuda else
"cpu"``; or ``self.use_cuda = use_cuda`` there and ``if self.use_cuda: x = x.cuda()`` in a method).
A caller that hands such a parameter a CUDA availability check (``use_cuda =
torch.cuda.is_available()``, then ``Net(use_cuda=use_cuda)``) hands it False on an XLA host, and
the callee then picks the CPU: the caller's check is dropped there (XLA104, device/project_flags.py)
or, where it must stay, is an error (XLA119, device/guarded_moves.py).  A parameter handed on to
such a parameter of another callable (of the file, or of a project module by its summary) picks
the device too."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.analysis import DeviceAnalysis
from codemods.engine.nodes import call_args, dotted
from codemods.engine.walk import Analysis, Walk
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts


def handed_argument(call: cst.Call, index: int, param: str) -> cst.BaseExpression | None:
    """The argument of ``call`` for the parameter ``param`` at ``index`` (without self; -1: by keyword only)."""
    positional, keywords = call_args(call)
    if param in keywords:
        return keywords[param].value
    plain = [a for a in positional if not a.star]
    return plain[index].value if 0 <= index < len(plain) and len(plain) == len(positional) else None


class FlagChoiceAnalysis(Analysis):
    facts: Facts

    name = "flag_choices"
    reads = ("imports", "device", "project")
    conclude_reads = ("device", "project")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.params: dict[str, list[str]] = {}  # function -> positional parameters, without self
        self.keyword_only: dict[str, list[str]] = {}
        self.conds: list[tuple[cst.If | cst.IfExp, str]] = []  # conditions in functions, with the function
        self.self_sets: dict[tuple[str, str], str] = {}  # (class, attribute) -> the ``__init__`` parameter it holds
        self.calls: list[tuple[cst.Call, str, str]] = []  # (call, callee as written, the function it is in)

    def _scope(self) -> str:
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if params and params[0] in ("self", "cls") and self.walk.class_depth:
            params = params[1:]
        self.params[self.walk.qualname] = params
        self.keyword_only[self.walk.qualname] = [p.name.value for p in node.params.kwonly_params]

    def visit_If(self, node: cst.If) -> None:
        if (scope := self._scope()) != "":
            self.conds.append((node, scope))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if (scope := self._scope()) != "":
            self.conds.append((node, scope))

    def visit_Assign(self, node: cst.Assign) -> None:
        scope = self._scope()
        if not scope.endswith(".__init__") or type(node.value) is not cst.Name:
            return
        for target in node.targets:
            name = dotted(target.target)
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                self.self_sets[(scope.removesuffix(".__init__"), name[5:])] = node.value.value

    def visit_Call(self, node: cst.Call) -> None:
        if (scope := self._scope()) != "" and (func := dotted(node.func)) is not None:
            self.calls.append((node, func, scope))

    # -- results ----------------------------------------------------------------------------

    def _param(self, function: str, name: str) -> tuple[str, int, str] | None:
        if name in self.params.get(function, []):
            return function, self.params[function].index(name), name
        if name in self.keyword_only.get(function, []):
            return function, -1, name
        return None

    def conclude(self) -> None:
        device = self.walk.analysis(DeviceAnalysis)
        found: set[tuple[str, int, str]] = set()
        for cond, scope in self.conds:
            if cond not in device.device_code:
                continue
            for name in device.cond_refs.get(cond, ()):
                if "." not in name:
                    # ``if on: t = t.cuda()`` on the parameter itself moves only if it is true: a check
                    # handed there is XLA119's (device/guarded_moves.py, ``flag_moves``)
                    param = self._param(scope, name) if type(cond) is cst.IfExp else None
                elif name.startswith("self.") and name.count(".") == 1 and "." in scope:
                    cls = scope.rpartition(".")[0]
                    held = self.self_sets.get((cls, name[5:]))
                    param = None if held is None else self._param(f"{cls}.__init__", held)
                else:
                    param = None
                if param is not None:
                    found.add(param)
        self._handed_on(found)
        self.facts.device.flag_choices = found

    def _handed_on(self, found: set[tuple[str, int, str]]) -> None:
        """A parameter handed on to one that picks the device (of the file, or of a project module)."""
        project = self.walk.analysis(ProjectAnalysis)
        by_callee: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for _call, func, _scope in self.calls:
            origin = project.origin(func) if func.split(".")[0] in self.facts.imports.project_names else None
            if origin is not None and origin.summary is not None:
                by_callee[func].extend(origin.summary.flag_choices_of(origin.name))
        grew = True
        while grew:
            grew = False
            for call, func, scope in self.calls:
                local = f"{scope.split('.')[0]}.{func[5:]}" if func.startswith("self.") and "." in scope else func
                taken = [(i, p) for f, i, p in found if f in (local, f"{local}.__init__")] + by_callee.get(func, [])
                for index, param in taken:
                    handed = handed_argument(call, index, param)
                    if type(handed) is not cst.Name:
                        continue
                    mine = self._param(scope, handed.value)
                    if mine is not None and mine not in found:
                        found.add(mine)
                        grew = True
