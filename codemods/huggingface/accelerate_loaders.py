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
    ``accelerator.prepare`` did not return (unprepared) or one it did (prepared)."""

    def __init__(
        self,
        assigned: dict[Key, list[cst.BaseExpression]],
        prepared: set[Key],
        returns: dict[str, list[cst.BaseExpression | None]],
        resolve: Callable[[cst.CSTNode], str | None],
        other_module: Callable[[str], Found | None],
    ) -> None:
        self.assigned, self.prepared, self.returns = assigned, prepared, returns
        self.resolve, self.other_module = resolve, other_module
        self.loader_functions: set[str] = set()
        self.prepared_functions: set[str] = set()
        self.unprepared: set[Key] = set()
        # Each function's returns and each name's values decide it; iterate until nothing changes
        # (a method returning a name bound to another method's loader).
        changed = True
        while changed:
            changed = False
            for qualname, values in returns.items():
                if qualname not in self.loader_functions and self._all(values, qualname, self.builds):
                    self.loader_functions.add(qualname)
                    changed = True
                if qualname not in self.prepared_functions and self._all(values, qualname, self.is_prepared):
                    self.prepared_functions.add(qualname)
                    changed = True
            for key, values in assigned.items():
                if key not in prepared and key not in self.unprepared and self._all(values, key[0], self.builds):
                    self.unprepared.add(key)
                    changed = True

    @staticmethod
    def _all(
        values: Iterable[cst.BaseExpression | None],
        scope: str,
        test: Callable[[cst.BaseExpression, str], bool],
    ) -> bool:
        found = list(values)
        return bool(found) and all(v is not None and test(v, scope) for v in found)

    def builds(self, value: cst.BaseExpression, scope: str) -> bool:
        """``value`` (in ``scope``) is a loader ``prepare`` did not return: ``DataLoader(...)``, a
        name bound only to one, a call of a function returning only one."""
        if type(value) is cst.Name:
            return (scope, value.value) in self.unprepared or (
                (scope, value.value) not in self.assigned and ("", value.value) in self.unprepared
            )
        if type(value) is not cst.Call:
            return False
        if self.resolve(value.func) in DATA_LOADERS:
            return True
        func = dotted(value.func)
        if func is None:
            return False
        callees = [c for c in local_callees(func, scope) if c in self.returns]
        if callees:
            return callees[0] in self.loader_functions
        found = self.other_module(func) if not func.startswith("self.") else None
        return found is not None and found.summary is not None and found.name in found.summary.loader_returns

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
        func = dotted(value.func)
        callees = [c for c in local_callees(func, scope) if c in self.returns] if func else []
        return bool(callees) and callees[0] in self.prepared_functions


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
