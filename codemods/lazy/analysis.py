"""Lazy mode: what makes XLA execute or compile more than one graph per step.

torch_xla records tensor operations and runs them as one compiled graph at each step
barrier.  Two things break that:

* **host reads** (``loss.item()``, ``print(loss)``, ``float(t)``, ``if loss > best:``)
  run the pending graph right there, an extra execution per step;
* **recompilation sources** make each step a *different* graph: a device tensor sliced
  with the loop's Python offset (the offset is baked into the graph), a per-step Python
  number used as a shape or static argument (``x.view(n, -1)``, ``torch.arange(n)``),
  operations whose output shape depends on the data (``nonzero``, ``masked_select``,
  boolean masks, ``unique``), a short last batch.  Plain arithmetic with Python numbers
  (``loss * scale``, a learning rate) is not one: torch_xla 2.x passes such scalars as
  device data (only 0 and 1 are specialised), measured in the executed tests.

An evaluation loop that reads a value every iteration needs no barrier, unless it
carries device state across iterations (an RNN's hidden state): the read materializes
only what it reads, and the carried graph keeps growing.

Which names hold device tensors is a flow-insensitive approximation per function (and
for the module): names assigned from moves to a device, model and loss calls, device
loaders' batches, ``backward()`` receivers, results of same-file functions that return
device values, and anything computed from those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from codemods.device.analysis import is_device_name
from codemods.engine.nodes import (
    arg_value,
    call_args,
    children,
    dotted,
    method_name,
    names_in,
    receiver,
    string_value,
    walk,
)
from codemods.engine.walk import Analysis, Walk
from codemods.targets import XM, spellings
from codemods.training.analysis import is_device_loader

# Reading a value to the host: explicit methods, and builtins that convert a tensor.
READ_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
READ_BUILTINS = frozenset({"float", "int", "bool", "str"})
# Methods and attributes that read a tensor's metadata, not its values.
METADATA_METHODS = frozenset({"size", "dim", "numel", "nelement", "element_size", "is_floating_point", "is_contiguous",
                              "get_device", "type", "ndimension", "stride", "storage_offset"})
METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_leaf", "is_cuda", "layout",
                                 "names"})
TENSOR_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "real", "imag", "values", "indices"})
NOT_TENSORS = frozenset({"parameters", "named_parameters", "state_dict", "modules", "children", "buffers",
                         "named_buffers", "zero_grad", "train", "eval", "backward", "step", "keys", "items"})

# Logging calls: the statement only reports values, so it can run later, at the barrier.
LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})
PROGRESS_METHODS = frozenset({"set_postfix", "set_postfix_str", "set_description", "set_description_str"})
WRITER_METHODS = frozenset({"add_scalar", "add_scalars", "add_histogram", "add_text", "log_metrics", "log_metric"})
LOGGING_FUNCTIONS = frozenset({"wandb.log", "mlflow.log_metric", "mlflow.log_metrics", "tqdm.tqdm.write", "tqdm.write",
                               f"{XM}.master_print"})
ACCUMULATING_METHODS = frozenset({"append", "extend", "add", "update"})

# Operations whose output shape depends on the values of their input.
DYNAMIC_SHAPE_METHODS = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere"})
DYNAMIC_SHAPE_FUNCTIONS = frozenset(f"torch.{m}" for m in DYNAMIC_SHAPE_METHODS)
# Operations whose integer arguments are compiled into the graph (shapes, offsets,
# counts, exponents): a Python number that changes every step makes every step a new graph.
STATIC_ARGUMENT_METHODS = frozenset({"view", "reshape", "expand", "repeat", "narrow", "roll", "topk", "kthvalue",
                                     "unfold", "new_zeros", "new_ones", "new_empty", "new_full", "split", "chunk",
                                     "tile", "pow", "select"})
STATIC_ARGUMENT_FUNCTIONS = frozenset(f"torch.{f}" for f in ("arange", "zeros", "ones", "empty", "full", "rand", "randn",
                                                             "randint", "linspace", "eye", "roll", "narrow", "topk"))
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

ReadKind = Literal["logging", "control", "accumulation", "value"]


@dataclass(frozen=True)
class HostRead:
    """A read of a device value to the host inside a training loop."""

    kind: ReadKind
    # What the closure receives instead (evaluated now): the receiver of ``t.item()``,
    # or the device expression itself for ``print(t)``, ``f"{t}"``, ``float(t)``.
    value: cst.BaseExpression


@dataclass(frozen=True)
class StepClosure:
    """A logging statement to run in ``xm.add_step_closure``: its reads, in order."""

    reads: tuple[cst.CSTNode, ...]
    loop: cst.CSTNode
    blocked: str | None = None  # why it cannot be moved (None: it can)


@dataclass(frozen=True)
class SlicedData:
    """A device tensor sliced with a per-step Python integer."""

    name: str
    varying: bool  # the slice changes every step (the others only move with their data)
    device: cst.BaseExpression | None  # fix: slice on the host, then move to this device
    reason: str = ""  # why it is not fixed


@dataclass
class LazyFacts:
    host_reads: dict[cst.CSTNode, HostRead] = field(default_factory=dict)
    # Implicit reads: tests on a device value (``if loss < best:``, ``while t.sum() > 0``).
    device_tests: set[cst.CSTNode] = field(default_factory=set)
    # Logging statements (cst.Expr) whose reads move into a step closure.
    step_closures: dict[cst.Expr, StepClosure] = field(default_factory=dict)
    # Subscripts of device-resident data with a per-step index (and, where the data is
    # kept on the host instead, every other subscript of it), and the moves that made
    # it device-resident: ``x.to(device)`` -> ``x``.
    sliced_data: dict[cst.Subscript, SlicedData] = field(default_factory=dict)
    host_data_moves: dict[cst.Call, str] = field(default_factory=dict)
    # Per-step Python numbers in shapes and static arguments: node -> the number's name.
    static_arguments: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Data-dependent output shapes: node -> the operation.
    dynamic_shapes: dict[cst.CSTNode, str] = field(default_factory=dict)
    # DataLoaders that feed a training loop and keep a short last batch.
    short_last_batch: set[cst.Call] = field(default_factory=set)
    # Evaluation loops that carry device state across iterations: loop -> the names.
    carried_state: dict[cst.CSTNode, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class _Scope:
    """A function (or the module): its names and what flows through them."""

    node: cst.FunctionDef | None
    params: list[str] = field(default_factory=list)
    locals: set[str] = field(default_factory=set)
    globals: set[str] = field(default_factory=set)
    # (target names, value, enclosing loops, augmented)
    assignments: list[tuple[tuple[str, ...], cst.BaseExpression, tuple[cst.CSTNode, ...], bool]] = field(default_factory=list)
    returns: list[cst.BaseExpression] = field(default_factory=list)
    returns_device: bool = False  # one of ``returns`` is a device value (settled in _device_names)
    device: set[str] = field(default_factory=set)
    host: set[str] = field(default_factory=set)
    varying: set[str] = field(default_factory=set)
    masks: set[str] = field(default_factory=set)
    is_forward: bool = False


@dataclass
class _Site:
    """A node of interest and where it is."""

    node: cst.CSTNode
    scope: _Scope
    loops: tuple[cst.CSTNode, ...]
    statement: cst.BaseSmallStatement | None = None
    in_test: bool = False
    nested: bool = False  # inside a comprehension
    in_lambda: bool = False  # runs when the lambda is called, not here
    order: int = 0
    conditional: bool = False


@dataclass
class _Origin:
    """Where a tensor became device-resident: ``name`` holds it, ``moves`` put it there."""

    name: str
    moves: list[cst.Call]
    device: cst.BaseExpression
    scope: _Scope  # where ``device`` is evaluated


class _Groups:
    """Names that hold the same data (an origin and the parameters it is passed to),
    joined with union-find; keys are (id of the scope, name)."""

    def __init__(self, origins: dict[tuple[int, str], _Origin]) -> None:
        self.origins = origins
        self.parent: dict[tuple[int, str], tuple[int, str]] = {key: key for key in origins}

    def find(self, key: tuple[int, str]) -> tuple[int, str] | None:
        if key not in self.parent:
            return None
        while self.parent[key] != key:
            key = self.parent[key]
        return key

    def join(self, source: tuple[int, str], member: tuple[int, str]) -> bool:
        """``member`` receives ``source``'s data; True if that is news."""
        root = self.find(source)
        if root is None:
            return False
        if member not in self.parent:
            self.parent[member] = root
            return True
        other = self.find(member)
        if other != root:
            self.parent[other] = root  # type: ignore[index]
            return True
        return False

    def origins_of(self, root: tuple[int, str]) -> list[_Origin]:
        return [origin for key, origin in self.origins.items() if self.find(key) == root]


