"""XLA102 dot-cuda: ``x.cuda(...)`` becomes ``x.to(<the target's device>)``, its other keyword
arguments kept (the device facts' ``dot_cuda``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.fallback_move_cases import fallback_move_invalid, fallback_move_valid
from codemods.device.rules.own_device_api_cases import own_device_api_dot_cuda_invalid, own_device_api_dot_cuda_valid
from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DOT_CUDA = Rule(
    code="XLA102",
    name="dot-cuda",
    severity="error",
    summary="`.cuda()` becomes `.to(<XLA device>)`",
    fixable=True,
    why="`.cuda()` moves a module or a tensor to a CUDA device and raises without one; `.to()` with the XLA "
    "device moves it there, keeping the other arguments. A function named `cuda` of an imported module "
    "(`import utils`, `utils.cuda(x)`: a project's helper) is no such move and stays (its own body is ported), "
    "unless the file binds that name otherwise too (`model = model.Net()`, a parameter); so is one of a project "
    "module imported from its package (`from torchdrug import utils`, `utils.cuda(batch, device=device)`: as "
    "`utils.to(...)` it dropped the batch and raised AttributeError), unless the call's own function (or a "
    "comprehension or lambda around it) binds that name (a parameter: a move); where a binding elsewhere may reach "
    "it (a `global`, a module-level assignment, a comprehension elsewhere in the function) the call is an error, "
    "left as it is. Where this run does not convert the module that defines it, the call is an error naming that "
    "module. A `.cuda()` that a `try` hands straight to a tensor op of torch's namespace (`torch.sort(scores.cuda())`; "
    "not `torch.compile`, which keeps a module), whose "
    "handler falls back to the CPU (a bare `except:` or `except Exception:`, not raising again), stays with no "
    "finding: on an XLA host it raises (AssertionError on a CPU build of torch, RuntimeError without a driver) "
    "and the handler's CPU path runs, as on any host without CUDA. `self.cuda()` in a class of the file that "
    "defines its own `cuda`, or inherits it from a base of the project, runs that method and stays (an error "
    "where the run does not convert the base's module); in the class's own `to` (a class with no such `cuda`) "
    "it is an error, not rewritten: as `self.to(...)` it would call that method itself, without end. "
    "Nor is `obj.cuda()` "
    "where every binding of `obj` is a call of a project class that defines its own `cuda` method and is no torch "
    "module or tensor (`self.sampler = Sampler(probs)`, a plain class: it has no `.to`, and converting it so "
    "raises AttributeError): the call stays, and runs that method, whose body is ported where its module is "
    "converted (`self.prob = self.prob.cuda()` becomes a move to the XLA device); where that module is not "
    "converted in this run, the call is an error naming the method, which moves its state to CUDA. An object "
    "whose class the tool cannot tell (a parameter, what a function returns) is moved as a module or tensor. "
    "A class looked up in a table of such classes (`learner = REGISTRY[args.learner](mac)`, the table filled "
    "by item assignment or written whole) is one too; and so is an attribute that `__init__` binds to its "
    "parameter (`self.mac = mac`, or `copy.deepcopy(mac)`) in a class with its own `cuda`, where the run's "
    "files hand that parameter only such instances (`mac = mac_REGISTRY[k](...)`, then `QLearner(mac)`); "
    "where the run's files are not seen to (a single-file run), it is moved, and the message says so.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda()
            inputs = batch.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            inputs = batch.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 10, "batch.cuda(non_blocking=True) -> batch.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
    ),
    valid=lambda: (
        *own_device_api_dot_cuda_valid(),
        *fallback_move_valid(),
        valid(
            """
            import torch

            use_gpu = torch.cuda.is_available()
            x = x.to("cpu")
            """,
        ),
        valid(
            """
            import torch
            import utils
            import helpers as h

            utils.cuda([G, D])
            z = h.cuda(z)
            """,
            note="a-function-named-cuda-of-an-imported-module",
        ),
        valid(
            """
            import torch


            class Sampler(object):
                def __init__(self, probs):
                    self.probs = probs

                def cuda(self):
                    self.probs = self.probs.to("cpu")


            class Memory(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.sampler = Sampler(torch.ones(10))
                    self.sampler.cuda()


            table = Sampler(torch.ones(4))
            table.cuda()
            """,
            note="an-instance-of-a-plain-class-with-its-own-cuda-method",
        ),
    ),
    invalid=lambda: (
        *own_device_api_dot_cuda_invalid(),
        *fallback_move_invalid(),
        invalid(
            """
            import copy

            import torch


            class Learner:
                def __init__(self, mac):
                    self.mac = mac
                    self.target_mac = copy.deepcopy(mac)

                def cuda(self):
                    self.mac.cuda()
                    self.target_mac.cuda()
            """,
            """
            import copy

            import torch
            import torch_xla


            class Learner:
                def __init__(self, mac):
                    self.mac = mac
                    self.target_mac = copy.deepcopy(mac)

                def cuda(self):
                    self.mac.to(torch_xla.device())
                    self.target_mac.to(torch_xla.device())
            """,
            note="a-parameter-held-on-self-whose-class-no-caller-shows-is-moved-and-says-so",
            findings=(
                Expected(
                    13,
                    9,
                    "self.mac.cuda() -> self.mac.to(torch_xla.device()): `self.mac` is what the caller hands `Learner(mac=...)`, and the run's files are not seen to hand it only instances of project classes with their own `cuda()` (moved as a module or tensor); if it is one (no `.to`: AttributeError), keep `.cuda()`",
                ),
                Expected(
                    14,
                    9,
                    "self.target_mac.cuda() -> self.target_mac.to(torch_xla.device()): `self.target_mac` is what the caller hands `Learner(mac=...)`, and the run's files are not seen to hand it only instances of project classes with their own `cuda()` (moved as a module or tensor); if it is one (no `.to`: AttributeError), keep `.cuda()`",
                ),
            ),
        ),
        invalid(
            """
            import copy

            import torch


            class Learner:
                def __init__(self, mac):
                    self.mac = mac
                    self.target_mac = copy.deepcopy(mac)

                def cuda(self):
                    self.mac.cuda()
                    self.target_mac.cuda()
            """,
            """
            import copy

            import torch
            import torch_xla.core.xla_model as xm


            class Learner:
                def __init__(self, mac):
                    self.mac = mac
                    self.target_mac = copy.deepcopy(mac)

                def cuda(self):
                    self.mac.to(xm.xla_device())
                    self.target_mac.to(xm.xla_device())
            """,
            target="sagemaker",
            note="a-parameter-held-on-self-whose-class-no-caller-shows-is-moved-and-says-so-sagemaker",
            findings=(
                Expected(
                    13,
                    9,
                    "self.mac.cuda() -> self.mac.to(xm.xla_device()): `self.mac` is what the caller hands `Learner(mac=...)`, and the run's files are not seen to hand it only instances of project classes with their own `cuda()` (moved as a module or tensor); if it is one (no `.to`: AttributeError), keep `.cuda()`",
                ),
                Expected(
                    14,
                    9,
                    "self.target_mac.cuda() -> self.target_mac.to(xm.xla_device()): `self.target_mac` is what the caller hands `Learner(mac=...)`, and the run's files are not seen to hand it only instances of project classes with their own `cuda()` (moved as a module or tensor); if it is one (no `.to`: AttributeError), keep `.cuda()`",
                ),
            ),
        ),
        invalid(
            """
            import torch

            model = Net().cuda()
            x = x.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            x = x.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 5, "x.cuda(non_blocking=True) -> x.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla as tx

            model.cuda()
            """,
            """
            import torch
            import torch_xla as tx

            model.to(tx.device())
            """,
            note="existing-torch_xla-alias",
            alias=True,
            findings=(Expected(4, 1, "model.cuda() -> model.to(tx.device())"),),
        ),
        invalid(
            """
            import torch
            import model
            import utils


            def train(utils):
                return utils.cuda()


            model = model.Net()
            model.cuda()
            """,
            """
            import torch
            import torch_xla
            import model
            import utils


            def train(utils):
                return utils.to(torch_xla.device())


            model = model.Net()
            model.to(torch_xla.device())
            """,
            note="a-module-name-the-file-binds-again",
            findings=(
                Expected(8, 12, "utils.cuda() -> utils.to(torch_xla.device())"),
                Expected(12, 1, "model.cuda() -> model.to(torch_xla.device())"),
            ),
        ),
        invalid(
            """
            import torch


            class Sampler:
                def __init__(self, probs):
                    self.probs = probs

                def cuda(self):
                    self.probs = self.probs.cuda()


            class Net(torch.nn.Module):
                def cuda(self):
                    return super().cuda()


            def build(sampler):
                table = Sampler(torch.ones(4))
                table.cuda()
                sampler.cuda()
                net = Net()
                net.cuda()
            """,
            """
            import torch
            import torch_xla


            class Sampler:
                def __init__(self, probs):
                    self.probs = probs

                def cuda(self):
                    self.probs = self.probs.to(torch_xla.device())


            class Net(torch.nn.Module):
                def cuda(self):
                    return super().to(torch_xla.device())


            def build(sampler):
                table = Sampler(torch.ones(4))
                table.cuda()
                sampler.to(torch_xla.device())
                net = Net()
                net.to(torch_xla.device())
            """,
            note="a-plain-classs-own-cuda-stays-its-body-is-ported",
            findings=(
                Expected(10, 22, "self.probs.cuda() -> self.probs.to(torch_xla.device())"),
                Expected(15, 16, "super().cuda() -> super().to(torch_xla.device())"),
                Expected(21, 5, "sampler.cuda() -> sampler.to(torch_xla.device())"),
                Expected(23, 5, "net.cuda() -> net.to(torch_xla.device())"),
            ),
        ),
        invalid(
            """
            import torch


            class QLearner:
                def cuda(self):
                    self.mixer = self.mixer.cuda()


            class CLearner(QLearner):
                pass


            LEARNERS = {"q": QLearner, "c": CLearner}
            learner = LEARNERS[name](mac)
            learner.cuda()
            """,
            """
            import torch
            import torch_xla


            class QLearner:
                def cuda(self):
                    self.mixer = self.mixer.to(torch_xla.device())


            class CLearner(QLearner):
                pass


            LEARNERS = {"q": QLearner, "c": CLearner}
            learner = LEARNERS[name](mac)
            learner.cuda()
            """,
            note="a-class-looked-up-in-a-table-of-classes-with-their-own-cuda-stays",
            findings=(Expected(7, 22, "self.mixer.cuda() -> self.mixer.to(torch_xla.device())"),),
        ),
        invalid(
            """
            import torch


            class QLearner:
                def cuda(self):
                    self.mixer = self.mixer.cuda()


            LEARNERS = {}
            LEARNERS["q"] = QLearner
            learner = LEARNERS[name](mac)
            learner.cuda()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            class QLearner:
                def cuda(self):
                    self.mixer = self.mixer.to(xm.xla_device())


            LEARNERS = {}
            LEARNERS["q"] = QLearner
            learner = LEARNERS[name](mac)
            learner.cuda()
            """,
            target="sagemaker",
            note="a-class-looked-up-in-a-table-filled-by-item-assignment-stays-sagemaker",
            findings=(Expected(7, 22, "self.mixer.cuda() -> self.mixer.to(xm.xla_device())"),),
        ),
    ),
)


@reports_facts(DOT_CUDA, nodes=lambda facts: facts.device.own_cuda_pending)
def _own_cuda_of_a_pending_module(ctx: Context[Facts], original: cst.Call) -> str:
    cls, path = ctx.facts.device.own_cuda_pending[original]
    return (
        f"`{ctx.code(original)}` runs `{cls}.cuda()` of {path}, which this run does not convert: it moves "
        f"the instance's state to CUDA and fails without it (`{cls}` is no module or tensor: it has no `.to`); "
        f"convert {path} too, and its `.cuda()` calls become moves to the XLA device"
    )


@reports_facts(DOT_CUDA, nodes=lambda facts: facts.device.module_cuda_pending)
def _module_cuda_of_a_pending_module(ctx: Context[Facts], original: cst.Call) -> str:
    path, function = ctx.facts.device.module_cuda_pending[original]
    return (
        f"`{ctx.code(original)}` runs the project's function `{function}` of {path}, which this run does not "
        f"convert: a function named `cuda` moves what it is handed to CUDA, which fails without it (it is no "
        f"`.cuda()` of a module or tensor: as `.to()` it would raise AttributeError and drop its argument); "
        f"convert {path} too, and its moves become moves to the XLA device"
    )


@reports_facts(DOT_CUDA, nodes=lambda facts: facts.device.module_cuda_unsure)
def _module_cuda_or_another_binding(ctx: Context[Facts], original: cst.Call) -> str:
    name = ctx.facts.device.module_cuda_unsure[original]
    return (
        f"`{ctx.code(original)}` may run the function `cuda` of the project module `{name}` this file imports, "
        f"or `.cuda()` of something else this file binds to `{name}` (a `global`, a module-level assignment or "
        "a comprehension's target): left as it is; where it is a module or tensor, move it to the XLA device "
        "instead (`.cuda()` fails without CUDA)"
    )


@reports_facts(DOT_CUDA, nodes=lambda facts: facts.device.self_cuda_pending)
def _self_cuda_of_a_pending_base(ctx: Context[Facts], original: cst.Call) -> str:
    cls, path = ctx.facts.device.self_cuda_pending[original]
    return (
        f"`{ctx.code(original)}` runs `{cls}.cuda()` of {path} (a base of this class), which this run does not "
        f"convert: it moves the instance's state to CUDA and fails without it; convert {path} too, and its "
        f"`.cuda()` calls become moves to the XLA device"
    )


@reports_facts(DOT_CUDA, nodes=lambda facts: facts.device.self_to_recursion)
def _self_cuda_in_own_to(ctx: Context[Facts], original: cst.Call) -> str:
    cls = ctx.facts.device.self_to_recursion[original]
    return (
        f"`{ctx.code(original)}` is in `{cls}.to`, the class's own `to`: as `self.to(<XLA device>)` it would "
        f"call this method itself (unbounded recursion), and as it is it moves to CUDA, which fails without "
        f"it; move to the XLA device here otherwise (`super().to(device)`, or the class's tensors one by one)"
    )


@on_facts(DOT_CUDA, nodes=lambda facts: facts.device.dot_cuda)
def _dot_cuda(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import with_comma

    func = updated.func
    if not isinstance(func, cst.Attribute):
        return updated

    def build() -> cst.Call | None:
        device = ctx.device()
        if device is None:
            return None
        kept = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
        for dropped in original.args:
            if dropped.keyword is None or dropped.keyword.value == "device":
                ctx.imports.discard(dropped)
        args = [with_comma(cst.Arg(device)), *kept] if kept else [cst.Arg(device)]
        if kept:  # the list ends as it did (a trailing comma or not)
            args[-1] = args[-1].with_changes(comma=updated.args[-1].comma)
        return updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)

    message = f"{ctx.code(original)} -> {{new}}"
    if (unproven := ctx.facts.device.own_cuda_unproven.get(original)) is not None:
        cls, parameter = unproven
        message += (
            f": `{ctx.code(func.value)}` is what the caller hands `{cls}({parameter}=...)`, and the run's files "
            f"are not seen to hand it only instances of project classes with their own `cuda()` (moved as a "
            f"module or tensor); if it is one (no `.to`: AttributeError), keep `.cuda()`"
        )
    return ctx.fix_or_keep(updated, DOT_CUDA, original, message, build)
