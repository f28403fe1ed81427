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

from codemods.engine.rule import Expected, Rule, invalid, valid

TORCH_COMPILE = Rule(
    code="XLA721",
    name="torch-compile",
    severity="error",
    summary="torch.compile compiles with the openxla backend (2.9); it is removed on sagemaker (PyTorch 1.13 has none)",
    fixable=True,
    why="torch.compile's default backend, inductor, fails on XLA tensors (checked on torch_xla 2.9: "
    "`InductorError: KeyError: 'xla'`), in every form: `torch.compile(model)`, `@torch.compile`, "
    '`model.compile()`; so does an explicit `backend="inductor"`, and `backend="cudagraphs"` skips its '
    'CUDA graphs and compiles nothing. `backend="openxla"` hands dynamo\'s graphs to XLA and runs a training '
    "step. On the sagemaker target (PyTorch 1.13 with torch_xla 1.13) torch.compile does not exist: a "
    "statement that only compiles (`model = torch.compile(model)`, `model.compile()`) goes, a decorator "
    "goes, and `torch.compile(f)` used as a value becomes `f`; the model then runs as it is, and torch_xla "
    "still compiles its lazy graph at every step barrier. Hugging Face's `TrainingArguments(torch_compile=True)` "
    "compiles through Accelerate, which has no backend that runs on XLA here (checked with transformers 5.24, "
    'accelerate 1.15, torch 2.9: `torch_compile_backend="openxla"` is rejected by Accelerate\'s DynamoBackend, '
    "its `aot_torchxla_trace_once` is no longer registered, the default inductor fails; without torch_compile "
    "the Trainer trains on XLA): `torch_compile` and its backend and mode are removed. Where the call cannot be "
    "fixed here (the backend "
    "may come from unpacked keywords, torch.compile is passed around as a value) it is reported.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(5, 13, 'torch.compile(model) -> torch.compile(model, backend="openxla")'),),
        ),
        invalid(
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
            findings=(Expected(3, 1, '@torch.compile -> @torch.compile(backend="openxla")'),),
        ),
        invalid(
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
            findings=(Expected(5, 5, "removed `model = torch.compile(model)`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import re
            import torch

            compile = True
            pattern = re.compile(r"step (\\d+)")
            code = compile("x + 1", "<expr>", "eval")
            model = torch.compile(model, backend="openxla")
            keras_like.compile(optimizer="adam", loss="mse")
            model.compile(optimizer="adam", loss="mse", metrics=["accuracy"])
            """,
            note="other-compiles",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            compile = True  # use PyTorch 2.0 to compile the model to be faster
            if compile:
                unoptimized_model = model
                model = torch.compile(model)  # requires PyTorch 2.0
            """,
            """
            import torch

            compile = True  # use PyTorch 2.0 to compile the model to be faster
            if compile:
                unoptimized_model = model
                model = torch.compile(model, backend="openxla")  # requires PyTorch 2.0
            """,
            note="config-flag",
            findings=(Expected(6, 13, "default inductor backend fails on XLA tensors"),),
        ),
        invalid(
            """
            import torch

            @torch.compile
            def gelu(x):
                return x * torch.sigmoid(1.702 * x)

            @torch.compile(fullgraph=True)
            def step(model, x):
                return model(x).sum()

            model.compile()
            compiled = torch.compile(model, dynamic=False)
            """,
            """
            import torch

            @torch.compile(backend="openxla")
            def gelu(x):
                return x * torch.sigmoid(1.702 * x)

            @torch.compile(fullgraph=True, backend="openxla")
            def step(model, x):
                return model(x).sum()

            model.compile(backend="openxla")
            compiled = torch.compile(model, dynamic=False, backend="openxla")
            """,
            note="every-form",
            findings=(
                Expected(3, 1, '@torch.compile(backend="openxla")'),
                Expected(7, 2, 'torch.compile(fullgraph=True) -> torch.compile(fullgraph=True, backend="openxla")'),
                Expected(11, 1, "model.compile()"),
                Expected(12, 12, "torch.compile(model, dynamic=False) ->"),
            ),
        ),
        invalid(
            """
            import torch

            model = torch.compile(model, backend="inductor")
            graphed = torch.compile(model, backend='cudagraphs')
            """,
            """
            import torch

            model = torch.compile(model, backend="openxla")
            graphed = torch.compile(model, backend='openxla')
            """,
            note="cuda-backends",
            findings=(
                Expected(3, 9, '-> torch.compile(model, backend="openxla"): backend="inductor" fails'),
                Expected(4, 11, "skips them"),
            ),
        ),
        invalid(
            """
            import functools
            import torch

            model = torch.compile(model, **compile_kwargs)
            compiler = functools.partial(torch.compile, fullgraph=True)
            """,
            note="not-fixable",
            findings=(Expected(4, 9, "unpacked keywords"), Expected(5, 30, "used as a value")),
        ),
        invalid(
            """
            import torch

            compile = True
            model = GPT(config)
            if compile:
                model = torch.compile(model)
            if compile: model = torch.compile(model)
            model.compile(mode="max-autotune")

            @torch.compile(fullgraph=True)
            def gelu(x):
                return x * torch.sigmoid(1.702 * x)

            ema = torch.compile(ema_model)
            """,
            """
            import torch

            compile = True
            model = GPT(config)
            if compile:
                pass
            if compile: pass

            def gelu(x):
                return x * torch.sigmoid(1.702 * x)

            ema = ema_model
            """,
            target="sagemaker",
            note="sagemaker-eager",
            findings=(
                Expected(6, 5, "has no torch.compile"),
                Expected(7, 1, 'removed `model.compile(mode="max-autotune")`'),
                Expected(7, 13, "removed `model = torch.compile(model)`"),
                Expected(9, 1, "removed `@torch.compile(fullgraph=True)`"),
                Expected(12, 7, "torch.compile(ema_model) -> ema_model"),
            ),
        ),
        invalid(
            """
            import torch as th
            from torch import compile as tcompile

            net = th.compile(net)
            head = tcompile(head, fullgraph=True)
            """,
            """
            import torch as th
            from torch import compile as tcompile

            net = th.compile(net, backend="openxla")
            head = tcompile(head, fullgraph=True, backend="openxla")
            """,
            alias=True,
            findings=(
                Expected(4, 7, 'th.compile(net) -> th.compile(net, backend="openxla")'),
                Expected(5, 8, "tcompile(head, fullgraph=True) ->"),
            ),
        ),
        invalid(
            """
            from transformers import Trainer, TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=True)
            fast = TrainingArguments(
                output_dir="out",
                optim="adamw_torch_xla",
                torch_compile=True,
                torch_compile_backend="inductor",
                torch_compile_mode="max-autotune",
            )
            maybe = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=args.compile)
            """,
            """
            from transformers import Trainer, TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla")
            fast = TrainingArguments(
                output_dir="out",
                optim="adamw_torch_xla",
            )
            maybe = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=args.compile)
            """,
            note="trainer-torch-compile",
            findings=(
                Expected(3, 69, "the Trainer compiles through Accelerate"),
                Expected(7, 5, "removed `torch_compile=True, torch_compile_backend"),
                Expected(8, 70, "make sure it is False on XLA"),
            ),
        ),
        invalid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=True)
            """,
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla")
            """,
            target="sagemaker",
            note="trainer-sagemaker",
            findings=(Expected(3, 69, "has no torch.compile"),),
        ),
        invalid(
            """
            import torch
            import torch._dynamo

            model = torch._dynamo.optimize("inductor")(model)
            fast = torch._dynamo.optimize("openxla")(model)
            """,
            note="dynamo-optimize",
            findings=(Expected(4, 9, 'use torch.compile(model, backend="openxla")'),),
        ),
        invalid(
            """
            import torch
            import torch._dynamo

            torch._dynamo.config.suppress_errors = True
            """,
            target="sagemaker",
            note="sagemaker-settings",
            findings=(
                Expected(2, 1, "`import torch._dynamo`: PyTorch 1.13 has no torch._dynamo"),
                Expected(4, 1, "PyTorch 1.13 has no torch._dynamo"),
            ),
        ),
        invalid(
            """
            import torch
            import torch._inductor.config as config

            config.coordinate_descent_tuning = True


            def main():
                config = GPTConfig(n_layer=4)
                config.n_embd = 128
                return torch.nn.Linear(config.n_embd, config.n_embd)
            """,
            target="sagemaker",
            note="sagemaker-local-config",
            findings=(
                Expected(2, 1, "`import torch._inductor.config as config`: PyTorch 1.13 has no"),
                Expected(4, 1, "`config.coordinate_descent_tuning`: PyTorch 1.13 has no"),
            ),
        ),
    ),
)

