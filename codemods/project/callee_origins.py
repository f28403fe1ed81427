"""Where a callee of the file comes from among the project's callables (for
project/analysis.py): an imported name, a module's attribute, an instance a project class built,
a method a class of the file inherits from a project class, and, where the tool cannot tell the
class of a receiver, the project methods a call may run by its name.  Apart from the walk that
records the imports, bindings and builders these lookups read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine import speed
from codemods.engine.nodes import arg_value, is_false
from codemods.engine.walk import Analysis
from codemods.followed_packages import unfollowed_package
from codemods.project.module_summary import Found, ModuleSummary
from codemods.project.receivers import CONTAINER_METHODS, GENERIC_METHODS, is_class, named_like

if TYPE_CHECKING:
    import libcst as cst

    from codemods.facts import Facts
    from codemods.project.facts import ProjectFacts


class CalleeOrigins(Analysis):
    """The part of ProjectAnalysis that finds the project callable behind a callee."""

    facts: Facts
    part: ProjectFacts
    _origins: dict[str, Found | None]
    _settled: bool
    _all_origins: dict[str, list[Found]]
    built_by: dict[str, tuple[str, str]]
    builders: dict[str, list[tuple[str, str]]]
    built_calls: dict[str, cst.Call]
    aliases: dict[str, tuple[str, str]]
    alternatives: dict[str, list[tuple[str, str]]]
    local_calls: dict[str, str]
    bindings: dict[str, list[bool | None]]
    top_level: set[str]
    call_bound: dict[str, list[str | None] | None]
    container_returns: set[str]
    attribute_lookups: dict[str, ModuleSummary]

    def origin(self, callee: str) -> Found | None:
        """The project callable behind ``callee``: an imported name (``train_one_epoch``),
        a module's attribute (``misc.save_model``), or an instance that a project class
        built (``loss_scaler`` -> ``NativeScaler.__call__``; ``trainer.step`` ->
        ``Trainer.step``)."""
        if callee not in self._origins:
            self._origins[callee] = self._find(callee)
        return self._origins[callee]

    def library_package(self, qualified: str | None) -> str | None:
        """``apis.unfollowed_package`` of ``qualified``, unless its head names a package or module of
        the project (``train.train_x``, whose module file is missing): that is the project's
        (XLA003, XLA112), never a package the tool does not follow."""
        package = unfollowed_package(qualified)
        return None if package is None or self.part.context.names_project_module(package) else package

    def finish(self) -> None:
        # What ``origins`` reads is what the walk recorded: from now on (the other analyses'
        # finish and conclude) its answers are kept, until ``learn_instance`` adds to it.
        self._settled = speed.shortcuts()

    def origins(self, callee: str) -> list[Found]:
        """Every project callable that ``callee`` may run: ``origin``, for a name that
        several branches build apart, each builder's, and for a name looked up in a dict of
        project callables, each of them.  (A new list: callers extend it.)"""
        if not self._settled:
            return self._all_origins_of(callee)
        kept = self._all_origins.get(callee)
        if kept is None:
            kept = self._all_origins[callee] = self._all_origins_of(callee)
        return list(kept)

    def _all_origins_of(self, callee: str) -> list[Found]:
        found = [] if (first := self.origin(callee)) is None else [first]
        parts = callee.split(".")
        for module, name in self.alternatives.get(parts[0], []):
            other = self.part.context.lookup(module, ".".join([name, *parts[1:]]))
            if other is not None and other not in found:
                found.append(other)
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
        self._all_origins.clear()
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
            elif cut == 1 and len(rest) == 1 and (cls := self._local_class(head)) is not None:
                return self._inherited(cls, rest[0], set())
            elif head in built_by:
                module, name = built_by[head]
                if not rest and (made := self._made_by(module, name)) is not None:
                    # ``train = make_train(...)``: ``train(x)`` runs the function it returns; with
                    # ``get_step_fn(sde, train=False)``, one that does not train.
                    return None if self._switched_off(head, name, made.summary) else made
                rest = rest or ["__call__"]
            else:
                continue
            return self.part.context.lookup(module, ".".join(p for p in [name, *rest] if p))
        return None

    def _local_class(self, name: str) -> str | None:
        """The class of this file that ``name`` is, or that built it (``trainer = MyTrainer(...)``)."""
        cls = name if name in self.part.classes else self.local_calls.get(name)
        return cls if cls in self.part.classes else None

    def _inherited(self, cls: str, method: str, seen: set[str]) -> Found | None:
        """The project method that ``cls.method`` runs where ``cls``, a class of this file, does not
        define it: its bases', in the order Python looks (a base of this file, or a project class,
        whose own bases the lookup follows); None where this file defines it, or none is the project's."""
        bases, methods = self.part.classes[cls]
        if method in methods or cls in seen:
            return None
        seen.add(cls)
        for base in bases:
            if base in self.part.classes:
                if method in self.part.classes[base][1]:
                    return None
                found = self._inherited(base, method, seen)
            else:
                found = self._find(f"{base}.{method}", {})
            if found is not None:
                return found
        return None

    def _switched_off(self, built: str, factory: str, summary: ModuleSummary | None) -> bool:
        """The call that built ``built`` passes False for the parameter of ``factory`` that
        the function it returns trains only when true."""
        call = self.built_calls.get(built)
        switch = summary.step_switch(factory) if call is not None and summary is not None else None
        return call is not None and switch is not None and is_false(arg_value(call, *switch))

    def _made_by(self, module: str, name: str) -> Found | None:
        found = self.part.context.lookup(module, name)
        if found is None or found.summary is None or (inner := found.summary.made_by(found.name)) is None:
            return None
        return Found(found.summary, inner)

    def untyped(self, head: str) -> bool:
        """The tool cannot tell the class of what ``head`` (a name chain) holds: a parameter, a loop
        variable, or a name bound to what a project function returns (``build_model(opt)``, not a
        class), to a class looked up at run time (``getattr(model_zoo, name)(...)``), to an attribute."""
        root = head.split(".")[0]
        if root in ("self", "cls") and head == root:
            return False
        if root in self.facts.imports.project_names and head not in self.bindings:
            return False  # a project name, or an attribute of one: ``origin`` follows it
        if head not in self.bindings:
            if root in self.top_level or self.walk.resolve_dotted(root) is not None:
                return False  # a function or class of the file, an import, or an attribute of one
            return True
        for typed in self.bindings[head]:
            if typed is False:
                return True
            if typed is None and (built := self.builders.get(head)):
                for module, callable_name in built:
                    found = self.part.context.lookup(module, callable_name)
                    if found is not None and found.summary is not None and not is_class(found):
                        return True  # (one the tool cannot read is left to the findings on its import)
        return False

    def looked_up_module(self, name: str) -> ModuleSummary | None:
        """The project module whose classes ``name`` may be, a class looked up by its name at run
        time: bound to what a function of that module returns from its globals
        (``algorithm_class = algorithms.get_algorithm_class(args.algorithm)`` with ``return
        globals()[name]``) or to ``getattr(<project module>, name)``; None for anything else."""
        if "." in name:
            return None
        for module, function in self.builders.get(name, []):
            found = self.part.context.lookup(module, function)
            if found is not None and found.summary is not None and found.name in found.summary.globals_lookups:
                return found.summary
        return self.attribute_lookups.get(name)

    def looked_up_here(self, name: str) -> bool:
        """``name`` is bound to what a function of this file returns from its globals
        (``cls = get_algorithm_class(args.algorithm)`` with ``return globals()[name]``)."""
        return self.local_calls.get(name) in self.part.globals_lookups

    def named_origins(self, callee: str) -> list[Found]:
        """The project methods that ``callee`` (``model.optimize_parameters``) may run by its name,
        where the tool cannot tell the class of its receiver: those that take a training step or run
        a training loop (ImportContext.named_methods); none for a name that torch's modules,
        optimizers and tensors define (``train``, ``step``), nor for one that Python's containers
        define (``update``, ``get``) unless the receiver is an instance that a call the tool cannot
        tell built (``algorithm = algorithm_class(...)``, a class looked up at run time; ``agent =
        make_agent(cfg)``, ``hydra.utils.instantiate(cfg.agent)``) and its name says it may be the
        method's class's (``receivers.named_like``: ``agent`` for ``DRQAgent.update``, not ``metrics``
        nor ``stats``): such a call builds meters and metrics as often as a project's agent."""
        head, _, method = callee.rpartition(".")
        if not head or method.startswith("__") or not self.untyped(head):
            return []
        if method in GENERIC_METHODS and not (method in CONTAINER_METHODS and self._constructed(head)):
            return []
        found = self.part.context.named_methods(method)
        if method in CONTAINER_METHODS:  # ``metrics.update(batch)``, ``stats.update({...})``: no agent's
            return [f for f in found if named_like(head, f.name)]
        return list(found)

    def _constructed(self, head: str) -> bool:
        """Every binding of ``head`` is a call whose class the tool cannot tell, none of a function
        of this file that returns a container it builds."""
        callees = self.call_bound.get(head)
        return bool(callees) and not any(c in self.container_returns for c in callees if c is not None)  # type: ignore[union-attr]  # bool(callees) is False for None
