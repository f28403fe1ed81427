"""What the project's other modules say of this file's device flags (for device/values.py): a
flag read from a module's parsed arguments (``args.cuda`` where ``args = get_args()``) and a flag
handed to a module that picks the device with it (``Exp(args)``): what each is on an XLA host
after the port, and whether that module is read and converted in this run (a device value that
another module decides is device/from_project.py's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.where import Where
from codemods.engine.nodes import dotted, walk
from codemods.engine.walk import Analysis

if TYPE_CHECKING:
    from codemods.device.analysis import DeviceAnalysis
    from codemods.device.where import Binding
    from codemods.facts import Facts
    from codemods.project.analysis import ProjectAnalysis


class ProjectFlags(Analysis):
    """The part of DeviceValueAnalysis that reads the summaries of the project's other modules."""

    facts: Facts
    device: DeviceAnalysis
    project: ProjectAnalysis
    params: dict[str, set[str]]  # function -> its parameters
    # Names handed to a callable of another project module: name -> (the call, the callable, the position).
    handed: dict[str, list[tuple[cst.Call, str, int]]]

    if TYPE_CHECKING:

        def _live(self, name: str, scope: str) -> list[Binding]: ...

    def _imported_flag(self, name: str, scope: str) -> Where | None:
        """``_flag_from_module``, else ``cfg.train_on_gpu`` where a class of the project sets
        ``self.train_on_gpu = torch.cuda.is_available()`` and nothing else: False on an XLA host,
        which the port does not change there (folder_scans.Mentions.cuda_checked)."""
        found = self._flag_from_module(name, scope)
        attribute = name.rpartition(".")[2]
        if found is not None or "." not in name or not (checked := self.facts.project.context.cuda_checked(attribute)):
            return found
        return Where(False, f"`{name}` is `torch.cuda.is_available()` (`self.{attribute}` in {checked})", None)

    def _flag_from_module(self, name: str, scope: str) -> Where | None:
        """``args.cuda`` where ``args = get_args()`` of another module of the project, which
        returns that flag: what it is on an XLA host (``on_xla`` holds the flag's truth), why,
        and whether that module is read and converted in this run (``elsewhere`` if not)."""
        root, _, attr = name.partition(".")
        values = self._live(root, scope) if attr and "." not in attr else []
        if len(values) != 1 or type(call := values[0].value) is not cst.Call or (func := dotted(call.func)) is None:
            return None
        origin = self.project.origin(func)
        if origin is None:
            return None
        if origin.summary is None:
            return Where(
                None,
                f"`{name}` comes from `{func}()` in {self.project.module_file(func)}, which this run does not read",
                call,
                True,
            )
        flag = origin.summary.flag_of(origin.name, attr)
        if flag is None:
            return None
        truth, code = flag
        where = f"`{name}` comes from `{func}()` in {origin.summary.path}"
        if origin.summary.pending:
            return Where(
                None,
                f"{where}, which this run does not convert: there `{code}` is False on an XLA host",
                call,
                True,
                origin.summary.path,
            )
        return Where(truth, f"{where}, where it is `{code}`", call)

    def _handed_flags(self) -> None:
        """``args.use_gpu = torch.cuda.is_available() and args.use_gpu`` handed to a callable
        of a project module that picks the device with ``use_gpu`` (``exp = Exp(args)``, the
        choice in its base class): the flag picks the device, its check is dropped (XLA104)."""
        device = self.facts.device
        decided = {*device.flag_values, *device.blocked_flags}
        for name, values in self.device.flag_candidates.items():
            root, _, attr = name.partition(".")
            if "." in attr or any(v in decided for v in values):
                continue
            consumer = (
                None
                if not attr
                else next(
                    (
                        found.summary.path
                        for call, callee in self.project.calls
                        if any(
                            a.keyword is None and type(a.value) is cst.Name and a.value.value == root for a in call.args
                        )
                        and (found := self.project.origin(callee)) is not None
                        and found.summary is not None
                        and attr in found.summary.condition_attributes
                    ),
                    None,
                )
            )
            consumer = consumer or self._parameter_consumer(name)
            if consumer is not None:
                self.device.switch_on(name, f"picks the device in {consumer}")
                checks = {sub for v in values for sub in walk(v)}
                device.kept_availability_checks -= checks

    def _parameter_consumer(self, name: str) -> str | None:
        """``Net(use_cuda=use_cuda)`` (or by position), where ``Net`` of a project module (or of
        this file) picks the device with that parameter (device/flag_choices.py): the callable, as
        a finding names it."""
        from codemods.device.flag_choices import handed_argument

        for call, callee in self.project.calls:
            found = self.project.origin(callee) if callee.split(".")[0] in self.facts.imports.project_names else None
            if found is not None and found.summary is not None:
                taken, where = found.summary.flag_choices_of(found.name), f"`{callee}` ({found.summary.path})"
            else:
                local = self.facts.device.flag_choices
                taken = sorted((i, p) for f, i, p in local if f in (callee, f"{callee}.__init__"))
                where = f"`{callee}`"
            if any(dotted(arg) == name for i, p in taken if (arg := handed_argument(call, i, p)) is not None):
                return where
        return None

    def flag_in(self, test: cst.BaseExpression, scope: str) -> Where | None:
        """The first flag of another module that ``test`` reads (``not args.cuda``, ``args.cuda
        and x``)."""
        kind = type(test)
        if kind is cst.UnaryOperation:
            return self.flag_in(test.expression, scope)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
        if kind is cst.BooleanOperation:
            return self.flag_in(test.left, scope) or self.flag_in(test.right, scope)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
        name = dotted(test)
        if name is None or name in self.params.get(scope, ()) or self._live(name, scope):
            return None
        return self._imported_flag(name, scope)
