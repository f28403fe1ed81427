"""Where the loader of an Accelerate training loop comes from: a ``DataLoader(...)`` that
``accelerator.prepare`` never returned (built in the loop's function, or returned by a function or
method of the file, or of another module of the project), or an object ``prepare`` returned.

Only a prepared loader ends Accelerate's steps on XLA (its MpDeviceLoader marks the step on each
batch); ``Accelerator.backward`` and a prepared optimizer's step do not (accelerate 1.15,
optimizer.py): a loop over an unprepared loader needs the step barrier."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.apis import DATA_LOADERS
from codemods.engine.nodes import dotted, method_name

if TYPE_CHECKING:
    from codemods.huggingface.facts import HuggingFaceFacts
    from codemods.project.module_summary import Found

# What binds a prepared object: ``model, opt, loader = accelerator.prepare(model, opt, loader)``.
PREPARE_METHODS = frozenset({"prepare", "prepare_data_loader"})
Key = tuple[str, str]  # (scope, name)


def local_callees(func: str, scope: str) -> list[str]:
    """The qualified names of this file that a call of ``func`` in ``scope`` may run:
    ``self.create_loader`` in ``Trainer.learn`` -> ``Trainer.create_loader``; ``make_loader`` ->
    a function of an enclosing scope or of the module."""
    parts = scope.split(".") if scope else []
    if func.startswith("self.") and func.count(".") == 1 and len(parts) >= 2:
        return [f"{'.'.join(parts[:cut])}.{func[5:]}" for cut in range(len(parts) - 1, 0, -1)]
    if "." in func:
        return []
    return [*(f"{'.'.join(parts[:cut])}.{func}" for cut in range(len(parts), 0, -1)), func]


class LoaderOrigins:
    """The names, functions and methods of one file that hold or return a loader
    ``accelerator.prepare`` did not return (unprepared) or one it did (prepared), found on demand
    (each answer kept; a name or function whose answer depends on itself is neither)."""

    def __init__(
        self,
        assigned: dict[Key, list[cst.BaseExpression]],
        prepared: set[Key],
        returns: dict[str, list[cst.BaseExpression | None]],
        attributes: dict[Key, list[cst.BaseExpression]],
        resolve: Callable[[cst.CSTNode], str | None],
        other_module: Callable[[str], Found | None],
    ) -> None:
        self.assigned, self.prepared, self.returns = assigned, prepared, returns
        self.attributes = attributes  # (class, ``self.store``) -> what its methods bind there
        self.resolve, self.other_module = resolve, other_module
        self._answers: dict[tuple[str, str, str], bool] = {}

    @property
    def loader_functions(self) -> set[str]:
        """The file's functions and methods whose every return is an unprepared loader."""
        return {qualname for qualname in self.returns if self._returns_loader(qualname)}

    def _kept(self, kind: str, scope: str, name: str, answer: Callable[[], bool]) -> bool:
        key = (kind, scope, name)
        if key not in self._answers:
            self._answers[key] = False  # while it is being found: a cycle answers no
            self._answers[key] = answer()
        return self._answers[key]

    def unprepared_returns(self, qualname: str) -> list[cst.BaseExpression]:
        """What ``qualname`` (a function or method of the file) returns, where every return is an
        unprepared loader; else nothing."""
        if qualname not in self.returns or not self._returns_loader(qualname):
            return []
        return [value for value in self.returns[qualname] if value is not None]

    def self_method(self, loader: cst.BaseExpression, scope: str) -> str | None:
        """The method ``m`` where the loader of a loop in ``scope`` is what ``self.m()`` returns
        (called there, or bound to a name of ``scope`` only by such calls)."""
        values = self.assigned.get((scope, loader.value), []) if type(loader) is cst.Name else [loader]
        methods = {
            func[5:] if func and func.startswith("self.") and func.count(".") == 1 else None
            for value in values
            for func in [dotted(value.func) if type(value) is cst.Call else None]
        }
        return next(iter(methods)) if len(methods) == 1 else None

    def _returns_loader(self, qualname: str) -> bool:
        return self._kept("returns", qualname, "", lambda: _all(self.returns[qualname], qualname, self.builds))

    def _returns_prepared(self, qualname: str) -> bool:
        return self._kept("prepared", qualname, "", lambda: _all(self.returns[qualname], qualname, self.is_prepared))

    def _bound_to_loader(self, scope: str, name: str) -> bool:
        if (scope, name) in self.prepared or (scope, name) not in self.assigned:
            return False
        return self._kept("bound", scope, name, lambda: _all(self.assigned[scope, name], scope, self.builds))

    def _local_callee(self, value: cst.Call, scope: str) -> str | None:
        func = dotted(value.func)
        return next((c for c in local_callees(func, scope) if c in self.returns), None) if func else None

    def builds(self, value: cst.BaseExpression, scope: str) -> bool:
        """``value`` (in ``scope``) is a loader ``prepare`` did not return: ``DataLoader(...)``, a
        name bound only to one, a call of a function returning only one."""
        if type(value) is cst.Name:
            if (scope, value.value) in self.assigned or (scope, value.value) in self.prepared:
                return self._bound_to_loader(scope, value.value)
            return self._bound_to_loader("", value.value)
        if type(value) is not cst.Call:
            return False
        if self.resolve(value.func) in DATA_LOADERS:
            return True
        if (callee := self._local_callee(value, scope)) is not None:
            return self._returns_loader(callee)
        func = dotted(value.func)
        if func is None or method_name(value) in PREPARE_METHODS:
            return False
        if func.startswith("self."):
            return self._held_builds(func, scope)
        return self._other_builds(func)

    def _other_builds(self, func: str) -> bool:
        found = self.other_module(func)
        return found is not None and found.summary is not None and found.name in found.summary.loader_returns

    def _held_builds(self, func: str, scope: str) -> bool:
        """``self.store.create_loader(...)`` in a method of ``Trainer``, whose methods bind
        ``self.store`` only to instances of a class (``PPORolloutStorage(...)``, of the file or
        another module of the project) whose ``create_loader`` returns only unprepared loaders."""
        _, attribute, method = func.split(".", 2) if func.count(".") == 2 else ("", "", "")
        held = self.attributes.get((scope.split(".")[0], f"self.{attribute}"), []) if method else []
        classes = [dotted(value.func) if type(value) is cst.Call else None for value in held]
        return bool(classes) and all(
            cls is not None
            and (bool(self.unprepared_returns(f"{cls}.{method}")) or self._other_builds(f"{cls}.{method}"))
            for cls in classes
        )

    def is_prepared(self, value: cst.BaseExpression, scope: str) -> bool:
        """``value`` is what an accelerator's ``prepare`` returned (a call of it, a name it
        bound, a function of the file returning one)."""
        if type(value) is cst.Name:
            return (scope, value.value) in self.prepared or (
                (scope, value.value) not in self.assigned and ("", value.value) in self.prepared
            )
        if type(value) is cst.Attribute:
            return ("", dotted(value) or "") in self.prepared
        if type(value) is not cst.Call:
            return False
        if method_name(value) in PREPARE_METHODS:
            return True
        callee = self._local_callee(value, scope)
        return callee is not None and self._returns_prepared(callee)


