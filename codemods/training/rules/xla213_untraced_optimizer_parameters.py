"""XLA213 untraced-optimizer-parameters: an optimizer built, before its model moves, over parameters
that come from somewhere the tool cannot trace (a helper, a list built elsewhere): if they are the
model's, moving it to XLA replaces them and nothing trains.  Reported at the optimizer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.training.rules.filled_group_cases import filled_by_loop_variable_invalid
from codemods.training.rules.loop_moved_optimizers import loop_moved_valid, untraced_loop_invalid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


UNTRACED_OPTIMIZER_PARAMETERS = Rule(
    code="XLA213",
    name="untraced-optimizer-parameters",
    severity="error",
    summary="An optimizer built, before a model moves, from parameters the tool cannot trace",
    fixable=False,
    why="Obligation 2 of a port: the optimizer holds the parameters as they are after the move. Moving a module "
    "to XLA replaces its Parameter objects (on CUDA they are kept), so parameters taken from a model before it "
    "moves are stale copies that nothing trains. The tool follows `model.parameters()`, submodules, parameter "
    "groups, names they are collected into and the file's and project's helper functions, and moves the model "
    "first where it can (XLA203). When the optimizer is built, while a model of the same function is still on "
    "the CPU and moves later, from something it cannot follow (a name filled in a loop over what it cannot "
    "read, a parameter of the function, a callable of a library or of a module it could not read that is handed the model), it cannot "
    "tell whether those are the model's parameters: build the optimizer after the move, or move the model before "
    "building it. The same holds for a later move it cannot follow: an optimizer `__init__` builds over a module the "
    "instance holds (`self.policy = policy`), which no move the tool follows moves, while another method of the "
    "class moves each element of a value of the instance it cannot read (`for m in self.nets.values(): m.to(device)`, "
    "a statement: a module moves in place; not `x = batch.to(device)` in a loop over its loader), is reported at "
    "the optimizer, naming that loop (it may hold the module).",
    examples=lambda: (
        invalid(
            """
            import torch
            import timm.optim


            def main():
                model = torch.nn.Linear(3, 1)
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                model.cuda()
            """,
            """
            import torch
            import torch_xla
            import timm.optim


            def main():
                model = torch.nn.Linear(3, 1)
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                model.to(torch_xla.device())
            """,
            findings=(
                Expected(
                    8, 17, "the optimizer's parameters come from `timm.optim.create_optimizer_v2`, handed `model`,"
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import timm.optim


            def main(extra):
                model = torch.nn.Linear(8, 2).cuda()
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                head = torch.nn.Linear(2, 2)
                extra_optimizer = torch.optim.SGD(extra, lr=0.1)
                head.cuda()
                params = [p for p in model.parameters() if p.requires_grad]
                model.cuda()
                torch.optim.SGD(params, lr=0.1)
            """,
            """
            import torch
            import torch_xla
            import timm.optim


            def main(extra):
                model = torch.nn.Linear(8, 2).to(torch_xla.device())
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                head = torch.nn.Linear(2, 2)
                extra_optimizer = torch.optim.SGD(extra, lr=0.1)
                head.to(torch_xla.device())
                params = [p for p in model.parameters() if p.requires_grad]
                model.to(torch_xla.device())
                torch.optim.SGD(params, lr=0.1)
            """,
            note="moved-first-or-handed-in",
        ),
        *loop_moved_valid(),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch


            def main(named):
                model = torch.nn.Linear(8, 2)
                decay = []
                for name, p in named.items():
                    if "bias" not in name:
                        decay.append(p)
                optimizer = torch.optim.AdamW(decay, lr=1e-3, weight_decay=0.1)
                model.cuda()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def main(named):
                model = torch.nn.Linear(8, 2)
                decay = []
                for name, p in named.items():
                    if "bias" not in name:
                        decay.append(p)
                optimizer = torch.optim.AdamW(decay, lr=1e-3, weight_decay=0.1)
                model.to(xm.xla_device())
            """,
            target="sagemaker",
            note="filled-in-a-loop-over-a-parameter-sagemaker",
            findings=(Expected(11, 17, "the optimizer's parameters come from `decay`, which the tool cannot trace"),),
        ),
        invalid(
            """
            import torch.optim as O
            from torch import nn

            model = nn.Linear(8, 2)
            optimizer = O.SGD([model.weight, model.bias], lr=0.1)
            model.cuda()
            """,
            """
            import torch.optim as O
            from torch import nn
            import torch_xla

            model = nn.Linear(8, 2)
            optimizer = O.SGD([model.weight, model.bias], lr=0.1)
            model.to(torch_xla.device())
            """,
            alias=True,
            findings=(
                Expected(6, 13, "a tensor of `model`, while `model` is on the CPU, and `model.cuda()` moves it later"),
            ),
        ),
        *untraced_loop_invalid(),
        *filled_by_loop_variable_invalid(),
    ),
)


@reports_facts(UNTRACED_OPTIMIZER_PARAMETERS, nodes=lambda facts: facts.training.untraced_parameters)
def _untraced(ctx: Context[Facts], original: cst.Call) -> str:
    untraced = ctx.facts.training.untraced_parameters[original]
    if untraced.over:
        return (
            f"the optimizer is built over {untraced.source}, which may be on the CPU, and {untraced.moved_by} moves "
            f"each element of {untraced.over}, which the tool cannot trace, later: moving a module to XLA replaces its "
            f"parameters, so if `{untraced.model}` is among them the optimizer steps stale copies that nothing "
            "trains; build the optimizer after the move"
        )
    return (
        f"the optimizer's parameters come from {untraced.source} while `{untraced.model}` is on the CPU, and "
        f"{untraced.moved_by} moves it later: moving a module to XLA replaces its parameters, so if these are "
        f"`{untraced.model}`'s they are stale copies that nothing trains; build the optimizer after the move"
    )
