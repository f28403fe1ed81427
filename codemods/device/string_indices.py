"""CUDA indices named by the device strings built from them: ``"cuda:" + str(args.device)``,
``f"cuda:{args.device}"``, ``"cuda:{}".format(gpu)``, ``"cuda:%d" % gpu`` make ``args.device``
(``gpu``) a CUDA index, so ``.to(args.device)`` is ``.to(0)``: cuda:0, which raises without CUDA
("Found no NVIDIA driver").  The part of DeviceAnalysis that finds them in the file, hands them on
to the callables of the project's other modules that the file hands the namespace holding them
(``Net(args)``: ``index_attributes_handed``, for the module of ``Net``), and reads what the run's
other files hand this file's callables (``.to(args.device)`` in ``Net.__init__(self, args)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, is_cuda_device_string
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.engine.walk import Walk
    from codemods.facts import Facts

_PRINTER = cst.Module(body=[])


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
        # Calls of what the imports may resolve to a project callable, with a name among their
        # arguments (``Net(args)``): the call.
        self.namespace_calls_out: list[cst.Call] = []
        # Moves to a CUDA index of the project's other files: the move's device -> why.
        self.handed_index_why: dict[str, str] = {}
        self.module_seen: cst.Module | None = None  # (DeviceWalk's visit_Module sets it)
        # Names bound to a device somewhere (``args.device = device``): no index, whatever string is
        # built from them before.
        self.device_bound: set[str] = set()

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._saw_string(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._saw_string(node)

    def saw_call_for_indices(self, node: cst.Call) -> None:
        """``"cuda:{}".format(x)``; a call handing names on (``Net(args)``)."""
        self._saw_string(node)
        if type(node.func) in (cst.Name, cst.Attribute) and any(dotted(a.value) for a in node.args):
            self.namespace_calls_out.append(node)

    def saw_binding_for_indices(self, name: str, value: cst.BaseExpression, names_a_device: bool) -> None:
        """``name = value``: a device (a device string, ``torch.device(...)``, a name that holds one)?"""
        if names_a_device or (type(value) is cst.Call and self.walk.resolve(value.func) == "torch.device"):
            self.device_bound.add(name)

    def string_index_names(self) -> set[str]:
        """The names device strings are built from that nothing binds to a device."""
        return set(self.string_indices) - self.device_bound

    def _saw_string(self, node: cst.CSTNode) -> None:
        if (name := interpolated_index(node)) is not None:
            self.string_indices.setdefault(name, _PRINTER.code_for_node(node))

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
                    and "." not in index_name.removeprefix(f"{handed}.")
                )
                at, keyword = (-1, arg.keyword.value) if arg.keyword is not None else (index, "")
                self.part.index_attributes_handed.update(
                    (found.summary.path, found.name, at, keyword, attribute) for attribute in attributes
                )
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
        of this file (a function, or a class's ``__init__``) that a file of the run hands a namespace
        whose ``device`` is a CUDA index there: a CUDA index here too."""
        context = self.facts.project.context
        moved = {name for _, _, name in (*self.moves_to, *self.device_keywords)}
        for name in sorted(moved - self.part.cuda_indices):
            root, _, attribute = name.partition(".")
            if not attribute or "." in attribute:
                continue
            for function, params in self.function_params.items():
                method = function.endswith(".__init__") and function.count(".") == 1
                if root not in params or root in ("self", "cls") or (function.count(".") and not method):
                    continue
                callee = function.removesuffix(".__init__")
                index = params.index(root)  # (the parameters without self)
                callers = [
                    path for path, attr in context.index_attributes_handed(callee, index, root) if attr == attribute
                ]
                if callers:
                    self.part.cuda_indices.add(name)
                    self.handed_index_why[name] = (
                        f"{callers[0]} hands `{callee}` its `{root}`, whose `{attribute}` is a CUDA index there "
                        "(a `cuda:` device string is built from it): an integer device is cuda:N, which fails "
                        "without CUDA"
                    )
                    break

    def parameter_attribute_moves(self) -> None:
        """For the project's other files: the moves to an attribute of a parameter of a top-level
        function or of a class's ``__init__`` (``.to(args.device)`` in ``Net.__init__(self, args)``),
        with their code and line (``parameter_attribute_moves``)."""
        source = None
        for call, _, name in (*self.moves_to, *self.device_keywords):
            root, _, attribute = name.partition(".")
            if not attribute or "." in attribute or root in ("self", "cls"):
                continue
            for function, params in self.function_params.items():
                method = function.endswith(".__init__") and function.count(".") == 1
                if root not in params or (function.count(".") and not method):
                    continue
                if source is None:
                    source = self.module_seen.code if self.module_seen is not None else ""
                written = _PRINTER.code_for_node(call)
                at = source.find(written)
                line = f", line {source.count(chr(10), 0, at) + 1}" if at >= 0 else ""
                self.part.parameter_attribute_moves.add(
                    (function.removesuffix(".__init__"), params.index(root), root, attribute, f"`{written}`{line}")
                )
