"""Two obligations of every training step (SPEC section 5, "No silent port"), proven from
the code with the shared device-value analysis (values.py) or reported where the proof
breaks:

(1) the module whose parameters the optimizer steps is moved to the XLA device, on the
path that runs (XLA111: its device can end off XLA; XLA112: that device comes from another
module of the project; XLA115: its only moves run under a condition that is False on an
XLA host after the port);
(3) each batch reaches the XLA device before that module's forward, in the training loop
and in every evaluation loop calling it (XLA116: a loop feeds it batches from a source
that yields CPU tensors, a data set loaded onto the CPU, or a CUDA default tensor type
that stays).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device import batch_shapes
from codemods.device.config_devices import ConfigDeviceAnalysis
from codemods.device.count_guards import guard_batch_moves
from codemods.device.cpu_flags import handed_cpu_flags
from codemods.device.handed_loaders import HandedLoaders
from codemods.device.library_batches import unfollowed_source
from codemods.device.library_models import library_builder
from codemods.device.obligation_records import ITERATION_WRAPPERS, Loop, Move, calls_in, code
from codemods.device.rules import xla111_device_off_xla as xla111
from codemods.device.rules import xla112_device_from_project as xla112
from codemods.device.rules import xla115_model_move_skipped as xla115
from codemods.device.rules import xla116_batch_off_xla as xla116
from codemods.device.rules import xla121_device_from_library as xla121
from codemods.device.rules.xla111_device_off_xla import DEVICE_OFF_XLA
from codemods.device.rules.xla112_device_from_project import DEVICE_FROM_PROJECT
from codemods.device.rules.xla115_model_move_skipped import MODEL_MOVE_SKIPPED
from codemods.device.rules.xla116_batch_off_xla import BATCH_OFF_XLA
from codemods.device.rules.xla121_device_from_library import DEVICE_FROM_LIBRARY
from codemods.device.where import Where
from codemods.engine.nodes import arg_value, dotted, method_name, receiver, string_value, walk
from codemods.engine.rule import Rule
from codemods.engine.walk import Walk
from codemods.project.analysis import ProjectAnalysis
from codemods.training.loop_plans import is_device_loader

if TYPE_CHECKING:
    from codemods.facts import Facts


class ObligationAnalysis(HandedLoaders):
    facts: Facts

    name = "obligations"
    reads = ("imports", "device_values", "project")
    conclude_reads = (
        "device_values",
        "device",
        "training",
        "checkpoint",
        "project",
        "loaders",
        "fsdp",
        "config_devices",
        "distributed",
    )

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.obligations
        self.stepped: dict[str, cst.Call] = {}  # model -> the optimizer built over its parameters
        self.moves: dict[str, list[Move]] = defaultdict(list)
        self.loops: list[Loop] = []
        self.open_loops: list[Loop | None] = []
        self.loaded: dict[str, cst.Call] = {}  # name -> torch.load(...) that made it
        self.loaders_of: dict[str, str] = {}  # loader -> the data set it reads (DataLoader(ds))
        self.default_types: list[cst.Call] = []
        self.params: dict[str, list[str]] = {}  # function -> its parameters, in order
        self.functions: dict[str, cst.FunctionDef] = {}
        self.handed: list[tuple[cst.Call, str, list[str]]] = []  # calls of the project: (call, callee, names given)
        self.handed_in: dict[cst.Call, str] = {}  # a handed call -> the scope it is made in
        # Calls outside loops in a function: (the function, the callee, the names given), for the
        # step functions that move their batches themselves and feed them to a module handed in.
        self.function_forwards: list[tuple[str, str, list[str]]] = []
        self.legacy_constructors: list[cst.Call] = []
        # name -> the calls that build it (``model = load_model(args)``, ``.to(...)`` taken off)
        self.built: dict[str, list[cst.Call]] = defaultdict(list)
        self.built_in: dict[cst.Call, str] = {}  # a building call -> the scope it is made in
        # (scope, name) -> the calls whose value (or an element of the tuple they return) it is
        # bound to: (call, position or -1), ``model, optimizer = setup(model, optimizer)``; the
        # scope is "" for an attribute (``self.model``, read in other methods).
        self.bound_from: dict[tuple[str, str], list[tuple[cst.Call, int]]] = defaultdict(list)
        # Each attribute read, by its last name (``args.device``: "device"), and those read in the
        # arguments of a library's call (not torch's: ``Embeddings(model_kwargs={"device": args.device})``).
        self.attribute_reads: dict[str, list[cst.Attribute]] = defaultdict(list)
        self.library_arguments: set[cst.CSTNode] = set()

    # -- walk -------------------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attribute_reads[node.attr.value].append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.params[self.walk.qualname] = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        self.keyword_params[self.walk.qualname] = [p.name.value for p in node.params.kwonly_params]
        self.functions[self.walk.qualname] = node

    def visit_For(self, node: cst.For) -> None:
        targets = {n for e in batch_shapes.elements(node.target) if (n := dotted(e)) is not None}
        source = node.iter
        while type(source) is cst.Call and dotted(source.func) in ITERATION_WRAPPERS and source.args:
            source = source.args[0].value
        if type(node.iter) is cst.Call and dotted(node.iter.func) == "enumerate" and type(node.target) is cst.Tuple:
            targets = {n for e in batch_shapes.elements(node.target.elements[-1].value) if (n := dotted(e)) is not None}
        loop = None
        if targets and not (type(source) is cst.Call and is_device_loader(source, self.walk.resolve(source.func))):
            iterated = [dotted(source)] if type(source) is not cst.Call else [dotted(a.value) for a in source.args]
            loop = Loop(node, self.walk.qualname, targets, dotted(source), [n for n in iterated if n is not None])
            self.loops.append(loop)
        self.open_loops.append(loop)

    def leave_For(self, node: cst.For) -> None:
        self.open_loops.pop()

    def _loop(self) -> Loop | None:
        return next((loop for loop in reversed(self.open_loops) if loop is not None), None)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        loop = self._loop()
        for target in node.targets:
            names = [n for e in batch_shapes.elements(target.target) if (n := dotted(e)) is not None]
            if loop is not None and (
                batch_shapes.moves(value, self._moves_argument)
                or any(dotted(s) in loop.targets for s in batch_shapes.roots(value))
            ):
                # ``x = x.to(device)``, ``images, labels = batch`` (the names carry the batch on)
                if batch_shapes.moves(value, self._moves_argument):
                    loop.moved.update(names)
                    if conds := self.values._placed(node):
                        loop.guarded_moves.append(conds)
                else:
                    loop.targets.update(names)
                    roots = [dotted(s) for s in batch_shapes.roots(value)]
                    if roots and all(root in loop.moved for root in roots):
                        loop.moved.update(names)  # ``x, y = batch`` after ``batch = tuple(t.to(device) ...)``
            elif (
                loop is not None
                and type(value) is cst.Call
                and (func := dotted(value.func)) is not None
                and any(
                    (batch := batch_shapes.batch_name(a.value, loop.targets)) and batch not in loop.moved
                    for a in value.args
                )
                and self.walk.analysis(ProjectAnalysis).origin(func) is not None
            ):
                # (a batch already moved here stays on the device through whatever takes it)
                loop.targets.update(names)
                loop.through.update((name, (value, func)) for name in names)
            if type(value) is cst.Call and type(target.target) is cst.Tuple:
                for index, element in enumerate(target.target.elements):
                    if (name := dotted(element.value)) is not None:
                        self.bound_from[self._bound_key(name)].append((value, index))
            if len(names) != 1:
                continue
            self._note_init_device(names[0], value)
            core = value
            while type(core) is cst.Call and method_name(core) in ("to", "cuda", "float", "double", "train", "eval"):
                if method_name(core) in ("to", "cuda"):
                    self._move(names[0], core)
                core = receiver(core)  # type: ignore[assignment]  # method_name() matched, so the func is an Attribute and receiver() is not None
            if type(core) is cst.Call:
                self.built[names[0]].append(core)
                self.built_in[core] = self.walk.qualname
                self.bound_from[self._bound_key(names[0])].append((core, -1))
                callee = self.walk.resolve(core.func)
                if callee == "torch.load":
                    self.loaded[names[0]] = core
                elif callee in apis.DATA_LOADERS and (data := dotted(arg_value(core, 0, "dataset"))) is not None:
                    self.loaders_of[names[0]] = data

    def _move(self, name: str, call: cst.Call) -> None:
        device = arg_value(call, 0, "device") if method_name(call) == "to" else None
        if method_name(call) == "to" and device is None:
            return
        self.moves[name].append(Move(call, device, self.walk.qualname, self.values._placed(call)))

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.callee
        method = method_name(node)
        loop = self._loop()
        if loop is not None and (read := batch_shapes.host_read(node, callee, loop.targets)) is not None:
            loop.host_reads.append((read, code(node)))
        self._note_device_call(node, method, callee)
        if (
            callee is not None
            and not callee.startswith("torch")
            and callee.split(".")[0] not in self.facts.imports.project_names
        ):
            self.library_arguments.update(sub for a in node.args for sub in walk(a.value) if type(sub) is cst.Attribute)
        if method in ("to", "cuda") and (name := dotted(receiver(node))) is not None:
            self._move(name, node)
            if loop is not None:
                loop.moved.add(name)
            if method == "to" and name in self.built and node.args:
                # ``algorithm.to(device)``: a project class's own ``to`` may move what it holds there
                self.handed.append((node, f"{name}.to", [n for a in node.args if (n := dotted(a.value)) is not None]))
                self.handed_in[node] = self.walk.qualname
        elif callee is not None and apis.is_optimizer_class(callee):
            for arg in node.args:
                for sub in calls_in(arg.value):
                    if method_name(sub) in ("parameters", "named_parameters") and (model := dotted(receiver(sub))):
                        self.stepped.setdefault(model, node)
        elif callee == "torch.set_default_tensor_type" and (string_value(arg_value(node, 0, "t")) or "").startswith(
            "torch.cuda."
        ):
            self.default_types.append(node)
        elif callee in ("torch.Tensor", "torch.FloatTensor", "torch.LongTensor"):
            self.legacy_constructors.append(node)
        elif (func := dotted(node.func)) is not None and node.args:
            batch = (
                [n for a in node.args if (n := batch_shapes.batch_name(a.value, loop.targets))]
                if loop is not None
                else []
            )
            if loop is not None and batch and callee is None:
                loop.forwards.append((node, func, batch))
            elif loop is None and callee is None and "." not in func and self.walk.enclosing_function is not None:
                self.function_forwards.append(
                    (self.walk.qualname, func, [n for a in node.args if (n := dotted(a.value)) is not None])
                )
            if callee is None or func.split(".")[0] in self.facts.imports.project_names:
                self.handed.append((node, func, [n for a in node.args if (n := dotted(a.value)) is not None]))
                self.handed_in[node] = self.walk.qualname

    # -- results ----------------------------------------------------------------------------

    def conclude(self) -> None:
        on_xla = {model for model in self.stepped if self._model(model)}
        self._othermoves()
        guard_batch_moves(self.values, self.loops, self.part)
        self._batches(on_xla)
        self._handed(on_xla)
        self._device_parameters()  # (this file's trainers, which _handed_devices follows too)
        self._handed_devices()
        self._handed_launch_indices()
        self._handed_indices()
        self._unmoved_feeding()
        self._handed_loaders()
        for flag, message in handed_cpu_flags(self.values):
            self._break(flag, DEVICE_OFF_XLA, message)
        for read, message in self.walk.analysis(ConfigDeviceAnalysis).broken.items():
            self._break(read, DEVICE_FROM_PROJECT, message)
        for default, dest in self.facts.device.cpu_flag_defaults.items():
            if not self._inference_only(dest):
                helper = self.facts.device_values.flag_helpers.get(dest)
                self._break(default, DEVICE_OFF_XLA, xla111.cpu_default_flag(dest, helper))
        for loop in self.loops:
            if any(model in self.params.get(loop.scope, ()) for _, model, _ in loop.forwards):
                self.part.feeding_callables.add(loop.scope)
        # A step function that takes its batch (``pos = next(iterator)``), moves it itself and
        # feeds it to a module handed in (``model(pos.cuda())``): it feeds that module too.
        for scope, model, names in self.function_forwards:
            if model in self.params.get(scope, ()) and any(
                move.scope == scope for name in names for move in self.moves.get(name, ())
            ):
                self.part.feeding_callables.add(scope)
        if self.default_types and self.legacy_constructors:
            call = self.default_types[0]
            self.part.broken[call] = (
                BATCH_OFF_XLA,
                xla116.cuda_default_tensor_type(code(call), code(self.legacy_constructors[0].func)),
            )

    def _inference_only(self, dest: str) -> bool:
        """The file trains nothing (no optimizer, no training loop) and reads the flag only in the
        arguments of a library's calls (a retrieval model's ``model_kwargs={"device": args.device}``):
        the device it names runs inference, and the CPU default is the author's choice, no
        training off the XLA device."""
        training = self.facts.training
        if self.stepped or training.optimizers or training.all_loops or training.framework_trainers:
            return False
        reads = self.attribute_reads.get(dest, ())
        return bool(reads) and all(read in self.library_arguments for read in reads)

    def _model(self, model: str, optimizer: cst.Call | None = None) -> bool:
        """Obligation (1) for ``model``: True if a move of it that runs goes to the XLA device;
        else the break is recorded (nothing is said where no move is seen: another file,
        or a wrapper, may move it).  A model that nothing moves, built once by a call handed a
        module that is moved (``maml = MAML(model, lr)`` after ``model.to(device)``), is where
        that module is: its moves are the proof."""
        values = self.values
        optimizer = self.stepped[model] if optimizer is None else optimizer
        if not self.moves.get(model):
            if (inner := self._wrapped(model)) is not None:
                return self._model(inner, optimizer)
            self._built_elsewhere(model, optimizer)
            return False
        running: list[tuple[Move, Where]] = []
        skipped: list[tuple[Move, cst.If]] = []
        for move in self.moves.get(model, []):
            false_cond = next(
                (
                    cond
                    for cond, in_body in move.conds
                    if values.truth(cond.test, move.scope, cond in self.facts.device.ifs) is (not in_body)
                ),
                None,
            )
            if false_cond is not None:
                if (
                    false_cond not in self.facts.device.blocked_ifs
                    and false_cond not in self.facts.device.wrapped_checks
                ):
                    skipped.append((move, false_cond))  # (those two are reported by XLA104 already)
                continue
            guard = next(
                (
                    (cond, flag)
                    for cond, _ in move.conds
                    if (flag := values.flag_in(cond.test, move.scope)) is not None and flag.elsewhere
                ),
                None,
            )
            if guard is not None:  # ``if args.cuda: model.cuda()``, the flag from a module this run does not convert
                running.append((move, Where(None, guard[1].why, guard[0].test, True, guard[1].module)))
                continue
            where = Where(True) if move.device is None else values.where(move.device, move.scope)
            if where.on_xla:
                return True
            running.append((move, where))
        stepper = code(optimizer.func)
        off = next(((m, w) for m, w in running if w.on_xla is False), None)
        if off is not None:
            move, where = off
            if where.node is not None:
                self._break(
                    where.node,
                    DEVICE_OFF_XLA,
                    xla111.stepped_model_off_xla(model, stepper, code(move.device or move.call), where.why),
                )
            else:
                self._named(where.module)
                self._break(
                    move.call, DEVICE_FROM_PROJECT, xla112.stepped_model_device_from_function(model, stepper, where.why)
                )
        elif (away := next((w for _, w in running if w.elsewhere and w.node is not None), None)) is not None:
            if (
                node := away.node
            ) is not None and node not in self.facts.project.external_devices:  # (XLA003 says so already)
                self._named(away.module)
                self._break(
                    node, DEVICE_FROM_PROJECT, xla112.stepped_model_device_from_module(model, stepper, away.why)
                )
        elif (library := self._from_library(running)) is not None:
            move, where = library
            self._break(
                where.node or move.call,
                DEVICE_FROM_LIBRARY,
                xla121.stepped_model_device_from_library(model, stepper, code(move.device or move.call), where.why),
            )
        elif skipped and not running:
            move, cond = skipped[0]
            self._break(
                move.call, MODEL_MOVE_SKIPPED, xla115.stepped_model_moves_only_if(model, stepper, code(cond.test))
            )
        return False

    def _wrapped(self, model: str) -> str | None:
        """The moved module that the one call building ``model`` is handed first (a wrapper)."""
        built = self.built.get(model, [])
        if len(built) != 1 or not built[0].args:
            return None
        inner = dotted(built[0].args[0].value)
        return inner if inner is not None and inner != model and self.moves.get(inner) else None

    def _from_library(self, running: list[tuple[Move, Where]]) -> tuple[Move, Where] | None:
        """A running move whose device comes from a package the tool does not follow, directly or
        handed to the move's function by the calls of the file (``main(get_device())``)."""
        for move, where in running:
            if where.on_xla is None and not where.library and move.device is not None:
                where = self.values.where_passed(move.device, move.scope)
            if where.library and where.on_xla is None:
                return move, where
        return None

    def _othermoves(self) -> None:
        """Moves of modules and tensors that no optimizer of this file steps (its optimizer
        is built in another module: ``agent = PPO(actor_critic)``) to a device chosen with a
        flag of another module: reported at the choice, as for a stepped model."""
        values = self.values
        for name, moves in self.moves.items():
            if name in self.stepped:
                continue
            for move in moves:
                if move.device is None:
                    continue
                where = values.where(move.device, move.scope)
                node = where.node
                said = bool(where.why) and any(where.why in m for _, m in self.part.broken.values())  # (read again)
                said = said or node in self.facts.project.external_devices
                if where.elsewhere and node is not None and not said:
                    self._named(where.module)
                    self._break(
                        node, DEVICE_FROM_PROJECT, xla112.device_from_module(name, code(move.device), where.why)
                    )
                elif (
                    where.on_xla is False
                    and type(node) is cst.IfExp
                    and values.flag_in(node.test, move.scope) is not None
                ):
                    self._break(node, DEVICE_OFF_XLA, xla111.moved_off_xla(name, code(move.device), where.why))

    def _built_elsewhere(self, model: str, optimizer: cst.Call) -> None:
        """A stepped model that no statement of this file moves, built once by a callable of a
        project module that this run does not convert (``model = load_model(args)``): where it
        goes is decided there."""
        built = self.built.get(model, [])
        if len(built) != 1 or (func := dotted(built[0].func)) is None:
            return
        if any(early.model == model for early in self.facts.training.optimizer_before_move.values()):
            return  # it moves later, after the optimizer is built (a trainer's ``set_device``): XLA203 names that move
        where = self._unconverted(func)
        if where is None:
            self._built_by_library(model, optimizer, built[0], func)
            return  # or converted (its own findings say where its moves go)
        self._break(
            built[0],
            DEVICE_FROM_PROJECT,
            xla112.stepped_model_built_elsewhere(model, code(optimizer.func), func, where),
        )

    def _built_by_library(self, model: str, optimizer: cst.Call, built: cst.Call, func: str) -> None:
        """A stepped model that a call of a package the tool does not follow builds, and nothing in
        this file moves, while the file moves other things to a device: on CUDA that library
        placed it; on an XLA host it is wherever the library puts it.  Not said where the call is
        handed a device value that the port makes the XLA device (it places the model there)."""
        if "." in model:
            return  # ``self.quantize = VectorQuantizer(...)``: a submodule moves with its module
        if not any(self.moves.values()):
            return  # nothing of the file goes to a device: XLA005 says the script picks none
        scope = self.built_in.get(built, "")
        package = library_builder(
            self.walk.analysis(ProjectAnalysis),
            func,
            self.walk.resolve(built.func),
            built,
            lambda arg: bool(self.values.where(arg.value, scope).on_xla),
        )
        if package is None:
            return
        self._break(
            built,
            DEVICE_FROM_LIBRARY,
            xla121.stepped_model_built_by_library(model, code(optimizer.func), code(built), package),
        )

    def _through_project(self, loop: Loop, through: tuple[cst.Call, str], model: str) -> None:
        """Batches made by a callable of a project module that this run does not convert: it
        decides whether they reach the device (``utils.to_gpu(x)`` inside ``parse_batch``)."""
        call, func = through
        where = self._unconverted(func)
        if where is None:
            return  # converted: its own moves are ported there
        names = [n for n, (c, _) in loop.through.items() if c is call]
        self._break(call, BATCH_OFF_XLA, xla116.batch_from_unconverted(names[0], model, func, where))

    def _handed(self, on_xla: set[str]) -> None:
        """A model on the XLA device handed to a function of a project module that still needs
        converting, which feeds it batches (its loops keep their CUDA moves until it is); a flag
        the port switched on (``args.use_gpu``) handed to one that picks a device with it."""
        project = self.walk.analysis(ProjectAnalysis)
        flags = {
            name: name.split(".")[0]
            for name, purpose in self.facts.device.flag_values.values()
            if purpose.startswith("picks the device")
        }
        for call, callee, names in self.handed:
            flag = next((f for f, root in flags.items() if root in names or f in names), None)
            found = project.origin(callee) if flag is not None else None
            if (
                flag is not None
                and found is not None
                and found.summary is not None
                and found.summary.pending
                and (
                    any(
                        chooser == found.name or chooser.startswith(f"{found.name}.")
                        for chooser in found.summary.devices
                    )
                    or found.summary.flag_choices_of(found.name)
                )
            ):
                self._named(found.summary.path)
                self._break(call, DEVICE_FROM_PROJECT, xla112.switched_flag_handed(flag, callee, found.summary.path))
        external = self.facts.project
        reported = {*external.external_steps, *external.external_training, *external.external_devices}
        for call, callee in project.calls:
            found = project.origin(callee)
            if (
                found is not None
                and (summary := found.summary) is not None
                and summary.pending
                and summary.trains_unported(found.name)
                and call not in reported
            ):
                self._named(summary.path)
                self._break(call, DEVICE_FROM_PROJECT, xla112.trains_elsewhere(callee, summary.path))
        for call, callee, names in self.handed:
            model = next((n for n in names if n in on_xla), None)
            found = project.origin(callee) if model is not None else None
            if (
                model is not None
                and found is not None
                and (summary := found.summary) is not None
                and summary.pending
                and summary.feeds(found.name)
            ):
                self._named(summary.path)
                self._break(call, BATCH_OFF_XLA, xla116.model_handed_to_unconverted(model, callee, summary.path))

    def _break(self, node: cst.CSTNode, rule: Rule, message: str) -> None:
        self.part.broken.setdefault(node, (rule, message))

    def _batches(self, on_xla: set[str]) -> None:
        """Obligation (3): a loop that feeds a model on the XLA device batches it does not move,
        from a source that yields CPU tensors."""
        movers = {loop.source for loop in self.loops if loop.moved & loop.targets and loop.source}
        map_locations = self.facts.checkpoint.map_locations
        wrapped = {node for node, plan in self.facts.training.loops.items() if plan.wrap_loader is not None}
        prefetched = batch_shapes.prefetching(self.built, self.walk.resolve)  # batches on the device already
        for loop in self.loops:
            if loop.node in wrapped or loop.source in prefetched:
                continue
            if loop.source is None and unfollowed_source(self.walk, self.values, loop) is None:
                continue  # (a call of an unfollowed package is followed below)
            params = self.params.get(loop.scope, [])
            for call, model, batch in loop.forwards:
                if not (unmoved := [n for n in batch if n not in loop.moved]):
                    continue
                if call in self.facts.distributed.scattered_inputs:
                    break  # the wrapper that moved them is named there (XLA116, distributed/scatter_inputs.py)
                if model not in on_xla:
                    self._scattered_batch(loop, call, model, unmoved, params)
                    continue
                if model in params and loop.source in params:
                    break  # both handed in: decided where they are handed (_handed_loaders)
                if (through := next((loop.through[n] for n in unmoved if n in loop.through), None)) is not None:
                    self._through_project(loop, through, model)
                    break
                data = self.loaders_of.get(loop.source, loop.source) if loop.source is not None else None
                loaded = self.loaded.get(data) if data is not None else None
                location = arg_value(loaded, 1, "map_location") if loaded is not None else None
                if location is not None and location in map_locations:
                    reason = xla116.loaded_onto_cpu(data or "", code(location))
                elif loop.source is not None and loop.source in movers:
                    reason = xla116.moved_by_training_loop(loop.source)
                elif (library := unfollowed_source(self.walk, self.values, loop, unmoved)) is not None:
                    self._break(call, BATCH_OFF_XLA, xla116.batch_from_library(unmoved[0], model, *library))
                    break
                else:
                    continue
                self._break(call, BATCH_OFF_XLA, xla116.batch_on_cpu(unmoved[0], model, reason))
                break

    def _scattered_batch(self, loop: Loop, call: cst.Call, model: str, unmoved: list[str], params: list[str]) -> None:
        """A loop of the model's own scope that feeds it batches it moves only in part (they come on
        the host), or batches of a DataLoader of the file, where the model comes wrapped in
        DataParallel (or DDP with device_ids) from a function: on CUDA the wrapper moved the rest."""
        if model in params or (scatter := self._scattering(model, loop.scope)) is None:
            return
        if not (loop.moved & loop.targets) and not (
            loop.source in self.facts.loaders.names or self.loaders_of.get(loop.source or "") is not None
        ):
            return  # another iterable may yield batches on the device
        self._break(
            call,
            BATCH_OFF_XLA,
            xla116.scattered_batch_on_cpu(unmoved[0], model, scatter),
        )
