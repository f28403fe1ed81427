"""Analyse: one read-only walk over the parsed script builds its fact sheet.

The fact sheet answers every question the rewrites ask (is this name an optimizer?
is this loop a training loop? may this ``use_cuda`` flag be switched on?), keyed by
the nodes of the parsed module: the rewrite runs as a single traversal over the same
tree, so every rewrite sees the original nodes these facts point at.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from codemods import apis
from codemods.imports import ImportTable
from codemods.syntax import (
    arg_value,
    call_args,
    dotted,
    fold_true,
    is_cuda_device_string,
    mentions,
    method_name,
    names_in,
    parse_dotted,
    receiver,
    string_value,
    walk,
)
from codemods.targets import XM, spellings

CUDA = "<cuda>"  # the device of a `.cuda()` move
# torch.save's keywords, and xm.save's names for them.
XLA_SAVE_KEYWORDS = {"obj": "data", "f": "file_or_path"}


@dataclass(frozen=True)
class OptimizerStep:
    """``optimizer.step(...)`` on a known optimizer, as xm.optimizer_step will take it."""

    optimizer: str
    closure_index: int | None = None  # which argument is the closure (LBFGS)
    other_arguments: bool = False  # arguments xm.optimizer_step cannot pass on: not mapped


@dataclass
class LoopPlan:
    """What a loop needs: a barrier at the end of each iteration, or its loader wrapped."""

    kind: Literal["training", "evaluation"]
    wrap_loader: cst.BaseExpression | None = None
    wrap_device: str | None = None


@dataclass
class Facts:
    imports: ImportTable = field(default_factory=ImportTable)
    # Every name the file binds or uses: new import aliases must not collide with them.
    taken_names: set[str] = field(default_factory=set)
    # torch_xla imported inside try/if: the file keeps a non-XLA path, so the tool
    # may not add top-level torch_xla imports or move code onto the XLA device.
    xla_optional: bool = False
    import_anchor: cst.CSTNode | None = None
    # Ifs and conditional expressions that branch on XLA (or TPU) availability: their
    # code already handles XLA and is left exactly as written.
    xla_guarded: set[cst.CSTNode] = field(default_factory=set)

    # device
    # "cuda", "cuda:1", f"cuda:{rank}" where a device goes (.to(), device=, a device
    # variable, --device defaults): they become "xla".
    device_strings: set[cst.CSTNode] = field(default_factory=set)
    # torch.device("cuda", ...) and torch.accelerator.current_accelerator(): replaced whole.
    device_calls: set[cst.Call] = field(default_factory=set)
    # `x if torch.cuda.is_available() else y` that picks a device: folded to x.
    device_selections: set[cst.IfExp] = field(default_factory=set)
    # `if torch.cuda.is_available():` around device code: the check is dropped.
    device_ifs: set[cst.If] = field(default_factory=set)
    # Values of flags like `use_cuda = ... and torch.cuda.is_available()` that pick the
    # device (the check is dropped), and flags that may not be switched on (they also
    # guard code that fails without CUDA; the value is that code).
    flag_values: dict[cst.BaseExpression, str] = field(default_factory=dict)
    blocked_flags: dict[cst.BaseExpression, tuple[str, cst.CSTNode]] = field(default_factory=dict)
    # Names used as CUDA device numbers (.cuda(gpu), set_device(gpu), device_ids=[gpu]).
    cuda_indices: set[str] = field(default_factory=set)
    # `device = 0` literals that serve as devices.
    int_devices: set[cst.Integer] = field(default_factory=set)
    # device = get_device() with get_device from another file of the project.
    external_devices: dict[cst.Call, str] = field(default_factory=dict)
    # Calls that hand an optimizer to a function of another file of the project (the
    # training step lives there and is converted with that file).
    external_training: dict[cst.Call, str] = field(default_factory=dict)
    # Availability checks the device rewrites do not consume: they stay, False on XLA.
    kept_availability_checks: set[cst.Call] = field(default_factory=set)

    # training objects
    optimizers: set[str] = field(default_factory=set)
    schedulers: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)
    loops: dict[cst.CSTNode, LoopPlan] = field(default_factory=dict)
    # Functions passed as ``optimizer.step(closure)``: each call is a training step.
    closures: set[cst.FunctionDef] = field(default_factory=set)
    # ``model.parameters()`` calls that build an optimizer while the model is still on
    # the CPU and is moved to the device later: moving a module to XLA replaces its
    # Parameter objects, so such an optimizer would update stale CPU copies.  The value:
    # the model, and whether it may simply be moved first (the device it goes to is the
    # XLA device on every path).
    optimizer_before_move: dict[cst.Call, tuple[str, bool]] = field(default_factory=dict)

    # optimizer.step() calls to rewrite (none under DistributedDataParallel, which already
    # all-reduces), and zero-argument .step() calls in training loops on something the
    # analysis cannot tell is an optimizer.
    optimizer_steps: dict[cst.Call, OptimizerStep] = field(default_factory=dict)
    unrecognized_steps: set[cst.Call] = field(default_factory=set)
    # torch.load map_location values that name a CUDA or XLA device: XLA cannot restore
    # storages onto its device, so they load on the CPU (load_state_dict copies them over).
    map_locations: set[cst.BaseExpression] = field(default_factory=set)
    # map_location values that mention CUDA in a shape the tool does not rewrite (dicts).
    unported_map_locations: set[cst.BaseExpression] = field(default_factory=set)
    # torch.save calls: None when xm.save can take its arguments, else why not.
    saves: dict[cst.Call, str | None] = field(default_factory=dict)
    # torch.save calls that save a whole module object rather than its state_dict().
    whole_module_saves: set[cst.Call] = field(default_factory=set)

    # DistributedDataParallel is used: it all-reduces gradients itself.
    ddp: bool = False

    def is_optimizer(self, name: str | None) -> bool:
        if name is None or name in self.schedulers:
            return False
        last = name.rsplit(".", 1)[-1].lower()
        return name in self.optimizers or ("optim" in last and "sched" not in last)

    def is_available_call(self, node: cst.BaseExpression) -> bool:
        return (
            isinstance(node, cst.Call)
            and not node.args
            and self.imports.resolve(node.func) in apis.AVAILABILITY_CHECKS
        )

    def is_device_name(self, name: str | None) -> bool:
        if name is None:
            return False
        last = name.rsplit(".", 1)[-1].lower()
        return ("device" in last or last == "dev") and not last.endswith(("type", "name", "count", "ids"))


@dataclass
class _Loop:
    node: cst.CSTNode
    backward: bool = False
    step_receivers: list[str] = field(default_factory=list)
    called: list[str] = field(default_factory=list)
    barrier: bool = False
    host_read: bool = False
    cond_depth: int = 0
    moved: dict[str, str] = field(default_factory=dict)


@dataclass
class _Scope:
    """A function body or the module's top level: what happens to models there, in order."""

    # ("model", name, constructor, moved_at_creation) | ("move", name, device) | ("optimizer", name, node)
    events: list[tuple[object, ...]] = field(default_factory=list)


