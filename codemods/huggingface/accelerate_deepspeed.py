"""Accelerate's DeepSpeed integration, which XLA does not run (XLA810): what of it a file uses.

Accelerate trains through DeepSpeed only where its distributed type is DEEPSPEED; on XLA it is
XLA, so (checked on accelerate 1.15, PJRT_DEVICE=CPU): ``accelerator.state.deepspeed_plugin`` is
None (state.py: None unless the type is DEEPSPEED), ``accelerator.prepare`` wraps only torch
optimizers and schedulers and hands ``DummyOptim``/``DummyScheduler`` back unchanged (classes with
no ``step``), it returns the model itself, which has no DeepSpeedEngine method
(``save_checkpoint``), and ``Accelerator(deepspeed_plugin=...)`` needs deepspeed installed
(ImportError) while XLA never runs its engine.  A read of the plugin under a condition that names
DeepSpeed (``if accelerator.distributed_type == DistributedType.DEEPSPEED:``, ``if
ds_plugin is not None:``) is the script's own guard and is left alone."""

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

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.uses = self.facts.huggingface.accelerate_deepspeed
        self.accelerators: set[str] = set()
        self.prepared: set[tuple[str, str]] = set()  # (scope, name); ("", "self.model") for attributes
        self.engine_calls: list[tuple[str, str, cst.Call]] = []

    def _accelerator(self, name: str | None) -> bool:
        return name is not None and (name in self.accelerators or "accelerator" in name.rsplit(".", 1)[-1].lower())

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            if (kind := PLACEHOLDERS.get(self.walk.resolve(base.value) or "")) is not None:
                self.uses[base.value] = kind

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.walk.resolve(node.func)
        if callee in PLACEHOLDERS:
            self.uses[node] = PLACEHOLDERS[callee]
        elif callee in PLUGINS:
            self.uses[node] = "DeepSpeedPlugin"
        elif method_name(node) in ENGINE_METHODS and (owner := dotted(receiver(node))) is not None:
            self.engine_calls.append((self.walk.qualname, owner, node))

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if type(value) is not cst.Call:
            return
        for target in node.targets:
            if self.walk.resolve(value.func) == ACCELERATOR and (name := dotted(target.target)) is not None:
                self.accelerators.add(name)
            elif method_name(value) in PREPARE_METHODS and self._accelerator(dotted(receiver(value))):
                bound = target.target
                for element in (
                    [e.value for e in bound.elements] if isinstance(bound, (cst.Tuple, cst.List)) else [bound]
                ):
                    if type(element) is cst.Name:
                        self.prepared.add((self.walk.qualname, element.value))
                    elif type(element) is cst.Attribute and (attribute := dotted(element)) is not None:
                        self.prepared.add(("", attribute))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        """``<accelerator>.state.deepspeed_plugin.<anything>``, ``<accelerator>.deepspeed_plugin.<...>``,
        ``AcceleratorState().deepspeed_plugin.<...>``: an attribute of what is None on XLA."""
        plugin = node.value
        if type(plugin) is not cst.Attribute or plugin.attr.value != "deepspeed_plugin" or self._guarded():
            return
        owner = plugin.value
        if (
            (type(owner) is cst.Attribute and owner.attr.value == "state")
            or self._accelerator(dotted(owner))
            or (type(owner) is cst.Call and self.walk.resolve(owner.func) in ACCELERATOR_STATES)
        ):
            self.uses[node] = "deepspeed_plugin"

    def _guarded(self) -> bool:
        """Under a condition that names DeepSpeed or Accelerate's distributed type."""
        for cond in self.walk.conds:
            for sub in _names(cond.test):
                if "deepspeed" in sub.lower() or sub == "distributed_type":
                    return True
        return False

    def finish(self) -> None:
        for scope, owner, call in self.engine_calls:
            if (scope, owner) in self.prepared or ("", owner) in self.prepared:
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