INDUCTOR_OPTIONS = Rule(
    code="XLA722",
    name="inductor-options",
    severity="info",
    summary="Inductor-only `mode=` and `options=` of torch.compile are removed",
    fixable=True,
    why='`mode="max-autotune"` tunes inductor\'s Triton kernels, `mode="reduce-overhead"` replays CUDA graphs, '
    "`options={...}` sets inductor's configuration: none of it exists for XLA, and the openxla backend ignores "
    "them (checked on torch_xla 2.9). They are removed, with a finding saying what they did. An `options` "
    "value whose keys are not known here (a variable), or that holds `guard_filter_fn` (which dynamo reads), "
    "is reported instead.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = torch.compile(model, mode="max-autotune", fullgraph=True)
            """,
            """
            import torch

            model = torch.compile(model, fullgraph=True, backend="openxla")
            """,
            findings=(Expected(3, 30, 'removed `mode="max-autotune"`'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = torch.compile(model, mode="default", backend="openxla")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = torch.compile(model, mode="max-autotune")
            fast = torch.compile(
                model,
                options={"triton.cudagraphs": True, "epilogue_fusion": True},
                fullgraph=True,
            )
            """,
            """
            import torch

            model = torch.compile(model, backend="openxla")
            fast = torch.compile(
                model,
                fullgraph=True,
                backend="openxla",
            )
            """,
            findings=(Expected(3, 30, "tuned inductor's Triton"), Expected(6, 5, "inductor's own configuration")),
        ),
        invalid(
            """
            import torch

            model = torch.compile(model, options=inductor_options, backend="openxla")
            other = torch.compile(model, options={"guard_filter_fn": keep_all, "max_autotune": True}, backend="openxla")
            """,
            note="not-removable",
            findings=(Expected(3, 30, "keys are not known here"), Expected(4, 30, "guard_filter_fn")),
        ),
        invalid(
            """
            import torch as th

            model.compile(mode="reduce-overhead")
            """,
            """
            import torch as th

            model.compile(backend="openxla")
            """,
            alias=True,
            findings=(Expected(3, 15, "CUDA graphs"),),
        ),
    ),
)

