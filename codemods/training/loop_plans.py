"""Which loops of the file train, which evaluate on the device, and what each needs: a
training loop gets a barrier at the end of every iteration, or feeds from a device loader
(its loader wrapped in MpDeviceLoader where every batch moves to the XLA device); a loop of
a model's forward computation or of a generator runs inside the step and gets none; a loop
that moves batches to the device without training is an evaluation loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.apis import ACCELERATE_STEP_ENDERS
from codemods.device.batch_shapes import host_reads_before_moves
from codemods.device.ported_devices import CUDA
from codemods.device.shapes import is_device_name
from codemods.engine.nodes import arg_value, dotted, method_name, names_in, walk
from codemods.huggingface.accelerate_loaders import loader_state
from codemods.lazy.assignment_shapes import returns_host_numbers
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_bases import project_module_class
from codemods.training.cpu_names import CpuNames
from codemods.training.drivers import StepDrivers
from codemods.training.every_iteration import reads_every_iteration
from codemods.training.facts import LoopPlan
from codemods.training.locked_steps import lock_regions, locked_step
from codemods.training.loop_values import accumulated_into, filters_batches, iterates_data, only_moves, over_weights
from codemods.training.part_loops import steps_each_part

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.device.analysis import DeviceAnalysis
    from codemods.training.records import _Function, _Loop


class LoopPlans(StepDrivers):
    """The part of TrainingAnalysis that plans each loop, once the steps and their drivers are known."""

    device: DeviceAnalysis
    # This file's module classes (qualified names), and the names bound to device loaders.
    forward_class_paths: set[str]
    trainer_classes: dict[str, str]
    device_loaders: set[str]
    loop_records: dict[int, _Loop]
    cpu_names: CpuNames
    # Loops over the parts of one step (part_loops.py), and the loops around them (which train).
    part_loops: set[cst.CSTNode]
    part_loop_outers: set[cst.CSTNode]

    def _plan_loop(self, loop: _Loop, steps: set[str], synced: set[str], by_name: dict[str, list[_Function]]) -> None:
        part = self.part
        if loop.dead:
            return  # under ``if False:``: never runs, so it needs no barrier
        training = self._trains(loop, steps, by_name) or loop.node in self.part_loop_outers
        if training and not loop.backward and loop.outer in part.all_loops and part.is_optimizer(loop.iterates[0]):
            return  # ``for opt in optims: opt.step()`` in a training loop: a part of its step
        if training and loop.node not in self.part_loop_outers and self._steps_each_member(loop, steps, by_name):
            # ``for op in self.optimizers: op.step()``: one step of several optimizers, its caller's
            # loop trains; ``op.step()`` runs no ``step`` of this file (the members are optimizers).
            self.stepped_members.add(loop.iterates[0])
            return
        if training and loop.node in self.part_loops:
            return  # ``for loss in losses: loss.backward()`` in a training iteration (part_loops.py)
        if training:
            part.all_loops.add(loop.node)
        if training and loop.owner:
            part.training_callables.add(loop.owner)
        # Accelerate's prepared loaders and optimizers (Lightning's, Fabric's) already end each step on XLA.
        if (
            loop.barrier
            or self._feeds_from_device_loader(loop.node)
            or (training and self.calls_synced(loop.called, synced, by_name, loop.owner))
        ):
            if training:
                self._settle_backwards(loop.node, self.part.ended_backwards)
            return
        if self._framework_drives_training and not self._unprepared_accelerate_loop(loop, training):
            if training and loop.owner:
                part.framework_trainers.add(loop.owner)
            return
        if training:
            plan = LoopPlan("training")
            wrap = self._loader_to_wrap(loop)
            if wrap is not None:
                plan.wrap_loader, plan.wrap_device = wrap
            part.loops[loop.node] = plan
        # A loop of a model's (or a loss module's) forward computation runs inside the step, a
        # generator's inside its consumer's iteration: that loop's barrier ends it, and a barrier of
        # its own would cut the graph per iteration.  So does a loop that only moves a batch's
        # tensors to the device (``for k, v in batch.items(): batch[k] = v.to(device)``): it is
        # part of the step or the evaluation it feeds.  A loop over a model's weights (an EMA's
        # ``for k, v in ema.state_dict().items()``) updates them inside whatever step calls it.
        elif (
            loop.node not in part.loops_within_a_step
            and any(d == CUDA or is_device_name(d) for d in loop.moved.values())
            and not only_moves(loop.node)
            and not self._builds_items(loop)
            and not over_weights(loop.node)
            and not _in_a_move_method(loop)
            and not self._in_a_step_iteration(loop)
        ):
            reads = loop.host_read or reads_every_iteration(loop.node, loop.branch_reads)  # type: ignore[arg-type]  # a loop's node is a For or a While
            over_data = iterates_data(loop.node, self.facts.loaders.names, self.walk.resolve)
            if not reads and not _calls_a_host_read(loop, by_name):
                part.loops[loop.node] = LoopPlan("evaluation", over_data=over_data)
            elif accumulators := accumulated_into(
                loop.node,
                set(loop.moved),
                # (and a move to a name bound to the CPU device: ``o.to(cpu_device)``, as ``.to("cpu")``)
                lambda call: (
                    self._gives_host_numbers(call, by_name)
                    or (
                        method_name(call) == "to" and self.cpu_names.names_cpu(loop.owner, arg_value(call, 0, "device"))
                    )
                ),
            ):
                part.loops[loop.node] = LoopPlan("evaluation", accumulates=accumulators, over_data=over_data)

    def _trains(self, loop: _Loop, steps: set[str], by_name: dict[str, list[_Function]]) -> bool:
        """The loop runs a backward pass or an optimizer step in its body (or through what it calls)."""
        return (
            loop.backward
            or self._steps(loop.step_receivers)
            or any(self.runs_step(c, steps, by_name, loop.owner) for c in loop.called)
            or any(call in self.part.step_wrappers for call, _, _ in loop.handed)
        )

    def note_part_loops(self, steps: set[str], by_name: dict[str, list[_Function]]) -> None:
        """The loops over the parts of one step (a list of losses, of optimizers) in the body of a
        loop of the same function: the loop around each trains, and it gets the barrier (part_loops.py)."""
        for loop in self.loop_records.values():
            outer = self.loop_records.get(id(loop.outer)) if loop.outer is not None else None
            if outer is None or outer.owner != loop.owner or loop.dead:
                continue
            if (steps_each_part(loop.node) and self._trains(loop, steps, by_name)) or self._accumulates(loop, outer):
                self.part_loops.add(loop.node)
                self.part_loop_outers.add(outer.node)

    def _accumulates(self, loop: _Loop, outer: _Loop) -> bool:
        """A loop of micro-batches (gradient accumulation: ``for i in range(batch_chunk):`` with
        ``loss_i.backward()``) that steps no optimizer, in the body of a loop that steps one
        itself (``optimizer.step()`` after it): one training step's parts, whose gradients add up
        until the outer iteration steps; that iteration is the training loop's.  An inner loop over
        a loader or a data set (a whole epoch's gradients, stepped once) keeps its own barrier, and so
        does a count of a loader's batches (``for i in range(len(loader)): x, y = next(it)``)."""
        return (
            loop.backward
            and _over_micro_batches(loop.node, self.facts.loaders.names, self.walk.resolve)
            and not self._steps_an_optimizer(loop)
            and self._steps_an_optimizer(outer)
        )

    def _steps_an_optimizer(self, loop: _Loop) -> bool:
        """The loop steps an optimizer as ``_steps`` counts one (``optimizer.step()``, a gradient scaler's
        ``scaler.step(optimizer)``), through a call handed an optimizer whose method is ``step``, or
        with the port's ``xm.optimizer_step(optimizer)`` (converted again)."""
        return self._steps(loop.step_receivers) or any(
            type(sub) is cst.Call
            and (
                (self.walk.resolve(sub.func) or "").endswith("xla_model.optimizer_step")
                or (method_name(sub) == "step" and self.part.is_optimizer(dotted(arg_value(sub, 0, "optimizer"))))
            )
            for sub in walk(loop.node)
        )

    def note_locked_steps(
        self, module: cst.Module | None, steps: set[str], by_name: dict[str, list[_Function]]
    ) -> None:
        """The training loops that reach their steps under a thread lock (locked_steps.py)."""
        regions = lock_regions(module, self.walk.resolve) if module is not None else []
        if not regions:
            return
        part = self.part

        def is_step(call: cst.Call) -> bool:
            func = call.func
            if type(func) is cst.Attribute and func.attr.value == "step":
                stepped = dotted(func.value)
                if stepped is not None and self._steps([stepped]):
                    return True
            if (self.walk.resolve(func) or "").endswith(".optimizer_step") or call in part.step_wrappers:
                return True
            name = dotted(func)
            return name is not None and self.runs_step(name, steps, by_name)

        for node, plan in part.loops.items():
            if plan.kind != "training":
                continue
            inside = {id(sub) for scope in self._step_scopes(node, steps, by_name) for sub in walk(scope)}
            found = [
                locked for region in regions if id(region[0]) in inside and (locked := locked_step(region, is_step))
            ]
            plan.locked = tuple(found)
            part.locked_steps.update((locked.statement, locked) for locked in found if locked.statement is not None)

    def _step_scopes(
        self, node: cst.CSTNode, steps: set[str], by_name: dict[str, list[_Function]]
    ) -> list[cst.CSTNode]:
        """The loop and the functions of this file it runs a step through (the calls they make)."""
        scopes: list[cst.CSTNode] = [node]
        pending, seen = list(self.loop_records[id(node)].called), set()
        while pending:
            for fn in self.local_targets(pending.pop(), by_name):
                if fn.qualname in steps and fn.qualname not in seen and fn.node is not None:
                    seen.add(fn.qualname)
                    scopes.append(fn.node)
                    pending.extend(fn.called)
        return scopes

    def _builds_items(self, loop: _Loop) -> bool:
        """A loop that moves each item of a container that is no data set to the device and
        reshapes or reduces it there, calling nothing else (detectron2 models' per-image targets:
        ``for instances in gt_instances: heatmaps.append(instances.heatmap.to(device).max(dim=0)[0])``):
        a few operations per item, part of the computation that uses them (a model's forward, its
        step), no evaluation; over a loader or a data set each iteration's graph adds up, and a
        barrier ends it."""
        return only_moves(loop.node, reshaped=True) and not iterates_data(
            loop.node, self.facts.loaders.names, self.walk.resolve
        )

    def _in_a_step_iteration(self, loop: _Loop) -> bool:
        """The loop runs in every iteration of a loop that steps in its own body (a backward pass
        or an optimizer step there): it is part of that step (an embedder's forward over a batch's
        utterances before the model's), whose barrier ends it; a barrier of its own would cut the
        step's graph per iteration.  One under an ``if`` of that loop (a validation every N steps)
        is no part of every step."""
        record: _Loop | None = loop
        while record is not None and record.every_outer_iteration and record.outer is not None:
            record = self.loop_records.get(id(record.outer))
            if record is not None and (record.backward or self._steps(record.step_receivers)):
                return True
        return False

    def _gives_host_numbers(self, call: cst.Call, by_name: dict[str, list[_Function]]) -> bool:
        """A call of a function of this file (every one of that name) or of the project's whose
        every return gives host numbers (``return [correct_k.item() for ...]``)."""
        func = dotted(call.func)
        if func is None:
            return False
        if "." not in func and (found := by_name.get(func)):
            return all(fn.node is not None and returns_host_numbers(fn.node) for fn in found)
        origin = self.walk.analysis(ProjectAnalysis).origin(func)
        return origin is not None and origin.summary is not None and origin.name in origin.summary.host_returns

    def _unprepared_accelerate_loop(self, loop: _Loop, training: bool) -> bool:
        """A training loop of an Accelerate script over a loader it did not prepare (``loader =
        DataLoader(...)`` in the loop's function, or returned by a function or method of the file or
        of the project, never rebound by ``accelerator.prepare``; under ``enumerate`` or a batching
        iterator), and calling none of the accelerator's methods that end the step: no MpDeviceLoader
        and no barrier of Accelerate's ends its steps (AcceleratedOptimizer.step and
        Accelerator.backward do not), so the port adds the barrier.  The accelerator's backward
        calls of a loop over a prepared loader are ended (XLA807 says so); of one whose loader the
        tool cannot follow, neither."""
        huggingface = self.facts.huggingface
        node = loop.node
        if not training or self.facts.lightning.drives_training or type(node) is not cst.For:
            return False
        for name in loop.called:
            owner, _, method = name.rpartition(".")
            if method in ACCELERATE_STEP_ENDERS and owner in huggingface.accelerators:
                self._settle_backwards(node, self.part.ended_backwards)
                return False
        state, loader = loader_state(node.iter, loop.owner, huggingface, self.walk.resolve)
        if state == "unknown":
            self._note_self_loader(loop, loader)
        if state != "unprepared":
            if state == "prepared":
                self._settle_backwards(node, self.part.ended_backwards)
            return False
        self._settle_backwards(node, self.part.unprepared_backwards)
        return True

    def _note_self_loader(self, loop: _Loop, loader: cst.BaseExpression) -> None:
        """An Accelerate training loop of a class's method whose loader the tool cannot follow is
        what ``self.m()`` returns (or it iterates the batches of a loop of its own over it:
        ``for minibatch in MiniBatchIterator(loader, ...): for micro in minibatch:``): (class, m)."""
        origins, (cls, _, _) = self.facts.huggingface.loader_origins, loop.owner.rpartition(".")
        if origins is None or cls not in self.facts.project.classes:
            return
        outer = loop.outer
        while (method := origins.self_method(loader, loop.owner)) is None:
            if not (
                type(loader) is cst.Name
                and type(outer) is cst.For
                and type(outer.target) is cst.Name
                and outer.target.value == loader.value
            ):
                return
            _, loader = loader_state(outer.iter, loop.owner, self.facts.huggingface, self.walk.resolve)
            record = self.loop_records.get(id(outer))
            outer = record.outer if record is not None else None
        self.facts.huggingface.self_loaders.add((cls, method))

    def note_unprepared_overrides(self) -> None:
        """The returns of a method of a class of the file that overrides one whose return an
        Accelerate training loop of its base (of the file, or of another module: its summary's
        ``self_loaders``) iterates as its loader, where it returns only loaders Accelerate did not
        prepare: nothing ends that loop's XLA steps."""
        huggingface = self.facts.huggingface
        if (origins := huggingface.loader_origins) is None:
            return
        project = self.walk.analysis(ProjectAnalysis)
        for cls, (bases, methods) in self.facts.project.classes.items():
            for base in bases:
                found = None if base in self.facts.project.classes else project.origin(base)
                summary, name = (found.summary, found.name) if found is not None else (None, base)
                driven = summary.self_loaders if summary is not None else huggingface.self_loaders
                for method in methods:
                    if (name, method) in driven:
                        for value in origins.unprepared_returns(f"{cls}.{method}"):
                            huggingface.unprepared_overrides.setdefault(value, (base, method))

    def _settle_backwards(self, node: cst.CSTNode, into: set[cst.Call]) -> None:
        """The accelerator's backward calls in ``node`` go ``into`` a set of them XLA807 reads."""
        if backwards := self.facts.huggingface.accelerate_backwards:
            inside = set(walk(node))
            into.update(call for call in backwards if call in inside)

    def _steps_each_member(self, loop: _Loop, steps: set[str], by_name: dict[str, list[_Function]]) -> bool:
        """The loop steps each member of what it iterates and nothing else (``for op in
        self.optimizers: op.step()``, no backward): it is one step of several optimizers, made
        in whatever loop calls it, not a training loop of its own."""
        member = loop.iterates[0]
        if not member or loop.backward or loop.handed or any(r != member for r in loop.step_receivers):
            return False
        return not any(
            self.runs_step(c, steps, by_name, loop.owner) for c in loop.called if c.partition(".")[0] != member
        )

    def _forward_computation(self) -> set[str]:
        """The qualified names of the methods that a module class's ``forward`` runs: ``forward``
        itself (or the ``__call__`` a loss module defines instead) and the methods of the class
        it calls through ``self.`` (and those they call).  A module class is also one whose base is
        a module class of another project module (project/module_bases.py)."""
        methods = {fn.qualname: fn for fn in self.function_records.values()}
        project = self.walk.analysis(ProjectAnalysis)
        # (and this file's classes whose base is a module class of another project module)
        classes = self.forward_class_paths | {
            cls
            for cls, (bases, _) in self.facts.project.classes.items()
            if cls not in self.forward_class_paths and project_module_class(project, bases)
        }
        entries = {f"{cls}.{name}" for cls in classes for name in _FORWARD_METHODS}
        entries |= {f"{cls}.{name}" for cls in self.trainer_classes.values() for name in _TRAINER_STEP_METHODS}
        found = entries & methods.keys()
        pending = list(found)
        while pending:
            qualname = pending.pop()
            cls = qualname.rsplit(".", 1)[0]
            called = [
                *methods[qualname].called,
                *(c for loop in self.loop_records.values() if owned_by(loop.owner, {qualname}) for c in loop.called),
            ]
            for name in called:
                head, _, method = name.partition(".")
                callee = f"{cls}.{method}"
                if head == "self" and callee in methods and callee not in found:
                    found.add(callee)
                    pending.append(callee)
        return found

    def _feeds_from_device_loader(self, node: cst.CSTNode) -> bool:
        if type(node) is not cst.For:
            return False
        return any(
            (type(sub) is cst.Call and is_device_loader(sub, self.walk.resolve(sub.func)))
            or dotted(sub) in self.device_loaders
            for sub in walk(node.iter)
        )

    def _loader_to_wrap(self, loop: _Loop) -> tuple[cst.BaseExpression, str] | None:
        """The loader of ``for batch in loader`` when MpDeviceLoader can replace the
        loop's own ``.to(device)`` moves: every batch variable is moved to one device
        that is the XLA device on every path (a CPU fallback would break the wrap), and
        no part of the batch is read on the host before its move (``.numpy()``)."""
        node = loop.node
        if not isinstance(node, cst.For):
            return None
        loader, target = node.iter, node.target
        if isinstance(loader, cst.Call) and dotted(loader.func) == "enumerate" and loader.args:
            loader = loader.args[0].value
            if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
                return None
            target = target.elements[1].value  # type: ignore[assignment]  # target is re-bound from the for-target to its second element (an expression): names_in() below takes either
        name = dotted(loader)
        if name is None or ("loader" not in name.rsplit(".", 1)[-1].lower() and name not in self.facts.loaders.names):
            return None
        batch = set(names_in(target))
        devices = {loop.moved.get(b) for b in batch}
        if not batch or len(devices) != 1:
            return None
        device = devices.pop()
        if device is None or device == CUDA or not self.device.always_xla(device):
            return None
        if filters_batches(node.body, batch):
            return None  # on the device, data-dependent filtering would compile a graph per shape
        if host_reads_before_moves(node.body, batch, self.walk.resolve):
            return None  # ``data_aug.edge_index.numpy()`` before its move: on the device the read would fail
        return loader, device


def is_device_loader(call: cst.Call, callee: str | None) -> bool:
    """``pl.MpDeviceLoader(...)``, ``pl.ParallelLoader(...).per_device_loader(...)``."""
    return method_name(call) == "per_device_loader" or (
        callee is not None and callee.startswith("torch_xla.distributed.parallel_loader.")
    )


def owned_by(owner: str, functions: set[str]) -> bool:
    """Whether the code of ``owner`` (a qualified name) runs in one of ``functions``: it is
    one of them or a function defined inside one."""
    return any(owner == name or owner.startswith(f"{name}.") for name in functions)


def _in_a_move_method(loop: _Loop) -> bool:
    """The loop is in a class's own move method (``BoxList.to(self, device)`` moving each of its
    fields, ``Instances.cuda``): it moves a container's contents for whoever calls it, inside that
    caller's step or evaluation, and computes nothing itself."""
    owner, dot, method = loop.owner.rpartition(".")
    return bool(dot) and bool(owner) and method in _MOVE_METHODS


# A module's forward, and the hooks ``generate()`` of a transformers model calls in each decoding
# step (``_reorder_cache`` loops over the layers' caches for beam search): inside that step.
_FORWARD_METHODS = frozenset(
    {"forward", "__call__", "_reorder_cache", "prepare_inputs_for_generation", "_update_model_kwargs_for_generation"}
)
# The methods of a transformers Trainer subclass that its own training (evaluation) step runs: the
# Trainer ends each step with its barrier on XLA, a loop in them (over a model's heads) is part of it.
_TRAINER_STEP_METHODS = frozenset({"compute_loss", "training_step", "prediction_step"})
_MOVE_METHODS = frozenset({"to", "cuda", "cpu", "to_device", "pin_memory"})


def _calls_a_host_read(loop: _Loop, by_name: dict[str, list[_Function]]) -> bool:
    """The loop calls a function of this file by its name (``preds[i] = get_pred(batch)``) that
    reads its result to the host (``return out.cpu().numpy()``): each iteration ends in that read."""
    return any(
        "." not in called and (found := by_name.get(called)) and all(fn.host_read for fn in found)
        for called in loop.called
    )


def _over_micro_batches(
    node: cst.CSTNode, loaders: set[str], resolve: Callable[[cst.BaseExpression], str | None]
) -> bool:
    """A loop over micro-batches, not over a loader or a data set (``iterates_data``).  A ``for``
    over ``range(...)`` counts micro-batches (``range(batch_chunk)``, whatever its bound is named:
    ``iterates_data`` would take the word ``batch`` for a loader) unless it counts a loader's
    batches: its bound mentions a loader or a data set (``range(len(loader))``,
    ``range(steps_per_epoch)``), or its body draws them with ``next(it)``."""
    if not (type(node) is cst.For and type(node.iter) is cst.Call and dotted(node.iter.func) == "range"):
        return not iterates_data(node, loaders, resolve)
    for sub in walk(node.iter):
        if type(sub) is cst.Call and resolve(sub.func) in apis.DATA_LOADERS:
            return False
        if type(sub) is cst.Name or type(sub) is cst.Attribute:
            name = dotted(sub)
            if name is not None and (
                name in loaders or any(word in name.rsplit(".", 1)[-1].lower() for word in _LOADER_WORDS)
            ):
                return False
    return not any(
        type(sub) is cst.Call and type(sub.func) is cst.Name and sub.func.value == "next" for sub in walk(node.body)
    )


# Words of the names a count of a loader's batches is bounded by (``len(train_loader)``,
# ``len(dataset)``, ``steps_per_epoch``); not ``batch``, which a count of micro-batches is named by.
_LOADER_WORDS = ("loader", "data", "sampler", "epoch")
