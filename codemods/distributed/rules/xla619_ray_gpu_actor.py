"""XLA619 ray-gpu-actor: a Ray actor or task that asks for GPUs (``@ray.remote(num_gpus=0.125)``,
EfficientZero's self-play and reanalyze workers) is reported: an XLA host has no GPU for Ray to
give it, and the XLA device it would be ported to is the training process's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_calls
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

RAY_GPU_ACTOR = Rule(
    code="XLA619",
    name="ray-gpu-actor",
    severity="error",
    summary="A Ray actor or task that asks for GPUs (`@ray.remote(num_gpus=...)`) never starts on an XLA host",
    fixable=False,
    why="Ray gives an actor the GPUs it asks for (`num_gpus=`, fractions to share one GPU between several "
    "processes); on an XLA host it detects none, so unless `ray.init(num_gpus=...)` declares some, no node can run "
    "the actor and its calls wait forever. Declared or not, the actor cannot simply move to the XLA device: each "
    "actor is a process of its own, and a TPU is held by one process at a time (the training process here), so "
    "keep the actor on the CPU (no `num_gpus`, its model and tensors on 'cpu') or give it XLA devices of its own.",
    examples=lambda: (
        invalid(
            """
            import ray
            import torch


            @ray.remote(num_gpus=0.125)
            class DataWorker:
                def __init__(self, config):
                    self.model = Net().to(config.device)
            """,
            findings=(Expected(5, 2, "`DataWorker` asks Ray for GPUs (num_gpus=0.125)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import ray
            import torch


            @ray.remote
            class ReplayBuffer:
                def __init__(self, config):
                    self.buffer = []


            @ray.remote(num_gpus=0, num_cpus=1)
            def evaluate(weights):
                return Net().load_state_dict(weights)
            """,
            note="cpu-actors-and-tasks",
        ),
    ),
    invalid=lambda: (
        *(
            invalid(
                """
                import ray as r
                import torch


                @r.remote(num_cpus=1, num_gpus=gpus)
                def test(model, x):
                    return model(x).sum().item()
                """,
                target=target,
                alias=True,
                note=f"a-task-with-a-gpu-count-of-a-variable-{target}",
                findings=(Expected(5, 2, "`test` asks Ray for GPUs (num_gpus=gpus)"),),
            )
            for target in ("2.9", "sagemaker")
        ),
    ),
)


@on_calls(RAY_GPU_ACTOR, names="ray.remote")
def _report(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import call_args, string_value

    gpus = call_args(original)[1].get("num_gpus")
    if gpus is None or string_value(gpus.value) is not None or _zero(gpus.value):
        return updated
    owner = next((n for n in reversed(ctx.ancestors) if isinstance(n, (cst.ClassDef, cst.FunctionDef))), None)
    if owner is None or not any(d.decorator is original for d in owner.decorators):
        return updated  # ``ray.remote(num_gpus=1)(fn)``: named where it is applied, not here
    ctx.report(
        RAY_GPU_ACTOR,
        original,
        f"`{owner.name.value}` asks Ray for GPUs (num_gpus={ctx.code(gpus.value)}): Ray finds none on an XLA host "
        "(unless `ray.init(num_gpus=...)` declares some), so it never starts it and its calls wait forever; started, "
        "it is a process of its own, and a TPU is held by one process at a time (the training process): keep it on "
        "the CPU (no num_gpus, its model and tensors on 'cpu') or give it XLA devices of its own",
    )
    return updated


def _zero(value: cst.BaseExpression) -> bool:
    import libcst as cst

    return isinstance(value, (cst.Integer, cst.Float)) and float(value.value) == 0
