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

from codemods.engine.nodes import arg_value, dotted, method_name, names_the_cpu, string_value
from codemods.engine.positions import code_of
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_summary import ModuleSummary
from codemods.training.facts import MovedOwnOptimizer
from codemods.training.own_optimizer_builds import OwnOptimizerBuilds
from codemods.training.own_optimizer_parts import (
    rebuilt_after_move,
    with_method_calls,
)
from codemods.training.own_optimizer_skips import own_of, skips_it

if TYPE_CHECKING:
    from codemods.training.records import _Function, _Scope

# An instance of a class with its own optimizer: (the class as called, the optimizer's
# attribute, where the class is for a class of another module: `` (BigGAN.py)``, and for
# one built by a method the caller called, that call and the method; for an instance of a class
# looked up by its name, the classes it may be that build one).
_Built = tuple[str, str, str, str, tuple[str, ...]]


class OwnOptimizerMoves(OwnOptimizerBuilds):
    """The part of TrainingAnalysis that finds instances moved after their constructor
    built an optimizer over their own parameters (the classes that build one: own_optimizer_builds.py)."""

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
        return method_name(move) == "cuda" or not (self._casts_only(target) or names_the_cpu(target))  # type: ignore[attr-defined]  # a mixin: TrainingAnalysis (training/training_walk.py) defines _casts_only

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
        if not cuda and (self._casts_only(target) or names_the_cpu(target)):  # type: ignore[attr-defined]  # a mixin: TrainingAnalysis (training/training_walk.py) defines _casts_only
            return  # a cast keeps the Parameter objects; the CPU keeps the module where it is
        xla = cuda or self._goes_to_xla(dotted(target) if target is not None else None)
        constructor, attribute, origin, built_by, candidates = built
        self.part.moved_own_optimizers[move] = MovedOwnOptimizer(
            name, constructor, attribute, origin, xla, built_by=built_by, candidates=candidates
        )