class LazyAnalysis(Analysis):
    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.lazy
        self.module_scope = _Scope(None)
        self.scopes: dict[int, _Scope] = {}
        self.functions: dict[str, list[_Scope]] = {}  # by name (methods too)
        self.calls: list[_Site] = []
        self.subscripts: list[_Site] = []
        self.powers: list[_Site] = []
        self.implicit: list[_Site] = []  # f-string parts and print/logging arguments
        self.tests: list[_Site] = []
        self.names: list[tuple[cst.Name, _Scope]] = []  # every name read, and its scope
        self.loops: dict[cst.CSTNode, _Site] = {}
        self.barriers: list[_Site] = []
        self.ignored_names: set[int] = set()  # attribute names, keywords, stores...
        self.safe_uses: set[int] = set()  # names used only for slicing or metadata
        self.passed: dict[int, tuple[cst.Call, int | str]] = {}  # name -> (call, param position or keyword)
        self.store_subscripts: set[int] = set()
        self.test_nodes: set[int] = set()
        self.small: cst.BaseSmallStatement | None = None
        self.value_names: dict[int, tuple[str, ...]] = {}
        self.bound: dict[int, list[tuple[_Scope, str, cst.BaseExpression]]] = {}  # _params_for, by call id
        self.mentioned: dict[int, set[str] | None] = {}  # _mentioned, by expression id
        self.device_values: dict[tuple[int, int], bool] | None = None  # is_device, once device names are final
        self.nested = 0
        self.lambdas = 0
        self.order = 0
        self._loaders: set[str] | None = None  # names bound to device loaders (_from_device_loader)
        self._place_at = -1  # the walk's moves when _place was found
        self._place: tuple[_Scope, tuple[cst.CSTNode, ...], bool] = (self.module_scope, (), False)

    # -- where the walk is ------------------------------------------------------------

    @property
    def scope(self) -> _Scope:
        function = self.walk.enclosing_function
        return self.scopes[id(function)] if function is not None else self.module_scope

    def _loops(self) -> tuple[cst.CSTNode, ...]:
        loops: list[cst.CSTNode] = []
        for loop in reversed(self.walk.loops):
            if loop is None:
                if self.walk.function is not None:  # a def, not a lambda: its loops stop here
                    break
                continue
            loops.append(loop)
        return tuple(reversed(loops))

    def _where(self) -> tuple[_Scope, tuple[cst.CSTNode, ...], bool]:
        """The scope, the loops and whether in a condition within the innermost loop."""
        if self._place_at != self.walk.moves:  # most sites share their place with the one before
            self._place_at = self.walk.moves
            self._place = (self.scope, self._loops(), self.walk.conditional_in_loop)
        return self._place

    def _site(self, node: cst.CSTNode) -> _Site:
        self.order += 1
        scope, loops, conditional = self._where()
        return _Site(node, scope, loops, self.small, id(node) in self.test_nodes, self.nested > 0,
                     self.lambdas > 0, self.order, conditional)

    # -- walk: scopes and names ----------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = _Scope(node, is_forward=node.name.value == "forward" and self.walk.class_depth > 0)
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.params.append(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                scope.locals.add(star.name.value)
        scope.locals.update(scope.params)
        if scope.is_forward:
            scope.device.update(p for p in scope.params if p != "self")
        self.scopes[id(node)] = scope
        self.functions.setdefault(node.name.value, []).append(scope)
        self.ignored_names.add(id(node.name))
        self.small = None

    def visit_Param(self, node: cst.Param) -> None:
        self.ignored_names.add(id(node.name))

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.globals.update(n.name.value for n in node.names)

    visit_Nonlocal = visit_Global

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.ignored_names.add(id(node.attr))
        if node.attr.value in METADATA_ATTRIBUTES and type(node.value) is cst.Name:
            self.safe_uses.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.ignored_names.add(id(node.keyword))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.ignored_names.add(id(node.name))
        self.small = None

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.ignored_names:
            self.names.append((node, self._where()[0]))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.ignored_names.update(id(n) for n in walk(node.target) if type(n) is cst.Name)

    def _nest(self, node: cst.CSTNode) -> None:
        self.nested += 1

    def _unnest(self, node: cst.CSTNode) -> None:
        self.nested -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _nest
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _unnest

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas -= 1

    # -- walk: statements ----------------------------------------------------------------

    def _small(self, node: cst.BaseSmallStatement) -> None:
        self.small = node

    def _end_small(self, node: cst.BaseSmallStatement) -> None:
        self.small = None

    visit_Expr = visit_Del = _small
    leave_Expr = leave_Return = leave_Del = leave_Assign = leave_AugAssign = leave_AnnAssign = leave_Assert = _end_small

    def _assign(self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None, augmented: bool) -> None:
        names: list[str] = []
        for target in targets:
            for element in _unpack(target):
                if type(element) is cst.Subscript:
                    self.store_subscripts.add(id(element))
                name = dotted(element)
                if name is not None:
                    names.append(name)
                    if "." not in name:
                        self.scope.locals.add(name)
                    if type(element) is cst.Name and not augmented:
                        self.ignored_names.add(id(element))
        if value is not None:
            self.scope.assignments.append((tuple(names), value, self._loops(), augmented))

    def visit_Assign(self, node: cst.Assign) -> None:
        self.small = node
        self._assign([t.target for t in node.targets], node.value, False)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.small = node
        self._assign([node.target], node.value, False)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.small = node
        self._assign([node.target], node.value, True)

    def visit_Assert(self, node: cst.Assert) -> None:
        self.small = node
        self._test(node.test)

    def visit_Return(self, node: cst.Return) -> None:
        self.small = node
        if node.value is not None and self.walk.enclosing_function is not None:
            self.scope.returns.append(node.value)

    def _test(self, test: cst.BaseExpression) -> None:
        self.test_nodes.update(id(n) for n in walk(test))
        self.tests.append(self._site(test))

    def visit_If(self, node: cst.If) -> None:
        self.small = None
        self._test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self.small = None
        self.loops[node] = self._site(node)
        self._test(node.test)

    def visit_For(self, node: cst.For) -> None:
        self.small = None
        self.loops[node] = self._site(node)
        self._assign([node.target], None, False)

    def visit_With(self, node: cst.With) -> None:
        self.small = None
        for item in node.items:
            if item.asname is not None:
                self._assign([item.asname.name], None, False)

    def visit_Try(self, node: cst.Try) -> None:
        self.small = None

    # -- walk: operations -----------------------------------------------------------------

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if type(node.value) is cst.Name:
            self.safe_uses.add(id(node.value))
        self.subscripts.append(self._site(node))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Power:
            self.powers.append(self._site(node))

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.implicit.append(self._site(node.expression))

    def visit_Call(self, node: cst.Call) -> None:
        site = self._site(node)
        self.calls.append(site)
        method = method_name(node)
        func = dotted(node.func)
        if method in METADATA_METHODS and isinstance(receiver(node), cst.Name):
            self.safe_uses.add(id(receiver(node)))
        if func == "len" and node.args and type(node.args[0].value) is cst.Name:
            self.safe_uses.add(id(node.args[0].value))
        for position, arg in enumerate(node.args):
            if type(arg.value) is cst.Name and not arg.star:
                self.passed[id(arg.value)] = (node, arg.keyword.value if arg.keyword else position)
        if self._is_logging(node):
            for arg in node.args:
                if type(arg.value) not in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
                    self.implicit.append(self._site(arg.value))
        callee = self.walk.resolve(node.func)
        if self.walk.loop is not None and (
            callee in spellings("sync") or (callee == f"{XM}.optimizer_step" and _is_true(arg_value(node, 1, "barrier")))
        ):
            self.barriers.append(site)

    def _is_logging(self, call: cst.Call) -> bool:
        func = call.func
        if type(func) is cst.Name:
            return func.value == "print" and self.walk.resolve(func) is None
        if self.walk.resolve(func) in LOGGING_FUNCTIONS:
            return True
        method = method_name(call) or ""
        owner = (dotted(receiver(call)) or "").rsplit(".", 1)[-1].lower()
        return (
            (method in LOGGER_METHODS and "log" in owner)
            or (method == "print" and "accelerator" in owner)
            or method in PROGRESS_METHODS
            or method in WRITER_METHODS
            or (method == "write" and any(w in owner for w in ("tqdm", "bar")))
        )

    # -- results ------------------------------------------------------------------------------

    def finish(self) -> None:
        self._device_names()
        self.device_values = {}
        reads = self._host_reads()
        self._varying(reads)
        self._sliced_data()
        self._static_arguments()
        self._dynamic_shapes()
        self._short_last_batches()
        self._carried_state(reads)

    def _callees(self, call: cst.Call) -> list[_Scope]:
        func = dotted(call.func) or ""
        if func in self.functions:
            return self.functions[func]
        if func.startswith("self.") and func.count(".") == 1:
            return self.functions.get(func[5:], [])
        return []

    def _params_for(self, call: cst.Call) -> list[tuple[_Scope, str, cst.BaseExpression]]:
        """(callee scope, parameter, argument) for a call of one of the file's functions
        (asked after the walk, when every function is known: kept, as the fixed-point
        loops ask again and again)."""
        bound = self.bound.get(id(call))
        if bound is None:
            bound = self.bound[id(call)] = self._bind(call)
        return bound

    def _bind(self, call: cst.Call) -> list[tuple[_Scope, str, cst.BaseExpression]]:
        bound: list[tuple[_Scope, str, cst.BaseExpression]] = []
        method = (dotted(call.func) or "").startswith("self.")
        for callee in self._callees(call):
            params = callee.params[1:] if method and callee.params[:1] == ["self"] else callee.params
            positional = [a for a in call.args if a.keyword is None and not a.star]
            for index, arg in enumerate(positional):
                if index < len(params):
                    bound.append((callee, params[index], arg.value))
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in params:
                    bound.append((callee, arg.keyword.value, arg.value))
        return bound

    def _owner(self, scope: _Scope, name: str) -> _Scope:
        """The scope a name (its root) belongs to, seen from ``scope``."""
        root = name.split(".")[0]
        if scope.node is None or (root in scope.locals and root not in scope.globals) or root == "self":
            return scope
        return self.module_scope

    # -- device values -----------------------------------------------------------------

    def is_device(self, scope: _Scope, node: cst.CSTNode | None) -> bool:
        """Does ``node`` evaluate to a device tensor?  (Once the device names are all
        known, the answers are kept.)"""
        if node is None:
            return False
        known = self.device_values
        if known is not None:
            key = (id(scope), id(node))
            answer = known.get(key)
            if answer is None:
                answer = known[key] = self._is_device(scope, node)
            return answer
        return self._is_device(scope, node)

    def _is_device(self, scope: _Scope, node: cst.CSTNode) -> bool:
        name = dotted(node)
        if name is not None:
            if name in self._owner(scope, name).device:
                return True
            if type(node) is cst.Attribute and node.attr.value in TENSOR_ATTRIBUTES:
                return self.is_device(scope, node.value)
            return False
        if type(node) is cst.Attribute:  # (x.max(-1)).values
            return node.attr.value in TENSOR_ATTRIBUTES and self.is_device(scope, node.value)
        if type(node) is cst.Call:
            return self._call_is_device(scope, node)
        if type(node) is cst.Subscript:
            return self.is_device(scope, node.value)
        if type(node) is cst.BinaryOperation:
            return self.is_device(scope, node.left) or self.is_device(scope, node.right)
        if type(node) is cst.UnaryOperation:
            return self.is_device(scope, node.expression)
        if type(node) is cst.Comparison:
            return not _is_identity_test(node) and any(
                self.is_device(scope, e) for e in (node.left, *(c.comparator for c in node.comparisons))
            )
        if type(node) in (cst.Tuple, cst.List):
            return any(self.is_device(scope, e.value) for e in node.elements)  # type: ignore[attr-defined]
        return False

    def _call_is_device(self, scope: _Scope, call: cst.Call) -> bool:
        method = method_name(call)
        func = dotted(call.func)
        if method in READ_METHODS or method in METADATA_METHODS or method in NOT_TENSORS:
            return False
        if type(call.func) is cst.Name and call.func.value in (*READ_BUILTINS, "len", "isinstance", "range", "print"):
            return False
        if method in ("to", "cuda"):
            return method == "cuda" or _names_a_device(arg_value(call, 0, "device"), self.walk) or self.is_device(
                scope, receiver(call)
            )
        callees = self._callees(call)
        if callees:  # the file's own function: what it returns, as settled so far (a flag,
            # not a question about its returns: those may call it again)
            return any(c.returns_device for c in callees)
        if func is not None and self._is_model(func):
            return True
        keywords = call_args(call)[1]
        if "device" in keywords and _names_a_device(keywords["device"].value, self.walk):
            return True
        if type(call.func) is cst.Attribute and self.is_device(scope, call.func.value):
            return True
        # torch operations on device tensors give device tensors; what a function of
        # another module returns is not known (it may take a model and return a number).
        callee = self.walk.resolve(call.func) or ""
        return callee.startswith("torch.") and any(self.is_device(scope, a.value) for a in call.args)

    def _is_model(self, func: str) -> bool:
        models = self.facts.training.models
        last = func.rsplit(".", 1)[-1].lower()
        return func in models or last in ("model", "net", "module") or "criterion" in last or "loss" in last

    def _device_names(self) -> None:
        scopes = [self.module_scope, *self.scopes.values()]
        for site in self.loops.values():
            node = site.node
            if type(node) is cst.For and self._from_device_loader(node):
                counters = set(_counters(node))
                for element in _unpack(node.target):
                    if (name := dotted(element)) is not None and name not in counters:
                        site.scope.device.add(name)
        for site in self.calls:
            call = site.node
            assert type(call) is cst.Call
            if method_name(call) == "backward" and (name := dotted(receiver(call))) is not None:
                if not name.endswith("accelerator"):
                    self._owner(site.scope, name).device.add(name)
        # Device sets only grow here, and is_device reads nothing else that changes: what
        # was found a device value stays one, and is not asked again; what was not is asked
        # again only once a device name it mentions has been added since (or, if it calls
        # one of the file's functions, whose returns may have become device values, always).
        found: set[tuple[int, int]] = set()  # (scope, value) by ids
        clock = 0
        added_at: dict[str, int] = {}  # a part of a device name -> when such a name was last added
        asked_at: dict[tuple[int, int], int] = {}  # (scope, value) by ids -> when last asked

        def add(scope: _Scope, name: str) -> None:
            nonlocal clock
            if name not in scope.device:
                scope.device.add(name)
                clock += 1
                for part in name.split("."):
                    added_at[part] = clock

        def ask(scope: _Scope, value: cst.CSTNode) -> bool:
            key = (id(scope), id(value))
            if key in found:
                return True
            last = asked_at.get(key)
            if last is not None:
                mentioned = self._mentioned(value)
                if mentioned is not None and all(added_at.get(n, 0) <= last for n in mentioned):
                    return False  # nothing it reads became a device value since
            asked_at[key] = clock
            if self.is_device(scope, value):
                found.add(key)
                return True
            return False

        passed = [(site, self._params_for(site.node)) for site in self.calls]  # type: ignore[arg-type]
        functions = [scope for scope in scopes if scope.returns]
        while True:  # to a fixed point: each round that goes on adds a name or a flag (finite sets)
            before = clock
            for scope in functions:
                if not scope.returns_device and any(ask(scope, r) for r in scope.returns):
                    scope.returns_device = True
                    clock += 1
            for scope in scopes:
                for targets, value, _, _ in scope.assignments:
                    if ask(scope, value):
                        for target in targets:
                            add(self._owner(scope, target), target)
                    elif _reads(value):
                        scope.host.update(targets)
            for site, bound in passed:
                for callee, param, arg in bound:
                    if ask(site.scope, arg):
                        add(callee, param)
            if clock == before:
                break
        models = self.facts.training.models
        for scope in scopes:
            scope.device -= scope.host | models  # a module moved to the device is not a tensor

    def _mentioned(self, value: cst.CSTNode) -> set[str] | None:
        """The names whose device values can make ``value`` one (``_value_names``: each
        device name starts with one of them); None if it calls one of the file's functions,
        whose returns may change (kept per expression: the fixed point asks again and again)."""
        key = id(value)
        if key not in self.mentioned:
            calls_own = any(type(node) is cst.Call and self._callees(node) for node in walk(value))
            self.mentioned[key] = None if calls_own else set(self._value_names(value))
        return self.mentioned[key]

    def _from_device_loader(self, loop: cst.For) -> bool:
        if self._loaders is None:  # found once: the assignments are all known when the walk is over
            self._loaders = {
                name
                for scope in [self.module_scope, *self.scopes.values()]
                for targets, value, _, _ in scope.assignments
                if type(value) is cst.Call and is_device_loader(value, self.walk.resolve(value.func))
                for name in targets
            }
        loaders = self._loaders
        return any(
            (type(sub) is cst.Call and is_device_loader(sub, self.walk.resolve(sub.func))) or dotted(sub) in loaders
            for sub in walk(loop.iter)
        )

    # -- host reads ----------------------------------------------------------------------

    def _host_reads(self) -> dict[cst.CSTNode, _Site]:
        """Every read of a device value to the host (in any loop), by node."""
        reads: dict[cst.CSTNode, _Site] = {}
        values: dict[cst.CSTNode, cst.BaseExpression] = {}
        for site in self.calls:
            call = site.node
            assert type(call) is cst.Call
            method = method_name(call)
            target = receiver(call)
            if method in READ_METHODS and target is not None:
                if type(target) is cst.Call and method_name(target) in READ_METHODS:
                    continue  # t.cpu().numpy(): the read is the .cpu()
                known_host = (dotted(target) or "") in self._owner(site.scope, dotted(target) or "x").host
                device = self.is_device(site.scope, target)
                if device or (method in ("item", "tolist") and not known_host):
                    reads[call], values[call] = site, target
            elif (
                type(call.func) is cst.Name
                and call.func.value in READ_BUILTINS
                and self.walk.resolve(call.func) is None
                and len(call.args) == 1
                and self.is_device(site.scope, call.args[0].value)
            ):
                reads[call], values[call] = site, call.args[0].value
        for site in self.implicit:
            if self.is_device(site.scope, site.node) and not _reads(site.node):
                reads[site.node], values[site.node] = site, site.node  # type: ignore[assignment]
        training = self.facts.training.all_loops
        reads = {node: site for node, site in reads.items() if not site.in_lambda}
        for node, site in reads.items():
            loop = next((each for each in reversed(site.loops) if each in training), None)
            if loop is None:
                continue
            kind = self._kind(site)
            self.part.host_reads[node] = HostRead(kind, values[node])
            if kind == "logging":
                self._step_closure(site, node, loop)
        for site in self.tests:
            if any(each in training for each in site.loops) and self._tests_device_value(site.scope, site.node):  # type: ignore[arg-type]
                self.part.device_tests.add(site.node)
        return reads

    def _kind(self, site: _Site) -> ReadKind:
        statement = site.statement
        if site.in_test:
            return "control"
        if type(statement) is cst.AugAssign:
            return "accumulation"
        if type(statement) is cst.Expr and type(statement.value) is cst.Call:
            call = statement.value
            if self._is_logging(call):
                return "logging"
            if method_name(call) in ACCUMULATING_METHODS:
                return "accumulation"
        return "value"

    def _step_closure(self, site: _Site, read: cst.CSTNode, loop: cst.CSTNode) -> None:
        statement = site.statement
        assert type(statement) is cst.Expr
        previous = self.part.step_closures.get(statement)
        reason = previous.blocked if previous else None
        if site.nested:
            reason = "it reads inside a comprehension"
        elif any(type(n) is cst.FormattedStringExpression and n.equal is not None for n in walk(statement)):
            reason = "an f-string `=` prints the expression's own text"
        elif self.facts.huggingface.accelerators:
            reason = "this Accelerate script stays free of torch_xla calls"
        elif self.facts.lightning.drives_training:
            reason = "Lightning places the step barriers of this loop"
        elif loop not in self.facts.training.loops and (barriers := [b for b in self.barriers if loop in b.loops]):
            if not any(b.order > site.order and b.loops[-1] is loop and not b.conditional for b in barriers):
                reason = "no step barrier follows it in the iteration"
        reads = (*previous.reads, read) if previous else (read,)
        self.part.step_closures[statement] = StepClosure(reads, loop, reason)

    def _tests_device_value(self, scope: _Scope, test: cst.BaseExpression) -> bool:
        """A test whose truth value comes from a device tensor (``if loss < best:``,
        ``while t.sum() > 0``): Python calls bool() on it, which reads it."""
        if type(test) is cst.BooleanOperation:
            return self._tests_device_value(scope, test.left) or self._tests_device_value(scope, test.right)
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self._tests_device_value(scope, test.expression)
        return self.is_device(scope, test)

    # -- per-step Python integers ---------------------------------------------------------

    def _varying(self, reads: dict[cst.CSTNode, _Site]) -> None:
        """Python integers that change every step: counters of loops that run a graph per
        iteration (training loops, and loops that read a value each iteration), what is
        computed from them, and parameters that receive them."""
        stepping = set(self.facts.training.all_loops) | set(self.facts.training.loops)
        stepping.update(site.loops[-1] for site in reads.values() if site.loops)
        for site in self.loops.values():
            if site.node in stepping and type(site.node) is cst.For:
                site.scope.varying.update(_counters(site.node))
        scopes = [self.module_scope, *self.scopes.values()]
        for scope in scopes:
            for targets, value, loops, augmented in scope.assignments:
                if augmented and any(each in stepping for each in loops) and not self.is_device(scope, value):
                    scope.varying.update(targets)
        for _ in range(6):
            before = sum(len(s.varying) for s in scopes)
            for scope in scopes:
                for targets, value, _, augmented in scope.assignments:
                    if not augmented and self._varying_in(scope, value) and not self.is_device(scope, value):
                        scope.varying.update(t for t in targets if "." not in t)
            for site in self.calls:
                if not site.loops and site.scope.node is None:
                    continue
                for callee, param, arg in self._params_for(site.node):  # type: ignore[arg-type]
                    if self._varying_in(site.scope, arg) and not self.is_device(site.scope, arg):
                        callee.varying.add(param)
            if sum(len(s.varying) for s in scopes) == before:
                break

    def _varying_in(self, scope: _Scope, node: cst.CSTNode) -> str | None:
        """The per-step name an index or argument uses (``len(x)`` is not one)."""
        return next((n for n in self._value_names(node) if n in self._owner(scope, n).varying), None)

    def _value_names(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The names an expression reads, outside ``len()`` and attribute names; cached,
        as the fixed-point loops ask again and again (walking LibCST children is slow)."""
        names = self.value_names.get(id(node))
        if names is None:
            found: list[str] = []
            stack = [node]
            while stack:
                current = stack.pop()
                if type(current) is cst.Call and dotted(current.func) == "len":
                    continue
                if type(current) is cst.Attribute:
                    stack.append(current.value)
                elif type(current) is cst.Name:
                    found.append(current.value)
                else:
                    stack.extend(children(current))
            names = self.value_names[id(node)] = tuple(found)
        return names

    # -- recompilation sources ----------------------------------------------------------------

    def _sliced_data(self) -> None:
        """Device-resident data sliced with a per-step integer.  Fixed where the file
        builds the data: it stays on the host and each slice moves to the device."""
        origins = self._data_origins()
        groups = _Groups(origins)
        for _ in range(6):  # parameters that receive the data join its group
            grew = False
            for site in self.calls:
                for callee, param, arg in self._params_for(site.node):  # type: ignore[arg-type]
                    name = dotted(arg)
                    if type(arg) is cst.Name and name is not None:
                        grew = groups.join((id(self._owner(site.scope, name)), name), (id(callee), param)) or grew
            if not grew:
                break
        problems: dict[tuple[int, str], str] = {}
        for node, scope in self.names if origins else ():  # every use: a slice, metadata, or a hand-over
            name = node.value
            key = groups.find((id(self._owner(scope, name)), name))
            if key is None or id(node) in self.safe_uses:
                continue
            passed = self.passed.get(id(node))
            if passed is not None and any(
                groups.find((id(c), p)) == key for c, p, a in self._params_for(passed[0]) if a is node
            ):
                continue
            problems.setdefault(key, f"`{name}` is also used whole, on the device")
        sliced: dict[tuple[int, str], list[tuple[_Site, str | None]]] = {}
        for site in self.subscripts:
            subscript = site.node
            assert type(subscript) is cst.Subscript
            name = dotted(subscript.value)
            if type(subscript.value) is not cst.Name or name is None:
                continue
            varying = self._varying_in(site.scope, subscript.slice[0]) if subscript.slice else None
            key = groups.find((id(self._owner(site.scope, name)), name))
            if key is None:
                if varying and not site.scope.is_forward and self.is_device(site.scope, subscript.value):
                    self.part.sliced_data[subscript] = SlicedData(name, True, None, "the data is not built in this file")
                continue
            sliced.setdefault(key, []).append((site, varying))
            if id(subscript) in self.store_subscripts:
                problems.setdefault(key, f"`{name}` is written to")
        for key, sites in sliced.items():
            if not any(varying for _, varying in sites):
                continue
            members = groups.origins_of(key)
            device = members[0].device
            problem = problems.get(key) or self._device_problem(members, [site for site, _ in sites])
            for site, varying in sites:
                self.part.sliced_data[site.node] = SlicedData(  # type: ignore[index]
                    site.node.value.value, bool(varying), None if problem else device, problem or ""  # type: ignore[attr-defined]
                )
            if problem is None:
                names = ", ".join(sorted({origin.name for origin in members}))
                for origin in members:
                    for move in origin.moves:
                        self.part.host_data_moves[move] = names

    @staticmethod
    def _device_problem(origins: list[_Origin], sites: list[_Site]) -> str | None:
        """Why the device the data went to cannot name each slice's device (None: it can)."""
        codes = {dotted(o.device) for o in origins}
        if len(codes) != 1 or None in codes:
            return "its device is not one plain name"
        root = codes.pop().split(".")[0]  # type: ignore[union-attr]
        for origin in origins:
            for site in sites:
                if site.scope is origin.scope:
                    continue
                if root in site.scope.locals or (origin.scope.node is not None and root in origin.scope.locals):
                    return f"`{root}` is not visible where the data is sliced"
        return None

    def _data_origins(self) -> dict[tuple[int, str], _Origin]:
        """Tensors moved to the device once, outside loops: ``x = data.to(device)``, or
        ``x = batchify(...)`` where every return of ``batchify`` is ``data.to(device)``."""
        returns_moved: dict[str, tuple[list[cst.Call], _Scope]] = {}
        for name, scopes in self.functions.items():
            scope = scopes[0]
            if len(scopes) == 1 and scope.returns and all(self._is_data_move(scope, r) for r in scope.returns):
                returns_moved[name] = (scope.returns, scope)  # type: ignore[assignment]
        assigned: dict[tuple[int, str], int] = {}
        for scope in [self.module_scope, *self.scopes.values()]:
            for targets, _, _, _ in scope.assignments:
                for target in targets:
                    assigned[(id(scope), target)] = assigned.get((id(scope), target), 0) + 1
        origins: dict[tuple[int, str], _Origin] = {}
        for scope in [self.module_scope, *self.scopes.values()]:
            for targets, value, loops, augmented in scope.assignments:
                key = (id(scope), targets[0]) if len(targets) == 1 else None
                if key is None or loops or augmented or "." in targets[0] or assigned[key] != 1:
                    continue  # a name assigned more than once is not one tensor
                if self._is_data_move(scope, value):
                    origins[key] = _Origin(targets[0], [value], arg_value(value, 0, "device"), scope)  # type: ignore[arg-type,list-item]
                elif type(value) is cst.Call and (dotted(value.func) or "") in returns_moved:
                    moves, function_scope = returns_moved[dotted(value.func)]  # type: ignore[index]
                    origins[key] = _Origin(targets[0], moves, arg_value(moves[0], 0, "device"), function_scope)  # type: ignore[arg-type]
        return origins

    def _is_data_move(self, scope: _Scope, value: cst.BaseExpression) -> bool:
        """``tensor.to(device)``: not a module, a dtype cast, or a chain of other calls."""
        if type(value) is not cst.Call or method_name(value) != "to" or len(value.args) != 1:
            return False
        source = receiver(value)
        if source is None or (dotted(source) or "") in self.facts.training.models:
            return False
        if type(source) is cst.Call and (self.walk.resolve(source.func) or "").startswith("torch.nn."):
            return False
        return _names_a_device(arg_value(value, 0, "device"), self.walk)

    def _static_arguments(self) -> None:
        for site in self.calls:
            call = site.node
            assert type(call) is cst.Call
            method = method_name(call)
            callee = self.walk.resolve(call.func)
            if method in STATIC_ARGUMENT_METHODS and self.is_device(site.scope, receiver(call)):
                arguments = [a.value for a in call.args]
            elif callee in STATIC_ARGUMENT_FUNCTIONS and self._call_is_device(site.scope, call):
                arguments = [a.value for a in call.args if a.keyword is None or a.keyword.value not in ("device", "dtype")]
            else:
                continue
            for argument in arguments:
                if self.is_device(site.scope, argument):
                    continue
                if (name := self._varying_in(site.scope, argument)) is not None:
                    self.part.static_arguments[call] = name
                    break
        for site in self.powers:
            power = site.node
            assert type(power) is cst.BinaryOperation
            if self.is_device(site.scope, power.left) and not self.is_device(site.scope, power.right):
                if (name := self._varying_in(site.scope, power.right)) is not None:
                    self.part.static_arguments[power] = name

    def _dynamic_shapes(self) -> None:
        for scope in [self.module_scope, *self.scopes.values()]:
            for targets, value, _, _ in scope.assignments:
                if _is_mask(value, scope.masks) and self.is_device(scope, value):
                    scope.masks.update(targets)
        for site in self.calls:
            call = site.node
            assert type(call) is cst.Call
            if not (site.loops or site.scope.is_forward):
                continue
            method = method_name(call)
            callee = self.walk.resolve(call.func)
            if method in DYNAMIC_SHAPE_METHODS and self.is_device(site.scope, receiver(call)):
                self.part.dynamic_shapes[call] = f".{method}()"
            elif callee in DYNAMIC_SHAPE_FUNCTIONS and call.args and self.is_device(site.scope, call.args[0].value):
                self.part.dynamic_shapes[call] = f"{callee}()"
            elif callee == "torch.where" and len(call.args) == 1 and self.is_device(site.scope, call.args[0].value):
                self.part.dynamic_shapes[call] = "torch.where(condition)"
        for site in self.subscripts:
            subscript = site.node
            assert type(subscript) is cst.Subscript
            if not (site.loops or site.scope.is_forward) or id(subscript) in self.store_subscripts:
                continue
            if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Index:
                continue
            index = subscript.slice[0].slice.value
            masks = self._owner(site.scope, dotted(index) or "x").masks
            is_mask = (dotted(index) in masks) or (_is_mask(index, masks) and self.is_device(site.scope, index))
            if is_mask and self.is_device(site.scope, subscript.value):
                self.part.dynamic_shapes[subscript] = "boolean-mask indexing"

    def _short_last_batches(self) -> None:
        loaders: dict[str, list[cst.Call]] = {}
        for scope in [self.module_scope, *self.scopes.values()]:
            for targets, value, _, _ in scope.assignments:
                if type(value) is cst.Call and self.walk.resolve(value.func) in DATA_LOADERS:
                    for target in targets:
                        loaders.setdefault(target, []).append(value)
        for loop in self.facts.training.all_loops:
            if type(loop) is not cst.For:
                continue
            source: cst.BaseExpression = loop.iter
            while type(source) is cst.Call and source.args and self.walk.resolve(source.func) not in DATA_LOADERS:
                source = source.args[0].value  # enumerate(...), tqdm(...), MpDeviceLoader(...)
            calls = [source] if type(source) is cst.Call else loaders.get(dotted(source) or "", [])
            for call in calls:
                keywords = call_args(call)[1]
                drop = keywords.get("drop_last")
                if "batch_sampler" in keywords or (drop is not None and not _is_false(drop.value)):
                    continue
                batch = keywords.get("batch_size")
                if batch is not None and (batch.value.value if type(batch.value) is cst.Integer else "") == "1":
                    continue
                self.part.short_last_batch.add(call)

    def _carried_state(self, reads: dict[cst.CSTNode, _Site]) -> None:
        reading_loops = {site.loops[-1] for site in reads.values() if site.loops and not site.conditional}
        training = self.facts.training
        barriered = {each for barrier in self.barriers for each in barrier.loops}
        for loop in reading_loops:
            if loop in training.all_loops or loop in training.loops or loop in barriered:
                continue
            if type(loop) is cst.For and self._from_device_loader(loop):
                continue
            scope = self.loops[loop].scope
            rebound = set(names_in(loop.target)) if type(loop) is cst.For else set()
            carried: list[str] = []
            for targets, value, loops, _ in scope.assignments:  # in order: the first assignment decides
                if not loops or loops[-1] is not loop:
                    continue
                used = set(names_in(value))
                for target in targets:
                    if target in rebound:
                        continue
                    rebound.add(target)
                    if target in used and target in self._owner(scope, target).device:
                        carried.append(target)
            if carried:
                self.part.carried_state[loop] = tuple(carried)


def _unpack(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(target) in (cst.Tuple, cst.List):
        return [e for element in target.elements for e in _unpack(element.value)]  # type: ignore[attr-defined]
    if type(target) is cst.StarredElement:
        return _unpack(target.value)
    return [target]


def _counters(loop: cst.For) -> list[str]:
    """The integer loop variables: ``for i in range(...)``, ``for i, x in enumerate(...)``."""
    iterator, target = loop.iter, loop.target
    if type(iterator) is not cst.Call:
        return []
    func = dotted(iterator.func)
    if func == "range":
        return [n for n in names_in(target)]
    if func == "enumerate" and type(target) is cst.Tuple and len(target.elements) == 2:
        counters = [n for n in names_in(target.elements[0].value)]
        inner = iterator.args[0].value if iterator.args else None
        if type(inner) is cst.Call and dotted(inner.func) == "range":
            counters.extend(names_in(target.elements[1].value))
        return counters
    return []


def _reads(node: cst.CSTNode) -> bool:
    """The expression's value comes from a host read (``loss.item()``, ``float(t)``)."""
    if type(node) is cst.Call:
        if method_name(node) in READ_METHODS:
            return True
        return type(node.func) is cst.Name and node.func.value in READ_BUILTINS
    return False


def _names_a_device(node: cst.CSTNode | None, walk_: Walk) -> bool:
    if node is None:
        return False
    name = dotted(node)
    if name is not None:
        return is_device_name(name)
    text = string_value(node)
    if text is not None:
        return text.split(":")[0] in ("cuda", "xla")
    return type(node) is cst.Call and (walk_.resolve(node.func) in spellings("device") or (
        walk_.resolve(node.func) == "torch.device"
    ))


def _is_identity_test(node: cst.Comparison) -> bool:
    """``x is None``, ``k in d``: Python-level tests, not tensor comparisons."""
    return any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in node.comparisons)


def _is_mask(node: cst.BaseExpression, masks: set[str]) -> bool:
    if type(node) is cst.Comparison:
        return not _is_identity_test(node)
    if type(node) is cst.Call and method_name(node) == "bool":
        return True
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.BitInvert:
        return _is_mask(node.expression, masks) or dotted(node.expression) in masks
    if type(node) is cst.BinaryOperation and type(node.operator) in (cst.BitAnd, cst.BitOr):
        return any(_is_mask(side, masks) or dotted(side) in masks for side in (node.left, node.right))
    return False


def _is_true(node: cst.CSTNode | None) -> bool:
    return type(node) is cst.Name and node.value == "True"


def _is_false(node: cst.CSTNode | None) -> bool:
    return type(node) is cst.Name and node.value == "False"
