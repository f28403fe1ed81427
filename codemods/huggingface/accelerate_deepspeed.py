"""Accelerate's DeepSpeed integration, which XLA does not run (XLA810): what of it a file uses.

Accelerate trains through DeepSpeed only where its distributed type is DEEPSPEED; on XLA it is
XLA, so (checked on accelerate 1.15, PJRT_DEVICE=CPU): ``accelerator.state.deepspeed_plugin`` is
None (state.py: None unless the type is DEEPSPEED), ``accelerator.prepare`` wraps only torch
optimizers and schedulers and hands ``DummyOptim``/``DummyScheduler`` back unchanged (classes with
no ``step``), it returns the model itself, which has no DeepSpeedEngine method
(``save_checkpoint``), and ``Accelerator(deepspeed_plugin=...)`` needs deepspeed installed
(ImportError) while XLA never runs its engine.  A read of the plugin under a condition that names
DeepSpeed (``if accelerator.distributed_type == DistributedType.DEEPSPEED:``, ``if
ds_plugin is not None:``, its else branch, the right of ``plugin is not None and plugin.zero_stage``, what
follows ``if plugin is None: return``) is the script's own guard and is left alone, and so is an engine
method or a placeholder there.

An engine method of a prepared object is reported only where the file otherwise uses the integration
(a placeholder, the plugin, its ``deepspeed_plugin``, ``DistributedType.DEEPSPEED``) and the object's
class may be DeepSpeed's: not where a class of the file defines a method of that name (a model's own
``save_checkpoint``, which ``prepare`` hands back and which runs on XLA), nor where the object was built
by a class of another module of the project (which may define it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, method_name, receiver
from codemods.engine.walk import Analysis, Walk
from codemods.huggingface.accelerate_loaders import PREPARE_METHODS

if TYPE_CHECKING:
    from codemods.facts import Facts

# Accelerate's placeholders for what a DeepSpeed config builds (utils/deepspeed.py, re-exported
# by accelerate.utils only where deepspeed is installed).
PLACEHOLDERS = {
    f"{module}.{name}": name
    for module in ("accelerate.utils", "accelerate.utils.deepspeed")
    for name in ("DummyOptim", "DummyScheduler")
}
PLUGINS = frozenset(
    {"accelerate.DeepSpeedPlugin", "accelerate.utils.DeepSpeedPlugin", "accelerate.utils.dataclasses.DeepSpeedPlugin"}
)
ACCELERATOR_STATES = frozenset({"accelerate.state.AcceleratorState", "accelerate.AcceleratorState"})
# DeepSpeedEngine methods that an nn.Module does not have.
ENGINE_METHODS = frozenset(
    {"save_checkpoint", "load_checkpoint", "is_gradient_accumulation_boundary", "get_global_grad_norm"}
)
ACCELERATOR = "accelerate.Accelerator"


class AccelerateDeepSpeedAnalysis(Analysis):
    facts: Facts

    name = "accelerate_deepspeed"
    fills = "huggingface"
    reads = ("project",)  # its context: whether a callee is of a project module

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.uses = self.facts.huggingface.accelerate_deepspeed
        self.accelerators: set[str] = set()
        self.prepared: set[tuple[str, str]] = set()  # (scope, name); ("", "self.model") for attributes
        self.engine_calls: list[tuple[str, str, cst.Call]] = []
        self.signals = 0  # uses of the integration, guarded ones included
        self.own_methods: set[str] = set()  # methods the file's classes define
        self.built: dict[tuple[str, str], str] = {}  # (scope, name) -> the callee that built it, as resolved
        self.projects_built: set[tuple[str, str]] = set()  # prepared objects a project class built
        self.plugin_names: set[str] = set()  # names bound to a ``deepspeed_plugin``
        self.bool_ops: list[cst.BooleanOperation] = []  # enclosing ``and``/``or``
        self.early_exits: set[int] = set()  # blocks after whose ``if plugin is None: return`` the rest is guarded

    def _accelerator(self, name: str | None) -> bool:
        return name is not None and (name in self.accelerators or "accelerator" in name.rsplit(".", 1)[-1].lower())

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            if (kind := PLACEHOLDERS.get(self.walk.resolve(base.value) or "")) is not None:
                self.uses[base.value] = kind
        for statement in node.body.body:
            if type(statement) is cst.FunctionDef:
                self.own_methods.add(statement.name.value)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self.bool_ops.append(node)

    def leave_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self.bool_ops.pop()

    def leave_If(self, node: cst.If) -> None:
        """``if plugin is None: return ...``: what follows in the block runs only with the plugin."""
        body = node.body.body
        last = body[-1] if body else None
        if (
            type(last) is cst.SimpleStatementLine
            and type(last.body[-1]) in (cst.Return, cst.Raise, cst.Continue, cst.Break)
            and self._names_deepspeed(node.test)
            and (block := self.walk.parents.get(id(node))) is not None
        ):
            self.early_exits.add(block)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "DEEPSPEED":
            self.signals += 1
        self._plugin_read(node)

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.resolve(node.func)
        if callee in PLACEHOLDERS or callee in PLUGINS:
            self.signals += 1
        if callee in PLACEHOLDERS:
            if not self._guarded(node):
                self.uses[node] = PLACEHOLDERS[callee]
        elif callee in PLUGINS:
            self.uses[node] = "DeepSpeedPlugin"
        elif (
            method_name(node) in ENGINE_METHODS
            and (owner := dotted(receiver(node))) is not None
            and not self._guarded(node)
        ):
            self.engine_calls.append((self.walk.qualname, owner, node))

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if type(value) is cst.Attribute and value.attr.value == "deepspeed_plugin":
            for target in node.targets:
                if (name := dotted(target.target)) is not None:
                    self.plugin_names.add(name)
        if type(value) is not cst.Call:
            return
        scope = self.walk.qualname
        for target in node.targets:
            if self.walk.resolve(value.func) == ACCELERATOR and (name := dotted(target.target)) is not None:
                self.accelerators.add(name)
            elif method_name(value) in PREPARE_METHODS and self._accelerator(dotted(receiver(value))):
                bound = target.target
                elements = [e.value for e in bound.elements] if isinstance(bound, (cst.Tuple, cst.List)) else [bound]
                handed = [a.value for a in value.args] if len(value.args) == len(elements) else []
                for index, element in enumerate(elements):
                    key = (
                        (scope, element.value)
                        if type(element) is cst.Name
                        else ("", attribute)
                        if type(element) is cst.Attribute and (attribute := dotted(element)) is not None
                        else None
                    )
                    if key is None:
                        continue
                    self.prepared.add(key)
                    if handed and self._projects_class(handed[index], scope):
                        self.projects_built.add(key)
            elif (name := dotted(target.target)) is not None and (built := dotted(value.func)) is not None:
                self.built[(scope if "." not in name else "", name)] = self.walk.resolve(value.func) or built

    def _projects_class(self, value: cst.BaseExpression, scope: str) -> bool:
        """Whether ``value`` was built by a class of another module of the project."""
        if type(value) is cst.Call:
            callee = self.walk.resolve(value.func) or dotted(value.func)
        elif (name := dotted(value)) is not None:
            callee = self.built.get((scope if "." not in name else "", name)) or self.built.get(("", name))
        else:
            return False
        if callee is None or "." not in callee:
            return False
        return self.facts.project.context.names_project_module(callee.split(".", 1)[0])

    def _plugin_read(self, node: cst.Attribute) -> None:
        """``<accelerator>.state.deepspeed_plugin.<anything>``, ``<accelerator>.deepspeed_plugin.<...>``,
        ``AcceleratorState().deepspeed_plugin.<...>``: an attribute of what is None on XLA."""
        plugin = node.value
        if type(plugin) is not cst.Attribute or plugin.attr.value != "deepspeed_plugin":
            return
        owner = plugin.value
        if (
            (type(owner) is cst.Attribute and owner.attr.value == "state")
            or self._accelerator(dotted(owner))
            or (type(owner) is cst.Call and self.walk.resolve(owner.func) in ACCELERATOR_STATES)
        ):
            self.signals += 1
            if not self._guarded(node):
                self.uses[node] = "deepspeed_plugin"

    def _names_deepspeed(self, test: cst.CSTNode) -> bool:
        return any(
            "deepspeed" in sub.lower() or sub == "distributed_type" or sub in self.plugin_names for sub in _names(test)
        )

    def _guarded(self, node: cst.CSTNode) -> bool:
        """Under a condition that names DeepSpeed, Accelerate's distributed type or a name bound to
        the plugin: an ``if`` (either branch), the right of an ``and``/``or`` whose left does, or
        after an ``if`` that does and leaves the block (``if plugin is None: return 0``)."""
        ancestors: set[int] = set()
        key: int | None = id(node)
        while key is not None:
            ancestors.add(key)
            key = self.walk.parents.get(key)
        if ancestors & self.early_exits:
            return True
        if any(id(op.right) in ancestors and self._names_deepspeed(op.left) for op in self.bool_ops):
            return True
        return any(self._names_deepspeed(cond.test) for cond in self.walk.conds)

    def finish(self) -> None:
        # The file's own use of the integration, besides the engine methods themselves.
        if not self.signals:
            return
        for scope, owner, call in self.engine_calls:
            key = (scope, owner) if (scope, owner) in self.prepared else ("", owner)
            if (
                key in self.prepared
                and key not in self.projects_built
                and (method_name(call) or "") not in self.own_methods
            ):
                self.uses[call] = "engine"


def _names(node: cst.CSTNode) -> list[str]:
    """The names and attribute names in ``node``."""
    found: list[str] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            found.append(current.value)
        stack.extend(current.children)
    return found
