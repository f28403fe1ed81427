"""What TrainingAnalysis (analysis.py) collects as the walk goes: the loops and functions
and what each does (records.py), the models, optimizers, moves and optimizer steps of the file,
the classes it defines; analysis.py plans and decides from them once the walk is done."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods import apis
from codemods.device.analysis import DeviceAnalysis
from codemods.device.ported_devices import CUDA
from codemods.engine.nodes import arg_value, dotted, fold_true, is_true, method_name, names_the_cpu, string_value, walk
from codemods.engine.positions import code_of
from codemods.engine.walk import Walk
from codemods.equivalent_apis import TENSOR_CLASSES_OF_NN as NN_TENSORS
from codemods.huggingface.names import TRAINERS
from codemods.targets import XM, spellings
from codemods.training.cpu_names import CpuNames
from codemods.training.device_less import looked_up_in
from codemods.training.facts import OptimizerStep
from codemods.training.handed_parameters import through_bound
from codemods.training.instance_values import instance_attributes, over_instance_values
from codemods.training.listed_modules import iterated_names, listing_methods, looped_over
from codemods.training.loop_members import member_container
from codemods.training.loop_plans import LoopPlans, is_device_loader
from codemods.training.loop_values import HOST_READ_CALLS, hands_a_reading_lambda
from codemods.training.members import member_name, member_values
from codemods.training.optimizer_lists import appended_to, is_optimizer_class, lists_optimizers
from codemods.training.parameter_sources import module_calls, value_names
from codemods.training.records import _Function, _Loop, _Scope, statically_dead
from codemods.training.returned_optimizers import ReturnedOptimizers
from codemods.training.round_trips import RoundTrips
from codemods.training.stale_parameter_lists import StaleParameterLists
from codemods.training.step_guards import equality
from codemods.training.step_kinds import StepKinds


class TrainingWalk(LoopPlans, StaleParameterLists, ReturnedOptimizers, RoundTrips, StepKinds):
    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.training
        self.device = walk.analysis(DeviceAnalysis)
        self.loop_records: dict[int, _Loop] = {}
        self.branch_blocks: set[int] = set()  # (round_trips.py) blocks that may not run: if/else, except
        self.function_records: dict[int, _Function] = {}
        self.module_scope = _Scope()
        self.cpu_names = CpuNames()  # (``cpu_device = torch.device("cpu")``: ``.to(cpu_device)`` reads to the host)
        self.module_node: cst.Module | None = None
        self.model_candidates: list[tuple[str, str]] = []
        self.module_classes: set[str] = set()
        # This file's module classes, also those over a library's model class: by name and qualified name.
        self.forward_classes: set[str] = set()
        self.forward_class_paths: set[str] = set()
        self.trainer_classes: dict[str, str] = {}  # transformers Trainer subclasses: name -> qualified name
        self.generators: set[str] = set()  # the functions that yield (qualified names)
        # Optimizer classes of this file (over a class of torch.optim, ``Optimizer`` or ``AdamW``, or over
        # another such class of the file): name -> qualified name.
        self.optimizer_classes: dict[str, str] = {}
        # Custom autograd functions of this file (over torch.autograd.Function): qualified names.
        self.autograd_functions: set[str] = set()
        self.device_loaders: set[str] = set()
        self.closure_names: set[tuple[str, str]] = set()
        self.moves: list[tuple[str, str | None, cst.Call]] = []  # (what, to which device, the move) across the file
        self.step_candidates: list[tuple[cst.Call, OptimizerStep, _Loop | None, _Function | None]] = []
        self.statement: cst.SimpleStatementLine | None = None
        # Optimizer steps outside loops, and calls outside loops that may run one:
        # (statement, the call, function or None, optimizer or callee, "step" or "call").
        self.step_sites: list[tuple[cst.SimpleStatementLine | None, cst.Call, _Function | None, str, str]] = []
        self.handed_functions: list[tuple[_Loop | _Function, str, int, str | None, str]] = []
        self.classes: set[str] = set()  # classes defined in this file
        self.instances: dict[str, str] = {}  # name -> the class of this file it was built from
        self.optimizer_inputs: set[cst.Call] = set()
        self.call_targets: dict[cst.Call, str] = {}
        self.unpacked_calls: dict[cst.Call, list[str | None]] = {}  # ``a, model, opt = f(...)``: the names, in order
        self.next_statement: dict[int, cst.BaseStatement] = {}
        self.used_outside_loops: set[str] = set()
        # Barriers under availability checks in a loop: (loop, the checks, the barrier).
        self.checked_barriers: list[tuple[_Loop, list[cst.If], cst.Call]] = []
        self.optimizer_lists: set[str] = set()  # names of lists of optimizers (training/optimizer_lists.py)
        # Loop variables whose loop steps each member (``for op in self.optimizers: op.step()``).
        self.stepped_members: set[str] = set()
        # The methods and properties of each class of the file that return a list of its
        # attributes (listed_modules.py): class qualified name -> method -> the names.
        self.listing_methods: dict[str, dict[str, tuple[str, ...]]] = {}
        # The attributes of each class's instances (instance_values.py): class qualified name -> ``self.name``s.
        self.instance_attributes: dict[str, tuple[str, ...]] = {}

    @property
    def loop(self) -> _Loop | None:
        node = self.walk.loop
        return self.loop_records[id(node)] if node is not None else None

    @property
    def function(self) -> _Function | None:
        node = self.walk.function
        return self.function_records[id(node)] if node is not None else None

    @property
    def scope(self) -> _Scope:
        node = self.walk.enclosing_function
        return self.function_records[id(node)] if node is not None else self.module_scope

    # -- walk -------------------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if params and params[0] in ("self", "cls") and self.walk.class_depth:
            params = params[1:]
        star = node.params.star_kwarg
        varargs = node.params.star_arg
        self.function_records[id(node)] = _Function(
            name=node.name.value,
            qualname=self.walk.qualname,
            node=node,
            params=params,
            keyword_params=[p.name.value for p in node.params.kwonly_params],
            kwargs=star.name.value if star is not None else None,
            varargs=varargs.name.value if isinstance(varargs, cst.Param) else None,
        )

    def _comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp) -> None:
        """``[m.to(device) for m in modules]`` over a parameter: ``m`` stands for what it holds."""
        function = self.function if self.walk.enclosing_function is not None else None
        if function is None or type(node.for_in.target) is not cst.Name:
            return
        param = function.parameter(node.for_in.iter, dotted(node.for_in.iter))
        if param is not None:
            function.bound[node.for_in.target.value] = param

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_GeneratorExp = _comprehension

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def _block(self, node: cst.Module | cst.IndentedBlock) -> None:
        for statement, following in zip(node.body, node.body[1:]):
            self.next_statement[id(statement)] = following

    def visit_Module(self, node: cst.Module) -> None:
        self.module_node = node
        self._block(node)

    visit_IndentedBlock = _block

    def visit_Yield(self, node: cst.Yield) -> None:
        if self.walk.enclosing_function is not None:
            self.generators.add(self.walk.qualname)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.add(node.name.value)
        self.listing_methods[self.walk.qualname] = listing_methods(node)
        self.instance_attributes[self.walk.qualname] = instance_attributes(node)
        for base in node.bases:
            resolved, written = self.walk.resolve(base.value), dotted(base.value)
            if resolved in apis.MODULE_BASES or written in self.module_classes:
                self.module_classes.add(node.name.value)
            if resolved in apis.MODULE_BASES or resolved in apis.LIBRARY_MODEL_BASES or written in self.forward_classes:
                self.forward_classes.add(node.name.value)
                self.part.forward_classes.add(node.name.value)
                self.forward_class_paths.add(self.walk.qualname)
            if is_optimizer_class(resolved or "") or written in self.optimizer_classes:
                self.optimizer_classes[node.name.value] = self.walk.qualname
            if resolved in TRAINERS or written in self.trainer_classes:
                self.trainer_classes[node.name.value] = self.walk.qualname
            if resolved in apis.AUTOGRAD_FUNCTIONS:
                self.autograd_functions.add(self.walk.qualname)

    def _loop(self, node: cst.For | cst.While) -> None:
        outer = next((loop for loop in reversed(self.walk.loops) if loop is not None and loop is not node), None)
        record = self.loop_records[id(node)] = _Loop(node, self.walk.qualname, outer=outer)
        record.dead = statically_dead(node, self.walk.conds)
        record.every_outer_iteration = (
            bool(self.walk.loops) and self.walk.loops[-1] is node and self.walk.every_outer_iteration
        )
        if type(node) is cst.For and type(node.target) is cst.Name:
            record.iterates = (node.target.value, dotted(node.iter) or "")

    visit_For = _loop
    visit_While = _loop

    def visit_Assign(self, node: cst.Assign) -> None:
        function = self.function if self.walk.enclosing_function is not None else None
        for target in node.targets:
            names, values = target.target, node.value
            if type(names) is cst.Tuple and type(values) is cst.Tuple and len(names.elements) == len(values.elements):
                pairs = [
                    (dotted(element.value), value.value) for element, value in zip(names.elements, values.elements)
                ]
                for name, value in pairs:  # q, q_target = QNet(), QNet()
                    self._assignment(name, value)
                # ``self.policy, self.qf = policy, qf`` binds each as its own assignment would (not
                # a swap, ``a, b = b, a``, whose values are read before either is bound).
                written = {name for name, _ in pairs}
                if not any(dotted(value) in written for _, value in pairs):
                    for name, value in pairs:
                        if name is not None:
                            self._collected(name, value, function)
                continue
            if (type(names) is cst.Tuple or type(names) is cst.List) and type(values) is cst.Call:
                # ``tok, model, optimizer = build(cfg)``: (training/returned_optimizers.py)
                self.unpacked_calls[values] = [dotted(element.value) for element in names.elements]
                continue
            name = dotted(names)
            self._assignment(name, values)
            if name is not None:
                self._collected(name, values, function)

    def _collected(self, name: str, values: cst.BaseExpression, function: _Function | None) -> None:
        """``name = values``: what the name holds from here on (and the parameter it is bound to)."""
        self.scope.events.append(("collect", name, values))
        if function is not None:
            # ``self.device = torch.device(device)`` holds the parameter as ``self.device = device`` does
            held = _device_argument(values, self.walk.resolve) or values
            param = function.parameter(held, dotted(held))
            if param is not None:
                function.bound[name] = param
            else:
                function.bound.pop(name, None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if type(node.operator) is cst.AddAssign:  # ``params += list(model.head.parameters())``
            self._collects_more(node.target, node.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value  # ``params.extend(model.head.parameters())``, ``groups.append({...})``
        if (
            type(call) is cst.Call
            and type(func := call.func) is cst.Attribute
            and func.attr.value in ("extend", "append")
            and len(call.args) == 1
            and not call.args[0].star
            and not call.args[0].keyword
            and self.walk.resolve(func) is None
        ):
            self._collects_more(func.value, call.args[0].value)

    def _collects_more(self, holder: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``params += value``, ``params.extend(value)``, ``groups.append(value)``: the name
        collects ``value`` too, as ``params = params + value`` says (its own nodes, so a
        move written into them lands in the code)."""
        name = dotted(holder)
        if name is not None:
            self.scope.events.append(("collect", name, cst.BinaryOperation(holder, cst.Add(), value)))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assignment(dotted(node.target), node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        """``with torch.profiler.profile(...) as prof:``, the form torch's profiler docs use: its
        ``prof.step()`` advances a profiling schedule, as for ``prof = profile(...)``."""
        if node.asname is not None and (name := dotted(node.asname.name)) is not None:
            if _is_profiler(node.item, self.walk.resolve):
                self.part.schedulers.add(name)

    @property
    def _scope_name(self) -> str:
        """The function the walk is in (its qualified name), or "" at the module level."""
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    def _assignment(self, name: str | None, value: cst.BaseExpression) -> None:
        if name is None:
            return
        self.cpu_names.note(self._scope_name, name, value)
        core = _unless_none(value)
        moved: cst.Call | None = None  # the move of ``Model(...).to(device)``
        while (
            type(core) is cst.Call
            and type(attribute := core.func) is cst.Attribute  # (method_name and receiver, at once)
            and attribute.attr.value in ("to", "cuda", "float", "double", "train", "eval")
        ):
            if moved is None and attribute.attr.value in ("to", "cuda"):
                moved = core
            core = attribute.value
        for member, held in member_values(name, core, self.walk.resolve):  # ``optims = SimpleNamespace(gen=Adam(...))``
            self._assignment(member, held)
        if lists_optimizers(core, self.walk.resolve):
            self.optimizer_lists.add(name)
        if dotted(core) in self.device_loaders:  # ``epoch_iterator = parallel_loader``: the same loader
            self.device_loaders.add(name)
        if _is_profiler(core, self.walk.resolve):  # ``prof.step()`` advances a profiling schedule
            self.part.schedulers.add(name)
            if name.startswith("self.") and (owner := self.walk.qualname.rpartition(".")[0]) in self.classes:
                self.part.held_steppers.add((owner, name.removeprefix("self."), "scheduler"))
        if type(core) is not cst.Call:
            return
        self.call_targets[core] = name
        func_name = dotted(core.func)
        if func_name is None and (holder := looked_up_in(core.func, self.walk.resolve)) is not None:
            self.scope.lookup_builds.append(("model", name, holder, moved, core))
        if func_name is not None:
            self.scope.events.append(("model", name, func_name, moved, core))
            self.model_candidates.append((name, func_name))
            wrapped = tuple(
                (index, arg.keyword.value if arg.keyword is not None else None, n)
                for index, arg in enumerate(core.args)
                if not arg.star and (n := dotted(arg.value)) is not None and n != name
            )
            if wrapped:  # a module built over others (``ModelWithLoss(model, loss)``): moving it moves them
                target = arg_value(moved, 0, "device") if moved is not None else None
                if moved is not None and method_name(moved) != "cuda" and self._casts_only(target):
                    moved = None  # a cast keeps the Parameter objects
                device = (
                    None
                    if moved is None
                    else CUDA
                    if method_name(moved) == "cuda" or _is_cuda_string(target)
                    else dotted(target)
                )
                self.scope.events.append(("wraps", name, func_name, wrapped, device, moved))
        callee = self.walk.resolve(core.func)
        if is_device_loader(core, callee):
            self.device_loaders.add(name)
        if callee is None:
            return
        kind = (
            "scheduler"
            if callee.startswith(apis.SCHEDULER_MODULE + ".") or callee == apis.SWA_SCHEDULER
            else "optimizer"
            if is_optimizer_class(callee)
            else None
        )
        if kind is not None:
            (self.part.schedulers if kind == "scheduler" else self.part.optimizers).add(name)
            if name.startswith("self.") and (owner := self.walk.qualname.rpartition(".")[0]) in self.classes:
                self.part.held_steppers.add((owner, name.removeprefix("self."), kind))
        elif callee.startswith("torch.nn.") and callee.rsplit(".", 1)[-1][:1].isupper() and callee not in NN_TENSORS:
            self.part.models.add(name)

    def _availability_checks(self) -> list[cst.If]:
        """The ``if torch.cuda.is_available():`` (or the like) around here in the loop."""
        return [
            condition
            for condition in self.walk.ifs_in_loop
            if any(
                type(sub) is cst.Call and self.walk.resolve(sub.func) in apis.AVAILABILITY_CHECKS
                for sub in walk(condition.test)
            )
        ]

    def _barrier_stays(self, checks: list[cst.If], barrier: cst.Call) -> bool:
        """A barrier under availability checks stays unless the device rewrite folds one of them and
        drops the branch it is in (``if not torch.cuda.is_available():`` around device code)."""
        for check in checks:
            if check not in self.facts.device.ifs:
                continue
            folded = fold_true(check.test, self.facts.device.is_available_call)
            gone = check.body if folded is False else check.orelse if folded is True else None
            if gone is not None and barrier in walk(gone):
                return False
        return True

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.callee
        # ``x.step()``: the method and what it is called on (method_name and receiver, at once).
        func = node.func
        method, target = (func.attr.value, func.value) if type(func) is cst.Attribute else (None, None)
        loop, function = self.loop, self.function
        if type(node.func) is cst.Attribute and (holder := dotted(node.func.value)) is not None and callee is None:
            scope = self.scope
            scope.method_calls.append((len(scope.events), holder, node.func.attr.value, node))
        if method == "backward" or callee == "torch.autograd.backward":
            if loop is not None:
                loop.backward = True
            elif function is not None:
                function.backward = True
                self._note_switches(node, function)
        elif (listed := appended_to(node, self.walk.resolve)) is not None:
            self.optimizer_lists.add(listed)
        elif method == "step" and target is not None and (stepped := member_name(target)) is not None:
            self._step(node, stepped, loop, function)
        if loop is not None:
            if callee in spellings("sync") or (
                callee == f"{XM}.optimizer_step" and is_true(arg_value(node, 1, "barrier"))
            ):
                checks = self._availability_checks()
                if checks:
                    self.checked_barriers.append((loop, checks, node))
                else:
                    loop.barrier = True
            reads = (
                method in apis.HOST_READ_METHODS
                # ``.to("cpu")``, ``.to(cpu_device)``, as ``.cpu()``
                or (method == "to" and self.cpu_names.names_cpu(self._scope_name, arg_value(node, 0, "device")))
                or (type(node.func) is cst.Name and node.func.value in apis.HOST_READ_BUILTINS and callee is None)
                or callee in HOST_READ_CALLS
                or hands_a_reading_lambda(node)  # ``nest.map(lambda t: t.cpu(), outputs)``
            )
            if reads and self.walk.conditional_in_loop:
                loop.branch_reads.append(node)  # a read in every branch reads every iteration (every_iteration.py)
            elif reads:
                # A read in every iteration of a nested loop that runs in every iteration of its
                # outer loop (``for i in range(n): ranks.append(hit[i].nonzero().item())``) is a
                # read per iteration of that loop too.
                reading: _Loop | None = loop
                while reading is not None:
                    reading.host_read = True
                    outer_loop = reading.outer if reading.every_outer_iteration else None
                    reading = self.loop_records.get(id(outer_loop)) if outer_loop is not None else None
            if (func_name := dotted(node.func)) is not None:
                loop.called.append(func_name)
                arguments = [name for a in node.args if (name := dotted(a.value)) is not None]
                # (``AdvLoss(adv, opt, loss=loss)``, a class named like one: it stores what it is handed,
                # a method called later steps it.)
                constructs = func_name.rsplit(".", 1)[-1][:1].isupper()
                if (
                    callee is None
                    and not constructs
                    and any("loss" in name.rsplit(".", 1)[-1].lower() for name in arguments)
                ):
                    loop.handed.append((node, func_name, arguments))
        elif function is not None and (func_name := dotted(node.func)) is not None:
            if method in apis.HOST_READ_METHODS:
                function.host_read = True
            function.called.append(func_name)
            if callee in spellings("sync"):
                function.barrier = True
            elif method != "step" and callee is None:
                self.step_sites.append((self._statement_of(node), node, function, func_name, "call"))
            elif (
                callee == f"{XM}.optimizer_step"
                and not is_true(arg_value(node, 1, "barrier"))
                and (handed := arg_value(node, 0, "optimizer")) is not None
                and (stepped := member_name(handed)) is not None
            ):
                # A step already in torch_xla's spelling (the port's own, on a second run): still a step that
                # some loop must end with a barrier (XLA306 asks who drives it; no barrier is placed for it).
                self.step_sites.append((self._statement_of(node), node, function, stepped, "ported"))
        self.note_handed(loop or function, node)
        if loop is None:  # what this file runs outside loops and functions, or hands on (to a launcher)
            outside = self.walk.enclosing_function is None
            self.used_outside_loops.update(
                n for a in ((node.func,) if outside else ()) + tuple(arg.value for arg in node.args) if (n := dotted(a))
            )
        if method == "cpu" and target is not None and (moved := self._moved_name(target)) is not None:
            for each in self._elements_of(moved, node):
                self.scope.events.append(("cpu", each, node))
                if function is not None and (param := function.parameter(target, each)) is not None:
                    function.cpu_params.add(param)
        if method in ("to", "cuda") and target is not None:
            device_arg = arg_value(node, 0, "device")
            device = CUDA if method == "cuda" or _is_cuda_string(device_arg) else dotted(device_arg)
            moved = self._moved_name(target)
            # A cast (``model.to(torch.bfloat16)``, ``.to(memory_format=...)``) keeps a
            # module's Parameter objects: no move for what optimizers were built over.
            changes_device = method == "cuda" or not self._casts_only(device_arg)
            elements: list[str | None] = [*self._elements_of(moved, node)] if moved is not None else [None]
            if moved is not None:
                if changes_device:
                    self.scope.events.extend(("move", each, device, node) for each in elements if each is not None)
                self.moves.append((moved, device, node))
                # ``net.to(device)`` as a statement moves a module in place (a tensor's would be
                # lost): a loop of such moves (``for net in nets.values(): net.to(device)``)
                # computes nothing on the device, it is no evaluation loop.
                if loop is not None and device is not None and not self._is_statement(node):
                    loop.moved[moved] = device
            for element in elements:
                param = function.parameter(target, element) if function is not None and changes_device else None
                if function is None or param is None:
                    pass
                elif names_the_cpu(device_arg):  # a callable that moves what it is handed to the CPU leaves it there
                    function.cpu_params.add(param)
                else:
                    function.moved_params.append(
                        (param, through_bound(function.bound, device), node, function.qualname)
                    )
                    if param in function.cpu_params:
                        function.round_trip_params.add(param)
        if callee is not None and is_optimizer_class(callee):
            if function is not None:
                function.builds_optimizer = True
            params = arg_value(node, 0, "params")
            if params is not None:
                for sub, module in module_calls(params):
                    self.optimizer_inputs.add(sub)
                    self.scope.events.append(("optimizer", self._member_of(module), sub))
                self.optimizer_inputs.update(sub for sub in walk(params) if type(sub) is cst.Call)
                if names := value_names(params):
                    self.scope.events.append(("uses", names, node))
        elif (
            node.args
            and method not in ("to", "cuda")
            and (called := dotted(node.func)) is not None
            and not (callee or "").startswith("torch.")
        ):
            self.scope.events.append(("call", called, node))
        if (
            function is not None
            and method in ("parameters", "named_parameters")
            and target is not None
            and (owner := function.parameter(target, dotted(target))) is not None
        ):
            function.parameters_of.add(owner)

    def _casts_only(self, device: cst.BaseExpression | None) -> bool:
        """A ``.to()`` whose device argument is missing (only ``dtype=``, ``memory_format=``)
        or is a dtype (``torch.bfloat16``, a name ending in ``dtype``)."""
        return device is None or apis.is_dtype(dotted(device), self.walk.resolve(device))

    def _note_switches(self, node: cst.Call, function: _Function) -> None:
        """Keeps the names of the ``if name:`` whose bodies hold this backward pass or step."""
        parents, key, inside, guarded = self.walk.parents, id(node), set(), set()
        bodies = {id(c.body): c.test.value for c in self.walk.conds if type(c) is cst.If and type(c.test) is cst.Name}
        guards = {id(c.body): g for c in self.walk.conds if type(c) is cst.If and (g := equality(c.test)) is not None}
        while (bodies or guards) and (parent := parents.get(key)) is not None:
            key = parent
            if key in bodies:
                inside.add(bodies[key])
            if key in guards:
                guarded.add(guards[key])
        function.step_switches = inside if function.step_switches is None else function.step_switches & inside
        function.step_guards = guarded if function.step_guards is None else function.step_guards & guarded

    def _elements_of(self, moved: str, node: cst.Call) -> list[str]:
        """What a move of ``moved`` moves: the name, or, for a loop variable over a list the
        tool reads (``for m in self.modules: m.to(device)``), each element of it
        (listed_modules.py); a loop over the instance's values that it cannot read is kept as
        an untraced move (XLA213)."""
        root, _, rest = moved.partition(".")
        qualname = self.walk.qualname
        if (
            not rest
            and self._is_statement(node)
            and self.walk.enclosing_function is not None
            and over_instance_values(self.walk.loops, root)
        ):
            # ``for key, val in self.__dict__.items(): val.to(device)``: each attribute of the instance
            attributes = self.instance_attributes.get(qualname.rpartition(".")[0])
            if attributes:
                return list(attributes)
        loop = looped_over(self.walk.loops, root)
        if loop is None:
            return [moved]
        methods = self.listing_methods.get(qualname.rpartition(".")[0], {})
        names = iterated_names(loop.iter, self.walk.enclosing_function, methods)
        if names is None:
            over = dotted(loop.iter.func if type(loop.iter) is cst.Call else loop.iter) or ""
            # (a statement: a module moves in place, a tensor's move would be lost; ``x =
            # batch.to(device)`` in a loop over the instance's loader moves no module)
            in_place = method_name(node) in ("to", "cuda") and self._is_statement(node)
            if over.startswith("self.") and in_place and self.walk.enclosing_function is not None:
                function = self.function_records[id(self.walk.enclosing_function)]
                function.untraced_moves.append((code_of(loop.iter), node))
            return [moved]
        return [".".join(p for p in (name, rest) if p) for name in names]

    def _member_of(self, module: str) -> str:
        """``module`` read through a loop variable that walks a model's submodules
        (loop_members.py): ``unet`` of ``for unet in self.imagen.unets`` is ``self.imagen.unets``."""
        root, dot, rest = module.partition(".")
        if self.walk.enclosing_function is None or (container := member_container(self.walk.loops, root)) is None:
            return module
        return f"{container}{dot}{rest}"

    def _moved_name(self, node: cst.BaseExpression) -> str | None:
        """What a ``.to()``/``.cuda()`` moves: ``model``, also ``DataParallel(model)``."""
        if isinstance(node, cst.Call) and (self.walk.resolve(node.func) or "") in apis.DISTRIBUTED and node.args:
            return dotted(node.args[0].value)
        return dotted(node)

    def _step(self, node: cst.Call, name: str, loop: _Loop | None, function: _Function | None) -> None:
        target = loop if loop is not None else function
        if target is not None:
            target.step_receivers.append(name)
        if loop is None and function is not None:
            self._note_switches(node, function)
        closure_index = next(
            (
                i
                for i, a in enumerate(node.args)
                if (a.keyword is None and i == 0) or (a.keyword and a.keyword.value == "closure")
            ),
            None,
        )
        if closure_index is not None and isinstance(closure := node.args[closure_index].value, cst.Name):
            self.closure_names.add((self.walk.qualname, closure.value))  # (the step's scope, the name)
        step = OptimizerStep(name, closure_index, len(node.args) > (closure_index is not None))
        self.step_candidates.append((node, step, loop, function))
        if loop is None:
            statement = (
                self.statement
                if self.statement is not None
                and any(isinstance(small, cst.Expr) and small.value is node for small in self.statement.body)
                else None
            )
            self.step_sites.append(
                (statement, node, self.function if self.walk.enclosing_function else None, name, "step")
            )

    def _is_statement(self, node: cst.Call) -> bool:
        """The call is a statement of its own (its result unused)."""
        statement = self._statement_of(node)
        return statement is not None and type(statement.body[0]) is cst.Expr

    def _statement_of(self, node: cst.Call) -> cst.SimpleStatementLine | None:
        """The statement that is this call (``helper(x)``, ``loss = helper(x)``)."""
        statement = self.statement
        if statement is None or len(statement.body) != 1:
            return None
        small = statement.body[0]
        return statement if (type(small) is cst.Expr or type(small) is cst.Assign) and small.value is node else None


def _unless_none(value: cst.BaseExpression) -> cst.BaseExpression:
    """What ``value`` binds where it binds anything: ``get_optimizer(model) if train else None``
    is the call (the other path leaves nothing to step or move)."""
    if type(value) is cst.IfExp:
        if type(value.orelse) is cst.Name and value.orelse.value == "None":
            return _unless_none(value.body)
        if type(value.body) is cst.Name and value.body.value == "None":
            return _unless_none(value.orelse)
    return value


def _is_profiler(value: cst.BaseExpression, resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    """``profile(...)`` of torch.profiler, or ``profile(...) if on else nullcontext()``: what it
    binds has a ``step()`` that takes no training step (nor does ``nullcontext()`` alone)."""
    if type(value) is cst.IfExp:
        return _is_profiler(value.body, resolve) and _is_profiler(value.orelse, resolve)
    return type(value) is cst.Call and resolve(value.func) in apis.PROFILERS


def _is_cuda_string(node: cst.BaseExpression | None) -> bool:
    """``"cuda"``, ``'cuda:0'``: a move to a CUDA device written as a literal."""
    return (string_value(node) or "").split(":")[0] == "cuda"


def _device_argument(
    value: cst.BaseExpression, resolve: Callable[[cst.CSTNode], str | None]
) -> cst.BaseExpression | None:
    """The one argument of ``torch.device(x)`` (None for any other value)."""
    if type(value) is not cst.Call or resolve(value.func) != "torch.device" or len(value.args) != 1:
        return None
    return None if value.args[0].star or value.args[0].keyword is not None else value.args[0].value
