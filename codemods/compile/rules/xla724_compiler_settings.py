"""XLA724 compiler-settings: settings of torch._dynamo and torch._inductor are reported on the 2.9
target (on the sagemaker target, which has neither, XLA721 says so)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

COMPILER_SETTINGS = Rule(
    code="XLA724",
    name="compiler-settings",
    severity="info",
    summary="Settings of torch._dynamo and torch._inductor on XLA",
    fixable=False,
    why="Dynamo still traces the graphs that the openxla backend compiles, so `torch._dynamo.config` settings "
    "(cache size limits, suppressed errors) apply on XLA too and are worth a look; inductor does not compile "
    "for XLA, so `torch._inductor.config` settings do nothing there.",
    examples=lambda: (
        invalid(
            """
            import torch._inductor.config

            torch._inductor.config.coordinate_descent_tuning = True
            """,
            findings=(Expected(3, 1, "`torch._inductor.config.coordinate_descent_tuning` is an inductor setting"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch._dynamo

            torch._dynamo.reset()
            """,
        ),
        valid(
            """
            import torch
            from torch._inductor import config as inductor_config


            class GPTConfig:
                n_layer = 12


            def build(config):
                return torch.nn.Linear(config.n_layer, 2)


            def main():
                config = GPTConfig()
                config.n_layer = 4
                return build(config)
            """,
            note="local-config-objects",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch._dynamo
            import torch._inductor.config

            torch._dynamo.config.cache_size_limit = 64
            torch._inductor.config.triton.cudagraphs = False
            """,
            findings=(Expected(5, 1, "applies on XLA too"), Expected(6, 1, "no effect there")),
        ),
        invalid(
            """
            import torch
            from torch._inductor import config as inductor_config

            inductor_config.coordinate_descent_tuning = True
            """,
            alias=True,
            findings=(Expected(4, 1, "`inductor_config.coordinate_descent_tuning` is an inductor setting"),),
        ),
        invalid(
            """
            import torch
            from torch._inductor import config

            config.coordinate_descent_tuning = True


            def build(config):
                return torch.nn.Linear(config.n_layer, 2)


            def main():
                config = GPTConfig()
                config.n_layer = 4
                for config in configs:
                    print(config.n_layer)
            """,
            alias=True,
            findings=(Expected(4, 1, "`config.coordinate_descent_tuning` is an inductor setting"),),
            note="config-imported-and-local",
        ),
    ),
)


@on_facts(COMPILER_SETTINGS, nodes=lambda facts: facts.compile.settings)
def _setting(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    """A ``torch._dynamo.config.*`` or ``torch._inductor.config.*`` reference: what it does on XLA."""
    if ctx.target.compile_backend is not None:
        qualified = ctx.facts.compile.settings[original]
        advice = next(text for prefix, text in apis.COMPILER_SETTINGS.items() if qualified.startswith(prefix))
        ctx.report(COMPILER_SETTINGS, original, f"`{ctx.code(original)}` {advice}")
    return updated