@dataclass
class _Function(_Scope):
    name: str = ""
    node: cst.FunctionDef | None = None
    backward: bool = False
    step_receivers: list[str] = field(default_factory=list)


def _local_module(module: str) -> bool:
    head = module.split(".")[0]
    return bool(head) and head not in sys.stdlib_module_names and not head.startswith("torch")


class _Analyzer(cst.CSTVisitor):
    def __init__(self, facts: Facts) -> None:
        self.f = facts
        self.loops: list[_Loop | None] = []
        self.loop_records: list[_Loop] = []
        self.functions: list[_Function | None] = []
        self.function_records: list[_Function] = []
        self.conds: list[cst.CSTNode] = []
        self.device_code: set[cst.CSTNode] = set()
        self.crash_code: dict[cst.CSTNode, cst.CSTNode] = {}
        self.cond_refs: dict[cst.CSTNode, set[str]] = {}
        self.flag_candidates: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.availability_ifs: list[cst.If] = []
        self.availability_ifexps: list[cst.IfExp] = []
        self.availability_calls: list[cst.Call] = []
        self.device_assignments: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.int_assignments: dict[str, list[cst.Integer]] = defaultdict(list)
        self.device_args: set[str] = set()
        self.model_candidates: list[tuple[str, str]] = []
        self.module_classes: set[str] = set()
        self.local_imports: dict[str, str] = {}
        self.called_funcs: set[cst.CSTNode] = set()
        self.device_loaders: set[str] = set()
        self.guard_depth = 0
        self.class_depth = 0
        self.module_scope = _Scope()
        self.closure_names: set[str] = set()
        self.moves: list[tuple[str, str | None]] = []  # (what, to which device) across the file
        self.save_candidates: list[tuple[cst.Call, str | None]] = []
        self.load_locations: list[cst.BaseExpression] = []
        self.cuda_string_names: set[str] = set()  # loc = "cuda:{}".format(gpu)
        self.step_candidates: list[tuple[cst.Call, OptimizerStep, _Loop | None]] = []
        self.external_calls: list[tuple[cst.Call, str]] = []
        self.ddp_references: list[cst.CSTNode] = []

    # -- helpers --------------------------------------------------------------

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks are used: skip LibCST's lookup of them."""

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks are used: skip LibCST's lookup of them."""

    def resolve(self, node: cst.CSTNode | None) -> str | None:
        return self.f.imports.resolve(node)

    def mark_device_code(self) -> None:
        self.device_code.update(self.conds)

    def mark_crash(self, node: cst.CSTNode) -> None:
        for cond in self.conds:
            self.crash_code.setdefault(cond, node)

    def add_device_strings(self, expr: cst.CSTNode | None) -> None:
        """Collect the CUDA strings of an expression in a device position."""
        if expr is None:
            return
        if is_cuda_device_string(expr):
            self.f.device_strings.add(expr)
            self.mark_device_code()
        elif isinstance(expr, cst.IfExp):
            self.add_device_strings(expr.body)
            self.add_device_strings(expr.orelse)
        elif isinstance(expr, cst.BooleanOperation):
            self.add_device_strings(expr.left)
            self.add_device_strings(expr.right)

    @property
    def loop(self) -> _Loop | None:
        return self.loops[-1] if self.loops else None

    @property
    def function(self) -> _Function | None:
        return self.functions[-1] if self.functions else None

    @property
    def scope(self) -> _Scope:
        return next((f for f in reversed(self.functions) if f is not None), self.module_scope)

    # -- imports and names ----------------------------------------------------

    def _visit_import(self, node: cst.Import | cst.ImportFrom) -> bool:
        module_level = not self.functions and not self.class_depth
        self.f.imports.add(node, module_level)
        if not isinstance(node, cst.ImportFrom) or not isinstance(node.names, cst.ImportStar):
            self.f.taken_names.update(alias.evaluated_alias or alias.evaluated_name.split(".")[0] for alias in node.names)
        if isinstance(node, cst.Import):
            modules = [dotted(alias.name) or "" for alias in node.names]
        else:
            modules = [dotted(node.module) or ""] if node.module is not None else []
            if not isinstance(node.names, cst.ImportStar):
                module = "." * len(node.relative) + (modules[0] if modules else "")
                for alias in node.names:
                    local = alias.evaluated_alias or alias.evaluated_name
                    if node.relative or _local_module(module):
                        self.local_imports[local] = f"{module}.{alias.evaluated_name}".replace("..", ".")
        if self.guard_depth and any(m == "torch_xla" or m.startswith("torch_xla.") for m in modules):
            self.f.xla_optional = True
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return self._visit_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return self._visit_import(node)

    def visit_Name(self, node: cst.Name) -> None:
        self.f.taken_names.add(node.value)

    def visit_Try(self, node: cst.Try) -> None:
        self.guard_depth += 1

    def leave_Try(self, original_node: cst.Try) -> None:
        self.guard_depth -= 1

    # -- definitions ----------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        record = _Function(name=node.name.value, node=node)
        self.functions.append(record)
        self.function_records.append(record)
        self.loops.append(None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()
        self.loops.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.functions.append(None)
        self.loops.append(None)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.functions.pop()
        self.loops.pop()

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_depth += 1
        for base in node.bases:
            if self.resolve(base.value) in apis.MODULE_BASES or dotted(base.value) in self.module_classes:
                self.module_classes.add(node.name.value)

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None and self.f.is_device_name(node.name.value):
            self.add_device_strings(node.default)

    # -- assignments ----------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assignment(dotted(target.target), node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assignment(dotted(node.target), node.value)

    def _assignment(self, name: str | None, value: cst.BaseExpression) -> None:
        if name is None:
            return
        if self.f.is_device_name(name):
            self.device_assignments[name].append(value)
            self.add_device_strings(value)
            self.mark_device_code()
        elif mentions(value, self.f.is_available_call):
            self.flag_candidates[name].append(value)
        if isinstance(value, cst.Integer):
            self.int_assignments[name].append(value)
        if is_cuda_device_string(value):
            self.cuda_string_names.add(name)
        core = value
        moved = False
        while isinstance(core, cst.Call) and method_name(core) in ("to", "cuda", "float", "double", "train", "eval"):
            moved = moved or method_name(core) in ("to", "cuda")
            core = receiver(core)
        if isinstance(core, cst.Call) and (constructor := dotted(core.func)) is not None:
            self.scope.events.append(("model", name, constructor, moved))
        if isinstance(core, cst.Call):
            callee = self.resolve(core.func)
            if _is_device_loader(core, callee):
                self.device_loaders.add(name)
            if callee is not None:
                if callee.startswith(apis.SCHEDULER_MODULE + "."):
                    self.f.schedulers.add(name)
                elif callee.startswith(apis.OPTIMIZER_MODULE + ".") and callee.rsplit(".", 1)[-1][:1].isupper():
                    self.f.optimizers.add(name)
                elif callee.startswith("torch.nn.") and callee.rsplit(".", 1)[-1][:1].isupper():
                    self.f.models.add(name)
            func_name = dotted(core.func)
            if func_name is not None:
                self.model_candidates.append((name, func_name))
                head, _, rest = func_name.partition(".")
                if head in self.local_imports and self.f.is_device_name(name):
                    self.f.external_devices[core] = self.local_imports[head] + (f".{rest}" if rest else "")

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = string_value(node.key)
        if key is not None and self.f.is_device_name(key):
            self.add_device_strings(node.value)

    # -- conditionals ---------------------------------------------------------

    def _refs(self, test: cst.BaseExpression) -> set[str]:
        return {d for n in walk(test) if (d := dotted(n)) is not None}

    def visit_If(self, node: cst.If) -> None:
        if _tests_for_xla(node.test):
            self.f.xla_guarded.add(node)
        self.guard_depth += 1
        self.conds.append(node)
        self.cond_refs[node] = self._refs(node.test)
        if mentions(node.test, self.f.is_available_call):
            self.availability_ifs.append(node)
        if self.loop is not None:
            self.loop.cond_depth += 1

    def leave_If(self, original_node: cst.If) -> None:
        self.guard_depth -= 1
        self.conds.pop()
        if self.loop is not None:
            self.loop.cond_depth -= 1

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if _tests_for_xla(node.test):
            self.f.xla_guarded.add(node)
        self.conds.append(node)
        self.cond_refs[node] = self._refs(node.test)
        if mentions(node.test, self.f.is_available_call):
            self.availability_ifexps.append(node)
        if _is_cpu_device(node.body, self) or _is_cpu_device(node.orelse, self):
            self.device_code.add(node)

    def leave_IfExp(self, original_node: cst.IfExp) -> None:
        self.conds.pop()

    # -- loops ----------------------------------------------------------------

    def _visit_loop(self, node: cst.CSTNode) -> None:
        record = _Loop(node)
        self.loops.append(record)
        self.loop_records.append(record)

    def visit_For(self, node: cst.For) -> None:
        self._visit_loop(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self._visit_loop(node)

    def leave_While(self, original_node: cst.While) -> None:
        self.loops.pop()

    # -- calls and references -------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        qualified = self.resolve(node)
        if qualified is None:
            return
        self._reference(qualified, node)

    def _reference(self, qualified: str, node: cst.CSTNode) -> None:
        if qualified == apis.DDP:
            self.ddp_references.append(node)
        elif qualified in apis.CUDA_TENSOR_TYPES and node not in self.called_funcs:
            self.mark_device_code()
            self.mark_crash(node)
        elif (api := apis.CUDA_RUNTIME.get(qualified)) is not None and api.crashes_without_cuda:
            self.mark_crash(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.called_funcs.add(node.func)
        callee = self.resolve(node.func)
        if self.f.is_available_call(node):
            self.availability_calls.append(node)
        method = method_name(node)
        loop, function = self.loop, self.function
        if isinstance(node.func, cst.Name) and callee is not None:
            self._reference(callee, node.func)

        if method == "backward" or callee == "torch.autograd.backward":
            if loop is not None:
                loop.backward = True
            elif function is not None:
                function.backward = True
        elif method == "step" and dotted(receiver(node)) is not None:
            self._step(node, dotted(receiver(node)) or "", loop, function)
        if loop is not None:
            if callee in spellings("sync") or (
                callee == f"{XM}.optimizer_step" and _is_true(arg_value(node, 1, "barrier"))
            ):
                loop.barrier = True
            if loop.cond_depth == 0 and (
                method in apis.HOST_READ_METHODS
                or (isinstance(node.func, cst.Name) and node.func.value in apis.HOST_READ_BUILTINS and callee is None)
            ):
                loop.host_read = True
            func_name = dotted(node.func)
            if func_name is not None:
                loop.called.append(func_name.removeprefix("self."))

        func_name = dotted(node.func)
        if func_name is not None and (head := func_name.partition(".")[0]) in self.local_imports:
            rest = func_name.partition(".")[2]
            self.external_calls.append((node, self.local_imports[head] + (f".{rest}" if rest else "")))
        if method in ("to", "cuda") and (moved_name := dotted(receiver(node))) is not None:
            target = CUDA if method == "cuda" else dotted(arg_value(node, 0, "device"))
            self.scope.events.append(("move", moved_name, target))
            self.moves.append((moved_name, target))
        if callee is not None and callee.startswith(apis.OPTIMIZER_MODULE + ".") and callee.rsplit(".", 1)[-1][:1].isupper():
            params = arg_value(node, 0, "params")
            for sub in walk(params) if params is not None else ():
                if isinstance(sub, cst.Call) and method_name(sub) == "parameters" and dotted(receiver(sub)):
                    self.scope.events.append(("optimizer", dotted(receiver(sub)), sub))
        if method == "to":
            device = arg_value(node, 0, "device")
            self.add_device_strings(device)
            if (name := dotted(device)) is not None:
                self.device_args.add(name)
                if loop is not None and (moved := dotted(receiver(node))) is not None:
                    loop.moved[moved] = name
        elif method == "cuda":
            self.mark_device_code()
            index = arg_value(node, 0, "device")
            if (name := dotted(index)) is not None:
                self.f.cuda_indices.add(name)
            if loop is not None and (moved := dotted(receiver(node))) is not None:
                loop.moved[moved] = CUDA
        elif method == "pin_memory":
            self.mark_crash(node)
        elif method == "add_argument":  # parser.add_argument('--device', default='cuda')
            flag = string_value(arg_value(node, 0, "name_or_flags")) or ""
            default = call_args(node)[1].get("default")
            if default is not None and self.f.is_device_name(flag.lstrip("-")):
                self.add_device_strings(default.value)

        positional, keywords = call_args(node)
        if "device" in keywords and method != "to":
            self.add_device_strings(keywords["device"].value)
            if (name := dotted(keywords["device"].value)) is not None:
                self.device_args.add(name)
        if "device_ids" in keywords and isinstance(keywords["device_ids"].value, (cst.List, cst.Tuple)):
            for element in keywords["device_ids"].value.elements:
                if (name := dotted(element.value)) is not None:
                    self.f.cuda_indices.add(name)

        if callee == "torch.save":
            self._save(node)
        elif callee == "torch.load" and (location := arg_value(node, 1, "map_location")) is not None:
            self.load_locations.append(location)
            if self._names_a_device(location):
                self.mark_device_code()  # becomes "cpu": worth running on XLA
        if callee == "torch.cuda.synchronize" and not node.args:
            self.mark_device_code()  # becomes xm.wait_device_ops(): worth running on XLA
        if callee == "torch.cuda.set_device":
            if (name := dotted(arg_value(node, 0, "device"))) is not None:
                self.f.cuda_indices.add(name)
        elif callee == "torch.device":
            self._torch_device(node)
        elif callee in apis.CUDA_TENSOR_TYPES:
            self.mark_device_code()
        elif callee == "torch.accelerator.current_accelerator" and not node.args:
            self.f.device_calls.add(node)
            self.mark_device_code()

    def _step(self, node: cst.Call, name: str, loop: _Loop | None, function: _Function | None) -> None:
        target = loop if loop is not None else function
        if target is not None:
            target.step_receivers.append(name)
        closure_index = next(
            (i for i, a in enumerate(node.args) if (a.keyword is None and i == 0) or (a.keyword and a.keyword.value == "closure")),
            None,
        )
        if closure_index is not None and isinstance(node.args[closure_index].value, cst.Name):
            self.closure_names.add(node.args[closure_index].value.value)  # type: ignore[attr-defined]
        step = OptimizerStep(name, closure_index, len(node.args) > (closure_index is not None))
        self.step_candidates.append((node, step, loop))

    def _save(self, node: cst.Call) -> None:
        positional, keywords = call_args(node)
        unknown = sorted(set(keywords) - set(XLA_SAVE_KEYWORDS))
        if any(a.star for a in node.args):
            self.f.saves[node] = "its arguments are unpacked"
        elif unknown:
            self.f.saves[node] = f"xm.save takes no {', '.join(unknown)}"
        else:
            self.f.saves[node] = None
        self.save_candidates.append((node, dotted(arg_value(node, 0, "obj"))))

    def _torch_device(self, node: cst.Call) -> None:
        kind = arg_value(node, 0, "type")
        index = arg_value(node, 1, "index")
        self.add_device_strings(kind)
        if string_value(kind) == "cuda" and (name := dotted(index)) is not None:
            self.f.cuda_indices.add(name)
        if kind is None:
            return
        folded = fold_true(kind, self.f.is_available_call)
        if not isinstance(folded, bool) and is_cuda_device_string(folded):
            self.f.device_calls.add(node)
            self.mark_device_code()

    # -- results --------------------------------------------------------------

    def finish(self) -> None:
        f = self.f
        for name, func_name in self.model_candidates:
            if func_name in self.module_classes:
                f.models.add(name)
        f.whole_module_saves = {call for call, saved in self.save_candidates if saved in f.models}
        step_functions = {
            fn.name
            for fn in self.function_records
            if fn.backward or any(f.is_optimizer(r) for r in fn.step_receivers)
        }
        for loop in self.loop_records:
            self._plan_loop(loop, step_functions)
        for node in self.availability_ifs:
            if node in self.device_code and node not in self.crash_code:
                f.device_ifs.add(node)
        # DistributedDataParallel in a branch the device rewrite removes does not count.
        removed = {id(sub) for branch in self._removed_branches() for sub in walk(branch)}
        f.ddp = any(id(reference) not in removed for reference in self.ddp_references)
        for call, where in self.external_calls:
            if any(f.is_optimizer(dotted(a.value)) for a in call.args):
                f.external_training[call] = where
        for call, step, loop in self.step_candidates:
            if f.is_optimizer(step.optimizer):
                if not f.ddp:
                    f.optimizer_steps[call] = step
            elif not call.args and loop is not None and loop.node in f.loops and not _is_scheduler_name(step.optimizer):
                f.unrecognized_steps.add(call)
        for fn in self.function_records:
            if fn.name in self.closure_names and fn.backward and fn.node is not None:
                f.closures.add(fn.node)
        for scope in [self.module_scope, *self.function_records]:
            self._optimizers_before_moves(scope)
        for name, values in self.flag_candidates.items():
            uses = [node for node, refs in self.cond_refs.items() if name in refs]
            if not any(use in self.device_code for use in uses):
                continue
            blocker = next((self.crash_code[u] for u in uses if u in self.crash_code), None)
            for value in values:
                if blocker is None:
                    f.flag_values[value] = name
                else:
                    f.blocked_flags[value] = (name, blocker)
        for node in self.availability_ifexps:
            if node in self.device_code and node not in self.crash_code:
                f.device_selections.add(node)
        for name, literals in self.int_assignments.items():
            # `device = 0` used as a device; a `rank = 0` keeps being a number (its
            # `.to(rank)` uses are rewritten where they are).
            if f.is_device_name(name) and (name in self.device_args or name in f.cuda_indices):
                f.int_devices.update(literals)
        for location in self.load_locations:
            if self._names_a_device(location):
                f.map_locations.add(location)
            elif any(is_cuda_device_string(n) for n in walk(location)):
                f.unported_map_locations.add(location)
        # A map_location becomes "cpu" whole: the device rewrites leave its parts alone.
        in_locations = {id(sub) for location in f.map_locations for sub in walk(location)}
        f.device_calls = {n for n in f.device_calls if id(n) not in in_locations}
        f.device_selections = {n for n in f.device_selections if id(n) not in in_locations}
        f.device_strings = {n for n in f.device_strings if id(n) not in in_locations}
        # A torch.device("cuda" if ... else "cpu") is replaced whole: not its parts.
        inside_device_calls = {id(sub) for call in f.device_calls for sub in walk(call) if sub is not call}
        f.device_strings = {n for n in f.device_strings if id(n) not in inside_device_calls}
        f.device_selections = {n for n in f.device_selections if id(n) not in inside_device_calls}
        folded: list[cst.CSTNode] = [
            *f.flag_values,
            *f.device_selections,
            *(node.test for node in f.device_ifs),
            *f.device_calls,
            *f.map_locations,
        ]
        consumed = {sub for node in folded for sub in walk(node)}
        f.kept_availability_checks = {call for call in self.availability_calls if call not in consumed}

    def _removed_branches(self) -> list[cst.CSTNode]:
        """The branches of device ifs that can no longer run once the accelerator check
        is folded (True on XLA): the rewrite removes them."""
        branches: list[cst.CSTNode] = []
        for node in self.f.device_ifs:
            folded = fold_true(node.test, self.f.is_available_call)
            branch = node.body if folded is False else node.orelse if folded is True else None
            if branch is not None:
                branches.append(branch)
        return branches

    def _is_model_constructor(self, constructor: str) -> bool:
        qualified = self.resolve(parse_dotted(constructor)) or ""
        return constructor in self.module_classes or (
            qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1][:1].isupper()
        )

    def _is_wrapper(self, constructor: str) -> bool:
        """DataParallel(model) and DDP(model) sit wherever the wrapped model is."""
        return (self.resolve(parse_dotted(constructor)) or "") in apis.DISTRIBUTED

    def _optimizers_before_moves(self, scope: _Scope) -> None:
        on_cpu: set[str] = set()
        for index, (kind, name, *rest) in enumerate(scope.events):
            if kind == "model":
                constructor, moved = rest
                if self._is_wrapper(constructor):  # type: ignore[arg-type]
                    continue
                if self._is_model_constructor(constructor) and not moved:  # type: ignore[arg-type]
                    on_cpu.add(name)  # type: ignore[arg-type]
                else:
                    on_cpu.discard(name)  # type: ignore[arg-type]
            elif kind == "move":
                on_cpu.discard(name)  # type: ignore[arg-type]
            elif kind == "optimizer" and name in on_cpu:
                later = [e[2] for e in scope.events[index + 1 :] if e[0] == "move" and e[1] == name]
                if later:  # moved further down in the same function
                    self.f.optimizer_before_move[rest[0]] = (name, self._xla_on_every_path(later[0]))  # type: ignore[index]
                    continue
                # Moved elsewhere (returned, or handed to a trainer class)?  Only if
                # the file moves some model at all; otherwise it stays on the CPU.
                last = name.rsplit(".", 1)[-1]  # type: ignore[union-attr]
                elsewhere = [
                    device
                    for moved, device in self.moves
                    if moved.rsplit(".", 1)[-1] in (last, "model", "net") or moved in self.f.models
                ]
                if elsewhere:
                    fixable = all(self._xla_on_every_path(d) for d in elsewhere) and self._file_always_xla()
                    self.f.optimizer_before_move[rest[0]] = (name, fixable)  # type: ignore[index]

    def _names_a_device(self, node: cst.BaseExpression) -> bool:
        """A CUDA device in any spelling, or a variable holding a device."""
        if is_cuda_device_string(node) or node in self.f.device_calls:
            return True
        if isinstance(node, cst.IfExp):
            return self._names_a_device(node.body) or self._names_a_device(node.orelse)
        name = dotted(node)
        return name is not None and (self.f.is_device_name(name) or name in self.cuda_string_names)

    def _xla_on_every_path(self, device: str | None) -> bool:
        return device == CUDA or (device is not None and (self._always_xla(device) or self._file_always_xla()))

    def _file_always_xla(self) -> bool:
        """Every device the file picks becomes the XLA device (no CPU fallback), so a
        device that arrives as an argument is the XLA device too."""
        return bool(self.device_assignments) and all(self._always_xla(name) for name in self.device_assignments)

    def _plan_loop(self, loop: _Loop, step_functions: set[str]) -> None:
        f = self.f
        training = (
            loop.backward
            or any(f.is_optimizer(r) for r in loop.step_receivers)
            or any(c in step_functions for c in loop.called)
        )
        if loop.barrier or self._feeds_from_device_loader(loop.node):
            return
        if training:
            plan = LoopPlan("training")
            wrap = self._loader_to_wrap(loop)
            if wrap is not None:
                plan.wrap_loader, plan.wrap_device = wrap
            f.loops[loop.node] = plan
        elif not loop.host_read and any(d == CUDA or f.is_device_name(d) for d in loop.moved.values()):
            f.loops[loop.node] = LoopPlan("evaluation")

    def _feeds_from_device_loader(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.For):
            return False
        return any(
            (isinstance(sub, cst.Call) and _is_device_loader(sub, self.resolve(sub.func)))
            or dotted(sub) in self.device_loaders
            for sub in walk(node.iter)
        )

    def _loader_to_wrap(self, loop: _Loop) -> tuple[cst.BaseExpression, str] | None:
        """The loader of ``for batch in loader`` when MpDeviceLoader can replace the
        loop's own ``.to(device)`` moves: every batch variable is moved to one device
        that is the XLA device on every path (a CPU fallback would break the wrap)."""
        node = loop.node
        if not isinstance(node, cst.For):
            return None
        loader, target = node.iter, node.target
        if isinstance(loader, cst.Call) and dotted(loader.func) == "enumerate" and loader.args:
            loader = loader.args[0].value
            if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
                return None
            target = target.elements[1].value
        name = dotted(loader)
        if name is None or "loader" not in name.rsplit(".", 1)[-1].lower():
            return None
        batch = set(names_in(target))
        devices = {loop.moved.get(b) for b in batch}
        if not batch or len(devices) != 1:
            return None
        device = devices.pop()
        if device is None or not self._always_xla(device):
            return None
        return loader, device

    def _always_xla(self, device: str) -> bool:
        values = self.device_assignments.get(device, [])
        if len(values) != 1:
            return False
        value = fold_true(values[0], self.f.is_available_call)
        if isinstance(value, bool):
            return False
        if isinstance(value, cst.Integer) or (isinstance(value, cst.Call) and value in self.f.device_calls):
            return True
        qualified = self.resolve(value.func) if isinstance(value, cst.Call) else None
        return qualified in spellings("device") or is_cuda_device_string(value)


def _is_device_loader(call: cst.Call, callee: str | None) -> bool:
    """``pl.MpDeviceLoader(...)``, ``pl.ParallelLoader(...).per_device_loader(...)``."""
    return method_name(call) == "per_device_loader" or (
        callee is not None and callee.startswith("torch_xla.distributed.parallel_loader.")
    )


def _tests_for_xla(test: cst.BaseExpression) -> bool:
    """``if HAS_XLA:``, ``if is_torch_xla_available():``, ``if args.tpu:``..."""
    return any("xla" in name.lower() or "tpu" in name.lower() for name in names_in(test))


def _is_scheduler_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1].lower()
    return any(word in last for word in ("sched", "lr", "warmup"))


def _is_true(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_cpu_device(node: cst.CSTNode, analyzer: _Analyzer) -> bool:
    if string_value(node) == "cpu":
        return True
    return (
        isinstance(node, cst.Call)
        and analyzer.resolve(node.func) == "torch.device"
        and string_value(arg_value(node, 0, "type")) == "cpu"
    )


def _import_anchor(module: cst.Module) -> cst.CSTNode | None:
    """The statement after which new imports go: the last torch import of the leading
    import block, else the block's last import, else the docstring."""
    anchor = torch_anchor = None
    for index, statement in enumerate(module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        small = statement.body
        if index == 0 and len(small) == 1 and isinstance(small[0], cst.Expr) and isinstance(
            small[0].value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            anchor = statement
            continue
        if not all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in small):
            break
        anchor = statement
        for s in small:
            names = [dotted(a.name) or "" for a in s.names] if isinstance(s, cst.Import) else [dotted(s.module) or ""]
            if any(n == "torch" or n.startswith("torch.") for n in names):
                torch_anchor = statement
    return torch_anchor or anchor


def analyse(module: cst.Module) -> Facts:
    facts = Facts(import_anchor=_import_anchor(module))
    analyzer = _Analyzer(facts)
    module.visit(analyzer)
    analyzer.finish()
    return facts