def _all(
    values: Iterable[cst.BaseExpression | None], scope: str, test: Callable[[cst.BaseExpression, str], bool]
) -> bool:
    found = list(values)
    return bool(found) and all(v is not None and test(v, scope) for v in found)


def loader_state(
    loader: cst.BaseExpression, scope: str, huggingface: HuggingFaceFacts, resolve: Callable[[cst.CSTNode], str | None]
) -> tuple[str, cst.BaseExpression]:
    """``unprepared``, ``prepared`` or ``unknown`` for the loader of a loop in ``scope``, and that
    loader.  Under ``enumerate(loader)``, ``tqdm(loader)`` or a project's batching iterator over it
    (``MiniBatchIterator(loader, mb_size, n)``), each yielding the loader's batches as they come and
    ending no step, the loader is their first argument; Accelerate's and torch_xla's are no such
    wrapper."""
    origins = huggingface.loader_origins
    while origins is not None:
        if origins.builds(loader, scope):
            return "unprepared", loader
        if origins.is_prepared(loader, scope):
            return "prepared", loader
        if not (
            type(loader) is cst.Call
            and loader.args
            and loader.args[0].keyword is None
            and not loader.args[0].star
            and not (resolve(loader.func) or "").startswith(("accelerate.", "torch_xla."))
        ):
            break
        loader = loader.args[0].value
    return "unknown", loader
