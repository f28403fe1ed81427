"""The project around the file: what the callables it imports from the project's own
modules do (from their summaries, see summary.py), and which setup goes to, or comes
from, a module that still needs converting (each file is converted on its own terms)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.analysis import is_device_name
from codemods.engine.nodes import dotted, method_name, receiver
from codemods.engine.walk import Analysis, Walk, assignments
from codemods.project.summary import Found

if TYPE_CHECKING:
    from codemods.facts import Facts

_MOVES = ("to", "cuda", "float", "double", "train", "eval")


class ProjectAnalysis(Analysis):
    facts: Facts

    name = "project"
    reads = ("imports",)
    settle_reads = ("training",)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.project
        self.calls: list[tuple[cst.Call, str]] = []  # calls of names that may come from the project
        self.built_by: dict[str, tuple[str, str]] = {}  # name -> (module, callable) that built it
        # Every (module, callable) that built a name, in order: branches may build it apart
        # (``policy = TD3(...)`` under one condition, ``policy = DDPG(...)`` under another).
        self.builders: dict[str, list[tuple[str, str]]] = {}
        # Names bound to a project callable (``Exp = Exp_Long_Term_Forecast``): name -> (module, callable).
        self.aliases: dict[str, tuple[str, str]] = {}
        self.device_calls: list[cst.Call] = []  # device = <call>
        self.function_calls: list[tuple[str, str]] = []  # (function, callee) of calls in functions
        self._origins: dict[str, Found | None] = {}

    # -- where a callee comes from --------------------------------------------------------

    def origin(self, callee: str) -> Found | None:
        """The project callable behind ``callee``: an imported name (``train_one_epoch``),
        a module's attribute (``misc.save_model``), or an instance that a project class
        built (``loss_scaler`` -> ``NativeScaler.__call__``; ``trainer.step`` ->
        ``Trainer.step``)."""
        if callee not in self._origins:
            self._origins[callee] = self._find(callee)
        return self._origins[callee]

    def origins(self, callee: str) -> list[Found]:
        """Every project callable that ``callee`` may run: ``origin``, and for a name that
        several branches build apart, each builder's."""
        found = [] if (first := self.origin(callee)) is None else [first]
        parts = callee.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            for built in self.builders.get(head, []):
                other = self._find(callee, {**self.built_by, head: built})
                if other is not None and other not in found:
                    found.append(other)
        return found

    def learn_instance(self, name: str, built: tuple[str, str]) -> None:
        """``name`` (a parameter handed such an instance) is built by ``built`` (module,
        callable) too."""
        self.built_by[name] = built
        for callee in [c for c in self._origins if c == name or c.startswith(name + ".")]:
            del self._origins[callee]

    def _find(self, callee: str, built_by: dict[str, tuple[str, str]] | None = None) -> Found | None:
        built_by = self.built_by if built_by is None else built_by
        parts = callee.split(".")
        for cut in range(len(parts), 0, -1):
            head, rest = ".".join(parts[:cut]), parts[cut:]
            if cut == 1 and head in self.facts.imports.project_names:
                module, name = self.facts.imports.project_names[head]
            elif cut == 1 and head in self.aliases:
                module, name = self.aliases[head]
            elif head in built_by:
                module, name = built_by[head]
                if not rest and (made := self._made_by(module, name)) is not None:
                    return made  # ``train = make_train(...)``: ``train(x)`` runs the function it returns
                rest = rest or ["__call__"]
            else:
                continue
            return self.part.context.lookup(module, ".".join(p for p in [name, *rest] if p))
        return None

    def _made_by(self, module: str, name: str) -> Found | None:
        found = self.part.context.lookup(module, name)
        if found is None or found.summary is None or (inner := found.summary.made_by(found.name)) is None:
            return None
        return Found(found.summary, inner)

    # -- walk -------------------------------------------------------------------------------

    @assignments(unpack=False)
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        while type(value) is cst.Call and method_name(value) in _MOVES:
            value = receiver(value)  # type: ignore[assignment]
        project_names = self.facts.imports.project_names
        if type(value) in (cst.Name, cst.Attribute) and "." not in name and (other := dotted(value)) is not None:
            head, _, rest = other.partition(".")
            if head in project_names:  # ``Exp = Exp_Long_Term_Forecast``
                module, imported = project_names[head]
                self.aliases.setdefault(name, (module, ".".join(p for p in (imported, rest) if p)))
                self._origins.pop(name, None)
            return
        if type(value) is not cst.Call or (callee := dotted(value.func)) is None:
            return
        head = callee.split(".")[0]
        if name in self.built_by and any(dotted(a.value) == name for a in value.args):
            return  # ``model = apply_gradient_allreduce(model)``: a wrapper that hands the instance back
        if head in project_names or head in self.aliases:
            module, imported = project_names[head] if head in project_names else self.aliases[head]
            self.built_by[name] = (module, ".".join(p for p in [imported, *callee.split(".")[1:]] if p))
            self.builders.setdefault(name, []).append(self.built_by[name])
        if is_device_name(name):
            self.device_calls.append(value)

    def visit_Call(self, node: cst.Call) -> None:
        callee = dotted(node.func)
        if callee is None:
            return
        self.calls.append((node, callee))
        if self.walk.enclosing_function is not None:
            self.function_calls.append((self.walk.qualname, callee))

    # -- results ----------------------------------------------------------------------------

    def uses_amp(self) -> bool:
        """The file calls a project callable that trains with mixed precision."""
        return any(
            (found := self.origin(callee)) is not None
            and found.summary is not None
            and found.summary.uses_amp(found.name)
            for _, callee in self.calls
        )

    def settle(self) -> None:
        is_optimizer = self.facts.training.is_optimizer
        wrappers = self.facts.training.step_wrappers
        for call in self.device_calls:
            found = self.origin(dotted(call.func) or "")
            if found is not None and (
                found.summary is None or (found.summary.pending and found.summary.chooses_device(found.name))
            ):
                self.part.external_devices[call] = found.summary.path if found.summary else None
        for function, callee in self.function_calls:
            found = self.origin(callee)
            if found is not None and found.summary is not None and function not in self.part.pending_via:
                path = found.summary.path if found.summary.pending else found.summary.pending_via(found.name)
                if path:
                    self.part.pending_via[function] = path
        for call, callee in self.calls:
            found = self.origin(callee)
            summary = found.summary if found is not None else None
            if found is None or (summary is not None and not summary.pending):
                continue  # outside the project, or converted (now or before)
            if summary is None:
                if call in wrappers or any(is_optimizer(dotted(a.value)) for a in call.args):
                    self.part.external_training[call] = (callee, None)
            elif call in wrappers or summary.runs_step(found.name):
                self.part.external_steps[call] = f"`{callee}` ({summary.path})"
            elif any(is_optimizer(dotted(a.value)) for a in call.args) and summary.trains(found.name):
                self.part.external_training[call] = (callee, summary.path)
            elif "." in found.name and summary.trains(found.name):
                self.part.external_loops[call] = summary.path
            elif summary.uses_amp(found.name):
                self.part.external_amp[call] = summary.path
