"""CUDA-only settings that the other concerns do not cover: optimizer constructors
that ask for a fused CUDA/CPU kernel (``fused=True``), embeddings with sparse gradients
(``nn.Embedding(..., sparse=True)``) and the optimizer made for them (SparseAdam), and
NCCL or CUDA environment variables set by the script (``os.environ["NCCL_DEBUG"] = "INFO"``);
and the CUDA runtime calls that do not run on XLA as the script stands: under an ``if`` that
a kept ``torch.cuda.is_available()`` (False there) or a command-line switch that is off by
default (``if args.profile:``, a ``store_true`` flag) guards, right of such a test in an
``and``, in the value a conditional expression takes when such a test is true, or after ``if not torch.cuda.is_available(): return`` (or raise)."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis, equivalent_apis
from codemods.cuda_only.class_tests import TESTED_CLASSES, class_tests
from codemods.cuda_only.code_shapes import (
    ANSWERS,
    CPP_EXTENSION_LOADS,
    keyword_set,
    raises,
    requires_cuda,
    runs_as_script,
    sparse_core,
    unavailable_checks,
)
from codemods.cuda_only.count_uses import CountUses
from codemods.cuda_only.cuda_answers import UNKNOWN, CudaAnswers, value_on_xla
from codemods.cuda_only.cuda_dispatch import cuda_only_calls
from codemods.cuda_only.module_reads import ModuleReads
from codemods.cuda_only.resized_buffers import ResizedBuffers
from codemods.cuda_only.rules.runtime_apis import NO_EFFECT
from codemods.cuda_only.rules.runtime_references import passive, set_or_called
from codemods.cuda_only.sparse_tensors import RETURNED, HeldSparse, SparseTensors
from codemods.cuda_only.stored_names import StoredNames
from codemods.distributed.launch import TORCH_SPAWN
from codemods.engine.nodes import (
    arg_value,
    call_args,
    dotted,
    flag_dest,
    is_false,
    is_true,
    method_name,
    names_the_cpu,
    string_value,
    walk,
)
from codemods.engine.positions import code_of
from codemods.engine.walk import Walk
from codemods.project.analysis import ProjectAnalysis
from codemods.project.import_context import outside_project

if TYPE_CHECKING:
    from codemods.cuda_only.facts import SparseEvent
    from codemods.facts import Facts

_ENVIRON = "os.environ"
# Values that may hold a call (a device count): calls and expressions built of them.
_COMPUTED = (cst.Call, cst.IfExp, cst.BinaryOperation, cst.BooleanOperation)
_ENVIRON_SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})

# The checks under which CUDA-only code never runs on XLA: torch's and libraries' (apis.py, equivalent_apis.py).
_GUARDING_CHECKS = apis.AVAILABILITY_CHECKS | equivalent_apis.LIBRARY_AVAILABILITY_CHECKS


class CudaOnlyAnalysis(SparseTensors, ResizedBuffers):
    facts: Facts

    name = "cuda_only"
    reads = ("imports",)
    conclude_reads = ("amp", "device", "device_values", "distributed", "project")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.cuda_only
        # ``n = torch.cuda.device_count()``: the call, by the name and scope it is assigned in.
        self.counts: dict[tuple[str, str], tuple[cst.Call, cst.Assign]] = {}
        self.count_names: set[str] = set()
        self.uses: list[tuple[cst.Name, tuple[str, str]]] = []
        self.not_uses: set[int] = set()  # assignment targets
        # Inside an mp.spawn(...) call (what it hands to the workers) or a print (a log line).
        self.handing = 0
        self.handed: list[bool] = []  # per Call being walked: whether it counts in ``handing``
        # ``if`` statements by the id of their body, and torch.cuda references with the
        # ``if`` statements whose bodies hold them; switches (argparse dests) off by default.
        self.if_bodies: dict[int, cst.If] = {}
        # What else must be true for code to run, by the id of that code: the left operand of
        # ``a and b`` for ``b``; for the statements after ``if not torch.cuda.is_available():
        # return`` (or raise), the check.
        self.required_before: dict[int, cst.BaseExpression] = {}
        self.block_bodies: dict[int, Sequence[cst.BaseStatement]] = {}
        # torch.cuda references with the tests that must be true for them to run, the
        # function they are in and their place in the code (StoredNames).
        self.cuda_references: list[tuple[cst.CSTNode, list[cst.BaseExpression], str, int]] = []
        # Calls under tests (the same shape), which may be of another module's function.
        self.conditional_calls: dict[cst.Call, tuple[list[cst.BaseExpression], str, int]] = {}
        self.name_counts: Counter[str] = Counter()  # how often each name is written in the file
        self.call_functions: dict[cst.Call, str] = {}  # calls in module-level functions: the function
        self.off_switches: set[str] = set()
        # What may bind or move a sparse tensor, in order, decided once the functions returning one are known.
        self.sparse_events: list[SparseEvent] = []
        self.held = HeldSparse()
        self.sparse_returning: set[str] = set()  # functions of this file that return a sparse tensor
        # Embeddings given ``sparse=<a parameter defaulting to False>``: (function, index, parameter).
        self.sparse_parameter_uses: dict[cst.Call, tuple[str, int, str]] = {}
        self.sparse_in_functions: list[tuple[cst.Call, str, bool]] = []
        self.function_calls: dict[str, set[str]] = {}
        self.sparse_made_on: list[tuple[cst.Call, cst.BaseExpression, str]] = []
        self.bindings = self.facts.imports.table.bindings  # every Name is looked up: no attribute chain
        self.module: cst.Module | None = None
        # Names bound to a compiled extension: a relative import of no Python module of the
        # project, or torch.utils.cpp_extension.load(...): how the file gets it.
        self.extensions: dict[str, str] = {}
        # Names bound by relative imports (bound name -> module, name), and the calls in a
        # forward by the first name of their callee: which are extensions is known in conclude.
        self.relative_imports: dict[str, tuple[str, str]] = {}
        self.forward_calls: list[tuple[cst.Call, str]] = []
        # Calls in a forward of what an absolute import binds, outside torch's family, by the
        # callee's qualified name (``pointnet2._ext.ball_query``): which are ops of an extension
        # the project's setup.py builds is known in conclude.
        self.imported_forward_calls: list[tuple[cst.Call, str]] = []
        # A module's own names for a name's attribute (``nms = _C.nms``, ``nms =
        # amp.float_function(_C.nms)``): the attribute, its first name, its qualified name and the
        # name bound; which export an extension's op as a function of the module is known in conclude.
        self.module_bindings: list[tuple[cst.Attribute, str, str | None, str]] = []
        # Calls outside a forward, in a function, of a name's attribute (``ext.op(a, b)``): the call,
        # the first name of its callee, its qualified callee, and the names it is handed; and the
        # names each function binds to a tensor on the device (``out = torch.cuda.FloatTensor(n)``,
        # ``x.cuda()``), by (function, name): which calls run an extension's op on one is known in conclude.
        self.named_calls: list[tuple[cst.Call, str, str | None, tuple[str, ...], str]] = []
        self.device_bound: set[tuple[str, str]] = set()
        self.bound_in: set[tuple[str, str]] = set()
        self.resizes: list[tuple[cst.Call, str, str]] = []
        self.call_scopes: dict[cst.Call, str] = {}
        self.call_targets: dict[int, str] = {}  # ``name = call(...)``: the call's id -> the name
        self.queries: list[tuple[cst.Call, str]] = []  # calls of ANSWERS' APIs, with the API
        self.stored = StoredNames()  # what the names in tests hold there
        self.class_references: list[cst.CSTNode] = []  # to CUDA-only classes (class_tests.py)

    def leave_Assign(self, node: cst.Assign) -> None:
        """After the value's moves: ``adj = adj.coalesce().to(device)`` moves the sparse ``adj``."""
        self.sparse_events.append(self.bind_event(node))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._stores(node.targets[0].target, node.value if len(node.targets) == 1 else None, node)
        if (
            self.walk.enclosing_function is None
            and not self.walk.class_depth
            and len(node.targets) == 1
            and type(bound_name := node.targets[0].target) is cst.Name
        ):
            self._module_binding(node.value, bound_name.value)
        in_function = self.walk.enclosing_function is not None
        if (in_function or not self.walk.class_depth) and len(node.targets) == 1:
            bound = node.targets[0].target
            if type(bound) is cst.Name:
                key = (self.walk.qualname if in_function else "", bound.value)
                self.bound_in.add(key)
                if self._on_the_device(node.value) or self._wraps_device_bound(node.value, key[0]):
                    self.device_bound.add(key)
                else:
                    self.device_bound.discard(key)
        for target in node.targets[1:]:
            self._stores(target.target, None, node)
        if len(node.targets) == 1 and type(node.value) is cst.Call and (name := dotted(node.targets[0].target)):
            self.call_targets[id(node.value)] = name
        for target in node.targets:
            if type(target.target) is cst.Name:
                self.not_uses.add(id(target.target))
            elif self.count_names:
                self.not_uses.update(id(n) for n in walk(target.target) if type(n) is cst.Name)
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name or type(node.value) not in _COMPUTED:
            return
        count = next(
            (
                n
                for n in walk(node.value)
                if type(n) is cst.Call and self.walk.resolve(n.func) == "torch.cuda.device_count"
            ),
            None,
        )
        if count is not None and not self._guarded_by_availability(node.value):
            self.counts[(node.targets[0].target.value, self.walk.qualname)] = (count, node)
            self.count_names.add(node.targets[0].target.value)

    def _module_binding(self, value: cst.BaseExpression, bound: str) -> None:
        """``nms = _C.nms``, or the attribute handed to a wrapper (``amp.float_function(_C.nms)``)."""
        if type(value) is cst.Call:
            value = value.args[0].value if len(value.args) == 1 else value
        if type(value) is cst.Attribute and (head := dotted(value)) is not None and head.count(".") == 1:
            self.module_bindings.append((value, head.split(".")[0], self.walk.resolve(value), bound))

    def _stores(self, target: cst.CSTNode, value: cst.BaseExpression | None, statement: cst.CSTNode) -> None:
        """The names ``statement`` stores in ``target`` (with the value, for a name alone);
        not a class body's (they are attributes)."""
        function = self.walk.enclosing_function
        if function is None and self.walk.class_depth:
            return
        scope = self.walk.qualname if function is not None else ""
        if type(target) is cst.Name:
            parents = self.walk.parents
            block = parents.get(parents.get(id(statement)) or 0)
            decides = value is not None and (
                block == id(self.module) if function is None else parents.get(block or 0) == id(function)
            )
            self.stored.store(scope, target.value, value, decides)
            return
        for name in walk(target):
            if type(name) is cst.Name:
                self.stored.store(scope, name.value, None, False)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stores(node.target, None, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._stores(node.target, node.value, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._stores(node.target, None, node)

    def visit_For(self, node: cst.For) -> None:
        self._stores(node.target, None, node)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._stores(node.target, None, node)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._stores(node.name, None, node)

    def visit_Param(self, node: cst.Param) -> None:
        self._stores(node.name, None, node)

    def _guarded_by_availability(self, value: cst.BaseExpression) -> bool:
        """Under ``if torch.cuda.is_available():`` (False on XLA) the count is never read there."""
        tests = [value, *(cond.test for cond in self.walk.conds)]
        return any(
            isinstance(n, cst.Call) and self.walk.resolve(n.func) in _GUARDING_CHECKS for t in tests for n in walk(t)
        )

    def visit_Module(self, node: cst.Module) -> None:
        self.block_bodies[id(node)] = node.body
        self.module = node

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.block_bodies[id(node)] = node.body

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """``from ._ext import dcn_v2``, ``from . import _C``: a relative import that finds no
        Python module of the project is a compiled extension built in place (a single file
        whose folder is not known finds nothing missing)."""
        if not node.relative or isinstance(node.names, cst.ImportStar):
            return
        module = "." * len(node.relative) + (dotted(node.module) or "")
        for alias in node.names:
            name = dotted(alias.name)
            bound = dotted(alias.asname.name) if alias.asname is not None else name
            if name is not None and bound is not None:
                self.relative_imports[bound] = (module, name)

    def _wraps_device_bound(self, value: cst.BaseExpression, scope: str) -> bool:
        """``Variable(image)`` of a name on the device, or of a move: the same tensor."""
        if type(value) is not cst.Call or self.walk.resolve(value.func) != "torch.autograd.Variable" or not value.args:
            return False
        wrapped = value.args[0].value
        if type(wrapped) is cst.Name:
            return (scope, wrapped.value) in self.device_bound
        return self._on_the_device(wrapped)

    def _on_the_device(self, value: cst.BaseExpression) -> bool:
        """A tensor the port puts on the XLA device: moved there (``x.cuda()``, ``x.to(device)`` but
        the CPU, also in a method chain) or made as a CUDA tensor type (``torch.cuda.FloatTensor(n)``)."""
        core = value
        while type(core) is cst.Call:
            method = method_name(core)
            if method == "cuda" or (method == "to" and not names_the_cpu(arg_value(core, 0, "device"))):
                return method == "cuda" or core.args != ()
            if (self.walk.resolve(core.func) or "").startswith("torch.cuda.") and (dotted(core.func) or "").endswith(
                "Tensor"
            ):
                return True
            if type(core.func) is not cst.Attribute:
                return False
            core = core.func.value
        return False

    def _forward(self) -> str | None:
        """The name of the enclosing ``forward`` or ``backward`` (a model's or an autograd
        Function's), if any."""
        function = self.walk.enclosing_function
        return function.name.value if function is not None and function.name.value in ("forward", "backward") else None

    def visit_If(self, node: cst.If) -> None:
        self.if_bodies[id(node.body)] = node
        if self._forward() is not None and requires_cuda(node.test) and raises(node.body):
            self.part.cuda_only_forwards[node.test] = code_of(node.test)
        check = next((c for c in unavailable_checks(node.test) if self.walk.resolve(c.func) in _GUARDING_CHECKS), None)
        if check is None or node.orelse is not None:
            return
        last = node.body.body[-1] if node.body.body else None
        if not (
            isinstance(last, cst.SimpleStatementLine)
            and (type(last.body[-1]) is cst.Return or self.walk.ends_the_process(last.body[-1]))
        ):
            return
        siblings = self.block_bodies.get(self.walk.parents.get(id(node)) or 0, ())
        for statement in siblings[next((i for i, s in enumerate(siblings) if s is node), len(siblings)) + 1 :]:
            self.required_before[id(statement)] = check

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if type(node.operator) is cst.And:
            self.required_before[id(node.right)] = node.left

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.required_before[id(node.body)] = node.test

    def visit_Attribute(self, node: cst.Attribute) -> None:
        qualified = self.walk.qualified
        if qualified is not None and qualified.startswith("torch.cuda.") and (self.walk.conds or self.required_before):
            self._cuda_reference(node)
        if qualified in TESTED_CLASSES:
            self.class_references.append(node)

    def _cuda_reference(self, node: cst.CSTNode) -> None:
        if found := self._required(node):
            self.cuda_references.append((node, *found))

    def _required(self, node: cst.CSTNode) -> tuple[list[cst.BaseExpression], str, int] | None:
        """What must be true for this node to run: the tests of the ``if`` statements whose
        bodies hold it, the left operands of the ``and`` it is right of, and the availability
        checks of early exits before it (with its scope and place); None: nothing."""
        parents = self.walk.parents
        key: int | None = id(node)
        required: list[cst.BaseExpression] = []
        while key is not None:
            if key in self.required_before:
                required.append(self.required_before[key])
            key = parents.get(key)
            if key in self.if_bodies:
                required.append(self.if_bodies[key].test)
        if not required:
            return None
        scope = self.walk.qualname if self.walk.enclosing_function is not None else ""
        return required, scope, self.stored.tick()

    def visit_Name(self, node: cst.Name) -> None:
        self.name_counts[node.value] += 1
        qualified = self.bindings.get(node.value) if self.walk.conds or self.required_before else None
        if qualified is not None and qualified.startswith("torch.cuda."):
            self._cuda_reference(node)
        if self.bindings.get(node.value) in TESTED_CLASSES:
            self.class_references.append(node)
        if node.value in self.count_names and not self.handing and id(node) not in self.not_uses:
            key = (node.value, self.walk.qualname)
            if key in self.counts:
                self.uses.append((node, key))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._no_effect_line(node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._no_effect_line(node)

    def _no_effect_line(self, node: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> None:
        for statement in node.body:
            target = set_or_called(statement)
            if target is not None and self.walk.resolve(target) in NO_EFFECT and passive(statement):
                self.part.no_effect_lines.add(node)
                return

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._pinned_args(node.bases, None)
        self._pinned_args(node.keywords, None)

    def _pinned_args(self, args: Sequence[cst.Arg], call: cst.Call | None) -> None:
        for arg in args:
            if arg.keyword is not None and arg.keyword.value == "pin_memory" and is_true(arg.value):
                self.part.pinned_args[arg] = call

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if string_value(node.key) == "pin_memory" and is_true(node.value):
            self.part.pinned_entries.add(node)

    def leave_Call(self, node: cst.Call) -> None:
        if self.handed.pop():
            self.handing -= 1

    def visit_Call(self, node: cst.Call) -> None:
        self._pinned_args(node.args, node)
        if self.walk.enclosing_function is not None and "." not in self.walk.qualname:
            self.call_functions[node] = self.walk.qualname  # in a module-level function
        if (self.walk.conds or self.required_before) and (required := self._required(node)):
            self.conditional_calls[node] = required
        callee = self.walk.callee
        hands_on = callee in TORCH_SPAWN or apis.prints(callee, dotted(node.func))
        self.handed.append(hands_on)
        self.handing += hands_on
        method = method_name(node)
        if method in ("cuda", "to") and not names_the_cpu(arg_value(node, 0, "device")):
            assert type(node.func) is cst.Attribute  # (a method)
            self.sparse_events.append(("move", node, node.func.value))
        head = dotted(node.func)
        if head is not None and self._forward() is not None:
            self.forward_calls.append((node, head.split(".")[0]))
            if callee is not None and "." in callee and not outside_project(callee):
                self.imported_forward_calls.append((node, callee))
        elif head is not None and "." in head and self.walk.enclosing_function is not None:
            handed = tuple(dotted(arg.value) or "" for arg in node.args if type(arg.value) is cst.Name)
            if handed:
                self.named_calls.append((node, head.split(".")[0], callee, handed, self.walk.qualname))
        self._reaches(node, callee, method)
        self._resize(node)
        if node.args and self.walk.enclosing_function is not None:
            self.call_scopes[node] = self.walk.qualname
        self._sparse_call(node, callee)
        if callee is None:
            if method == "add_argument":
                self._switch(node)
            return
        if callee in CPP_EXTENSION_LOADS and (target := self.call_targets.get(id(node))) is not None:
            self.extensions[target] = f"`{code_of(node.func)}(...)`, a C++/CUDA extension compiled at run time"
        if callee in ANSWERS:
            self.queries.append((node, callee))
        if callee in apis.SPARSE_OPTIMIZERS:
            self.part.sparse_optimizers.add(node)
        elif apis.optimizer_class(callee) is not None:
            fused = keyword_set(node, "fused")
            if fused is not None:
                self.part.fused_optimizers[node] = fused
        elif callee in apis.SPARSE_EMBEDDINGS:
            sparse = keyword_set(node, "sparse")
            if sparse is not None:
                self.part.sparse_embeddings[node] = sparse
                self._sparse_parameter(node, sparse)
        elif callee in _ENVIRON_SETTERS:
            self._environment(node, string_value(arg_value(node, 0, "key")))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if type(target) is cst.Subscript and self.walk.resolve(target.value) == _ENVIRON and len(target.slice) == 1:
            index = target.slice[0].slice
            if type(index) is cst.Index:
                self._environment(target, string_value(index.value))

    def _environment(self, node: cst.CSTNode, name: str | None) -> None:
        if name is not None and name.startswith(apis.CUDA_ENVIRONMENT):
            self.part.environment[node] = name

    def visit_Return(self, node: cst.Return) -> None:
        function = self.walk.enclosing_function
        if function is not None and node.value is not None and type(sparse_core(node.value)) in RETURNED:
            self.sparse_events.append(("return", self.walk.qualname, node.value))

    def _project_calls(self) -> None:
        """The calls of other modules' functions, under a test never true on XLA (a CUDA
        availability check: ``if gpu_available and show:``), also through a function of this
        file that only such calls reach (``if gpu_available: show_memory()``, whose body calls
        ``gpu_usage()``), or not (cuda_only/held_conditions.py)."""
        calls = self.walk.analysis(ProjectAnalysis).calls
        wrappers = self._called_only_under_cuda(calls)
        for call, callee in calls:
            for found in self.walk.analysis(ProjectAnalysis).origins(callee):
                if found.summary is None or not found.name:
                    continue
                never = self._never_runs(call) or self.call_functions.get(call) in wrappers
                (self.part.cuda_guarded_calls if never else self.part.other_calls).add((found.summary.path, found.name))

    def _never_runs(self, call: cst.Call) -> bool:
        """The call is under a test never true on XLA."""
        required = self.conditional_calls.get(call)
        return required is not None and any(
            never and switch is None
            for never, switch in (self._never_true(test, required[1], required[2]) for test in required[0])
        )

    def _called_only_under_cuda(self, calls: list[tuple[cst.Call, str]]) -> set[str]:
        """The module-level functions of this file that it names only in calls, each under a
        test never true on XLA."""
        if self.module is None:
            return set()
        sites: dict[str, list[cst.Call]] = {}
        for call, callee in calls:
            if type(call.func) is cst.Name:
                sites.setdefault(callee, []).append(call)
        functions = (s.name.value for s in self.module.body if type(s) is cst.FunctionDef)
        return {
            name
            for name in functions
            if (called := sites.get(name))
            and self.name_counts[name] == 1 + len(called)
            and all(self._never_runs(call) for call in called)
        }

    def _switch(self, node: cst.Call) -> None:
        """``parser.add_argument("--profile", action="store_true")``: off unless given."""
        keywords = call_args(node)[1]
        action = string_value(keywords["action"].value) if "action" in keywords else None
        default = keywords["default"].value if "default" in keywords else None
        dest = flag_dest(node)
        if dest is not None and (is_false(default) or (action == "store_true" and default is None)):
            self.off_switches.add(dest)

    def _never_true(self, test: cst.BaseExpression, scope: str, at: int) -> tuple[bool, str | None]:
        """Whether the test is never true on XLA as the script runs by default: it is falsy
        there as the port leaves it (True, None: a kept CUDA availability check or a CUDA
        check that XLA105 reports False, required by an ``and``; a CUDA query's answer that
        makes it False, ``torch.cuda.device_count() > 1``; a name whose store decides it
        holds such a value), or one of the operands it requires (``a and b``) is a switch off
        by default (True, the switch).  ``scope`` and ``at``: the function and place of the
        code it guards."""
        value = value_on_xla(test, lambda part: self._known_on_xla(part, scope, at))
        if value is not UNKNOWN and not value:
            return True, None
        required = []
        while type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
            required.append(test.right)
            test = test.left
        required.append(test)
        switch = next(
            (
                name
                for r in required
                if (name := dotted(r)) is not None and "." in name and name.rsplit(".", 1)[-1] in self.off_switches
            ),
            None,
        )
        return switch is not None, switch

    def _known_on_xla(self, node: cst.CSTNode, scope: str, at: int) -> object:
        """What a part of a test is on an XLA host as the port leaves it, where the tool knows:
        a kept availability check and a CUDA check XLA105 reports are False, a CUDA query
        that no other concern ports answers as without CUDA (0, False), a name holds what
        the store that decides it there holds."""
        device = self.facts.device
        store = self.stored.deciding(scope, node.value, at) if type(node) is cst.Name else None
        if store is not None and store.value is not None:  # (a deciding store has its value)
            return value_on_xla(store.value, lambda part: self._known_on_xla(part, store.scope, store.at))
        if type(node) is not cst.Call:
            return False if device.false_on_xla(node) else UNKNOWN
        if node in device.kept_availability_checks:
            return False
        callee = self.walk.resolve(node.func)
        if callee in equivalent_apis.LIBRARY_AVAILABILITY_CHECKS:
            return False
        if callee in ANSWERS and node not in self._ported_queries:
            return ANSWERS[callee][0]
        return UNKNOWN

    @functools.cached_property
    def _ported_queries(self) -> set[cst.CSTNode]:
        """The CUDA queries another concern ports (ranks and sizes): their answers are not
        CUDA's (asked in conclude only, once the others are final)."""
        distributed = self.facts.distributed
        return {*distributed.runtime_reads, *distributed.launcher_counts, *distributed.per_process_counts}

    def _extension_ops(self) -> None:
        """A relative import that finds no Python module of the project is a compiled
        extension built in place; so is a module that a setup.py of the project builds with
        ``CUDAExtension``/``CppExtension`` (``import pointnet2._ext as _ext``); calls of them (or of
        a ``load(...)`` one) in a forward."""
        context = self.facts.project.context

        def _package_binds(module: str, name: str) -> bool:
            """``from . import PITLossWrapper`` where the package's ``__init__.py`` binds that name
            (``from .pit_wrapper import PITLossWrapper``, or a class of its own): a Python name."""
            if module.strip("."):
                return False
            found = context.lookup(module, f"__init__.{name}")
            if found is None or found.summary is None:
                return False
            summary, bound = found.summary, found.name
            return (
                not summary.path.endswith("__init__.py")
                or summary.origin_of(bound) is not None
                or any(cls == bound for cls, _, _ in summary.classes)
            )

        for bound, (module, name) in self.relative_imports.items():
            if (
                bound not in self.extensions
                and context.lookup(module, name) is None
                and not _package_binds(module, name)
            ):
                self.extensions[bound] = f"`from {module} import {name}`, no Python module of the project"
        for call, head in self.forward_calls:
            if head in self.extensions:
                self.part.extension_ops[call] = self.extensions[head]
        if self.imported_forward_calls and (built := context.built_extensions()):
            for call, callee in self.imported_forward_calls:
                for extension, setup in built:
                    if callee.startswith(extension + ".") and call not in self.part.extension_ops:
                        self.part.extension_ops[call] = (
                            f"`{extension}`, a C++/CUDA extension that {setup} builds with torch.utils.cpp_extension"
                        )
        if self.part.extension_ops and self.module is not None:  # run only behind a CUDA test (cuda_dispatch.py)
            never = lambda test, scope: self._never_true(test, scope, self.stored.position + 1) == (True, None)  # noqa: E731
            for op in cuda_only_calls(self.module, self.part.extension_ops, never, context.mentioned_elsewhere):
                del self.part.extension_ops[op]

    def _extension_source(self, head: str, qualified: str | None) -> str | None:
        """Where the op named ``head`` (imported as ``qualified``) comes from, when it is a compiled
        extension's: one this module imports, or one the project's setup.py builds."""
        source = self.extensions.get(head)
        if source is None and qualified is not None and not outside_project(qualified):
            source = next(
                (
                    f"`{extension}`, a C++/CUDA extension that {setup} builds with torch.utils.cpp_extension"
                    for extension, setup in self.facts.project.context.built_extensions()
                    if qualified.startswith(extension + ".")
                ),
                None,
            )
        return source

    def _extension_exports(self) -> None:
        """A module-level name bound to an extension's op (``nms = _C.nms``, ``nms =
        amp.float_function(_C.nms)``): the module hands it out as one of its functions, which
        the model's code calls with its tensors."""
        for attribute, head, qualified, bound in self.module_bindings:
            source = self._extension_source(head, qualified)
            if source is not None:
                self.part.extension_exports[attribute] = (source, bound)

    def _extension_calls(self) -> None:
        """Outside a forward: a call of an extension's op handed a tensor that its function puts
        on the device (the port puts it on the XLA device): it raises there, on every call."""
        for call, head, callee, handed, scope in self.named_calls:
            on_device = next((name for name in handed if (scope, name) in self.device_bound), None)
            if on_device is None:
                continue
            source = self._extension_source(head, callee)
            if source is not None:
                self.part.extension_calls[call] = (source, on_device)

    def conclude(self) -> None:
        self._extension_ops()
        self._extension_exports()
        self._extension_calls()
        self._sparse_moves()
        self._sparse_reached()
        self._sparse_made_on_the_device()
        self._resized_buffers()
        self._sparse_calls()
        self._project_calls()
        if self.module is not None and self.class_references:
            self.part.class_tests = class_tests(self.module, self.class_references)
        if self.module is not None:
            self.part.unnamed_functions = {
                statement.name.value
                for statement in self.module.body
                if type(statement) is cst.FunctionDef and self.name_counts[statement.name.value] == 1
            }
        for node, tests, scope, at in self.cuda_references:
            verdicts = [self._never_true(test, scope, at) for test in tests]
            if any(never and switch is None for never, switch in verdicts):
                self.part.guarded_cuda[node] = None
            elif (switch := next((s for never, s in verdicts if never), None)) is not None:
                self.part.guarded_cuda[node] = switch
        for call in self.facts.amp.syncfree:
            self.part.fused_optimizers.pop(call, None)
        distributed = self.facts.distributed
        reads: ModuleReads | None = None
        if self.module is not None and (answered := self._answered()):
            reads = ModuleReads(self.module, self.walk.resolve)
            script_alone = runs_as_script(self.module) and not self.facts.project.context.imported_in_run()
            device = self.facts.device
            answers = CudaAnswers(
                reads,
                self.walk.ends_the_process,
                script_alone,
                lambda part: part in device.kept_availability_checks or device.false_on_xla(part),
                device.strings,
            )
            for call, on_xla, on_one_gpu in answered:
                answer = answers.of(call, on_xla, on_one_gpu)
                if answer is None:  # never runs on XLA
                    self.part.guarded_cuda[call.func] = None
                else:
                    self.part.cuda_answers[call.func] = answer
        uses = [
            (name, self.counts[key][1]) for name, key in self.uses if self.counts[key][0] in distributed.launcher_counts
        ]
        if uses and self.module is not None:
            reads = reads or ModuleReads(self.module, self.walk.resolve)
            deciding = CountUses(reads, distributed.process_groups, distributed.rereads)
            self.part.launcher_count_uses = {name: assignment for name, assignment in uses if deciding.decides(name)}

    def _answered(self) -> list[tuple[cst.Call, object, object]]:
        """The CUDA queries whose answers are followed: those that no other concern ports
        (ranks and sizes, precision choices) and that a guard does not keep from running."""
        handled = self._ported_queries
        return [
            (call, *ANSWERS[callee])
            for call, callee in self.queries
            if call not in handled and call.func not in self.part.guarded_cuda
        ]
