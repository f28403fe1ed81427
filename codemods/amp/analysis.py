"""Mixed precision: autocast contexts and gradient scalers in every spelling (CUDA, and
the XLA spellings of both torch_xla releases), the optimizers that run under them, and
the values that choose the precision or the autocast device type at run time."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.amp.facts import AutocastCall, Flavor, ScalerCall, Spelling, SyncFreeOptimizer
from codemods.engine.nodes import arg_value, call_args, dotted, is_false, mentions, names_in, string_value, walk
from codemods.engine.walk import Analysis, Walk, assignments
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts

_PRECISIONS = frozenset({"float16", "bfloat16", "half"})
# Builtins that take a class without calling it (``isinstance(ctx, torch.autocast)``).
_TYPE_CHECKS = frozenset({"isinstance", "issubclass"})


class AmpAnalysis(Analysis):
    facts: Facts

    name = "amp"
    reads = ("device", "project")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.amp
        self.assigned: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        self.device_type_uses: set[str] = set()
        self.enabled_refs: list[tuple[cst.Call, set[str]]] = []
        self.optimizers: list[tuple[cst.Call, str]] = []
        # Autocast handed on uncalled: bound to a name (name -> references), or elsewhere;
        # and the calls of names the imports do not resolve (name -> calls, their owners).
        self.bound: dict[str, list[tuple[cst.BaseExpression, str]]] = defaultdict(list)
        self.loose: list[tuple[cst.BaseExpression, str]] = []
        self.name_calls: dict[str, list[tuple[cst.Call, str]]] = defaultdict(list)
        self.assignment_of: dict[int, cst.Assign | cst.AnnAssign] = {}  # by the id of the value assigned
        self.self_calls: dict[str, set[str]] = defaultdict(set)  # ``Cls.method`` -> the ``Cls.other`` it calls
        self.receivers: dict[str, set[str]] = defaultdict(set)  # ``Cls.method`` -> what it calls methods of

    # -- walk -------------------------------------------------------------------------------

    @assignments(unpack=False)
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        self.assigned[name].append(value)
        self.bound[name].extend(self._uncalled_autocasts(value))
        if any(type(n) is cst.Call and self._scaler_spelling(self.walk.resolve(n.func)) for n in walk(value)):
            self.part.scaler_names.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.assignment_of[id(node.value)] = node

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.assignment_of[id(node.value)] = node

    def visit_Param(self, node: cst.Param) -> None:
        if "scaler" in node.name.value.lower():
            self.part.scaler_names.add(node.name.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.loose.extend(self._uncalled_autocasts(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            if (method := _method(self.walk.qualname)) is not None:
                self.self_calls[method].add(f"{method.split('.')[0]}.{func.attr.value}")
        elif type(func) is cst.Attribute and (method := _method(self.walk.qualname)) is not None:
            self.receivers[method].add(dotted(func.value) or "")
        if type(node.func) is cst.Attribute and node.func.attr.value == "to":
            moved = arg_value(node, 0, "device")
            if moved is not None and (name := dotted(moved)) is not None:
                self.part.moved_to.add(name)
        if type(node.func) is not cst.Name or node.func.value not in _TYPE_CHECKS:
            for arg in node.args:
                self.loose.extend(self._uncalled_autocasts(arg.value))
        callee = self.walk.callee
        if callee is None:
            if (name := dotted(node.func)) is not None:
                self.name_calls[name].append((node, self.walk.qualname))
            return
        if (spelling := self._autocast_spelling(callee)) is not None:
            self._autocast(node, spelling)
        elif (spelling := self._scaler_spelling(callee)) is not None:
            self._scaler(node, spelling)
        elif (name := apis.optimizer_class(callee)) is not None:
            self.optimizers.append((node, name))
        elif (source := _custom_autograd(callee, node)) is not None:
            self.part.custom_autograd[node] = source

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if type(node.decorator) is not cst.Call and (
            source := _custom_autograd(self.walk.resolve(node.decorator), None)
        ):
            self.part.custom_autograd[node] = source

    def _uncalled_autocasts(self, value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, str]]:
        """The CUDA-capable autocast APIs ``value`` names without calling them (itself, or
        a branch of a conditional expression)."""
        found: list[tuple[cst.BaseExpression, str]] = []
        while type(value) is cst.IfExp:
            found.extend(self._uncalled_autocasts(value.body))
            value = value.orelse
        if type(value) is cst.Name or type(value) is cst.Attribute:
            qualified = self.walk.resolve(value)
            if qualified in apis.CUDA_AUTOCAST or qualified in apis.TORCH_AUTOCAST:
                found.append((value, qualified))
        return found

    def _tensor_device_type(self, device: cst.BaseExpression | None) -> bool:
        """``x.device.type`` where ``x`` is a tensor the function is handed: a parameter (keyword-only
        too) of a ``forward`` method of a class (a layer's input; a plain function named ``forward``
        is no layer's) or one annotated ``torch.Tensor``."""
        if not (
            type(device) is cst.Attribute
            and device.attr.value == "type"
            and type(device.value) is cst.Attribute
            and device.value.attr.value == "device"
            and type(device.value.value) is cst.Name
        ):
            return False
        function = self.walk.enclosing_function
        name = device.value.value.value
        if function is None or name in ("self", "cls"):
            return False
        params = function.params
        param = next(
            (p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == name), None
        )
        if param is None:
            return False
        annotation = param.annotation.annotation if param.annotation is not None else None
        return self._layer_forward(function) or (
            annotation is not None and self.walk.resolve(annotation) == "torch.Tensor"
        )

    def _layer_forward(self, function: cst.FunctionDef) -> bool:
        """``function`` is the ``forward`` method of a class (its first parameter ``self``, the
        function directly in the class: a layer's forward), not a plain function of that name."""
        first = next(iter((*function.params.posonly_params, *function.params.params)), None)
        return (
            function.name.value == "forward"
            and self.walk.class_depth > 0
            and len(self.walk.functions) == 1
            and first is not None
            and first.name.value == "self"
        )

    def _autocast(
        self, node: cst.Call, spelling: Spelling, through: str | None = None, owner: str | None = None
    ) -> None:
        if spelling == "torch_xla" and not _names_device_first(node):
            spelling = "torch_xla_1_13"
        arguments = _by_parameter(node, apis.AUTOCAST_PARAMETERS[spelling])
        if arguments is None:
            if spelling == "cuda_amp" or (spelling == "torch" and _names_cuda(node)):
                self.part.unpacked_autocasts.add(node)
            return
        call = AutocastCall(spelling, "cuda", arguments, through)
        device = call.device
        if spelling in ("torch_xla", "torch_xla_1_13"):
            call = AutocastCall(spelling, "xla", arguments)
        elif spelling == "torch":
            kind = string_value(device)
            if kind == "xla":
                call = AutocastCall(spelling, "xla", arguments, through)
            elif kind is not None and kind != "cuda":
                return  # CPU (or another accelerator's) autocast: not ours
            elif kind is None:
                if (name := dotted(device)) is None:
                    return
                if self._tensor_device_type(device):
                    self.part.tensor_device_types.add(node)
                self.device_type_uses.add(name)
        self.part.autocasts[node] = call
        enabled = call.argument("enabled")
        if not is_false(enabled):
            # An autocast that only switches autocast off (x-transformers' `@autocast('cuda',
            # enabled=False)`) sets up no mixed precision for the callers of its function.
            self.part.owners.add(self.walk.qualname if owner is None else owner)
            self.part.autocast_owners.add(self.walk.qualname if owner is None else owner)
        if enabled is not None:
            self.enabled_refs.append((node, set(names_in(enabled))))

    def _scaler(self, node: cst.Call, spelling: Spelling) -> None:
        args = list(node.args)
        device: cst.BaseExpression | None = None
        flavor: Flavor = "xla" if spelling == "torch_xla" else "cuda"
        if spelling in ("torch", "sharded", "cuda_amp"):
            device_arg = next((a for a in args if a.keyword is not None and a.keyword.value == "device"), None)
            if device_arg is None and args and args[0].keyword is None and not args[0].star:
                device_arg = args[0]
                if spelling == "cuda_amp" and string_value(device_arg.value) is None:
                    # torch.cuda.amp's scaler takes init_scale first; a string there is the
                    # device of torch.amp's, which the same name holds under a fallback import
                    # (`try: from torch import GradScaler` / `except: from torch.cuda.amp ...`).
                    device_arg = None
            kind = string_value(device_arg.value) if device_arg is not None else "cuda"
            if kind == "xla":
                flavor = "xla"
            elif kind != "cuda":
                return
            if device_arg is not None:
                args.remove(device_arg)
                device = device_arg.value
        self.part.scalers[node] = ScalerCall(spelling, flavor, tuple(args), device)
        self.part.owners.add(self.walk.qualname)
        self.part.scaler_owners.add(self.walk.qualname)
        enabled = call_args(node)[1].get("enabled")
        if enabled is not None:
            self.enabled_refs.append((node, set(names_in(enabled.value))))

    @staticmethod
    def _autocast_spelling(callee: str) -> Spelling | None:
        return _spelling(callee, _AUTOCAST_SPELLINGS)

    @staticmethod
    def _scaler_spelling(callee: str | None) -> Spelling | None:
        return _spelling(callee, _SCALER_SPELLINGS)

    # -- results ----------------------------------------------------------------------------

    def finish(self) -> None:
        part = self.part
        self._follow_names()
        owning = {method for owner in part.owners if (method := _method(owner)) is not None}
        # A method that steps a scaler another method built (``self.scaler.scale(loss)``) uses it too.
        owning |= {method for method, receivers in self.receivers.items() if receivers & part.scaler_names}
        while grown := {m for m, callees in self.self_calls.items() if m not in owning and callees & owning}:
            owning |= grown
        part.method_owners = owning
        for name in self.device_type_uses:
            values = self.assigned.get(name, [])
            for value in values:
                if _mentions(value, "cuda") or mentions(value, self.facts.device.is_available_call):
                    part.device_types[value] = name
                elif _mentions(value, "xla"):
                    part.xla_device_types.add(name)
        for name, values in self.assigned.items():
            for value in values:
                if _chooses_precision(value) and mentions(value, part.is_precision_check):
                    part.precision_choices[value] = name
        part.choosing_assignments = {
            self.assignment_of[id(value)] for value in [*part.device_types, *part.precision_choices]
        }
        part.imported = self.walk.analysis(ProjectAnalysis).uses_amp()
        precision_names = set(part.precision_choices.values())
        for call, refs in self.enabled_refs:
            if refs & precision_names and call in part.scalers:
                part.precision_scalers.add(call)
            part.flags.update(refs - part.owned_names)
        if part.active:
            for call, name in self.optimizers:
                if name in apis.SYNCFREE_OPTIMIZERS:
                    part.syncfree[call] = _sync_free(call, name)
                else:
                    part.other_optimizers[call] = name

    def _follow_names(self) -> None:
        """torch.autocast bound to a name is followed to the calls of that name (they
        take its device type); CUDA autocast bound to a name (it has no device argument
        to change), or handed on otherwise, is a reference the rewrite reports."""
        for name, references in self.bound.items():
            calls = self.name_calls.get(name, [])
            for reference, qualified in references:
                if qualified in apis.TORCH_AUTOCAST and calls:
                    for call, owner in calls:
                        self._autocast(call, "torch", name, owner)
                else:
                    self.part.autocast_references[reference] = qualified
        for reference, qualified in self.loose:
            self.part.autocast_references[reference] = qualified


def _names_device_first(call: cst.Call) -> bool:
    """``torch_xla.amp.autocast(device, ...)`` (torch_xla 2.1 on) rather than torch_xla 1.13's,
    which is torch.cuda.amp.autocast(enabled, dtype, cache_enabled): a ``device=`` keyword, or
    a first positional argument that is a device (a call, a string, a name that says device)
    rather than a flag (``use_amp``, ``args.amp``, True)."""
    if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
        return True
    first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else None
    if first is None:
        return False
    value = first.value
    if isinstance(value, (cst.Call, cst.SimpleString, cst.FormattedString)):
        return True
    name = dotted(value)
    return name is not None and "dev" in name.rsplit(".", 1)[-1].lower()


def _names_cuda(call: cst.Call) -> bool:
    """``torch.autocast("cuda", **kwargs)``: the device type, given before the unpacked rest, is CUDA's."""
    first = call.args[0] if call.args else None
    device = next((a for a in call.args if a.keyword is not None and a.keyword.value == "device_type"), None)
    if device is None and first is not None and first.keyword is None and not first.star:
        device = first
    return device is not None and string_value(device.value) == "cuda"


def _by_parameter(call: cst.Call, parameters: tuple[str, ...]) -> tuple[tuple[str, cst.Arg], ...] | None:
    """The call's arguments keyed by parameter name; None if it unpacks any."""
    named: list[tuple[str, cst.Arg]] = []
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            named.append((arg.keyword.value, arg))
        elif position < len(parameters):
            named.append((parameters[position], arg))
            position += 1
        else:
            return None
    return tuple(named)


def _sync_free(call: cst.Call, name: str) -> SyncFreeOptimizer:
    dropped = tuple(a for a in call.args if a.keyword is not None and a.keyword.value in apis.KERNEL_KEYWORDS)
    return SyncFreeOptimizer(name, dropped, any(a.star == "**" for a in call.args))


def _mentions(value: cst.BaseExpression, device_type: str) -> bool:
    return any(string_value(n) == device_type for n in walk(value))


# The spelling of an autocast and of a grad scaler by the qualified name called.
_AUTOCAST_SPELLINGS: tuple[tuple[frozenset[str], Spelling], ...] = (
    (apis.CUDA_AUTOCAST, "cuda_amp"),
    (apis.TORCH_AUTOCAST, "torch"),
    (apis.XLA_AUTOCAST, "torch_xla"),
)
_SCALER_SPELLINGS: tuple[tuple[frozenset[str], Spelling], ...] = (
    (apis.CUDA_GRAD_SCALERS, "cuda_amp"),
    (apis.TORCH_GRAD_SCALERS, "torch"),
    (apis.XLA_GRAD_SCALERS, "torch_xla"),
    (apis.SHARDED_GRAD_SCALERS, "sharded"),
)


def _spelling(callee: str | None, table: tuple[tuple[frozenset[str], Spelling], ...]) -> Spelling | None:
    return next((spelling for names, spelling in table if callee in names), None)


def _chooses_precision(value: cst.BaseExpression) -> bool:
    """The value yields a precision: 'bfloat16'/'float16' strings or torch dtypes."""
    for node in walk(value):
        if string_value(node) in _PRECISIONS:
            return True
        if type(node) is cst.Attribute and node.attr.value in _PRECISIONS and dotted(node.value) is not None:
            return True
    return False


def _custom_autograd(qualified: str | None, call: cst.Call | None) -> tuple[str, Flavor, Spelling] | None:
    """A custom autograd decorator's concept (custom_fwd/custom_bwd), what it runs as ("cuda"
    or "xla") and its spelling ("torch" for torch.amp's, whose device_type says which)."""
    if qualified in apis.CUDA_CUSTOM_AUTOGRAD:
        return apis.CUDA_CUSTOM_AUTOGRAD[qualified], "cuda", "cuda_amp"
    if qualified in apis.XLA_CUSTOM_AUTOGRAD:
        return apis.XLA_CUSTOM_AUTOGRAD[qualified], "xla", "torch_xla"
    if qualified in apis.TORCH_CUSTOM_AUTOGRAD and call is not None:
        kind = string_value(call_args(call)[1].get("device_type", _NO_ARG).value)
        if kind == "cuda":
            return apis.TORCH_CUSTOM_AUTOGRAD[qualified], "cuda", "torch"
        if kind == "xla":
            return apis.TORCH_CUSTOM_AUTOGRAD[qualified], "xla", "torch"
    return None


_NO_ARG = cst.Arg(cst.Name("None"))


def _method(qualname: str) -> str | None:
    """``Cls.method`` of a qualified name inside a method (``Cls.method.inner`` too); None elsewhere."""
    parts = qualname.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else None