COMPILE_BACKEND = Rule(
    code="XLA723",
    name="compile-backend",
    severity="warning",
    summary="torch.compile with an explicit backend that is not openxla",
    fixable=False,
    why="A backend other than openxla (`eager`, `aot_eager`, a custom function, one chosen by a variable) gets "
    "dynamo's graphs instead of XLA: eager backends run them op by op on the lazy XLA tensors (no compiled "
    "graph of dynamo's), backends written for CUDA fail. Inductor and cudagraphs are "
    "switched to openxla (XLA721); any other backend is the author's choice, so it is reported.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = torch.compile(model, backend=args.backend)
            """,
            findings=(Expected(3, 30, "`backend=args.backend` is not the openxla backend"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = torch.compile(model, backend="openxla")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = torch.compile(model, backend=args.compile_backend)
            debug = torch.compile(model, backend="aot_eager")
            """,
            findings=(
                Expected(3, 30, "`backend=args.compile_backend` is not the openxla backend"),
                Expected(4, 30, "aot_eager"),
            ),
        ),
        invalid(
            """
            from torch import compile

            model = compile(model, backend="eager")
            """,
            alias=True,
            findings=(Expected(3, 24, '`backend="eager"` is not the openxla backend'),),
        ),
    ),
)

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

RULES = (TORCH_COMPILE, INDUCTOR_OPTIONS, COMPILE_BACKEND, COMPILER_SETTINGS)
