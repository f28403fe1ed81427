"""XLA201 optimizer-step: without mixed precision, ``optimizer.step()`` becomes
``xm.optimizer_step(optimizer)``, which all-reduces gradients across replicas before stepping (a
no-op with one device).  A step the port cannot make (other arguments, a closure with several
processes, an FSDP-wrapped model's step, a ``.step()`` that may not be an optimizer's) is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid
from codemods.training.rules.handed_wrapper_cases import handed_wrapper_invalid
from codemods.training.rules.held_optimizer_cases import held_optimizer_invalid
from codemods.training.rules.optimizer_list_cases import OPTIMIZER_LIST_STEP
from codemods.training.rules.ported_loop_cases import ENGINE_STEPS_WHY, engine_step_valid
from codemods.training.rules.step_argument_cases import step_argument_invalid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


OPTIMIZER_STEP = Rule(
    code="XLA201",
    name="optimizer-step",
    severity="error",
    summary="`optimizer.step()` becomes `xm.optimizer_step(optimizer)`",
    fixable=True,
    why="`xm.optimizer_step` all-reduces the gradients across replicas before stepping; with a plain "
    "`optimizer.step()` every process of a multi-process XLA run trains on its own gradients and the replicas "
    "silently drift apart. (Under DistributedDataParallel the step stays plain: DDP already reduces; so does "
    "an optimizer stepped in a loop with Accelerate's `accelerator.backward(loss)`, also on an Accelerator the "
    "file is handed: the optimizer Accelerate prepared reduces the gradients in its own step on XLA.) An optimizer "
    "kept in a container the file builds (`optims = SimpleNamespace(gen=Adam(...))`, a dict literal or `dict(...)`, "
    '`Munch`, `EasyDict`) is known as one where it is stepped (`optims.gen.step()`, `optims["gen"].step()`) and '
    "ported like any other; a `.step()` on another member of a dict is left alone. So is one that a class keeps on "
    "its instances (`self.opt_g = torch.optim.Adam(...)` in a method of `GAN`, of the file or another module of the "
    "project): `gan.opt_g.step()` on an instance of it is ported, and a scheduler kept that way "
    "(`gan.decay.step()`) is left alone; so is one held an instance deeper (`self.gan.opt_g.step()` with `self.gan = "
    "GAN(...)`). Optimizers kept in a list, filled by `append` (`self.optims.append(torch.optim.Adam(...))`) or built "
    "as one (`[Adam(...) for net in nets]`), are known as such in a loop over it (`for opt in self.optims: "
    "opt.step()`), and that loop, inside a training loop, is part of its step (no barrier of its own); a loop that "
    "only steps each member of what it iterates (`for op in self.optimizers: op.step()` in a wrapper's `step`, no "
    "backward) is no training loop at all: it is one step, taken in the loop that calls it. A step in a training loop on what a function is handed (`opt.step()` in "
    "`def train(model, opt, cfg)`, or `self.opt.step()` where `__init__` keeps `self.opt = opt`), in a module that "
    "another file of the run imports, is ported, and its error stands only if no file of the run hands a known "
    "optimizer there (`train(model, opt, cfg)` with `opt = torch.optim.AdamW(...)`); converted on its own, such a "
    "module keeps the step and the error. A positional argument is passed on as the closure "
    '(`optimizer_args={"closure": ...}`) only where the optimizer is built by a torch.optim class or the argument is '
    'a lambda or a function: a project\'s optimizer wrapper stepped with a key (`optimizer.step("enc")` on '
    "`MultiOptimizer.step(self, key=None)`) keeps its step as written, reported. An instance of a project class "
    "that is no torch optimizer but has its own `step()` (`self._optim = torch.optim.Adam(...)` in `__init__`, "
    "`self._optim.step()` and a schedule in `step`) keeps its call as written, whatever its name: its inner step is "
    "the one ported, where the class is (`xm.optimizer_step` on the wrapper itself would fail on several devices: "
    "it reduces the gradients of the wrapper's `param_groups`, which it has not). So does a step on what a trainer "
    "is handed (`self.optim.step()` where `__init__` keeps `self.optim = optim`) where the file, or the run's other "
    "files, hand that parameter only instances of such a wrapper (`Trainer(model, optim=Optimizer(...))`, the wrapper "
    "in the same module or another); where it is also handed a torch optimizer, or the file is converted without the "
    "one that hands it, the step is ported as before. The `step()` of a torch.profiler `profile` (also one bound as "
    "`profile(...) if on else nullcontext()`) advances the profiling schedule: no optimizer step, left alone."
    + ENGINE_STEPS_WHY,
    examples=lambda: (
        invalid(
            """
            import torch

            for data, target in loader:
                loss = loss_fn(model(data), target)
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for data, target in loader:
                loss = loss_fn(model(data), target)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            findings=(Expected(8, 5, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
    ),
    valid=lambda: (
        *engine_step_valid(),
        valid(
            """
            import torch


            def train(model, loader, accelerator, optimizer, scheduler):
                for batch in loader:
                    accelerator.backward(model(**batch).loss)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad()
            """,
            note="an-optimizer-stepped-with-a-handed-accelerator",
        ),
        valid(
            """
            import torch

            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
            scheduler.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            """,
        ),
        valid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model)
            optimizer.step()
            """,
            note="ddp-reduces-itself",
        ),
        valid(
            """
            import torch
            from torch.optim.swa_utils import SWALR, AveragedModel

            swa_model = AveragedModel(model)
            self.swa_scheduler = SWALR(optimizer, swa_lr=0.05)
            self.swa_scheduler.step()
            """,
            note="swa-scheduler-is-no-optimizer",
        ),
        valid(
            """
            from types import SimpleNamespace

            import torch

            envs = {"train": make_env()}
            agents = SimpleNamespace(actor=make_actor())
            for x in loader:
                model(x).sum().backward()
                envs["train"].step()
            """,
            """
            from types import SimpleNamespace

            import torch
            import torch_xla

            envs = {"train": make_env()}
            agents = SimpleNamespace(actor=make_actor())
            for x in loader:
                model(x).sum().backward()
                envs["train"].step()
                torch_xla.sync()
            """,
            note="members-of-containers-not-known-as-optimizers",
        ),
        valid(
            """
            import torch


            class Schedules:
                def __init__(self, opt):
                    self.decay = torch.optim.lr_scheduler.StepLR(opt, 10)


            schedules = Schedules(opt)
            for x in loader:
                model(x).sum().backward()
                schedules.decay.step()
            """,
            """
            import torch
            import torch_xla


            class Schedules:
                def __init__(self, opt):
                    self.decay = torch.optim.lr_scheduler.StepLR(opt, 10)


            schedules = Schedules(opt)
            for x in loader:
                model(x).sum().backward()
                schedules.decay.step()
                torch_xla.sync()
            """,
            note="scheduler-kept-on-an-instance",
        ),
        valid(
            """
            import torch
            from torch.profiler import profile

            prof = profile()
            with prof:
                for x in loader:
                    model(x).sum().backward()
                    prof.step()
            """,
            """
            import torch
            from torch.profiler import profile
            import torch_xla

            prof = profile()
            with prof:
                for x in loader:
                    model(x).sum().backward()
                    prof.step()
                    torch_xla.sync()
            """,
            note="a-profiler-step-is-no-optimizer-step",
        ),
        valid(
            """
            import torch
            from torch.profiler import profile, schedule

            with profile(schedule=schedule(wait=1, warmup=1, active=3)) as prof:
                for x in loader:
                    model(x).sum().backward()
                    prof.step()
            """,
            """
            import torch
            from torch.profiler import profile, schedule
            import torch_xla

            with profile(schedule=schedule(wait=1, warmup=1, active=3)) as prof:
                for x in loader:
                    model(x).sum().backward()
                    prof.step()
                    torch_xla.sync()
            """,
            note="a-profiler-bound-by-with-as-steps-no-optimizer",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from contextlib import nullcontext
            from torch.profiler import profile

            opt = torch.optim.AdamW(model.parameters())
            prof = profile() if use_profiler else nullcontext()
            with prof:
                for x in loader:
                    model(x).sum().backward()
                    opt.step()
                    opt.zero_grad()
                    prof.step()
            """,
            """
            import torch
            from contextlib import nullcontext
            from torch.profiler import profile
            import torch_xla
            import torch_xla.core.xla_model as xm

            opt = torch.optim.AdamW(model.parameters())
            prof = profile() if use_profiler else nullcontext()
            with prof:
                for x in loader:
                    model(x).sum().backward()
                    xm.optimizer_step(opt)
                    opt.zero_grad()
                    prof.step()
                    torch_xla.sync()
            """,
            note="optimizer-ported-profiler-step-left-alone",
            findings=(Expected(12, 9, "opt.step() -> xm.optimizer_step(opt)"),),
        ),
        invalid(
            OPTIMIZER_LIST_STEP,
            substituted(
                OPTIMIZER_LIST_STEP,
                ("from torch import optim\n", "from torch import optim\nimport torch_xla.core.xla_model as xm\n"),
                ("self._optimizer.step()", "xm.optimizer_step(self._optimizer)"),
            ),
            target="sagemaker",
            note="a-loop-stepping-each-optimizer-of-a-list-is-no-training-loop",
            findings=(Expected(19, 9, "self._optimizer.step() -> xm.optimizer_step(self._optimizer)"),),
        ),
        invalid(
            """
            import torch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            optimizer.step()
            loss = lbfgs_optimizer.step(closure)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            xm.optimizer_step(optimizer)
            loss = xm.optimizer_step(lbfgs_optimizer, optimizer_args={"closure": closure})
            """,
            findings=(
                Expected(5, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),
                Expected(6, 8, "lbfgs_optimizer.step(closure) -> xm.optimizer_step(lbfgs_optimizer,"),
            ),
        ),
        invalid(
            """
            import torch

            def train(model, opt, loader, env):
                for x in loader:
                    model(x).sum().backward()
                    opt.step()
                    env.step(action)
                    warmup.step()
            """,
            """
            import torch
            import torch_xla

            def train(model, opt, loader, env):
                for x in loader:
                    model(x).sum().backward()
                    opt.step()
                    env.step(action)
                    warmup.step()
                    torch_xla.sync()
            """,
            note="unrecognized-step-reported",
            findings=(Expected(7, 9, "`opt.step()` in a training loop"),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            if not torch.cuda.is_available():
                x = x.cuda()
                model = torch.nn.parallel.DistributedDataParallel(model)
            optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            xm.optimizer_step(optimizer)
            """,
            note="ddp-only-in-a-removed-branch",
            findings=(Expected(6, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model)
            optimizer.step()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.optimizer_step(optimizer)
            """,
            note="dataparallel-does-not-reduce",
            findings=(Expected(4, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
        # The model is wrapped in FSDP by another module: the annotation says so, and the
        # step stays plain (FSDP reduce-scatters the gradients itself).
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def train(model: FSDP, optimizer, loader):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.fsdp as xla_fsdp


            def train(model: xla_fsdp.XlaFullyShardedDataParallel, optimizer, loader):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
                    torch_xla.sync()
            """,
            note="fsdp-model-wrapped-elsewhere",
            findings=(
                Expected(
                    9,
                    9,
                    "`optimizer.step()` stays: this file annotates its model as `FSDP`, wrapped elsewhere, and FSDP "
                    "reduce-scatters the gradients itself",
                ),
            ),
        ),
        # With several processes xm.optimizer_step would reduce before the closure computes
        # the gradients: reported.
        invalid(
            """
            import torch
            import torch.distributed as dist


            def main():
                dist.init_process_group("nccl")
                optimizer = torch.optim.LBFGS(model.parameters())
                for x, y in loader:
                    def closure():
                        optimizer.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        return loss
                    optimizer.step(closure)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                dist.init_process_group("xla", init_method="xla://")
                optimizer = torch.optim.LBFGS(model.parameters())
                for x, y in loader:
                    def closure():
                        optimizer.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        torch_xla.sync()
                        return loss
                    optimizer.step(closure)
                    torch_xla.sync()
            """,
            note="closure-with-several-processes",
            findings=(Expected(16, 9, "`optimizer.step(closure)` with several processes"),),
        ),
        invalid(
            """
            import torch.optim as O

            opt = O.Adam(params)
            opt.step()
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm

            opt = O.Adam(params)
            xm.optimizer_step(opt)
            """,
            alias=True,
            findings=(Expected(5, 1, "opt.step() -> xm.optimizer_step(opt)"),),
        ),
        # A wrapper that is no torch optimizer (its own step() steps the one it holds): its inner
        # step is ported; the wrapper's own step() stays (xm.optimizer_step would read its
        # param_groups, which it has not, once several devices run).
        invalid(
            """
            from torch import optim


            class ScheduledAdam:
                def __init__(self, params):
                    self._optim = optim.Adam(params)

                def step(self):
                    self._optim.step()


            def train(model, loader):
                optimizer = ScheduledAdam(model.parameters())
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
            """,
            """
            from torch import optim
            import torch_xla
            import torch_xla.core.xla_model as xm


            class ScheduledAdam:
                def __init__(self, params):
                    self._optim = optim.Adam(params)

                def step(self):
                    xm.optimizer_step(self._optim)


            def train(model, loader):
                optimizer = ScheduledAdam(model.parameters())
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
                    torch_xla.sync()
            """,
            alias=True,
            note="optimizer-wrapper-steps-inside",
            findings=(Expected(11, 9, "self._optim.step() -> xm.optimizer_step(self._optim)"),),
        ),
        *held_optimizer_invalid(),
        *handed_wrapper_invalid(),
        *step_argument_invalid(),
    ),
)


def _receiver(ctx: Context[Facts], call: cst.Call) -> str:
    """The optimizer of a step candidate (an ``x.step(...)`` call: its func is an Attribute)."""
    return ctx.code(call.func.value)  # type: ignore[attr-defined]  # as the docstring says


@reports_facts(OPTIMIZER_STEP, nodes=lambda facts: facts.training.unrecognized_steps)
def _unrecognized(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original)}` in a training loop: if this is an optimizer, "
        f"call xm.optimizer_step({_receiver(ctx, original)}) instead"
    )


@reports_facts(OPTIMIZER_STEP, nodes=lambda facts: facts.training.fsdp_steps)
def _fsdp_step(ctx: Context[Facts], original: cst.Call) -> str:
    annotation = ctx.facts.training.fsdp_steps[original]
    return (
        f"`{ctx.code(original)}` stays: this file annotates its model as `{ctx.code(annotation.annotation)}`, "
        "wrapped elsewhere, and FSDP reduce-scatters the gradients itself (xm.optimizer_step would all-reduce the "
        "sharded gradients again); if this optimizer steps a model that is not FSDP-wrapped, call "
        f"xm.optimizer_step({_receiver(ctx, original)})"
    )


@on_facts(OPTIMIZER_STEP, nodes=lambda facts: facts.training.caller_fsdp_steps)
def _caller_fsdp_step(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    from codemods.training.held_conditions import StandsUnlessFsdpHandedTo

    optimizer = _receiver(ctx, original)
    ctx.report(
        OPTIMIZER_STEP,
        original,
        f"`{ctx.code(original)}` stays: `{optimizer}` comes from the caller, and a file of this run that "
        "imports this one wraps a model in FSDP, which reduce-scatters the gradients itself "
        "(xm.optimizer_step would all-reduce the sharded gradients again: wrong with several processes); "
        f"if `{optimizer}` steps a model that is not FSDP-wrapped, call xm.optimizer_step({optimizer})",
        held=StandsUnlessFsdpHandedTo(ctx.facts.training.caller_fsdp_steps[original]),
    )
    return updated


@on_facts(
    OPTIMIZER_STEP,
    nodes=lambda facts: [
        call
        for call in facts.training.optimizer_steps
        if call not in facts.training.unrecognized_steps
        and call not in facts.training.fsdp_steps
        and call not in facts.training.caller_fsdp_steps
    ],
)
def _step(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import KEYWORD_EQUAL, with_comma

    step = ctx.facts.training.optimizer_steps[original]
    if step.other_arguments:
        ctx.report(
            OPTIMIZER_STEP,
            original,
            f"`{ctx.code(original)}` has arguments other than a closure, and stays as written "
            "(xm.optimizer_step passes on only named arguments, as optimizer.step(**optimizer_args)): with several "
            "processes its gradients are not all-reduced; call xm.optimizer_step(optimizer, "
            "optimizer_args={...}) by hand, naming the step's parameters",
        )
        return updated
    if step.closure_index is not None and ctx.facts.distributed.multi_process:
        ctx.report(
            OPTIMIZER_STEP,
            original,
            f"`{ctx.code(original)}` with several processes: xm.optimizer_step reduces the gradients before "
            "the closure computes them; all-reduce them in the closure after backward "
            "(xm.all_reduce('sum', xm._fetch_gradients(optimizer), scale=1.0 / world size)) and keep "
            "optimizer.step(closure)",
        )
        return updated

    handed = ctx.facts.training.caller_optimizers.get(original)
    if handed is not None:
        from codemods.training.held_conditions import StandsUnlessOptimizerHandedTo

        ctx.report(
            OPTIMIZER_STEP,
            original,
            f"`{ctx.code(original)}` steps what `{handed.callable}` is handed as `{handed.parameter}`, and no file of "
            f"this run hands it a known optimizer there: check that it is one (its port, xm.optimizer_step, reads the "
            f"optimizer's param_groups with several processes), or else keep `{ctx.code(original)}`",
            held=StandsUnlessOptimizerHandedTo(handed),
        )

    def build() -> cst.Call | None:
        args = [cst.Arg(updated.func.value)]  # type: ignore[attr-defined]  # a step candidate's func is an Attribute (``x.step``)
        if step.closure_index is not None:
            closure = updated.args[step.closure_index].value
            closure_arg = cst.Dict([cst.DictElement(cst.SimpleString('"closure"'), closure)])
            args.append(cst.Arg(closure_arg, keyword=cst.Name("optimizer_args"), equal=KEYWORD_EQUAL))
        return ctx.call("optimizer_step", [with_comma(a) for a in args[:-1]] + args[-1:])

    return ctx.fix_or_keep(updated, OPTIMIZER_STEP, original, f"{ctx.code(original)} -> {{new}}", build)
