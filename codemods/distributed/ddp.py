"""DistributedDataParallel and DataParallel: the DDP constructions and the device
arguments they drop, the CPU tensors DDP used to move for its inputs, the DataParallel
wrappers that go (and ``.module`` on what they wrapped), and the mixed-precision steps
that need an all-reduce of their own when no DDP reduces the gradients."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import (
    arg_value,
    args_by_position,
    call_args,
    dotted,
    fold_true,
    lone_call,
    method_name,
    receiver,
    walk,
)
from codemods.engine.walk import Analysis, Walk, assignments, attributes_named
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_bases import ddp_class, project_class_of
from codemods.targets import spellings

if TYPE_CHECKING:
    from codemods.facts import Facts

DATA_PARALLEL = frozenset(
    {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"}
)
# Tensor factories that DDP(device_ids=[...]) used to move to the GPU with its inputs.
FACTORIES = frozenset(
    f"torch.{name}" for name in "randn rand randint zeros ones empty full tensor arange randn_like rand_like".split()
)
# Methods that hand back the module they are called on.
_MOVES = ("to", "cuda", "train", "eval", "float", "half")
# DDP(module, device_ids, output_device, ...)
DDP_PARAMETERS = ("module", "device_ids", "output_device")


class DdpAnalysis(Analysis):
    facts: Facts

    name = "ddp"
    fills = "distributed"
    reads = ("device", "project")
    conclude_reads = ("amp", "huggingface", "imports", "project")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.statement: cst.SimpleStatementLine | None = None
        self.ddp_references: list[cst.Call] = []  # DDP and FSDP
        self.ddp_names: set[str] = set()
        self.model_calls: list[tuple[str, cst.Call]] = []
        self.dp_calls: list[tuple[cst.Call, str | None, cst.SimpleStatementLine | None]] = []
        # Names the tests around a DataParallel wrap read (``if args.n_gpu > 1:``): a device
        # count held in one is the devices one process drives.
        self.dp_guard_names: set[str] = set()
        self.module_attrs: list[tuple[cst.Attribute, str | None]] = []
        # The names a DataParallel construction is bound to (the targets of its statement), and
        # those bound at module level.
        self.dp_holders: dict[cst.Call, set[str]] = {}
        self.module_level_dp: set[cst.Call] = set()
        # The function or method each DataParallel construction is in (``Trainer.__init__``).
        self.dp_scopes: dict[cst.Call, str] = {}
        # Values that leave the file: returned (the value, and the function that returns it).
        self.returned: list[tuple[cst.BaseExpression, str]] = []
        # What functions return whole or as an element of a tuple: (value, function, position or -1).
        self.returned_at: list[tuple[cst.BaseExpression, str, int]] = []
        # (scope, name) -> the DDP construction bound to it.
        self.ddp_holders: dict[tuple[str, str], cst.Call] = {}
        self.backward_candidates: list[tuple[cst.SimpleStatementLine, cst.Call, str, str | None]] = []
        self.module_code: list[tuple[int, cst.CSTNode]] = []  # setup at module level: (walk order, node)
        # Classes of the file: their bases (qualified where imported, and as written) and whether
        # they define ``scatter``.
        self.classes: dict[str, tuple[list[tuple[str, str]], bool]] = {}
        # Calls of a name that is no torch DDP (it may be a DDP subclass, of the file or of another
        # module: known once the walk is over): (callee as written, the call, its position in the
        # walk when at module level, the names it is bound to and the scope).
        self.maybe_ddp: list[tuple[str, cst.Call, int | None, tuple[str, ...], str]] = []

    # -- walk -------------------------------------------------------------------------------

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        """``scaler.scale(loss).backward()`` and the ``scaler.step(optimizer)`` after it."""
        statements = [s for s in node.body if type(s) is cst.SimpleStatementLine]
        for index, statement in enumerate(statements):
            backward = _scaled_backward(statement)
            if backward is None:
                continue
            if index + 1 < len(statements) and self._reduces_gradients(statements[index + 1]):
                continue  # reduced already (by hand, or by an earlier run of the tool)
            scaler = dotted(receiver(receiver(backward)))  # type: ignore[arg-type]  # backward is a method call on a method call (scaler.scale(loss).backward()): receivers are Calls
            optimizer = next(
                (
                    dotted(arg_value(call, 0, "optimizer"))
                    for later in statements[index + 1 :]
                    if (call := lone_call(later)) is not None
                    and method_name(call) == "step"
                    and dotted(receiver(call)) == scaler
                ),
                None,
            )
            self.backward_candidates.append((statement, backward, scaler or "", optimizer))

    def _reduces_gradients(self, statement: cst.SimpleStatementLine) -> bool:
        """``xm.all_reduce(..., xm._fetch_gradients(optimizer), ...)``: the reduce XLA607 writes."""
        call = lone_call(statement)
        if call is None or self.walk.resolve(call.func) not in spellings("all_reduce"):
            return False
        tensors = arg_value(call, 1, "inputs")
        return type(tensors) is cst.Call and self.walk.resolve(tensors.func) in spellings("fetch_gradients")

    @assignments()
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        core = value
        while (
            type(core) is cst.Call
            and type(attribute := core.func) is cst.Attribute  # (method_name and receiver, at once)
            and attribute.attr.value in ("to", "cuda")
        ):
            core = attribute.value
        if type(core) is cst.Call:
            callee = self.walk.resolve(core.func)
            if callee not in apis.DDP_CLASSES and (written := dotted(core.func)) is not None:
                self.maybe_ddp.append((written, core, None, (name,), self.walk.qualname))
            if callee in apis.DDP_CLASSES:
                self.ddp_names.add(name)
                self.ddp_holders[(self.walk.qualname, name)] = core
            elif callee in DATA_PARALLEL:
                self.dp_calls.append((core, name, self.statement if value is core else None))
                self.dp_holders.setdefault(core, set()).add(name)
                self.dp_scopes[core] = self.walk.qualname
                if self.walk.module_level:
                    self.module_level_dp.add(core)
                self.dp_guard_names.update(
                    n
                    for cond in self.walk.conds
                    if type(cond) is cst.If
                    for sub in walk(cond.test)
                    if type(sub) in (cst.Name, cst.Attribute) and (n := dotted(sub))
                )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [
            (self.walk.resolve(base.value) or "", dotted(base.value) or "")
            for base in node.bases
            if base.keyword is None
        ]
        scatters = any(type(s) is cst.FunctionDef and s.name.value == "scatter" for s in node.body.body)
        self.classes[node.name.value] = (bases, scatters)

    @attributes_named("module")
    def _module_attribute(self, node: cst.Attribute) -> None:
        self.module_attrs.append((node, dotted(node.value)))

    def visit_Call(self, node: cst.Call) -> None:
        if (func := dotted(node.func)) is not None:
            self.model_calls.append((func, node))
        callee = self.walk.callee
        if callee in apis.DDP_CLASSES:
            self.ddp_references.append(node)
            self._ddp(node)
        elif callee in apis.FSDP_CLASSES or callee in apis.FSDP2 or callee in apis.XLA_FSDP_CLASSES:
            self.ddp_references.append(node)
            self._distributed_code(node)
        elif callee in DATA_PARALLEL and not any(node is c for c, _, _ in self.dp_calls):
            self.dp_calls.append((node, None, None))
            self.dp_holders[node] = _bound_names(self.statement)
            self.dp_scopes[node] = self.walk.qualname
            if self.walk.module_level:
                self.module_level_dp.add(node)
        elif func is not None:
            where = None if self.walk.scopes else len(self.walk.parents)
            self.maybe_ddp.append((func, node, where, (), self.walk.qualname))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.returned.extend((value, self.walk.qualname) for value in _handed_values(node.value))
            if type(node.value) is cst.Tuple:
                self.returned_at.extend(
                    (element.value, self.walk.qualname, index) for index, element in enumerate(node.value.elements)
                )
            else:
                self.returned_at.append((node.value, self.walk.qualname, -1))

    def _ddp(self, node: cst.Call) -> None:
        self._ddp_arguments(node)
        self._distributed_code(node)

    def _ddp_arguments(self, node: cst.Call) -> None:
        dropped = tuple(
            arg for name, arg in args_by_position(node, DDP_PARAMETERS) if name in ("device_ids", "output_device")
        )
        bucket_view = call_args(node)[1].get("gradient_as_bucket_view")
        self.part.ddp_calls[node] = (dropped, bucket_view is None)

    def _ddp_subclasses(self) -> None:
        """The file's classes that derive from torch's DistributedDataParallel (directly, through
        another of its classes, or through a class of another project module: module_bases), and
        the constructions of those or of such a class imported from another module: a subclass
        takes DDP's arguments (its device_ids go as torch DDP's do, XLA604) and wraps the model
        as DDP does."""
        project = self.walk.analysis(ProjectAnalysis)
        found = self.part.ddp_classes
        changed = True
        while changed:
            changed = False
            for name, (bases, _) in self.classes.items():
                if name not in found and any(
                    qualified in apis.DDP_CLASSES
                    or written in found
                    or (written not in self.classes and project_class_of(project, (written,), ddp_class))
                    for qualified, written in bases
                ):
                    found.add(name)
                    changed = True
        for written, call, where, names, scope in self.maybe_ddp:
            if written in self.classes:
                if written not in found:
                    continue
            elif not project_class_of(project, (written,), ddp_class):
                continue
            if call not in self.part.ddp_subclass_calls:
                self.part.ddp_subclass_calls[call] = written
                self.ddp_references.append(call)
                self._ddp_arguments(call)
            if where is not None:  # (one entry per call has it: visit_Call's)
                self.module_code.append((where, call))
            for name in names:
                self.ddp_names.add(name)
                self.ddp_holders[(scope, name)] = call

    def _distributed_code(self, node: cst.CSTNode) -> None:
        if not self.walk.scopes:  # module level: no launcher can start it
            self.module_code.append((len(self.walk.parents), node))

    # -- results ----------------------------------------------------------------------------

    def finish(self) -> None:
        self._ddp_subclasses()
        # DistributedDataParallel in a branch the device rewrite removes does not count.
        removed = {id(sub) for branch in self._removed_branches() for sub in walk(branch)}
        self.part.ddp = any(id(reference) not in removed for reference in self.ddp_references)

    def _removed_branches(self) -> list[cst.CSTNode]:
        """Branches of device ifs that cannot run once the accelerator check folds to
        True on XLA: the device rewrite removes them."""
        device = self.facts.device
        branches: list[cst.CSTNode] = []
        for node in device.ifs:
            folded = fold_true(node.test, device.is_available_call)
            branch = node.body if folded is False else node.orelse if folded is True else None
            if branch is not None:
                branches.append(branch)
        return branches

    def conclude(self) -> None:
        self._data_parallel()
        self._data_parallel_classes()
        self._scattering_returns()
        if self.part.multi_process and not self.facts.huggingface.trainer_script:
            self._ddp_inputs()
            self._gradient_reduces()

    def _data_parallel(self) -> None:
        """DataParallel is one process driving several GPUs: on XLA the wrapper goes, and
        ``.module`` on the names it wrapped becomes the name.  A ``.module`` the tool
        cannot place (on a name it does not know, or on a name DDP also wraps) keeps it, and
        so does a wrapped model that leaves the file (``_leaving``): the ``.module`` uses
        (or a flag saying it is wrapped) of the code it reaches there are not this file's to
        rewrite, and without CUDA devices DataParallel only calls the model."""
        part = self.part
        wrapped = {name for _, name, _ in self.dp_calls if name is not None}
        unknown = [
            base
            for _, base in self.module_attrs
            if base is None or (base not in wrapped and base not in self.ddp_names)
        ]
        accessed = {base for _, base in self.module_attrs}
        removable = not unknown and not (wrapped & self.ddp_names & accessed)
        leaving = self._leaving()
        load = self._state_dict_load()
        if load is not None:  # every wrap of the file stays: its checkpoints keep one layout of keys
            for call, _, _ in self.dp_calls:
                if call not in leaving:
                    leaving[call] = "a state dict is loaded into it"
                    part.state_dict_loads[call] = load
        kept_names = {name for call in leaving for name in self.dp_holders[call]}
        for call, _, _ in self.dp_calls:  # a name one construction keeps wrapped keeps every wrap of it
            shared = next(
                (why for other, why in leaving.items() if self.dp_holders[other] & self.dp_holders[call]), None
            )
            if (why := leaving.get(call, shared)) is not None:
                part.kept_data_parallel[call] = why
        for call, name, statement in self.dp_calls:
            removed = removable and _wrapped(call) is not None and call not in part.kept_data_parallel
            part.data_parallel[call] = removed
            if removed and statement is not None and name is not None and dotted(_wrapped(call)) == name:
                part.dp_statements.add(statement)
        if removable:
            part.module_accesses = {node for node, base in self.module_attrs if base in wrapped - kept_names}

    def _scattering_returns(self) -> None:
        """Functions that return a model wrapped in nn.DataParallel, or in DDP given device_ids:
        on CUDA the wrapper's forward moved the inputs to the GPU; on XLA neither does (without
        CUDA devices DataParallel calls the model directly, XLA605; the port drops DDP's
        device_ids, XLA604), so a caller's batches that relied on it stay on the CPU."""
        for value, function, index in self.returned_at:
            wrapper: cst.Call | None = None
            if type(value) is cst.Call and (
                self.walk.resolve(value.func) in (*DATA_PARALLEL, *apis.DDP_CLASSES)
                or value in self.part.ddp_subclass_calls
            ):
                wrapper = value
            elif (name := dotted(value)) is not None:
                wrapper = next(
                    (
                        call
                        for call, _, _ in self.dp_calls
                        if self.dp_scopes.get(call) == function and name in self.dp_holders.get(call, ())
                    ),
                    self.ddp_holders.get((function, name)),
                )
            if wrapper is None:
                continue
            if wrapper in self.part.ddp_calls and not any(
                name == "device_ids" and dotted(arg.value) != "None"
                for name, arg in args_by_position(wrapper, DDP_PARAMETERS)
            ):
                continue  # DDP without device_ids moves no inputs
            written = dotted(wrapper.func) or "DataParallel"
            self.part.scattering_returns.setdefault(
                (function, index),
                f"`{written}`, whose forward scattered them to the GPUs on CUDA; without CUDA devices it calls the "
                "model directly"
                if self.walk.resolve(wrapper.func) in DATA_PARALLEL
                else f"`{written}`, whose forward moved them to the GPU of its device_ids on CUDA; the port drops "
                "device_ids (XLA604), and without them it moves no inputs",
            )

    def _state_dict_load(self) -> cst.Call | None:
        """The file's first ``x.load_state_dict(...)`` on a name a DataParallel construction
        binds: the checkpoint it reads was saved through the wrapper (``module.`` keys) by the
        original code, and so is what the port's own runs save while the wrapper stays."""
        holders = {name for names in self.dp_holders.values() for name in names}
        return next(
            (
                call
                for func, call in self.model_calls
                if func.endswith(".load_state_dict") and func.removesuffix(".load_state_dict") in holders
            ),
            None,
        )

    def _leaving(self) -> dict[cst.Call, str]:
        """The DataParallel constructions whose model leaves the file, and where it goes:
        returned by a function, handed to a callable of another module of the project,
        bound at module level in a module that other files of the run import, or held on an
        attribute that code of another file may read (``_held_on_attribute``)."""
        leaving: dict[cst.Call, str] = {}
        project_names = self.facts.imports.project_names
        handed = [
            (value, f"handed to `{func}` of {project_names[func.split('.')[0]][0]}")
            for func, call in self.model_calls
            if func.split(".")[0] in project_names
            for value in _handed_values_in(call.args)
        ]
        returned = [(value, f"returned by `{function}`", function) for value, function in self.returned]
        imported = self.facts.project.context.imported_in_run()
        for call, _, _ in self.dp_calls:
            holders = self.dp_holders[call]
            for value, where, function in returned + [(value, where, None) for value, where in handed]:
                # (a name returned by another function holds another model: ``model`` of each)
                local = (
                    function is None
                    or function == self.dp_scopes.get(call)
                    or call in self.module_level_dp
                    or "." in (dotted(value) or "")
                )
                if value is call or (dotted(value) in holders and local):
                    leaving[call] = where
                    break
            else:
                if imported and call in self.module_level_dp and holders:
                    leaving[call] = "bound at module level in a module other files of the run import"
                elif (held := self._held_on_attribute(call, imported)) is not None:
                    leaving[call] = held
        return leaving

    def _held_on_attribute(self, call: cst.Call, imported: bool) -> str | None:
        """Where a model wrapped onto an attribute (``self.model = nn.DataParallel(net)``) may
        be read as ``.module`` out of the tool's sight (``trainer.model.module``, or
        ``self.model.module`` in a subclass of another file): in a module that other files of
        the run import, when one of the run's other files reads ``.module`` at all; in one
        that none imports, when the attribute is ``self``'s and no code of the file builds
        its class (or a subclass of it), so the instances come from files outside the run.
        None: every ``.module`` read is in sight (and this file's are rewritten)."""
        attributes = sorted(holder for holder in self.dp_holders[call] if "." in holder)
        if not attributes:
            return None
        holder = attributes[0]
        owner = self.dp_scopes[call].split(".")[0] if holder.startswith("self.") else ""
        shown = f"`{holder}` of `{owner}`" if owner in self.classes else f"`{holder}`"
        if imported:
            reader = self.facts.project.context.module_read_in_run()
            return None if reader is None else f"held on {shown}, and {reader} of the run reads `.module`"
        if owner in self.classes and not self._built_here(owner, set()):
            return f"held on {shown}, a class no file of the run builds or imports"
        return None

    def _built_here(self, cls: str, seen: set[str]) -> bool:
        """Code of the file builds the file's class ``cls``, or a subclass of it of the file."""
        seen.add(cls)
        return any(func == cls for func, _ in self.model_calls) or any(
            self._built_here(name, seen)
            for name, (bases, _) in self.classes.items()
            if name not in seen and any(written == cls for _, written in bases)
        )

    def _data_parallel_classes(self) -> None:
        """The file's DataParallel subclasses, and the constructions of those (of this file or
        of another module of the project) that scatter the inputs themselves: without CUDA,
        DataParallel keeps no devices and calls the wrapped module directly, so that
        ``scatter`` (which moved the batches to the GPUs) never runs."""
        part = self.part
        for name in self.classes:
            if (scatters := self._data_parallel_class(name, set())) is not None:
                part.data_parallel_classes[name] = scatters
        project = self.walk.analysis(ProjectAnalysis)
        for func, call in self.model_calls:
            if func in self.classes:
                if part.data_parallel_classes.get(func):
                    part.scattering_wraps[call] = (func, None)
            elif (found := project.origin(func)) is not None and found.summary is not None and found.name:
                if found.summary.data_parallel_class(found.name):
                    part.scattering_wraps[call] = (func, found.summary.path)

    def _data_parallel_class(self, name: str, seen: set[str]) -> bool | None:
        """Whether the file's class ``name``, a DataParallel subclass, or a base of the project
        defines ``scatter``; None: it does not derive from DataParallel."""
        if name in seen or name not in self.classes:
            return None
        seen.add(name)
        bases, scatters = self.classes[name]
        found: list[bool] = []
        for qualified, written in bases:
            if qualified in DATA_PARALLEL:
                found.append(False)
            elif written in self.classes:
                if (inherited := self._data_parallel_class(written, seen)) is not None:
                    found.append(inherited)
            elif (origin := self.walk.analysis(ProjectAnalysis).origin(written)) is not None and origin.summary:
                if (inherited := origin.summary.data_parallel_class(origin.name)) is not None:
                    found.append(inherited)
        return scatters or any(found) if found else None

    def _ddp_inputs(self) -> None:
        """Tensors made on the CPU and given straight to a DDP model: DDP(device_ids=...)
        moved them to the GPU; without device_ids they stay where they are."""
        if not any(dropped for dropped, _ in self.part.ddp_calls.values()):
            return
        for func, call in self.model_calls:
            if func not in self.ddp_names:
                continue
            for arg in call.args:
                value = arg.value
                if (
                    type(value) is cst.Call
                    and self.walk.resolve(value.func) in FACTORIES
                    and "device" not in call_args(value)[1]
                ):
                    self.part.ddp_inputs.add(value)

    def _gradient_reduces(self) -> None:
        """Without DDP, mixed-precision steps (``scaler.step``) do not all-reduce the
        gradients (xm.optimizer_step would): the seed's ``xm.all_reduce`` follows backward."""
        if self.part.ddp or not self.facts.amp.active:
            return
        scalers = self.facts.amp.scaler_names
        for statement, backward, scaler, optimizer in self.backward_candidates:
            if scaler not in scalers:
                continue
            if optimizer is None:
                self.part.unreduced_backwards.add(backward)
            else:
                self.part.gradient_reduces[statement] = optimizer


