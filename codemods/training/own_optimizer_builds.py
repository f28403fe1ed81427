"""The module classes that build their optimizer over their own parameters in ``__init__``
(``self.optim = Adam(self.parameters())``, or through a method of a module they hold that
returns one over that module's parameters), in this file, inherited from a class of the
project, or in a method the file calls on an instance; own_optimizer_moves.py, built on this,
follows the moves of their instances.  Kept apart from it: which classes build one is read
from class bodies alone, the moves from the scopes that use them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, method_name, names_the_cpu, walk
from codemods.engine.positions import code_of
from codemods.project.analysis import ProjectAnalysis
from codemods.training.early_optimizers import EarlyOptimizers
from codemods.training.facts import MovedAfterInitOptimizers
from codemods.training.held_children import HeldChildren
from codemods.training.optimizer_lists import is_optimizer_class
from codemods.training.own_optimizer_parts import (
    NOT_FOLLOWED,
    built_by_a_method,
    joined_built_by,
    note_child,
    reads_own_parameters,
    runs_super_init,
    with_method_calls,
)
from codemods.training.own_optimizer_skips import handed_in, own_of, skipped_by, skips_it
from codemods.training.parameter_sources import PARAMETER_METHODS, module_calls, root_in

if TYPE_CHECKING:
    from codemods.training.records import _Function


class OwnOptimizerBuilds(EarlyOptimizers):
    """The part of TrainingAnalysis that finds the classes that build an optimizer over
    their own parameters (and the methods that return one)."""

    def _own_optimizers(
        self,
    ) -> tuple[dict[str, tuple[str, tuple[str, ...]]], dict[cst.Call, MovedAfterInitOptimizers]]:
        """The module classes of this file whose ``__init__`` builds an optimizer over the
        instance's own parameters (``self.optim = Adam(self.parameters())``, also of a
        submodule or of the modules it registers: ``{name: Adam(m.parameters()) for name, m
        in nets.items()}`` after ``setattr(self, name, m)``) before any move of the instance:
        class -> the optimizer's attribute.  Where ``__init__`` then moves the instance
        itself (``self.to(self.device)``), that move is returned too (XLA203 reports it), and
        the class is not one the caller's move breaks (the parameters are already new)."""
        optimizers = {
            call: target.removeprefix("self.")
            for call, target in self.call_targets.items()
            if target.startswith("self.") and "." not in target.removeprefix("self.")
        }
        found: dict[str, tuple[str, tuple[str, ...]]] = {}
        init_moves: dict[cst.Call, MovedAfterInitOptimizers] = {}
        builders = self._own_optimizer_methods()
        # class -> the ``__init__`` parameters whose modules its optimizers hold (None: not only those)
        children: dict[str, dict[tuple[str, int], None] | None] = {}
        records = {fn.qualname: fn for fn in self.function_records.values()}
        self._note_method_effects(records, optimizers)
        for _ in range(3):  # a class whose ``__init__`` builds one of a later class of the file: found once that one is
            before = dict(found)
            for fn in self.function_records.values():
                if fn.name == "__init__" and fn.node is not None:
                    self._own_optimizers_of(fn, records, optimizers, builders, children, found, init_moves)
            if found == before:
                break
        self._inherited_own_optimizers(found, records, init_moves)
        self.part.own_optimizers.update((owner, *own) for owner, own in found.items())
        self.part.own_optimizer_children.update(
            (owner, tuple(held_in)) for owner, held_in in children.items() if held_in
        )
        return found, init_moves

    def _own_optimizers_of(
        self,
        fn: _Function,
        records: dict[str, _Function],
        optimizers: dict[cst.Call, str],
        builders: set[str],
        children: dict[str, dict[tuple[str, int], None] | None],
        found: dict[str, tuple[str, tuple[str, ...]]],
        init_moves: dict[cst.Call, MovedAfterInitOptimizers],
    ) -> None:
        """What the ``__init__`` ``fn`` builds over the instance's own parameters before it
        moves (see ``_own_optimizers``), also through the methods it calls on ``self``
        (``self.compile(lr)``, then ``self.model_to_device()``: of its class, or of a base
        class, in another module too), optimizer builders it hands ``self.parameters()``
        (``tools.Optimizer("model", self.parameters(), lr)``) and submodules it builds that
        build their own (``self.world = WorldModel(config)``)."""
        assert fn.node is not None
        owner = fn.qualname.removesuffix(".__init__")
        cls = owner.rsplit(".", 1)[-1]
        # A class over a module class of another project file: only what its methods and moves say.
        of_the_project = cls not in self.module_classes
        if of_the_project and not self._has_project_bases(cls):
            return
        held: HeldChildren | None = None
        built: dict[str, None] = {}  # the optimizers' attributes, in order
        built_by: list[str] = []  # the methods of the class that built some of them
        moved: set[str] = set()  # submodules ``__init__`` moves itself (``self.net.cuda()``)
        moved_to_device: set[str] = set()  # those of them moved off the CPU
        # The first move of the instance, and what it strands: (the move, xla, how it is made).
        stranding: tuple[cst.Call, bool, str] | None = None
        after = False  # past the first move of the instance: only rebuilt optimizers count

        def note(attribute: str, call: cst.Call, child: tuple[str, int] | None, by: str = "") -> None:
            if after:  # built again after the move: it holds the moved parameters
                built.pop(attribute, None)
                return
            built[attribute] = None
            found.setdefault(owner, (attribute, skipped_by(fn.node, call)))  # type: ignore[arg-type]  # asserted above
            note_child(children, owner, child)
            if by:
                built_by.append(by)

        for kind, name, *rest in with_method_calls(fn):
            if kind == "method_call":
                effects = self._self_method(owner, str(name), records) if rest[0] == "self" else None
                if effects is None:
                    continue
                call, (done, where) = rest[1], effects
                assert isinstance(call, cst.Call)
                for effect, what, xla, holding in done:
                    if effect == "built":  # over the parameters of ``holding`` (``self``, ``self.net``)
                        note(what, call, handed_in(fn.node, holding), f"`{code_of(call)}` in {where}")
                    elif not after:  # a move of the instance
                        after = True
                        stranding = (call, xla, f" (`{what}` in {where})") if built else None
                continue
            if kind == "move" and name != "self":
                moved.add(str(name))
                if (
                    isinstance(rest[1], cst.Call)
                    and method_name(rest[1]) != "cpu"
                    and not names_the_cpu(arg_value(rest[1], 0, "device"))
                ):
                    moved_to_device.add(str(name))
            if kind == "move" and name == "self":
                if not after and isinstance(rest[1], cst.Call) and not names_the_cpu(arg_value(rest[1], 0, "device")):
                    after = True  # moved first (``self.to(device)``): what is built from here on holds the moved ones
                    stranding = (rest[1], self._goes_to_xla(rest[0]), "") if built else None  # type: ignore[arg-type]  # a move event's device: a name or None
                continue
            if of_the_project:
                continue
            if kind == "model":
                call = rest[2]
                assert isinstance(call, cst.Call)
                over = self._built_over_self(str(name), str(rest[0]), call)
                if over is not None:  # ``self.opt = tools.Optimizer("model", self.parameters(), lr)``
                    note(over[0], call, handed_in(fn.node, over[1]))
                    continue
                child = self._child_own_optimizer(str(name), str(rest[0]), call, found)
                if child is not None:  # ``self.world = WorldModel(config)``, which builds its own
                    note(child, call, None)
                    continue
            if kind == "model" and (by_method := built_by_a_method(str(name), rest[0], moved)) is not None:
                # ``self.optimizer = self.net.get_optimizer()``: a method over the child's own parameters
                bound_to, method = by_method
                call = rest[2]
                assert isinstance(call, cst.Call)
                holder = handed_in(fn.node, str(rest[0]).rpartition(".")[0])
                if method in builders or self._imported_optimizer_method(method):
                    note(bound_to, call, holder)
                elif not after:  # a class of another module may define it: the file that moves the instance asks
                    note_child(children, owner, holder)
                    self.part.method_optimizers.add((owner, bound_to, method, skipped_by(fn.node, call)))
                continue
            if kind != "optimizer" or rest[0] in self.part.optimizer_before_move:
                continue  # (a submodule moved first: ported)
            call = rest[0]
            assert isinstance(call, cst.Call)
            module = call.func.value if type(call.func) is cst.Attribute else None
            if dotted(module) in moved_to_device:
                continue  # ``self.model = self.model.to(device)`` first: it holds the moved parameters
            # ``self.gen.parameters()``; through a name or a key, a module ``__init__`` registers
            if root_in(str(name), {"self"}) is None or dotted(module) is None:
                held = held or HeldChildren(fn.node, self.walk.resolve)
                if module is None or not held.holds(module):
                    continue
            attribute = next(
                (attr for optimizer, attr in optimizers.items() if any(sub is call for sub in walk(optimizer))),
                None,
            ) or (held or HeldChildren(fn.node, self.walk.resolve)).attribute_of(call)
            if attribute is not None:
                note(attribute, call, handed_in(fn.node, dotted(module) or ""))
        if stranding is not None:
            found.pop(owner, None)  # the caller's move keeps the parameters the instance moved to
            if built:  # not all built again after the move
                move, xla, moved_by = stranding
                init_moves[move] = MovedAfterInitOptimizers(cls, tuple(built), xla, joined_built_by(built_by), moved_by)

    def _inherited_own_optimizers(
        self,
        found: dict[str, tuple[str, tuple[str, ...]]],
        records: dict[str, _Function],
        init_moves: dict[cst.Call, MovedAfterInitOptimizers],
    ) -> None:
        """The top-level module classes of this file that run their first base's ``__init__``
        (they define none, or theirs calls ``super().__init__(...)`` and moves nothing), where that
        base builds an optimizer over the instance's own parameters: ``class IGA(ERM): ...``
        builds ``ERM``'s. The base is of this file or of another project module."""
        classes = self.facts.project.classes
        moved_in_init = {moved.cls for moved in init_moves.values()}
        project = self.walk.analysis(ProjectAnalysis)
        for _ in range(3):  # a subclass of a subclass: found once its base is
            added = False
            for cls, (bases, methods) in classes.items():
                if cls in found or not bases or cls in moved_in_init:
                    continue
                if cls not in self.module_classes and not self._has_project_bases(cls):
                    continue
                if "__init__" in methods and not runs_super_init(records.get(f"{cls}.__init__"), bases[0]):
                    continue
                base = bases[0]
                own = found.get(base)
                if own is None and base not in classes and (hit := project.origin(base)) is not None and hit.summary:
                    attribute, skips = own_of(hit.summary.own_optimizers, hit.name)
                    own = None if attribute is None else (attribute, skips)
                if own is not None:
                    found[cls] = own
                    added = True
            if not added:
                break

    def _has_project_bases(self, cls: str) -> bool:
        """The top-level class ``cls`` of this file derives from a class of another project module."""
        bases = self.facts.project.classes.get(cls, ((), ()))[0]
        project = self.walk.analysis(ProjectAnalysis)
        return any(base not in self.facts.project.classes and project.origin(base) is not None for base in bases)

    def _note_method_effects(self, records: dict[str, _Function], optimizers: dict[cst.Call, str]) -> None:
        """What each method (not ``__init__``) of this file's module classes does to the
        instance, in order (TrainingFacts.method_effects): the optimizers it binds over the
        instance's parameters, and its moves of the instance to a device."""
        for qualname, fn in records.items():
            owner, _, method = qualname.rpartition(".")
            if (
                method == "__init__"
                or not owner
                or fn.node is None
                or (owner.rsplit(".", 1)[-1] not in self.module_classes and not self._has_project_bases(owner))
            ):
                continue
            effects: list[tuple[str, str, bool, str]] = []
            for kind, name, *rest in fn.events:
                if kind == "move" and name == "self":
                    move = rest[1]
                    if isinstance(move, cst.Call) and not names_the_cpu(arg_value(move, 0, "device")):
                        effects.append(("move", code_of(move), self._goes_to_xla(rest[0]), ""))  # type: ignore[arg-type]  # a move event's device: a name or None
                elif kind == "optimizer" and root_in(str(name), {"self"}) is not None:
                    call = rest[0]
                    if (
                        type(call) is not cst.Call
                        or type(call.func) is not cst.Attribute
                        or dotted(call.func.value) != name
                    ):
                        continue  # a module kept in a plain dict (``self.nets["gen"]``) is no submodule
                    attribute = next(
                        (attr for optimizer, attr in optimizers.items() if any(sub is call for sub in walk(optimizer))),
                        None,
                    )
                    if attribute is not None:
                        effects.append(("built", attribute, False, str(name)))
                elif kind == "model" and isinstance(rest[2], cst.Call):
                    over = self._built_over_self(str(name), str(rest[0]), rest[2])
                    if over is not None:
                        effects.append(("built", over[0], False, over[1]))
            if effects:
                self.part.method_effects[qualname] = tuple(dict.fromkeys(effects))

    def _self_method(
        self, owner: str, method: str, records: dict[str, _Function]
    ) -> tuple[tuple[tuple[str, str, bool, str], ...], str] | None:
        """What ``self.<method>()`` in a method of ``owner`` does to the instance (see
        ``_note_method_effects``), and the method that runs (``BaseModel.compile``, with its
        module for one of another file): the class's own, or a base class's, of this file or
        of another project module; None where it does nothing to the instance."""
        if method in NOT_FOLLOWED:
            return None
        classes, seen = [owner], {owner}
        project = self.walk.analysis(ProjectAnalysis)
        local = self.facts.project.classes
        while classes:
            cls = classes.pop(0)
            if (fn := records.get(f"{cls}.{method}")) is not None:
                effects = self.part.method_effects.get(fn.qualname)
                return None if effects is None else (effects, f"`{fn.qualname}`")
            if cls not in local and not any(qualname.startswith(f"{cls}.") for qualname in records):
                # a class of another project module (``models.Net``), or a base of this file's class
                hit = project.origin(f"{cls}.{method}")
                if hit is not None and hit.summary is not None:
                    effects = dict(hit.summary.method_effects).get(hit.name)
                    if effects is not None and hit.summary.pending:  # its CUDA moves stay (XLA003 names it)
                        effects = tuple(effect for effect in effects if effect[0] == "built")
                    if effects:
                        return effects, f"`{hit.name}` ({hit.summary.path})"
                continue
            for base in local.get(cls, ((), ()))[0]:
                if base not in seen:
                    seen.add(base)
                    classes.append(base)
        return None

    def _built_over_self(self, target: str, constructor: str, call: cst.Call) -> tuple[str, str] | None:
        """``self.<attribute> = builder(..., self.parameters(), ...)``: a callable named as an
        optimizer builder (``get_optimizer``, a project class ``tools.Optimizer``; torch.optim's
        classes are followed as optimizers) handed the parameters of the instance or of a
        submodule: that attribute, and the module whose parameters it gets (``self.actor``)."""
        attribute = target.removeprefix("self.")
        if attribute == target or "." in attribute:
            return None
        last = constructor.rsplit(".", 1)[-1].lower()
        if is_optimizer_class(self.walk.resolve_dotted(constructor) or "") or not (
            self.part.is_optimizer(target) or ("optim" in last and "sched" not in last)
        ):
            return None
        return next(
            (
                (attribute, owner)
                for arg in call.args
                for sub, owner in module_calls(arg.value)
                if sub.func.attr.value in PARAMETER_METHODS  # type: ignore[attr-defined]  # module_calls keeps only calls whose func is an Attribute
                and owner == dotted(sub.func.value)  # type: ignore[attr-defined]  # as above; not a plain dict's module (``self.nets["gen"]``)
                and root_in(owner, {"self"}) is not None
            ),
            None,
        )

    def _child_own_optimizer(
        self, target: str, constructor: str, call: cst.Call, found: dict[str, tuple[str, tuple[str, ...]]]
    ) -> str | None:
        """``self.<child> = Cls(...)`` where ``Cls`` (of this file or another project module)
        builds an optimizer over its own parameters in ``__init__``: ``<child>.<attribute>``."""
        child = target.removeprefix("self.")
        if child == target or "." in child:
            return None
        attribute, skips = found.get(constructor, (None, ()))
        if attribute is None and (hit := self.walk.analysis(ProjectAnalysis).origin(constructor)) is not None:
            if hit.summary is not None:
                attribute, skips = own_of(hit.summary.own_optimizers, hit.name)
        if attribute is None or skips_it(call, skips):
            return None
        return f"{child}.{attribute}"

    def _own_optimizer_methods(self) -> set[str]:
        """The names of the methods of this file's module classes that build an optimizer
        over the instance's own parameters (``def get_optimizer(self): return
        SGD(self.parameters())``, or over groups collected from ``self.named_parameters()``)
        and return it."""
        found: set[str] = set()
        for fn in self.function_records.values():
            owner, _, method = fn.qualname.rpartition(".")
            if (
                fn.builds_optimizer
                and method != "__init__"
                and owner.rsplit(".", 1)[-1] in self.module_classes
                and fn.node is not None
                and reads_own_parameters(fn.node)
                and any(type(sub) is cst.Return and sub.value is not None for sub in walk(fn.node))
            ):
                found.add(method)
                self.part.optimizer_methods.add(fn.qualname)
        return found

    def _imported_optimizer_method(self, method: str) -> bool:
        """A project class this file imports has a method ``method`` (its own or a base's)
        that returns an optimizer over the instance's own parameters."""
        context = self.facts.project.context
        return any(
            (hit := context.lookup(module, f"{name}.{method}")) is not None
            and hit.summary is not None
            and hit.name in hit.summary.optimizer_methods
            for module, name in self.facts.imports.project_names.values()
            if name
        )
