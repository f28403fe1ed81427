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
from codemods.project.analysis import ProjectAnalysis
from codemods.training.early_optimizers import EarlyOptimizers, _root_in
from codemods.training.facts import MovedAfterInitOptimizers, MovedOwnOptimizer
from codemods.training.held_children import HeldChildren
from codemods.training.own_optimizer_skips import handed_in, own_of, skipped_by, skips_it

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.training.records import _Scope

# An instance of a class with its own optimizer: (the class as called, the optimizer's
# attribute, where the class is for a class of another module: `` (BigGAN.py)``).
_Built = tuple[str, str, str]


class OwnOptimizerMoves(EarlyOptimizers):
    """The part of TrainingAnalysis that finds instances moved after their constructor
    built an optimizer over their own parameters."""

    # TrainingAnalysis (training/analysis.py), which this is a part of, defines it.
    _casts_only: Callable[[cst.BaseExpression | None], bool]

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
        for fn in self.function_records.values():
            owner = fn.qualname.removesuffix(".__init__")
            if fn.name != "__init__" or owner.rsplit(".", 1)[-1] not in self.module_classes or fn.node is None:
                continue
            held: HeldChildren | None = None
            built: dict[str, None] = {}  # the optimizers' attributes, in order
            moved: set[str] = set()  # submodules ``__init__`` moves itself (``self.net.cuda()``)
            for event in fn.events:
                kind, name, *rest = event
                if kind == "move" and name != "self":
                    moved.add(str(name))
                if event[0] == "model" and (by_method := _built_by_a_method(str(name), rest[0], moved)) is not None:
                    # ``self.optimizer = self.net.get_optimizer()``: a method over the child's own parameters
                    bound_to, method = by_method
                    skips = skipped_by(fn.node, event[4])
                    holder = handed_in(fn.node, str(rest[0]).rpartition(".")[0])
                    _note_child(children, owner, holder)
                    if method in builders or self._imported_optimizer_method(method):
                        built[bound_to] = None
                        found.setdefault(owner, (bound_to, skips))
                    else:  # a class of another module may define it: the file that moves the instance asks
                        self.part.method_optimizers.add((owner, bound_to, method, skips))
                    continue
                if event[0] == "move" and name == "self":
                    if built and isinstance(rest[1], cst.Call) and not names_the_cpu(arg_value(rest[1], 0, "device")):
                        init_moves[rest[1]] = MovedAfterInitOptimizers(
                            owner.rsplit(".", 1)[-1],
                            tuple(built),
                            self._goes_to_xla(event[2]),
                        )
                        found.pop(owner, None)
                    break  # moved first (``self.to(device)``): the optimizer holds the moved ones
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
                    built[attribute] = None
                    found.setdefault(owner, (attribute, skipped_by(fn.node, call)))
                    _note_child(children, owner, handed_in(fn.node, dotted(module) or ""))
        self.part.own_optimizers.update((owner, *own) for owner, own in found.items())
        self.part.own_optimizer_children.update(
            (owner, tuple(held_in)) for owner, held_in in children.items() if held_in
        )
        return found, init_moves

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
                and _reads_own_parameters(fn.node)
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
        if not (part.all_loops or part.optimizer_steps or part.step_callables or part.training_callables):
            if self.facts.entry.main_guard is None:  # a module of classes, for the files that train with them
                part.moved_after_init_optimizers.update(init_moves)
            return  # the file trains nothing (a sampling or evaluation script): the optimizers stay unused
        part.moved_after_init_optimizers.update(init_moves)
        for scope in scopes:
            built: dict[str, _Built] = {}
            dynamic: dict[str, tuple[str, ...]] = {}  # modules bound by ``__import__(name)``: the candidates
            followed: set[cst.Call] = set()  # calls whose moves were followed where their result is bound
            moved: set[str] = set()  # names moved to the device so far (``net = Net().cuda()``, ``net.cuda()``)
            for kind, name, *rest in scope.events:
                if kind == "model":
                    constructor, move, call = rest
                    assert isinstance(constructor, str) and isinstance(call, cst.Call)
                    followed.add(call)
                    self._moves_by_callable(constructor, call, str(name), built, dynamic, own)
                    built.pop(str(name), None)
                    dynamic.pop(str(name), None)
                    moved.discard(str(name))
                    if isinstance(move, cst.Call) and self._to_the_device(move):
                        moved.add(str(name))
                    if (modules := self._imported_at_run_time(call, constructor)) is not None:
                        dynamic[str(name)] = modules
                        continue
                    entry = self._own_optimizer_class(constructor, call, dynamic, own)
                    if entry is None or self._children_moved_first(constructor, call, moved):
                        continue
                    built[str(name)] = entry
                    if isinstance(move, cst.Call):
                        self._note_own_optimizer_move(str(name), entry, move)
                elif kind == "move" and (entry := built.get(str(name))) is not None:
                    assert isinstance(rest[1], cst.Call)
                    self._note_own_optimizer_move(str(name), entry, rest[1])
                elif kind == "move" and isinstance(rest[1], cst.Call) and self._to_the_device(rest[1]):
                    moved.add(str(name))
                elif kind == "call" and rest[0] not in followed:
                    assert isinstance(rest[0], cst.Call)
                    self._moves_by_callable(str(name), rest[0], None, built, dynamic, own)

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
        return constructor, attribute, origin

    def _to_the_device(self, move: cst.Call) -> bool:
        """``.cuda()``, ``.to(device)``: a move that is neither to the CPU nor a cast (``.to(torch.float16)``)."""
        target = arg_value(move, 0, "device")
        return method_name(move) == "cuda" or not (self._casts_only(target) or names_the_cpu(target))

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
                constructor, attribute, origin = entry
                self.part.moved_own_optimizers.setdefault(
                    call,
                    MovedOwnOptimizer(str(event[1]), constructor, attribute, origin, bool(event[2]), str(event[3])),
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
        if not cuda and (self._casts_only(target) or names_the_cpu(target)):
            return  # a cast keeps the Parameter objects; the CPU keeps the module where it is
        xla = cuda or self._goes_to_xla(dotted(target) if target is not None else None)
        constructor, attribute, origin = built
        self.part.moved_own_optimizers[move] = MovedOwnOptimizer(name, constructor, attribute, origin, xla)


def _note_child(
    children: dict[str, dict[tuple[str, int], None] | None], owner: str, child: tuple[str, int] | None
) -> None:
    """Another optimizer of ``owner`` holds the modules of that ``__init__`` parameter (None:
    modules of its own, which no caller can have moved first)."""
    if child is None:
        children[owner] = None
    elif (held_in := children.setdefault(owner, {})) is not None:
        held_in[child] = None


def _built_by_a_method(target: str, called: object, moved: set[str]) -> tuple[str, str] | None:
    """The attribute of ``self`` that ``target = called()`` binds to what a method of the
    instance or of a child it holds returns (``self.optimizer = self.net.get_optimizer()``),
    and that method; None when that child was moved first."""
    if not isinstance(called, str) or not target.startswith("self.") or "." in target.removeprefix("self."):
        return None
    holder, _, method = called.rpartition(".")
    if _root_in(holder, {"self"}) is None or holder in moved:
        return None
    return target.removeprefix("self."), method


def _reads_own_parameters(function: cst.FunctionDef) -> bool:
    """``function`` calls ``self.parameters()`` or ``self.named_parameters()``."""
    return any(
        type(sub) is cst.Call
        and type(sub.func) is cst.Attribute
        and sub.func.attr.value in ("parameters", "named_parameters")
        and dotted(sub.func.value) == "self"
        for sub in walk(function)
    )
