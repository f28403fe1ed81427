"""Obligation 2 of SPEC section 5 for module classes that build their optimizer over their
own parameters in ``__init__`` (``self.optim = Adam(self.parameters())``: a GAN's
generator, an RL agent; or through a method of a module it holds that returns one over
that module's own parameters: ``self.optimizer = self.faster_rcnn.get_optimizer()``, the
method of a class of this file or of one the moving file imports): an instance moved to
the device afterwards holds new Parameter objects on XLA, and its optimizer steps the stale
CPU ones (XLA203, at the move).

The move is followed where it is written (``G = Generator().to(device)``, ``G.cuda()``
later in the same function) and through callables of this file or of the project that
move what they are handed (``model = to_gpu(Net())``, ``to_gpu(model)``): Module.to and
Module.cuda move the module in place, so the caller's instance moves whatever the
callable returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, method_name, names_the_cpu, string_value, walk
from codemods.engine.positions import code_of
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_summary import ModuleSummary
from codemods.training.early_optimizers import _PARAMETERS, EarlyOptimizers, _module_calls, _root_in
from codemods.training.facts import MovedAfterInitOptimizers, MovedOwnOptimizer
from codemods.training.held_children import HeldChildren
from codemods.training.optimizer_lists import is_optimizer_class
from codemods.training.own_optimizer_parts import (
    NOT_FOLLOWED,
    built_by_a_method,
    joined_built_by,
    note_child,
    reads_own_parameters,
    rebuilt_after_move,
    runs_super_init,
    with_method_calls,
)
from codemods.training.own_optimizer_skips import handed_in, own_of, skipped_by, skips_it

if TYPE_CHECKING:
    from codemods.training.records import _Function, _Scope

# An instance of a class with its own optimizer: (the class as called, the optimizer's
# attribute, where the class is for a class of another module: `` (BigGAN.py)``, and for
# one built by a method the caller called, that call and the method; for an instance of a class
# looked up by its name, the classes it may be that build one).
_Built = tuple[str, str, str, str, tuple[str, ...]]


class OwnOptimizerMoves(EarlyOptimizers):
    """The part of TrainingAnalysis that finds instances moved after their constructor
    built an optimizer over their own parameters."""

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
            # ``self.gen.parameters()``; through a name or a key, a module ``__init__`` registers
            if _root_in(str(name), {"self"}) is None or dotted(module) is None:
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
                elif kind == "optimizer" and _root_in(str(name), {"self"}) is not None:
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
                for sub, owner in _module_calls(arg.value)
                if sub.func.attr.value in _PARAMETERS  # type: ignore[attr-defined]  # _module_calls keeps only calls whose func is an Attribute
                and owner == dotted(sub.func.value)  # type: ignore[attr-defined]  # as above; not a plain dict's module (``self.nets["gen"]``)
                and _root_in(owner, {"self"}) is not None
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

    def _moves_after_own_optimizers(self, scopes: list[_Scope]) -> None:
        """Instances of a class that builds its optimizer over its own parameters in
        ``__init__`` (of this file or of another project module), moved to the device
        afterwards, here or by a callable they are handed to: the optimizer steps the CPU
        parameters the move replaced."""
        own, init_moves = self._own_optimizers()
        part = self.part
        # The file trains nothing the tool can tell (a sampling or evaluation script: the optimizers
        # stay unused), but for the methods it calls on an instance of a class looked up by its name.
        trains = bool(part.all_loops or part.optimizer_steps or part.step_callables or part.training_callables)
        if trains or self.facts.entry.main_guard is None:  # (else a module of classes, for the files that train)
            part.moved_after_init_optimizers.update(init_moves)
        records = {fn.qualname: fn for fn in self.function_records.values()}
        for scope in scopes:
            built: dict[str, _Built] = {}
            dynamic: dict[str, tuple[str, ...]] = {}  # modules bound by ``__import__(name)``: the candidates
            followed: set[cst.Call] = set()  # calls whose moves were followed where their result is bound
            moved: set[str] = set()  # names moved to the device so far (``net = Net().cuda()``, ``net.cuda()``)
            classes: dict[str, str] = {}  # name -> the class it was built from, as called
            reported: dict[str, list[cst.Call]] = {}  # name -> its moves reported here
            for kind, name, *rest in with_method_calls(scope):
                if kind == "method_call":
                    if not trains:
                        continue
                    holder, call = str(rest[0]), rest[1]
                    assert isinstance(call, cst.Call)
                    self._instance_method(holder, str(name), call, records, classes, built, moved, reported)
                    continue
                if kind == "model":
                    constructor, move, call = rest
                    assert isinstance(constructor, str) and isinstance(call, cst.Call)
                    rebuilt_after_move(str(name), reported, self.part.moved_own_optimizers)
                    classes[str(name)] = constructor
                    followed.add(call)
                    if trains:
                        self._moves_by_callable(constructor, call, str(name), built, dynamic, own)
                    built.pop(str(name), None)
                    dynamic.pop(str(name), None)
                    moved.discard(str(name))
                    if isinstance(move, cst.Call) and self._to_the_device(move):
                        moved.add(str(name))
                    if (modules := self._imported_at_run_time(call, constructor)) is not None:
                        dynamic[str(name)] = modules
                        continue
                    entry = self._own_optimizer_class(constructor, call, dynamic, own) if trains else None
                    if entry is None:  # a class looked up by its name: those it may be
                        entry = self._looked_up_own_optimizers(constructor, str(name), call, scope, own, trains)
                    if entry is None or self._children_moved_first(constructor, call, moved):
                        continue
                    built[str(name)] = entry
                    if isinstance(move, cst.Call):
                        self._note_own_optimizer_move(str(name), entry, move)
                        reported.setdefault(str(name), []).append(move)
                elif kind == "move" and (entry := built.get(str(name))) is not None:
                    assert isinstance(rest[1], cst.Call)
                    self._note_own_optimizer_move(str(name), entry, rest[1])
                    reported.setdefault(str(name), []).append(rest[1])
                    if self._to_the_device(rest[1]):
                        moved.add(str(name))
                elif kind == "move" and isinstance(rest[1], cst.Call) and self._to_the_device(rest[1]):
                    moved.add(str(name))
                elif kind == "call" and rest[0] not in followed and trains:
                    assert isinstance(rest[0], cst.Call)
                    self._moves_by_callable(str(name), rest[0], None, built, dynamic, own)

    def _instance_method(
        self,
        holder: str,
        method: str,
        call: cst.Call,
        records: dict[str, _Function],
        classes: dict[str, str],
        built: dict[str, _Built],
        moved: set[str],
        reported: dict[str, list[cst.Call]],
    ) -> None:
        """``holder.<method>(...)`` on an instance of a module class whose method binds an
        optimizer over the instance's parameters (``model.compile(lr)``: then a later move
        strands it; after a move, it is built again over the moved ones) or moves the
        instance (``model.model_to_device()``: a move, as ``model.to(device)``)."""
        constructor = classes.get(holder)
        found = None if constructor is None else self._self_method(constructor, method, records)
        if found is None:
            return
        effects, where = found
        assert constructor is not None
        for effect, what, xla, _ in effects:
            if effect == "built":
                if holder in moved:  # built over the moved parameters
                    rebuilt_after_move(f"{holder}.{what}", reported, self.part.moved_own_optimizers)
                else:
                    built[holder] = (constructor, what, "", f"`{code_of(call)}` in {where}", ())
            elif (entry := built.get(holder)) is not None:
                constructor, attribute, origin, built_by, candidates = entry
                self.part.moved_own_optimizers[call] = MovedOwnOptimizer(
                    holder, constructor, attribute, origin, xla, f"`{what}` in {where}", built_by, candidates
                )
                reported.setdefault(holder, []).append(call)
                moved.add(holder)
            else:
                moved.add(holder)

    def _own_optimizer_class(
        self,
        constructor: str,
        call: cst.Call,
        dynamic: dict[str, tuple[str, ...]],
        own: dict[str, tuple[str, tuple[str, ...]]],
    ) -> _Built | None:
        """What ``call`` (of ``constructor``) builds, if it is an instance of a class with
        its own optimizer, built without a flag that skips it."""
        attribute, skips = own.get(constructor, (None, ()))
        origin = ""
        found = self.walk.analysis(ProjectAnalysis).origin(constructor) if attribute is None else None
        if found is not None and found.summary:
            attribute, skips = own_of(found.summary.own_optimizers, found.name)
            if attribute is None:  # ``self.optimizer = self.net.get_optimizer()``, the method of a class imported here
                attribute, skips = own_of(
                    (
                        (cls, attr, method_skips)
                        for cls, attr, method, method_skips in found.summary.method_optimizers
                        if self._imported_optimizer_method(method)
                    ),
                    found.name,
                )
            origin = f" ({found.summary.path})"
        head, _, cls = constructor.rpartition(".")
        if attribute is None and head in dynamic:
            attribute, skips, origin = self._own_optimizer_of_a_run_time_module(head, cls, dynamic[head])
        if attribute is None or skips_it(call, skips):
            return None
        return constructor, attribute, origin, "", ()

    def _looked_up_own_optimizers(
        self,
        constructor: str,
        name: str,
        call: cst.Call,
        scope: _Scope,
        own: dict[str, tuple[str, tuple[str, ...]]],
        trains: bool,
    ) -> _Built | None:
        """``name = constructor(...)`` where the tool cannot tell the class ``constructor`` is:
        the project classes it may be that build an optimizer over the instance's own parameters
        in ``__init__`` (without a flag of ``call`` that skips it), as an entry naming them. The
        classes it may be: those of the module that a lookup by name reads (``cls =
        algorithms.get_algorithm_class(name)`` returning ``globals()[name]``, ``getattr(algorithms,
        name)``, ``globals()[name]`` here); else those whose methods the caller calls on ``name``
        (``model.optimize_parameters()``), where such a method trains. In a file that trains nothing else, only the classes
        for which a method the caller calls on ``name`` takes a training step (``algorithm.update(x,
        y)``)."""
        project = self.walk.analysis(ProjectAnalysis)
        candidates: dict[str, tuple[str, ModuleSummary | None]] = {}  # class -> (attribute, its module's)
        summary = project.looked_up_module(constructor)
        if summary is not None:
            order = {cls: index for index, (cls, _, _) in enumerate(summary.classes)}  # as the module defines them
            for cls, attribute, skips in sorted(summary.own_optimizers, key=lambda own: order.get(own[0], len(order))):
                if "." not in cls and not skips_it(call, skips):
                    candidates.setdefault(cls, (attribute, summary))
        elif project.looked_up_here(constructor):
            for cls, (attribute, skips) in own.items():
                if "." not in cls and not skips_it(call, skips):
                    candidates.setdefault(cls, (attribute, None))
        elif project.untyped(name) and project.untyped(constructor):
            for method in dict.fromkeys(m for _, holder, m, _ in scope.method_calls if holder == name):
                for hit in project.named_origins(f"{name}.{method}"):
                    owner = hit.name.rpartition(".")[0]
                    held, skips = own_of(hit.summary.own_optimizers, owner) if hit.summary else (None, ())
                    if held is not None and hit.summary is not None and not skips_it(call, skips):
                        candidates.setdefault(owner, (held, hit.summary))
        if not trains:
            called = {m for _, holder, m, _ in scope.method_calls if holder == name}
            candidates = {
                cls: found
                for cls, found in candidates.items()
                if any(self._steps_in(found[1], f"{cls}.{method}") for method in called)
            }
        if not candidates:
            return None
        attributes = [attr for attr, _ in candidates.values()]
        attribute = max(dict.fromkeys(attributes), key=attributes.count)  # the most classes' (the first of a tie)
        named = [cls for cls, (attr, _) in candidates.items() if attr == attribute]
        paths = dict.fromkeys(found.path for cls, (_, found) in candidates.items() if cls in named and found)
        origin = f" ({', '.join(paths)})" if paths else ""
        return constructor, attribute, origin, "", tuple(named)

    def _steps_in(self, summary: ModuleSummary | None, method: str, hops: int = 0) -> bool:
        """``Cls.method`` of the project module of ``summary`` (None: this file), or the base's
        it inherits, takes a training step or runs a training loop."""
        if summary is None:
            return method in self.part.step_callables or method in self.part.training_callables
        if method in summary.steps or method in summary.trainers:
            return True
        name = method.partition(".")[2]
        for base in summary.inherits(method) if hops < 3 else ():
            if (imported := summary.origin_of(base)) is None:  # a class of the same module
                if self._steps_in(summary, f"{base}.{name}", hops + 1):
                    return True
            elif (hit := self.facts.project.context.lookup_from(summary, imported[0], imported[1])) is not None:
                if self._steps_in(hit.summary, f"{hit.name}.{name}", hops + 1) and hit.summary is not None:
                    return True
        return False

    def _to_the_device(self, move: cst.Call) -> bool:
        """``.cuda()``, ``.to(device)``: a move that is neither to the CPU nor a cast (``.to(torch.float16)``)."""
        target = arg_value(move, 0, "device")
        return method_name(move) == "cuda" or not (self._casts_only(target) or names_the_cpu(target))  # type: ignore[attr-defined]  # a mixin: TrainingAnalysis (training/analysis.py) defines _casts_only

    def _children_moved_first(self, constructor: str, call: cst.Call, moved: set[str]) -> bool:
        """The class's optimizers hold only the parameters of modules handed to ``__init__``
        (``Trainer(net)`` with ``self.optimizer = self.net.get_optimizer()``), and the caller
        moved each of them to the device before building the instance (``net = Net().cuda()``):
        the optimizers hold the moved parameters, which a later move of the instance keeps."""
        children = dict(self.part.own_optimizer_children).get(constructor)
        if children is None and (found := self.walk.analysis(ProjectAnalysis).origin(constructor)) is not None:
            children = dict(found.summary.own_optimizer_children).get(found.name) if found.summary else None
        if not children:
            return False
        for parameter, index in children:
            handed = arg_value(call, index, parameter)
            if not (
                dotted(handed) in moved
                or (type(handed) is cst.Call and method_name(handed) in ("cuda", "to") and self._to_the_device(handed))
            ):
                return False
        return True

    def _moves_by_callable(
        self,
        callee: str,
        call: cst.Call,
        bound: str | None,
        built: dict[str, _Built],
        dynamic: dict[str, tuple[str, ...]],
        own: dict[str, tuple[str, tuple[str, ...]]],
    ) -> None:
        """``call`` hands an instance with its own optimizer (a name of ``built``, or an
        instance built in the call, whose result is ``bound``: ``model = to_gpu(Net())``)
        to a callable that moves that argument to the device."""
        handed = dict(built)
        named: dict[cst.BaseExpression, str] = {}
        for arg in call.args:
            value = arg.value
            if bound is not None and type(value) is cst.Call and (constructor := dotted(value.func)) is not None:
                entry = self._own_optimizer_class(constructor, value, dynamic, own)
                if entry is not None:
                    named[value] = bound
                    handed[bound] = entry
        if not named and not any(dotted(arg.value) in built for arg in call.args):
            return
        found = self.walk.analysis(ProjectAnalysis).origin(callee)
        if found is not None and found.summary is not None and found.summary.pending:
            return  # a module this run does not convert keeps its CUDA moves (XLA003 names it)
        for event in self._argument_events(callee, call, False, named):
            if event[0] == "move" and (entry := handed.get(str(event[1]))) is not None:
                constructor, attribute, origin, built_by, candidates = entry
                self.part.moved_own_optimizers.setdefault(
                    call,
                    MovedOwnOptimizer(
                        str(event[1]),
                        constructor,
                        attribute,
                        origin,
                        bool(event[2]),
                        str(event[3]),
                        built_by,
                        candidates,
                    ),
                )

    def _imported_at_run_time(self, call: cst.Call, constructor: str) -> tuple[str, ...] | None:
        """``model = __import__(config["model"])`` (or importlib.import_module): the modules
        of the file's folder it may load (the one a literal names); None for other calls."""
        if constructor != "__import__" and self.walk.resolve_dotted(constructor) != "importlib.import_module":
            return None
        literal = string_value(arg_value(call, 0, "name"))
        return (literal,) if literal else self.facts.project.context.neighbours()

    def _own_optimizer_of_a_run_time_module(
        self, module: str, cls: str, candidates: tuple[str, ...]
    ) -> tuple[str | None, tuple[str, ...], str]:
        """The optimizer attribute of the class ``cls`` of the modules ``__import__`` may
        load, where one of them builds it over the instance's own parameters in ``__init__``
        (and the parameters that skip it)."""
        context = self.facts.project.context
        found = [
            (summary.path, own)
            for candidate in candidates
            if (hit := context.lookup(candidate, cls)) is not None
            and (summary := hit.summary) is not None
            and (own := own_of(summary.own_optimizers, hit.name))[0] is not None
        ]
        if not found:
            return None, (), ""
        paths = ", ".join(path for path, _ in found)
        attribute, skips = found[0][1]
        return attribute, skips, f" (of the module that `{module}` names at run time, if it is {paths})"

    def _note_own_optimizer_move(self, name: str, built: _Built, move: cst.Call) -> None:
        target = arg_value(move, 0, "device")
        cuda = method_name(move) == "cuda" or (string_value(target) or "").split(":")[0] == "cuda"
        if not cuda and (self._casts_only(target) or names_the_cpu(target)):  # type: ignore[attr-defined]  # a mixin: TrainingAnalysis (training/analysis.py) defines _casts_only
            return  # a cast keeps the Parameter objects; the CPU keeps the module where it is
        xla = cuda or self._goes_to_xla(dotted(target) if target is not None else None)
        constructor, attribute, origin, built_by, candidates = built
        self.part.moved_own_optimizers[move] = MovedOwnOptimizer(
            name, constructor, attribute, origin, xla, built_by=built_by, candidates=candidates
        )
