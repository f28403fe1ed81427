"""Obligation 4 for a project's own mmcv runner: a class that subclasses one of mmcv 1.x's runners
(``BaseRunner``, ``EpochBasedRunner``, ``IterBasedRunner``) or registers itself in mmcv's ``RUNNERS``
(``@RUNNERS.register_module()``, over a base the project copied) and whose training loop runs
``self.call_hook('after_train_iter')``: mmcv's OptimizerHook steps the optimizer there
(mmcv/runner/hooks/optimizer.py: zero_grad, backward, ``runner.optimizer.step()``) and nothing ends
the step on XLA.  The loop is the project's, but the step is the library's: the tool neither sees
the step nor can prove which hooks run, so it reports the call (XLA307) unless the loop already
ends its iterations with a barrier (``torch_xla.sync()``, ``xm.mark_step()``)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods.engine.nodes import method_name, string_value, walk

_RUNNER_BASES = frozenset(
    {
        "mmcv.runner.BaseRunner",
        "mmcv.runner.base_runner.BaseRunner",
        "mmcv.runner.EpochBasedRunner",
        "mmcv.runner.epoch_based_runner.EpochBasedRunner",
        "mmcv.runner.IterBasedRunner",
        "mmcv.runner.iter_based_runner.IterBasedRunner",
    }
)
_RUNNER_REGISTRIES = frozenset({"mmcv.runner.RUNNERS", "mmcv.runner.builder.RUNNERS"})
# The hook point where mmcv's OptimizerHook (and its Fp16 and gradient-cumulative variants) steps.
STEP_HOOK = "after_train_iter"
_BARRIERS = frozenset({"sync", "mark_step"})


def is_mmcv_runner(cls: cst.ClassDef, resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    """The class subclasses an mmcv runner, or registers itself in mmcv's ``RUNNERS``."""
    if any(resolve(base.value) in _RUNNER_BASES for base in cls.bases):
        return True
    for decorator in cls.decorators:
        call = decorator.decorator
        if (
            type(call) is cst.Call
            and type(func := call.func) is cst.Attribute
            and func.attr.value == "register_module"
            and resolve(func.value) in _RUNNER_REGISTRIES
        ):
            return True
    return False


def hooked_step_calls(cls: cst.ClassDef, resolve: Callable[[cst.CSTNode], str | None]) -> list[cst.Call]:
    """The ``self.call_hook('after_train_iter')`` calls in the loops of an mmcv runner class's own
    methods whose loop ends no iteration with a barrier; none for any other class."""
    if not is_mmcv_runner(cls, resolve):
        return []
    found: list[cst.Call] = []
    for method in (s for s in cls.body.body if type(s) is cst.FunctionDef):
        # (node, the outermost loop around it in the method): nested functions and classes are skipped.
        stack: list[tuple[cst.CSTNode, cst.For | cst.While | None]] = [(method.body, None)]
        while stack:
            node, loop = stack.pop()
            if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                continue
            if loop is None and isinstance(node, (cst.For, cst.While)):
                loop = node
            if loop is not None and type(node) is cst.Call and _calls_step_hook(node) and not _synced(loop, resolve):
                found.append(node)
            stack.extend((child, loop) for child in node.children)
    return found


def _calls_step_hook(call: cst.Call) -> bool:
    func = call.func
    return (
        method_name(call) == "call_hook"
        and type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value == "self"
        and bool(call.args)
        and string_value(call.args[0].value) == STEP_HOOK
    )


def _synced(loop: cst.For | cst.While, resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    return any(
        type(node) is cst.Call
        and (resolved := resolve(node.func) or "").startswith("torch_xla")
        and resolved.rpartition(".")[2] in _BARRIERS
        for node in walk(loop)
    )
