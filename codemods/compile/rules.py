"""XLA72: torch.compile on the XLA device.

Checked on torch 2.9.0 / torch_xla 2.9.0 (PJRT_DEVICE=CPU): ``torch.compile(model)``,
``@torch.compile`` and ``model.compile()`` use the inductor backend, which fails on XLA
tensors (``InductorError: KeyError: 'xla'``); with ``backend="openxla"`` a training
step (forward, backward, optimizer step) runs, also with ``fullgraph=True`` or
``dynamic=False``.  ``mode=`` and ``options=`` reach the openxla backend, which ignores
them (aot_autograd logs "ignoring extra kwargs").  The sagemaker target is PyTorch 1.13,
which has no torch.compile (nor nn.Module.compile, torch._dynamo or torch._inductor): the
call goes and the model runs as it is, which is what torch_xla 1.13 compiles anyway (its
lazy graphs, at each step barrier)."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

TORCH_COMPILE = Rule(
    "XLA721", "torch-compile", "error",
    "torch.compile compiles with the openxla backend (2.9); it is removed on sagemaker (PyTorch 1.13 has none)",
    True,
    why="torch.compile's default backend, inductor, fails on XLA tensors (checked on torch_xla 2.9: "
    "`InductorError: KeyError: 'xla'`), in every form: `torch.compile(model)`, `@torch.compile`, "
    "`model.compile()`; so does an explicit `backend=\"inductor\"`, and `backend=\"cudagraphs\"` skips its "
    "CUDA graphs and compiles nothing. `backend=\"openxla\"` hands dynamo's graphs to XLA and runs a training "
    "step. On the sagemaker target (PyTorch 1.13 with torch_xla 1.13) torch.compile does not exist: a "
    "statement that only compiles (`model = torch.compile(model)`, `model.compile()`) goes, a decorator "
    "goes, and `torch.compile(f)` used as a value becomes `f`; the model then runs as it is, and torch_xla "
    "still compiles its lazy graph at every step barrier. Hugging Face's `TrainingArguments(torch_compile=True)` "
    "compiles through Accelerate, which has no backend that runs on XLA here (checked with transformers 5.24, "
    "accelerate 1.15, torch 2.9: `torch_compile_backend=\"openxla\"` is rejected by Accelerate's DynamoBackend, "
    "its `aot_torchxla_trace_once` is no longer registered, the default inductor fails; without torch_compile "
    "the Trainer trains on XLA): `torch_compile` and its backend and mode are removed. Where the call cannot be "
    "fixed here (the backend "
    "may come from unpacked keywords, torch.compile is passed around as a value) it is reported.",
    examples=(
        example(
            """
            import torch

            compile = True
            if compile:
                model = torch.compile(model)
            """,
            """
            import torch

            compile = True
            if compile:
                model = torch.compile(model, backend="openxla")
            """,
        ),
        example(
            """
            import torch

            @torch.compile
            def gelu(x):
                return 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x**3)))
            """,
            """
            import torch

            @torch.compile(backend="openxla")
            def gelu(x):
                return 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x**3)))
            """,
        ),
        example(
            """
            import torch

            compile = True
            if compile:
                model = torch.compile(model)
            """,
            """
            import torch

            compile = True
            if compile:
                pass
            """,
            target="sagemaker",
        ),
    ),
)

INDUCTOR_OPTIONS = Rule(
    "XLA722", "inductor-options", "info", "Inductor-only `mode=` and `options=` of torch.compile are removed", True,
    why="`mode=\"max-autotune\"` tunes inductor's Triton kernels, `mode=\"reduce-overhead\"` replays CUDA graphs, "
    "`options={...}` sets inductor's configuration: none of it exists for XLA, and the openxla backend ignores "
    "them (checked on torch_xla 2.9). They are removed, with a finding saying what they did. An `options` "
    "value whose keys are not known here (a variable), or that holds `guard_filter_fn` (which dynamo reads), "
    "is reported instead.",
    examples=(
        example(
            """
            import torch

            model = torch.compile(model, mode="max-autotune", fullgraph=True)
            """,
            """
            import torch

            model = torch.compile(model, fullgraph=True, backend="openxla")
            """,
        ),
    ),
)

COMPILE_BACKEND = Rule(
    "XLA723", "compile-backend", "warning", "torch.compile with an explicit backend that is not openxla", False,
    why="A backend other than openxla (`eager`, `aot_eager`, a custom function, one chosen by a variable) gets "
    "dynamo's graphs instead of XLA: eager backends run them op by op on the lazy XLA tensors (no compiled "
    "graph of dynamo's), backends written for CUDA fail. Inductor and cudagraphs are "
    "switched to openxla (XLA721); any other backend is the author's choice, so it is reported.",
    examples=(
        example(
            """
            import torch

            model = torch.compile(model, backend=args.backend)
            """
        ),
    ),
)

COMPILER_SETTINGS = Rule(
    "XLA724", "compiler-settings", "info", "Settings of torch._dynamo and torch._inductor on XLA", False,
    why="Dynamo still traces the graphs that the openxla backend compiles, so `torch._dynamo.config` settings "
    "(cache size limits, suppressed errors) apply on XLA too and are worth a look; inductor does not compile "
    "for XLA, so `torch._inductor.config` settings do nothing there.",
    examples=(
        example(
            """
            import torch._inductor.config

            torch._inductor.config.coordinate_descent_tuning = True
            """
        ),
    ),
)

RULES = (TORCH_COMPILE, INDUCTOR_OPTIONS, COMPILE_BACKEND, COMPILER_SETTINGS)
