"""The project around the file: setup that comes from, or goes to, functions imported
from the project's own modules (each file is converted on its own terms, so those
must be converted too)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.analysis.device import is_device_name
from codemods.analysis.walk import Analysis, Walk
from codemods.syntax import dotted, method_name, receiver


@dataclass
class ProjectFacts:
    # device = get_device() with get_device from another file of the project.
    external_devices: dict[cst.Call, str] = field(default_factory=dict)
    # Calls that hand an optimizer to a function of another file of the project (the
    # training step lives there and is converted with that file).
    external_training: dict[cst.Call, str] = field(default_factory=dict)
    # Step wrappers (``loss_scaler(loss, optimizer)``) defined outside this file: where from.
    external_wrappers: dict[cst.Call, str] = field(default_factory=dict)


class ProjectAnalysis(Analysis):
    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.project
        self.external_calls: list[tuple[cst.Call, str]] = []
        self.built_from: dict[str, str] = {}  # name -> the project callable that built it
        self.parameter_calls: dict[cst.Call, str] = {}  # calls of a parameter -> its function

    def _project_path(self, func: cst.BaseExpression) -> str | None:
        """``engine.train_one_epoch`` -> "engine.train_one_epoch" when ``engine`` was
        imported from the project."""
        name = dotted(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        origin = self.facts.imports.project_names.get(head)
        return None if origin is None else origin + (f".{rest}" if rest else "")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assignment(dotted(target.target), node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assignment(dotted(node.target), node.value)

    def _assignment(self, name: str | None, value: cst.BaseExpression) -> None:
        if name is None:
            return
        while isinstance(value, cst.Call) and method_name(value) in ("to", "cuda", "float", "double", "train", "eval"):
            value = receiver(value)  # type: ignore[assignment]
        if not isinstance(value, cst.Call) or (where := self._project_path(value.func)) is None:
            return
        self.built_from[name] = where
        if is_device_name(name):
            self.part.external_devices[value] = where

    def visit_Call(self, node: cst.Call) -> None:
        if (where := self._project_path(node.func)) is not None:
            self.external_calls.append((node, where))
        function = self.walk.enclosing_function
        head = (dotted(node.func) or "").partition(".")[0]
        if function is not None and head and any(p.name.value == head for p in _parameters(function)):
            self.parameter_calls[node] = function.name.value

    def finish(self) -> None:
        is_optimizer = self.facts.training.is_optimizer
        wrappers = self.facts.training.step_wrappers
        for call, where in self.external_calls:
            if call not in wrappers and any(is_optimizer(dotted(a.value)) for a in call.args):
                self.part.external_training[call] = where
        imported = dict(self.external_calls)
        for call, callee in wrappers.items():
            head = callee.partition(".")[0]
            if call in imported:
                where = f"from {imported[call]}"
            elif head in self.built_from:
                where = f"built by {self.built_from[head]}"
            elif call in self.parameter_calls:
                where = f"passed in by the callers of `{self.parameter_calls[call]}`"
            else:
                continue  # defined in this file: converted here
            self.part.external_wrappers[call] = where


def _parameters(function: cst.FunctionDef) -> list[cst.Param]:
    params = function.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]
