"""What DeviceAnalysis (analysis.py) collects as the walk goes: the expressions that may name
a CUDA device, the availability checks, the names that may be CUDA indices, and the candidates
that analysis.py decides on once the walk is done.

It also keeps two marks on conditions that other analyses add to: *device code* (code
worth running on XLA: an ``if use_cuda:`` around it should be switched on) and *crash
code* (code that fails without CUDA: a flag guarding it must not be switched on)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.cuda_only.rules import runtime_apis
from codemods.device import (
    check_wrappers,
    device_flags,
    followed_devices,
    helper_moves,
    listed_indices,
    own_devices,
    shapes,
    tensor_checks,
    type_aliases,
)
from codemods.device.config_shapes import index_key
from codemods.device.cuda_defaults import CudaDefaults, subscript_flag
from codemods.device.kept_checks import KeptChecks
from codemods.device.local_devices import LocalDevices
from codemods.device.own_cuda import OwnCudaCalls
from codemods.device.ported_devices import PortedDevices
from codemods.device.rules.xla101_cuda_device import CUDA_DEVICE
from codemods.device.rules.xla102_dot_cuda import DOT_CUDA
from codemods.device.rules.xla106_set_device import SET_DEVICE
from codemods.device.shapes import is_device_name
from codemods.device.string_indices import StringIndices
from codemods.device.third_party import OWN_DEVICE_LIBRARIES, KernelOps
from codemods.device.unread_holders import holder_candidate, unread_holder
from codemods.engine.nodes import (
    arg_value,
    call_args,
    dotted,
    fold_true,
    is_cuda_device_string,
    lone_call,
    mentions,
    method_name,
    receiver,
    string_value,
    walk,
)
from codemods.engine.walk import Walk

if TYPE_CHECKING:
    from codemods.facts import Facts


class DeviceWalk(KeptChecks, PortedDevices, KernelOps, CudaDefaults, OwnCudaCalls, StringIndices, LocalDevices):
    facts: Facts

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.device
        self.device_code: set[cst.CSTNode] = set()
        self.worth_running: set[cst.CSTNode] = set()  # of those, around no device choice (mark_device_code)
        self.crash_code: dict[cst.CSTNode, cst.CSTNode] = {}
        # Of ``device_code``, the conditions marked by a CUDA ``map_location`` (which XLA403 makes
        # "cpu"), and those marked by any other device code; the nodes inside such locations.
        self.location_marked: set[cst.CSTNode] = set()
        self.other_marked: set[cst.CSTNode] = set()
        self.in_locations: set[int] = set()
        self.fallback_moves: set[int] = set()  # ``.cuda()`` in a ``try`` whose handler falls back (shapes.py)
        self.cond_refs: dict[cst.CSTNode, set[str]] = {}
        self.flag_candidates: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.availability_ifs: dict[cst.If, cst.FunctionDef | None] = {}  # and the enclosing function
        self.availability_ifexps: list[cst.IfExp] = []
        self.availability_calls: list[cst.Call] = []
        # What each device variable is assigned, anywhere in the file.
        self.device_assignments: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.device_flags: set[str] = set()  # argparse device flags with a default (``--device``)
        self.ported_flags: set[str] = set()  # of all device flags, those with a CUDA default or choice
        # The ported flags this file or a module it reads them from has, and the names of their
        # namespaces (set in conclude, device/analysis.py).
        self.ported_dests: set[str] = set()
        self.ported_namespaces: set[str] = set()
        self.parsed_names: set[str] = set()  # args = parser.parse_args()
        self.namespace_calls: dict[str, list[str | None]] = defaultdict(list)  # args = get_args(): "get_args"
        self.comparisons: list[cst.Comparison] = []  # of one operator: a device flag's tests among them
        self.int_assignments: dict[str, list[cst.Integer]] = defaultdict(list)
        self.device_args: set[str] = set()  # names passed where a device goes
        self.cuda_string_names: set[str] = set()  # loc = "cuda:{}".format(gpu)
        # The CUDA strings each name is assigned (``dev = f"cuda:{rank}"``): device strings
        # too where the name goes where a device goes, whatever it is called; with the conditions around them.
        self.cuda_string_values: dict[str, list[tuple[cst.BaseExpression, list[cst.CSTNode]]]] = defaultdict(list)
        # torch.cuda.set_device(name): an index only if the name never holds a string (nanoGPT: "cuda:0").
        self.set_device_names: list[str] = []
        self.string_names: set[str] = set()
        self.text_values: dict[str, list[cst.BaseExpression]] = defaultdict(list)  # what each of those is assigned
        self.called_funcs: set[int] = set()
        self.tensor_indices = tensor_checks.TensorIndices()
        self.own_devices = own_devices.OwnDevices()  # hidden_states.device: never a CUDA index
        self.followed = followed_devices.FollowedDevices()  # devices of tensors handed to a function
        self.listed = listed_indices.ListedIndices()  # moves to an element of a list of CUDA indices
        self.moves_to: list[tuple[cst.Call, cst.BaseExpression, str]] = []  # .to(name)
        # Other calls given `device=name` (`torch.zeros(n, device=name)`), but not the CUDA
        # runtime's own calls or generators (their rewrites take the whole call).
        self.device_keywords: list[tuple[cst.Call, cst.BaseExpression, str]] = []
        # Names that hold the same value: `self.gpu_id = gpu_id`, and an argument with the
        # parameter it is passed to (of this file's functions): a CUDA index is both.
        self.aliases: list[tuple[str, str]] = []
        self.function_params: dict[str, list[str]] = {}
        self.calls_with_names: list[tuple[str, cst.Call]] = []
        self.holding_devices: set[str] = set()
        self.index_device_calls: list[tuple[cst.Call, str]] = []  # torch.device(local_rank)
        self.cuda_call_args: set[int] = set()  # torch.cuda.set_device(torch.device(rank)): its own rule's
        self.index_guard_candidates: list[tuple[cst.If, str]] = []
        self.generator_candidates: list[cst.Call] = []
        # A statement line that is one call, its call, and the next statement.
        self.lone_calls: list[tuple[cst.SimpleStatementLine, cst.Call, cst.BaseStatement]] = []
        # With the device's name and the enclosing function (None at module level).
        self.type_check_candidates: list[tuple[cst.Comparison, str, cst.If, cst.FunctionDef | None]] = []
        # A tensor's own CUDA checks (``x.is_cuda``, ``x.device.type == 'cuda'``) in a condition's test.
        self.tensor_check_candidates = tensor_checks.CandidateChecks()
        # Functions that check for CUDA devices, that count them; `if not f(): exit` guards.
        self.checking_functions: set[str] = set()
        self.counting_functions: set[str] = set()
        self.requirement_candidates: list[tuple[cst.If, str]] = []
        # Calls of the file's functions under conditions, and the functions that run CUDA-only code.
        self.helper_calls: list[helper_moves.HelperCall] = []
        self.crashing_functions: dict[str, cst.CSTNode] = {}
        # Functions and methods of the file that return an accelerator check (qualified name ->
        # what they return), and the conditions that call a function of the file.
        self.wrappers: dict[str, cst.BaseExpression] = {}
        self.wrapper_candidates: list[tuple[cst.If | cst.IfExp, cst.Call]] = []
        self.project_check_candidates: list[tuple[cst.If | cst.IfExp, cst.Call]] = []  # of a project module's function
        # Names the file's functions return (``return args``): name -> the functions.
        self.returned_names: dict[str, set[str]] = defaultdict(set)
        self.holder_candidates: list[cst.Assign] = []  # ``holder.mode = 'gpu' if flag else 'cpu'``

    def unread_holders(self) -> None:
        """The CUDA choices of ``holder_candidates`` made for code the tool cannot see (once the walk
        knows every name the file binds): code that fails without CUDA, for the flag's decision."""
        for node in self.holder_candidates:
            if stars := unread_holder(node, self.facts):
                self.part.unread_holders[node] = stars
                self.crash_code.setdefault(node.value, node)
                if node.value in self.availability_ifexps:  # ``'gpu' if torch.cuda.is_available() else 'cpu'``
                    self.part.unread_choices[node.value] = node  # type: ignore[index]  # an IfExp (holder_candidate)

    # -- marks other analyses add to ------------------------------------------------------

    def mark_device_code(self, picks: bool = True, location: bool = False) -> None:
        """The conditions around code worth running on XLA; ``picks``: code that picks or uses a device;
        ``location``: a checkpoint's CUDA ``map_location`` (or code inside one), which XLA403 makes "cpu"."""
        (self.location_marked if location else self.other_marked).update(self.walk.conds)
        if picks:
            self.worth_running.difference_update(self.walk.conds)
        else:  # a synchronize: it picks no device
            self.worth_running.update(c for c in self.walk.conds if c not in self.device_code)
        self.device_code.update(self.walk.conds)
        if self.walk.scopes:
            self.part.choosers.add(self.walk.qualname)

    def mark_load_location(self, location: cst.BaseExpression) -> None:
        """A checkpoint load's ``map_location`` that names a CUDA device (XLA403 makes it "cpu")."""
        self.in_locations.update(id(sub) for sub in walk(location))
        self.mark_device_code(location=True)

    def location_only(self, node: cst.CSTNode) -> bool:
        """The only device code under the condition is a checkpoint's CUDA ``map_location``."""
        return node in self.location_marked and node not in self.other_marked

    def mark_crash(self, node: cst.CSTNode) -> None:
        if self.walk.scopes:
            self.crashing_functions.setdefault(self.walk.qualname, node)
        for cond in self.walk.conds:
            self.crash_code.setdefault(cond, node)

    def add_device_strings(self, expr: cst.CSTNode | None) -> None:
        """Collect the CUDA strings of an expression in a device position."""
        if expr is None:
            return
        if is_cuda_device_string(expr):
            self.part.strings.add(expr)
            self.mark_device_code()
        elif type(expr) is cst.IfExp:
            self.add_device_strings(expr.body)
            self.add_device_strings(expr.orelse)
        elif type(expr) is cst.BooleanOperation:
            self.add_device_strings(expr.left)
            self.add_device_strings(expr.right)
        elif (default := shapes.lookup_default(expr)) is not None:
            self.add_device_strings(default)  # config.get('device', 'cuda:0'): the default without the key
        elif (default := shapes.field_default(expr, self.walk.resolve)) is not None:
            self.add_device_strings(default)  # device: str = field(default="cuda:0"): the field's default

    # -- questions other analyses ask -------------------------------------------------------

    def names_a_device(self, node: cst.BaseExpression) -> bool:
        """A CUDA device in any spelling, or a variable holding a device."""
        if is_cuda_device_string(node) or node in self.part.calls:
            return True
        if isinstance(node, cst.IfExp):
            return self.names_a_device(node.body) or self.names_a_device(node.orelse)
        name = dotted(node)
        return name is not None and (is_device_name(name) or name in self.cuda_string_names)

    # -- walk -------------------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.tensor_indices.saw_def(node)
        self.tensor_check_candidates.saw_def(node)
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if params and params[0] in ("self", "cls") and self.walk.class_depth:
            params = params[1:]
        self.function_params[self.walk.qualname] = params

    def visit_Param(self, node: cst.Param) -> None:
        self.own_devices.saw_param(node)
        if node.default is not None and is_device_name(node.name.value):
            self.add_device_strings(node.default)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.parsed_names.update(device_flags.parsed_names(node))
        if holder_candidate(node):  # code the tool cannot see may read a CUDA choice (decided in conclude)
            self.holder_candidates.append(node)
        if len(node.targets) == 1 and type(node.value) is cst.Call and (bound := dotted(node.targets[0].target)):
            self.namespace_calls[bound].append(dotted(node.value.func))  # args = get_args(): checked in finish
        if len(node.targets) == 1 and self._alias(node.targets[0].target, node.value):
            return
        for target in node.targets:
            names, values = target.target, node.value
            if type(names) is cst.Tuple and type(values) is cst.Tuple and len(names.elements) == len(values.elements):
                # device, backend = 'cpu', 'gloo'
                for name, value in zip(names.elements, values.elements):
                    self._assignment(dotted(name.value), value.value)
            elif type(names) is cst.Subscript and is_device_name(index_key(names)):
                self.device_args.update(n for n in (dotted(values),) if n is not None)  # config['device'] = name
                self.add_device_strings(values)
            else:  # (a flag as a config item: ``cfg["cuda"] = cfg["cuda"] and torch.cuda.is_available()``)
                self._assignment(dotted(names) or subscript_flag(names, values, self.part.is_available_call), values)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and not self._alias(node.target, node.value):
            self._assignment(dotted(node.target), node.value)

    def _alias(self, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        return type_aliases.module_alias(self.walk, self.part, target, value)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        type_aliases.imported_aliases(self.facts, self.part, node)

    def _assignment(self, name: str | None, value: cst.BaseExpression) -> None:
        if name is None:
            return
        if (other := dotted(value)) is not None:
            self.aliases.append((name, other))
        self.saw_binding_for_indices(name, value, self.names_a_device(value))
        if is_device_name(name):
            self.device_assignments[name].append(value)
            self.add_device_strings(value)
            if not self._cuda_runtime_answer(value):
                self.mark_device_code()
        elif mentions(value, self.part.is_available_call):
            self.flag_candidates[name].append(value)
        if type(value) is cst.Integer:
            self.int_assignments[name].append(value)
        if is_cuda_device_string(value):
            self.cuda_string_names.add(name)
            self.cuda_string_values[name].append((value, list(self.walk.conds)))
        if shapes.is_text(value, self.string_names):
            self.string_names.add(name)
            self.text_values[name].append(value)

    def _cuda_runtime_answer(self, value: cst.BaseExpression) -> bool:
        """``device_id = torch.cuda.current_device()``: a CUDA runtime call that fails without CUDA
        picks no device by being stored (under a kept check it never runs on XLA); a move or a
        device built from the name is device code of its own."""
        if type(value) is not cst.Call:
            return False
        callee = self.walk.resolve(value.func) or ""
        if callee == "torch.xpu.current_device":  # another accelerator's index (torch's DataLoader pinning): as CUDA's
            return True
        api = runtime_apis.CUDA_RUNTIME.get(callee)
        return api is not None and api.crashes_without_cuda

    def _block(self, node: cst.Module | cst.IndentedBlock) -> None:
        if type(node) is cst.Module:
            self.module_seen = node  # (device/string_indices.py: the lines of moves)
        statements = node.body
        for statement, after in zip(statements, statements[1:]):
            call = lone_call(statement)
            if call is not None and not call.args and type(statement) is cst.SimpleStatementLine:
                self.lone_calls.append((statement, call, after))

    visit_Module = _block
    visit_IndentedBlock = _block

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if type(call) is cst.Call and self.walk.resolve(call.func) in apis.SET_DEVICE_CALLS:
            self.part.replaced_parts.update((sub, (call, SET_DEVICE)) for arg in call.args for sub in walk(arg.value))

    def visit_Return(self, node: cst.Return) -> None:
        function = self.walk.enclosing_function
        if node.value is not None and function is not None and is_device_name(function.name.value):
            self.add_device_strings(node.value)  # `def pick_device(): return "cuda" if ... else "cpu"`
        if node.value is not None and shapes.is_cpu_device(node.value, self.walk):
            self.mark_device_code()  # `if not torch.cuda.is_available(): return torch.device("cpu")` picks the device
        if (
            node.value is not None
            and self.walk.enclosing_function is not None
            and shapes.asks_for_cuda(node.value, self.part.is_available_call, self.walk)
        ):
            self.wrappers.setdefault(self.walk.qualname, node.value)
        if type(node.value) is cst.Name and self.walk.enclosing_function is not None:
            self.returned_names[node.value.value].add(self.walk.qualname)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = string_value(node.key)
        if key is not None and is_device_name(key):
            self.add_device_strings(node.value)

    def visit_Assert(self, node: cst.Assert) -> None:
        if self.part.is_available_call(node.test):
            self.part.cuda_asserts.add(node)
            self.listed.saw_assert(self.walk)

    def visit_Try(self, node: cst.Try) -> None:
        self.fallback_moves.update(id(call) for call in shapes.cpu_fallback_moves(node, self.walk.resolve))

    def visit_If(self, node: cst.If) -> None:
        if (guarded := shapes.moves_only_if_given(node)) is not None:
            self.index_guard_candidates.append((node, guarded))
            self.call_scopes[id(node)] = self.walk.qualname  # (held there: its index is scoped as a call's)
        self.cond_refs[node] = shapes.names_in(node.test)
        self.part.count_checks.update(shapes.count_truths(node.test, self.walk))
        if mentions(node.test, self.part.is_available_call):
            self.availability_ifs[node] = self.walk.enclosing_function
        for sub in walk(node.test):
            if type(sub) is cst.Comparison and (device := shapes.device_type_checked(sub)) is not None:
                self.type_check_candidates.append((sub, device, node, self.walk.enclosing_function))
        self.tensor_check_candidates.saw_test(node)
        if (required := shapes.required_call(node, self.walk, self.walk.enclosing_function)) is not None:
            self.requirement_candidates.append((node, required))
        check_wrappers.saw_condition(
            self.walk, node, self.facts.imports.project_names, self.wrapper_candidates, self.project_check_candidates
        )

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.cond_refs[node] = shapes.names_in(node.test)
        self.tensor_check_candidates.saw_test(node, self.walk.enclosing_function)
        self.part.count_checks.update(shapes.count_truths(node.test, self.walk))
        if mentions(node.test, self.part.is_available_call):
            self.availability_ifexps.append(node)
        last = node.orelse
        while type(last) is cst.IfExp:  # "cuda" if ... else "mps" if ... else "cpu": the chain ends on the CPU
            last = last.orelse
        if shapes.is_cpu_device(node.body, self.walk) or shapes.is_cpu_device(last, self.walk):
            self.device_code.add(node)
        check_wrappers.saw_condition(
            self.walk, node, self.facts.imports.project_names, self.wrapper_candidates, self.project_check_candidates
        )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.own_devices.saw_attribute(node)
        if node.attr.value == "is_cuda" and id(node) not in self.called_funcs:  # not a method's call: self.is_cuda()
            self.part.cuda_checks.add(node)
        qualified = self.walk.qualified
        if qualified is not None:
            self._reference(qualified, node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        # ``device.type in ("cuda",)``: the strings of a literal collection count too.
        operands += [e.value for o in operands if type(o) in (cst.Tuple, cst.List, cst.Set) for e in o.elements]  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
        # ``device in ("cuda", "xla")`` also takes the XLA device: no CUDA check.
        takes_xla = any((string_value(o) or "").startswith("xla") for o in operands)
        if not takes_xla and any(string_value(o) == "cuda" or is_cuda_device_string(o) for o in operands):
            self.part.cuda_checks.add(node)
        if len(node.comparisons) == 1:
            self.comparisons.append(node)
        if shapes.cuda_error_test(node):
            self.part.cuda_error_tests.add(node)

    def _reference(self, qualified: str, node: cst.CSTNode) -> None:
        if node in self.part.replaced_parts:
            return
        if qualified in apis.CUDA_TENSOR_TYPES and id(node) not in self.called_funcs:
            self.mark_device_code()
            self.mark_crash(node)
        elif (api := runtime_apis.CUDA_RUNTIME.get(qualified)) is not None and api.crashes_without_cuda:
            self.mark_crash(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.called_funcs.add(id(node.func))
        callee = self.walk.callee
        self.saw_call_for_indices(node)
        if callee is None and node.args and (func_name := dotted(node.func)) is not None:
            self.calls_with_names.append((func_name, node))
        helper_moves.saw_call(self.walk, node, callee, self.facts.imports.project_names, self.helper_calls)
        if self.part.is_available_call(node):
            self.availability_calls.append(node)
            if self.walk.scopes:
                self.checking_functions.add(self.walk.qualname)
        elif callee in apis.DEVICE_COUNTS and self.walk.scopes:
            self.counting_functions.add(self.walk.qualname)
        if type(node.func) is cst.Name and callee is not None:
            self._reference(callee, node.func)
        self._kernel_call(callee, node)
        self._default_for_new_tensors(callee, node)
        method = method_name(node)
        keywords = call_args(node)[1]
        if "map_location" in keywords:  # a loader's own (``self.load_checkpoint(f, map_location=...)``)
            self.in_locations.update(id(sub) for sub in walk(keywords["map_location"].value))
        self.tensor_indices.saw_call(node, method, keywords)
        self.followed.saw_call(node, method, keywords, self.walk.enclosing_function)
        self.listed.saw_call(node, method, callee, keywords, self.walk)
        if method == "to":
            device = arg_value(node, 0, "device")
            self.add_device_strings(device)
            if (name := dotted(device)) is not None:
                self.device_args.add(name)
                self.moves_to.append((node, device, name))  # type: ignore[arg-type]  # dotted(device) is not None (checked above), so device is not None
                self.saw_device_use(node)
            elif type(device) is cst.Integer:  # `.to(0)`: cuda:0
                self.part.index_moves[node] = device
        elif method == "cuda" and id(node) in self.fallback_moves:
            self.part.fallback_moves.add(node)  # raises on XLA, and the handler runs: left as it is
        elif method == "cuda":
            self.part.dot_cuda.add(node)
            self.mark_device_code(location=id(node) in self.in_locations)  # ``lambda s, loc: s.cuda(i)``
            # ``x.cuda(torch.cuda.current_device())``: XLA102 drops the device argument with the call.
            if (index := arg_value(node, 0, "device")) is not None:
                self.part.replaced_parts.update((sub, (node, DOT_CUDA)) for sub in walk(index))
            if (name := dotted(arg_value(node, 0, "device"))) is not None:
                self.cuda_index_args.append((node, name))  # an index, where the call stays XLA102's
        elif method == "startswith" and shapes.prefix_tested(node) is not None:
            self.part.cuda_checks.add(node)  # ``device.type.startswith("cuda")``: as ``device.type == "cuda"``
        elif method == "pin_memory":
            self.mark_crash(node)
            if receiver(node) is not None:
                self.part.pin_memory_calls.add(node)
        elif method == "add_argument" and (flag := device_flags.device_flag(node)) is not None:
            for value in (flag.default, *flag.choices):  # add_argument('--device', default='cuda')
                self.add_device_strings(value)
            if flag.default is not None:
                self.device_flags.add(flag.dest)
            if flag.ported:
                self.ported_flags.add(flag.dest)
            if flag.cpu_beside_accelerator and flag.default is not None:
                self.part.cpu_flag_defaults[flag.default] = flag.dest

        if "device" in keywords and method != "to" and callee is not None and callee.startswith(OWN_DEVICE_LIBRARIES):
            if is_cuda_device_string(keywords["device"].value):
                self.part.foreign_device_strings[keywords["device"].value] = callee
        elif "device" in keywords and method != "to":
            device = keywords["device"].value
            self.add_device_strings(device)
            moves = method != "cuda" and callee != "torch.Generator" and not (callee or "").startswith("torch.cuda.")
            if (name := dotted(device)) is not None:
                self.device_args.add(name)
                if moves:
                    self.device_keywords.append((node, device, name))
                    self.saw_device_use(node)
            elif moves and type(device) is cst.Integer:  # `torch.zeros(n, device=1)`: cuda:1
                self.part.index_moves[node] = device
        if "device_ids" in keywords and isinstance(keywords["device_ids"].value, (cst.List, cst.Tuple)):
            for element in keywords["device_ids"].value.elements:
                if (name := dotted(element.value)) is not None:
                    self.part.cuda_indices.add(name)

        if (callee or "").startswith("torch.cuda."):
            self.cuda_call_args.update(id(arg.value) for arg in node.args)
        if callee == "torch.cuda.synchronize" and not node.args:
            self.mark_device_code(picks=False)  # becomes xm.wait_device_ops(): worth running on XLA
        elif callee in apis.SET_DEVICE_CALLS:
            if (name := dotted(arg_value(node, 0, "device"))) is not None:
                self.set_device_names.append(name)
        elif callee == "torch.device":
            self._torch_device(node)
        elif callee == "torch.Generator":
            self.generator_candidates.append(node)
        elif callee in apis.CUDA_TENSOR_TYPES:
            self.mark_device_code()
        elif callee == "torch.accelerator.current_accelerator" and not node.args:
            self.part.calls.add(node)
            self.mark_device_code()

    def _torch_device(self, node: cst.Call) -> None:
        kind = arg_value(node, 0, "type")
        if (name := dotted(kind)) is not None:
            self.device_args.add(name)  # torch.device(loc)
        index = arg_value(node, 1, "index")
        self.add_device_strings(kind)
        if string_value(kind) == "cuda" and (name := dotted(index)) is not None:
            self.part.cuda_indices.add(name)
        if kind is None:
            return
        if index is None and id(node) not in self.cuda_call_args:
            # ``torch.device(0)``, ``torch.device(local_rank)``: an integer alone is cuda:N.
            if type(kind) is cst.Integer:
                self.part.calls.add(node)
                self.mark_device_code()
                return
            if name is not None:
                self.index_device_calls.append((node, name))
        folded = fold_true(kind, self.part.is_available_call)
        if not isinstance(folded, bool) and is_cuda_device_string(folded):
            self.part.calls.add(node)
            self.mark_device_code()
            # The whole call becomes the XLA device: what its arguments call goes too (an
            # index, an f"cuda:{torch.cuda.current_device()}").
            for arg in (kind, index):
                if arg is not None:
                    self.part.replaced_parts.update((sub, (node, CUDA_DEVICE)) for sub in walk(arg))
