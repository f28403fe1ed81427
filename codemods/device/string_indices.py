"""CUDA indices named by the device strings built from them: ``"cuda:" + str(args.device)``,
``f"cuda:{args.device}"``, ``"cuda:{}".format(gpu)``, ``"cuda:%d" % gpu`` make ``args.device``
(``gpu``) a CUDA index, so ``.to(args.device)`` is ``.to(0)``: cuda:0, which raises without CUDA
("Found no NVIDIA driver").  The part of DeviceAnalysis that finds them in the file, hands them on
to the callables of the project's other modules that the file hands the namespace holding them
(``Net(args)``: ``index_attributes_handed``, for the module of ``Net``), and reads what the run's
other files hand this file's callables (``.to(args.device)`` in ``Net.__init__(self, args)``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, is_cuda_device_string
from codemods.engine.positions import print_back
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.engine.positions import Positions
    from codemods.engine.walk import Walk
    from codemods.facts import Facts

_PRINTER = cst.Module(body=[])
# Calls whose arguments are devices (besides ``.to``, ``.cuda`` and any ``device=``).
_DEVICE_CALLS = frozenset({"torch.device", "torch.cuda.set_device", "torch.cuda.device"})


def interpolated_index(node: cst.CSTNode) -> str | None:
    """The name a CUDA device string is built from: ``x`` of ``"cuda:" + str(x)``, ``f"cuda:{x}"``,
    ``"cuda:{}".format(x)``, ``"cuda:%d" % x`` (the one value after ``cuda:``)."""
    if not is_cuda_device_string(node):
        return None
    value: cst.BaseExpression | None = None
    if type(node) is cst.FormattedString:
        expressions = [p for p in node.parts if type(p) is cst.FormattedStringExpression]
        value = expressions[0].expression if len(expressions) == 1 else None
    elif type(node) is cst.BinaryOperation:
        value = node.right
    elif type(node) is cst.Call and len(node.args) == 1 and not node.args[0].star and node.args[0].keyword is None:
        value = node.args[0].value  # "cuda:{}".format(x)
    if type(value) is cst.Call and dotted(value.func) in ("str", "int") and len(value.args) == 1:
        value = value.args[0].value  # "cuda:" + str(x)
    return dotted(value) if value is not None else None


class StringIndices(Analysis):
    """The part of DeviceAnalysis that finds the CUDA indices device strings are built from."""

    facts: Facts
    part: DeviceFacts
    function_params: dict[str, list[str]]
    moves_to: list[tuple[cst.Call, cst.BaseExpression, str]]
    device_keywords: list[tuple[cst.Call, cst.BaseExpression, str]]

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        # name -> the first device string built from it (its code, for the finding)
        self.string_indices: dict[str, str] = {}
        # Calls of what the imports may resolve to a project callable, with arguments (``Net(args)``):
        # the call.
        self.namespace_calls_out: list[cst.Call] = []
        # Moves to a CUDA index that the run's other files hand this file: the name moved to -> why.
        self.handed_index_why: dict[str, str] = {}
        self.module_seen: cst.Module | None = None  # (set by DeviceWalk._block, its visit_Module)
        # Names bound to a device somewhere (``args.device = device``): no index, whatever string is
        # built from them before.
        self.device_bound: set[str] = set()
        # Device strings built from a name, before it is known whether they are used as a device
        # (``torch.device(...)``, ``.to(...)``) or only shown (``print("cuda:" + str(args.device))``).
        self.built_strings: list[tuple[cst.CSTNode, str, str]] = []  # (the string, the name, its scope)
        # The scopes a name is a CUDA index in, by the strings used as a device built from it there
        # (a function, and the functions nested in it; a class for ``self.gpu``; "" the module).
        self.string_scopes: dict[str, set[str]] = {}
        # Names that are CUDA indices only by the strings built from them (DeviceAnalysis.finish):
        # an index only in those scopes, not wherever the same name is written.
        self.string_only: set[str] = set()
        self.calls_by_id: dict[int, cst.Call] = {}  # every call walked, by id (the string's consumer)
        # The qualified name of the scope of each call walked (and of each ``if`` that moves only a
        # given index), by id: those nodes are held by calls_by_id and index_guard_candidates.
        self.call_scopes: dict[int, str] = {}
        # Of string_only, the callables whose parameter every caller of the run's other files hands
        # a namespace holding it as a CUDA index (project_string_indices): an index there too.
        self.handed_scopes: dict[str, set[str]] = {}
        self.bound_values: dict[int, str] = {}  # the id of a value bound to a name -> the name
        self._positions: Positions | None = None

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._saw_string(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._saw_string(node)

    def saw_call_for_indices(self, node: cst.Call) -> None:
        """``"cuda:{}".format(x)``; a call handing names on (``Net(args)``)."""
        self._saw_string(node)
        self.calls_by_id[id(node)] = node
        self.call_scopes[id(node)] = self.walk.qualname
        if type(node.func) in (cst.Name, cst.Attribute) and node.args:
            self.namespace_calls_out.append(node)

    def saw_binding_for_indices(self, name: str, value: cst.BaseExpression, names_a_device: bool) -> None:
        """``name = value``: a device (a device string, ``torch.device(...)``, a name that holds one)?"""
        self.bound_values[id(value)] = name
        if names_a_device or (type(value) is cst.Call and self.walk.resolve(value.func) == "torch.device"):
            self.device_bound.add(name)

    def string_index_names(self) -> set[str]:
        """The names device strings used as a device are built from that nothing binds to a device
        (a string only shown, ``print("cuda:" + str(args.device))``, makes no index)."""
        used = {name for _, _, name in (*self.moves_to, *self.device_keywords)}
        used |= {dotted(arg.value) or "" for call in self.calls_by_id.values() for arg in self._device_args(call)}
        for node, name, scope in self.built_strings:
            if self._used_as_a_device(node, used):
                self.string_indices.setdefault(name, _PRINTER.code_for_node(node))
                self.string_scopes.setdefault(name, set()).add(scope)
        return set(self.string_indices) - self.device_bound

    def index_here(self, name: str, call: cst.Call | cst.If) -> bool:
        """``name`` is a CUDA index at ``call``: an index not only by a device string built from it,
        or the call is in a scope where such a string is built (``setup``'s ``f"cuda:{args.device}"``
        makes no index of ``args.device`` in ``run2(args)``, whose ``args`` may be another namespace)."""
        return (
            name not in self.string_only
            or self.in_scopes(call, self.string_scopes.get(name, set()))
            or (self.in_scopes(call, self.handed_scopes.get(name, set())))
        )

    def in_scopes(self, call: cst.Call | cst.If, scopes: set[str]) -> bool:
        """``call`` is in one of ``scopes`` (or a function nested in one; "" is the module's)."""
        scope = self.call_scopes.get(id(call), "")
        return any(not s or scope == s or scope.startswith(f"{s}.") for s in scopes)

    def _saw_string(self, node: cst.CSTNode) -> None:
        if (name := interpolated_index(node)) is not None:
            scope = self.walk.qualname
            if name.partition(".")[0] in ("self", "cls") and self.walk.class_depth:
                scope = scope.rpartition(".")[0]  # (an attribute of the instance: its class's methods share it)
            self.built_strings.append((node, name, scope))

    def _used_as_a_device(self, node: cst.CSTNode, used: set[str]) -> bool:
        """The string is a device: an argument of ``torch.device``/``torch.cuda.set_device``/
        ``torch.cuda.device``, of ``.to``/``.cuda``, a ``device=``; or bound to a name that is one of
        those (``dev = f"cuda:{gpu}"``, ``.to(dev)``).  Through a conditional or parentheses, not
        through any other call (``print``, ``logger.info``, ``"{}".format``: shown).  ``used``: the
        names used as a device."""
        parents, key, inner = self.walk.parents, id(node), id(node)
        for _ in range(4):  # the string, an IfExp / BooleanOperation, an Arg, the call
            if key in self.bound_values:
                return self.bound_values[key] in used
            parent = parents.get(key)
            if parent is None:
                return False
            if (call := self.calls_by_id.get(parent)) is not None:
                return any(id(arg) == key or id(arg.value) == inner for arg in self._device_args(call))
            inner, key = key, parent
        return False

    def _device_args(self, call: cst.Call) -> list[cst.Arg]:
        """The arguments of ``call`` that are devices."""
        qualified = self.walk.resolve(call.func) or ""
        method = call.func.attr.value if type(call.func) is cst.Attribute else ""
        if qualified in _DEVICE_CALLS or method in ("to", "cuda"):
            return [arg for arg in call.args if arg.keyword is None or arg.keyword.value == "device"]
        return [arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "device"]

    def _line(self, node: cst.CSTNode) -> str:
        """``, line N`` of a node of this file (its position metadata), or nothing."""
        if self.module_seen is None:
            return ""
        if self._positions is None:
            self._positions = print_back(self.module_seen).positions(self.walk.parents)
        start = self._positions.get(node)
        return f", line {start[0]}" if start is not None else ""

    def handed_index_attributes(self) -> None:
        """What this file hands callables of the project's other modules whose attributes are
        CUDA indices here (``Net(args)``, ``args.device`` one): ``index_attributes_handed``."""
        project = self.walk.analysis(ProjectAnalysis)
        for call in self.namespace_calls_out:
            found = project.origin(dotted(call.func) or "")
            if found is None or found.summary is None:
                continue
            for index, arg in enumerate(call.args):
                if arg.star:
                    break
                handed = dotted(arg.value)
                attributes = sorted(
                    index_name.removeprefix(f"{handed}.")
                    for index_name in self.part.cuda_indices
                    if handed is not None
                    and index_name.startswith(f"{handed}.")
                    and self.index_here(index_name, call)
                    and "." not in index_name.removeprefix(f"{handed}.")
                )
                at, keyword = (-1, arg.keyword.value) if arg.keyword is not None else (index, "")
                self.part.index_attributes_handed.update(
                    (found.summary.path, found.name, at, keyword, attribute) for attribute in attributes
                )
                # Every call, with all the index attributes of what it hands (none: anything else):
                # ``*, line N:<attributes>`` (project_string_indices moves only where all are).
                every = f"*{self._line(call)}:{','.join(attributes)}"
                self.part.index_attributes_handed.add((found.summary.path, found.name, at, keyword, every))
                for function, i, param, attribute, move in found.summary.parameter_attribute_moves:
                    if (
                        function == found.name
                        and attribute in attributes
                        and (i == index if arg.keyword is None else param == keyword)
                        and arg.value not in self.part.pending_index_moves
                    ):
                        self.part.pending_index_moves[arg.value] = (
                            f"`{found.name}` ({found.summary.path}, which this run does not convert) moves to "
                            f"`{param}.{attribute}` ({move}), and `{handed}.{attribute}` is a CUDA index here "
                            f"(`{self.string_indices.get(f'{handed}.{attribute}', f'{handed}.{attribute}')}`): an "
                            'integer device is cuda:N, which fails without CUDA ("Found no NVIDIA driver"); '
                            "converting the project (`xla-codemod convert .` at its root) moves it to the XLA device"
                        )

    def project_string_indices(self) -> None:
        """``.to(args.device)`` (or ``device=args.device``) where ``args`` is a parameter of a callable
        of this file (a function, or a class's ``__init__``) that the run's other files hand a
        namespace whose ``device`` is a CUDA index there: a CUDA index here too, where every call of
        the callable the run's other files make hands one.  Where one hands anything else (``Net(cfg)``,
        ``cfg.device`` no index there) the move stays, reported (XLA103, naming both calls): the
        other call's value may be a device (``"cpu"``) that the XLA device must not replace."""
        context = self.facts.project.context
        indices = self.part.cuda_indices
        moved = {name for call, _, name in (*self.moves_to, *self.device_keywords) if not self._moved_index(name, call)}
        unsure: dict[str, str] = {}
        for name in sorted(moved):
            root, _, attribute = name.partition(".")
            if not attribute or "." in attribute:
                continue
            for callee, index in parameter_callables(self.function_params, root):
                handed = context.index_attributes_handed(callee, index, root)
                callers = [path for path, attr in handed if attr == attribute]
                others = [
                    path + attr.partition(":")[0].removeprefix("*")
                    for path, attr in handed
                    if attr.startswith("*") and attr != "*?:" and attribute not in attr.partition(":")[2].split(",")
                ]
                unseen = sorted({path for path, attr in handed if attr == "*?:"})
                if callers and (others or unseen):
                    but = []
                    if others:
                        but.append(
                            f"{', '.join(sorted(set(others)))} hands it something whose `{attribute}` is not one"
                        )
                    if unseen:
                        but.append(
                            f"{', '.join(unseen)} may call it too, where the tool does not read (it names no torch)"
                        )
                    unsure[name] = (
                        f"{callers[0]} hands `{callee}` its `{root}`, whose `{attribute}` is a CUDA index there (a "
                        f"`cuda:` device string is built from it), but {', and '.join(but)}: left as it is; where it "
                        "is an index, move to the XLA device instead (an integer device is cuda:N, which fails without "
                        "CUDA)"
                    )
                    break
                if callers:
                    indices.add(name)  # (one only by strings built elsewhere in the file is there already)
                    scope = f"{callee}.__init__" if f"{callee}.__init__" in self.function_params else callee
                    self.handed_scopes.setdefault(name, set()).add(scope)
                    self.handed_index_why[name] = (
                        f"{callers[0]} hands `{callee}` its `{root}`, whose `{attribute}` is a CUDA index there "
                        "(a `cuda:` device string is built from it): an integer device is cuda:N, which fails "
                        "without CUDA"
                    )
                    break
        for call, device, name in (*self.moves_to, *self.device_keywords):
            if name in unsure and not self._moved_index(name, call):
                self.part.pending_index_moves.setdefault(device, unsure[name])

    def local_handed_scopes(self) -> None:
        """The functions of this file that a scope where a name is a CUDA index only by the strings
        built from it hands the namespace holding it (``evaluate(args, model, x)`` in ``main``, which
        builds ``f"cuda:{args.gpu}"``: ``.to(args.gpu)`` in ``evaluate``), and on from those: an index
        there too (``handed_scopes``), under the parameter's name, where every call of the file hands
        one.  Where one hands anything else (``evaluate(cfg, ...)``) the moves there stay, reported
        (XLA103, "left as it is"): that value may be a device (``"cpu"``)."""
        scopes = {
            name: set(self.string_scopes.get(name, set()))
            for name in self.string_only
            if name.partition(".")[0] not in ("self", "cls") and self.string_scopes.get(name)
        }
        strings = {name: self.string_indices.get(name, name) for name in scopes}
        calls: dict[str, list[cst.Call]] = {}
        for call in self.namespace_calls_out:
            if (callee := self._local_callee(call)) is not None:
                calls.setdefault(callee, []).append(call)
        unsure: dict[str, tuple[set[str], str]] = {}  # name -> (the callables it is unsure in, why)
        changed = True
        while changed:
            changed = False
            for callee, callee_calls in sorted(calls.items()):
                for index, param in enumerate(self.function_params.get(callee, [])):
                    handed = [(call, _handed(call, index, param)) for call in callee_calls]
                    for name in sorted(scopes):
                        forms = _handed_forms(name, param)
                        indexed = [
                            (call, forms[value])
                            for call, value in handed
                            if value in forms and self.in_scopes(call, scopes[name])
                        ]
                        if not indexed or self.in_scopes(indexed[0][0], {callee}):
                            continue
                        new = indexed[0][1]
                        others = [call for call in callee_calls if all(call is not c for c, _ in indexed)]
                        first = f"`{self._call_code(indexed[0][0])}`{self._line(indexed[0][0])}"
                        if others or len({n for _, n in indexed}) > 1:
                            if callee not in unsure.get(new, (set(), ""))[0]:
                                other = others[0] if others else indexed[-1][0]
                                unsure[new] = (
                                    {*unsure.get(new, (set(), ""))[0], callee},
                                    f"{first} hands `{callee}` its `{param}`, which holds a CUDA index there "
                                    f"(`{strings[name]}`), but `{self._call_code(other)}`"
                                    f"{self._line(other)} hands it something else: left as it is; where it is an "
                                    "index, move to the XLA device instead (an integer device is cuda:N, which fails "
                                    "without CUDA)",
                                )
                            continue
                        if callee not in scopes.setdefault(new, set()):
                            scopes[new].add(callee)
                            strings.setdefault(new, strings[name])
                            self.handed_scopes.setdefault(new, set()).add(callee)
                            what = f"its `{param}`, whose `{new.partition('.')[2]}` is" if new != param else ""
                            self.handed_index_why.setdefault(
                                new,
                                f"{first} hands `{callee}` {what or f'as `{param}`'} a CUDA index there "
                                f"(`{strings[name]}`): an integer device is cuda:N, which fails without CUDA",
                            )
                            if new not in self.string_only:
                                self.string_only.add(new)
                                self.part.cuda_indices.add(new)
                            changed = True
        for call in self.namespace_calls_out:  # ``Trainer(args).fit(args)``: a method of the file's, maybe
            if type(call.func) is not cst.Attribute or dotted(call.func.value) in ("self", "cls"):
                continue
            if self._local_callee(call) is not None:
                continue
            method = call.func.attr.value
            for callee in sorted(q for q in self.function_params if "." in q and q.rpartition(".")[2] == method):
                for index, param in enumerate(self.function_params[callee]):
                    value = _handed(call, index, param)
                    for name in sorted(scopes):
                        forms = _handed_forms(name, param)
                        if value in forms and self.in_scopes(call, scopes[name]) and forms[value] not in unsure:
                            unsure[forms[value]] = (
                                {callee},
                                f"`{self._call_code(call)}`{self._line(call)} hands `.{method}` its `{param}`, which "
                                f"holds a CUDA index there (`{strings[name]}`), and the tool cannot tell whether "
                                f"that is `{callee}`: left as it is; where it is an index, move to the XLA device "
                                "instead (an integer device is cuda:N, which fails without CUDA)",
                            )
        changed = True
        while changed:  # what those hand on (``self.step(x, opts=opts)``) is as unsure
            changed = False
            for callee, callee_calls in sorted(calls.items()):
                for index, param in enumerate(self.function_params.get(callee, [])):
                    for name, (where, why) in sorted(unsure.items()):
                        forms = _handed_forms(name, param)
                        for call in callee_calls:
                            value = _handed(call, index, param)
                            if value in forms and self.in_scopes(call, where) and not self.in_scopes(call, {callee}):
                                if callee not in unsure.setdefault(forms[value], (set(), why))[0]:
                                    unsure[forms[value]][0].add(callee)
                                    changed = True
        for call, device, name in (*self.moves_to, *self.device_keywords):
            if name in unsure and self.in_scopes(call, unsure[name][0]) and not self._moved_index(name, call):
                self.part.pending_index_moves.setdefault(device, unsure[name][1])

    def _local_callee(self, call: cst.Call) -> str | None:
        """The function of this file ``call`` calls, by its qualified name: ``f(...)`` (nested in the
        caller's functions or top-level), ``Net(...)`` (its ``__init__``), ``self.f(...)`` (a method of
        the caller's class)."""
        scope = self.call_scopes.get(id(call), "")
        prefixes = [scope.rsplit(".", i)[0] for i in range(scope.count(".") + 1)] if scope else []
        if type(call.func) is cst.Name:
            name = call.func.value
            for prefix in [*prefixes, ""]:
                qualified = f"{prefix}.{name}" if prefix else name
                for candidate in (qualified, f"{qualified}.__init__"):
                    if candidate in self.function_params:
                        return candidate
            return None
        if type(call.func) is cst.Attribute and dotted(call.func.value) in ("self", "cls"):
            for prefix in prefixes[1:]:
                if f"{prefix}.{call.func.attr.value}" in self.function_params:
                    return f"{prefix}.{call.func.attr.value}"
        return None

    def _call_code(self, call: cst.Call) -> str:
        code = _PRINTER.code_for_node(call)
        return code if len(code) <= 60 else f"{_PRINTER.code_for_node(call.func)}(...)"

    def _moved_index(self, name: str, call: cst.Call) -> bool:
        return name in self.part.cuda_indices and self.index_here(name, call)

    def parameter_attribute_moves(self) -> None:
        """For the project's other files: the moves to an attribute of a parameter of a top-level
        function or of a class's ``__init__`` (``.to(args.device)`` in ``Net.__init__(self, args)``),
        with their code and line (``parameter_attribute_moves``)."""
        for call, _, name in (*self.moves_to, *self.device_keywords):
            root, _, attribute = name.partition(".")
            if not attribute or "." in attribute:
                continue
            for callee, index in parameter_callables(self.function_params, root):
                written = f"`{_PRINTER.code_for_node(call)}`{self._line(call)}"
                self.part.parameter_attribute_moves.add((callee, index, root, attribute, written))


def _handed_forms(name: str, param: str) -> dict[str, str]:
    """What a call may hand ``param`` for ``name`` (``args.gpu``) to be an index there, and the name
    that is then an index in the callee: the namespace (``args``: ``param.gpu``) or the index itself
    (``args.gpu``: ``param``)."""
    root, dot, attribute = name.partition(".")
    return {root: f"{param}{dot}{attribute}"} | ({name: param} if attribute else {})


def _handed(call: cst.Call, index: int, param: str) -> str | None:
    """The name ``call`` hands the parameter ``param`` (at ``index``, ``self`` not counted), or None
    (an expression, nothing, or what a ``*args`` may hold: anything)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == param:
            return dotted(arg.value)
    positional = [arg for arg in call.args if arg.keyword is None]
    for at, arg in enumerate(positional):
        if arg.star:
            return None
        if at == index:
            return dotted(arg.value)
    return None


def parameter_callables(function_params: dict[str, list[str]], root: str) -> Iterator[tuple[str, int]]:
    """The callables of a file that take ``root`` (not ``self``/``cls``) as a parameter: its
    top-level functions and its classes' ``__init__`` (named by the class, as they are called), with
    the parameter's index (without ``self``)."""
    if root in ("self", "cls"):
        return
    for function, params in function_params.items():
        method = function.endswith(".__init__") and function.count(".") == 1
        if root in params and (not function.count(".") or method):
            yield function.removesuffix(".__init__"), params.index(root)
