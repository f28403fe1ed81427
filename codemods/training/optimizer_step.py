"""Optimizer: without mixed precision, ``optimizer.step()`` becomes
``xm.optimizer_step(optimizer)`` (XLA201), which all-reduces gradients across replicas
before stepping (a no-op with one device)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import KEYWORD_EQUAL, with_comma
from codemods.engine.rewriter import Concern
from codemods.training.facts import MovedOwnOptimizer, UndrivenStep
from codemods.training.held_conditions import StandsUnlessCalled, StandsUnlessFsdpHandedTo
from codemods.training.rules.xla201_optimizer_step import OPTIMIZER_STEP
from codemods.training.rules.xla203_optimizer_before_move import OPTIMIZER_BEFORE_MOVE
from codemods.training.rules.xla213_untraced_optimizer_parameters import UNTRACED_OPTIMIZER_PARAMETERS
from codemods.training.rules.xla306_undriven_step import UNDRIVEN_STEP

if TYPE_CHECKING:
    from codemods.facts import Facts


class OptimizerRewrite(Concern):
    facts: Facts

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        undriven = self.facts.training.undriven_steps.get(original)
        if undriven is not None:
            self._undriven(original, undriven)
        untraced = self.facts.training.untraced_parameters.get(original)
        if untraced is not None:
            self.ctx.report(
                UNTRACED_OPTIMIZER_PARAMETERS,
                original,
                f"the optimizer's parameters come from {untraced.source} while `{untraced.model}` is on the CPU, and "
                f"{untraced.moved_by} moves it later: moving a module to XLA replaces its parameters, so if these are "
                f"`{untraced.model}`'s they are stale copies that nothing trains; build the optimizer after the move",
            )
        stranded = self.facts.training.moved_own_optimizers.get(original)
        if stranded is not None:
            self._moved_own_optimizer(original, stranded)
        trip = self.facts.training.round_trips.get(original)
        if trip is not None:
            self.ctx.report(
                OPTIMIZER_BEFORE_MOVE,
                original,
                f"`{self.ctx.code(original)}` moves `{trip.module}`, whose parameters `{trip.optimizer}` steps, off the "
                f"XLA device, and {trip.back} moves it back: on XLA each move replaces the module's Parameter objects "
                "(on CUDA they keep them), so the optimizer steps the old ones and the module stops training; save a "
                f"CPU copy without moving the module (`copy.deepcopy({trip.module}).cpu()`, or its `state_dict()`, "
                "which xm.save moves to the CPU), or build the optimizer again after the move back",
            )
        if original in self.facts.training.unrecognized_steps:
            self.ctx.report(
                OPTIMIZER_STEP,
                original,
                f"`{self.ctx.code(original)}` in a training loop: if this is an optimizer, "
                f"call xm.optimizer_step({self.ctx.code(original.func.value)}) instead",  # type: ignore[attr-defined]  # step candidates are ``x.step(...)`` calls (method_name "step"): their func is an Attribute
            )
            return updated
        annotation = self.facts.training.fsdp_steps.get(original)
        if annotation is not None:
            self.ctx.report(
                OPTIMIZER_STEP,
                original,
                f"`{self.ctx.code(original)}` stays: this file annotates its model as "
                f"`{self.ctx.code(annotation.annotation)}`, wrapped elsewhere, and FSDP reduce-scatters the gradients "
                "itself (xm.optimizer_step would all-reduce the sharded gradients again); if this optimizer steps "
                f"a model that is not FSDP-wrapped, call xm.optimizer_step({self.ctx.code(original.func.value)})",  # type: ignore[attr-defined]  # step candidates are ``x.step(...)`` calls (method_name "step"): their func is an Attribute
            )
            return updated
        function = self.facts.training.caller_fsdp_steps.get(original)
        if function is not None:
            optimizer = self.ctx.code(original.func.value)  # type: ignore[attr-defined]  # step candidates are ``x.step(...)`` calls (method_name "step"): their func is an Attribute
            self.ctx.report(
                OPTIMIZER_STEP,
                original,
                f"`{self.ctx.code(original)}` stays: `{optimizer}` comes from the caller, and a file of this run that "
                "imports this one wraps a model in FSDP, which reduce-scatters the gradients itself "
                "(xm.optimizer_step would all-reduce the sharded gradients again: wrong with several processes); "
                f"if `{optimizer}` steps a model that is not FSDP-wrapped, call xm.optimizer_step({optimizer})",
                held=StandsUnlessFsdpHandedTo(function),
            )
            return updated
        step = self.facts.training.optimizer_steps.get(original)
        if step is None:
            return updated
        if step.other_arguments:
            self.ctx.report(
                OPTIMIZER_STEP,
                original,
                f"`{self.ctx.code(original)}` has arguments other than a closure: "
                "call xm.optimizer_step(optimizer, optimizer_args={...}) by hand",
            )
            return updated
        if step.closure_index is not None and self.facts.distributed.multi_process:
            self.ctx.report(
                OPTIMIZER_STEP,
                original,
                f"`{self.ctx.code(original)}` with several processes: xm.optimizer_step reduces the gradients before "
                "the closure computes them; all-reduce them in the closure after backward "
                "(xm.all_reduce('sum', xm._fetch_gradients(optimizer), scale=1.0 / world size)) and keep "
                "optimizer.step(closure)",
            )
            return updated

        def build() -> cst.Call | None:
            args = [cst.Arg(updated.func.value)]  # type: ignore[attr-defined]  # step candidates are ``x.step(...)`` calls (method_name "step"): their func is an Attribute
            if step.closure_index is not None:
                closure = updated.args[step.closure_index].value
                closure_arg = cst.Dict([cst.DictElement(cst.SimpleString('"closure"'), closure)])
                args.append(cst.Arg(closure_arg, keyword=cst.Name("optimizer_args"), equal=KEYWORD_EQUAL))
            return self.ctx.call("optimizer_step", [with_comma(a) for a in args[:-1]] + args[-1:])

        return self.ctx.fix_or_keep(updated, OPTIMIZER_STEP, original, f"{self.ctx.code(original)} -> {{new}}", build)

    def _moved_own_optimizer(self, original: cst.Call, stranded: MovedOwnOptimizer) -> None:
        """No safe port: the constructor does not know the device, other instances of the
        class may stay on the CPU, and rebuilding the optimizer after the move would drop
        any state or groups the class gave it."""
        cls = stranded.constructor.rsplit(".", 1)[-1]
        where = "to the XLA device" if stranded.xla else "to a device that may be the XLA device"
        through = f" through {stranded.through}" if stranded.through else ""
        self.ctx.report(
            OPTIMIZER_BEFORE_MOVE,
            original,
            f"`{self.ctx.code(original)}` moves `{stranded.model}` {where}{through} after `{cls}.__init__`"
            f"{stranded.origin} built `self.{stranded.attribute}` over the instance's own parameters: moving a module "
            f"to XLA replaces its Parameter objects, so `{stranded.model}.{stranded.attribute}` steps the stale CPU "
            f"copies and training changes nothing; build the optimizer after the move (e.g. `{stranded.model}."
            f"{stranded.attribute} = ...` over `{stranded.model}.parameters()`), or move the module in `{cls}.__init__` "
            "before it builds the optimizer",
        )

    def _undriven(self, original: cst.Call, undriven: UndrivenStep) -> None:
        runs = f", which runs the optimizer step of {undriven.origin}," if undriven.origin else ""
        barrier = self.ctx.target.api("sync").spelled
        nowhere = (
            f"no loop of this file calls `{undriven.function}`, nor any loop that the tool could follow in the files "
            "of this run that import it"
            if undriven.held
            else f"no loop of this file calls `{undriven.function}`, and no other file of this run imports this one"
        )
        self.ctx.report(
            UNDRIVEN_STEP,
            original,
            f"`{self.ctx.code(original)}` in `{undriven.function}`{runs} has no step barrier: {nowhere} (a function "
            "handed to a callable is followed only into functions of this file that call it), so the graph would "
            "grow with every step; convert the project folder with the script whose loop calls it (the "
            f"barrier goes there), or call {barrier}() after each call of `{undriven.function.rsplit('.', 1)[-1]}`",
            held=StandsUnlessCalled(undriven.function) if undriven.held else None,
        )