def _wrapped(call: cst.Call) -> cst.BaseExpression | None:
    return arg_value(call, 0, "module")


def _bound_names(statement: cst.SimpleStatementLine | None) -> set[str]:
    """The name chains the statement's assignment binds (``nets = {"g": DataParallel(g)}``)."""
    if statement is None or not statement.body:
        return set()
    small = statement.body[0]
    if type(small) is cst.Assign:
        return {name for target in small.targets if (name := dotted(target.target)) is not None}
    if type(small) is cst.AnnAssign:
        return {name} if (name := dotted(small.target)) is not None else set()
    return set()


def _handed_values(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The values an expression hands on whole: a name chain, a call (and the arguments of a
    call, the receiver of a move: ``model.to(device)``), the container a part is taken from,
    and the parts of a display or an expression holding them; not what ``model.module`` or
    ``model.parameters()`` reads off one."""
    if isinstance(node, cst.BaseExpression):
        if dotted(node) is not None:
            return [node]
        if type(node) is cst.Call:
            moved = receiver(node) if method_name(node) in _MOVES else None
            return [node, *(_handed_values(moved) if moved is not None else ()), *_handed_values_in(node.args)]
        if type(node) is cst.Subscript:
            return _handed_values(node.value)
        if type(node) in (cst.Attribute, cst.Lambda):
            return []
    return _handed_values_in(node.children)


def _handed_values_in(nodes: Sequence[cst.CSTNode]) -> list[cst.BaseExpression]:
    return [value for node in nodes for value in _handed_values(node)]


def _scaled_backward(statement: cst.SimpleStatementLine) -> cst.Call | None:
    """``scaler.scale(loss).backward()`` as a statement of its own."""
    call = lone_call(statement)
    if call is None or method_name(call) != "backward":
        return None
    inner = receiver(call)
    if type(inner) is cst.Call and method_name(inner) == "scale" and dotted(receiver(inner)) is not None:
        return call
    return None
