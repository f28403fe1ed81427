"""XLA721 torch-compile: torch.compile compiles with the openxla backend (2.9 target); on the
sagemaker target (PyTorch 1.13, which has no torch.compile) it goes and the model runs as it is.

Checked on torch 2.9.0 / torch_xla 2.9.0 (PJRT_DEVICE=CPU): ``torch.compile(model)``,
``@torch.compile`` and ``model.compile()`` use the inductor backend, which fails on XLA
tensors (``InductorError: KeyError: 'xla'``); with ``backend="openxla"`` a training
step (forward, backward, optimizer step) runs, also with ``fullgraph=True`` or
``dynamic=False``.  The sagemaker target is PyTorch 1.13, which has no torch.compile (nor
nn.Module.compile, torch._dynamo or torch._inductor): the call goes and the model runs as it
is, which is what torch_xla 1.13 compiles anyway (its lazy graphs, at each step barrier).

The hooks run on the nodes the compile facts name (compile/analysis.py).  A torch.compile
call is rewritten once, here: XLA722's module says which inductor-only options go, and
XLA723's reports a backend that is not openxla."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.compile.rules.xla722_inductor_options import dropped_options
from codemods.compile.rules.xla723_compile_backend import report_backend
from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context, StatementLineT
    from codemods.facts import Facts

# TrainingArguments' compile settings.
_TRAINER_COMPILE = frozenset({"torch_compile", "torch_compile_backend", "torch_compile_mode"})
_NO_TORCH_COMPILE = "PyTorch 1.13 (torch_xla 1.13, the SageMaker containers) has no torch.compile"
_NO_COMPILER = "PyTorch 1.13 has no torch._dynamo or torch._inductor (nor torch.compile); remove it"

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
            target_only=True,
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


# -- the 2.9 target: compile with openxla (the sagemaker target: no torch.compile) ----------


@on_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.calls)
def _compile_call(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``torch.compile(m, ...)`` and ``m.compile(...)``: the openxla backend, without
    inductor's options; on the sagemaker target the call goes."""
    import libcst as cst

    from codemods.engine.nodes import with_keyword, without_args

    backend = ctx.target.compile_backend
    if backend is None:
        return _eager(ctx, original, updated)
    if len(updated.args) != len(original.args):  # another rewrite reshaped the call
        ctx.report(TORCH_COMPILE, original, f'`{ctx.code(original)}`: pass backend="{backend}"')
        return updated
    args = without_args(list(updated.args), dropped_options(ctx, original))
    given = next((a for a in original.args if a.keyword is not None and a.keyword.value == "backend"), None)
    if given is not None:
        return _explicit_backend(ctx, original, updated, given, args)
    if any(a.star == "**" for a in original.args):
        ctx.report(
            TORCH_COMPILE,
            original,
            f"`{ctx.code(original)}`: the backend may come from the unpacked keywords; "
            f'make sure it is "{backend}" (inductor, the default, fails on XLA tensors)',
        )
        return updated.with_changes(args=args)
    new = ctx.fix(
        TORCH_COMPILE,
        original,
        f"{_shown(ctx, original)} -> {{new}}: the default inductor backend "
        f"{apis.CUDA_COMPILE_BACKENDS['inductor']}; openxla compiles the graph with XLA",
        lambda: updated.with_changes(args=with_keyword(args, "backend", cst.SimpleString(f'"{backend}"'))),
    )
    return new if new is not None else updated.with_changes(args=args)


def _explicit_backend(
    ctx: Context[Facts], original: cst.Call, updated: cst.Call, given: cst.Arg, args: list[cst.Arg]
) -> cst.Call:
    """A CUDA backend (inductor, cudagraphs) becomes openxla; another is XLA723's."""
    from codemods.engine.nodes import quoted_like, string_value

    name = string_value(given.value)
    backend = ctx.target.compile_backend or ""
    if name == backend:
        return updated.with_changes(args=args)
    if name not in apis.CUDA_COMPILE_BACKENDS:
        report_backend(ctx, given, backend)
        return updated.with_changes(args=args)
    at = next(i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "backend")
    new = ctx.fix(
        TORCH_COMPILE,
        original,
        f'{_shown(ctx, original)} -> {{new}}: backend="{name}" {apis.CUDA_COMPILE_BACKENDS[name]}; '
        "openxla compiles the graph with XLA",
        lambda: updated.with_changes(
            args=[*args[:at], args[at].with_changes(value=quoted_like(given.value, backend)), *args[at + 1 :]]
        ),
    )
    return new if new is not None else updated.with_changes(args=args)


def _eager(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``torch.compile(f, ...)`` -> ``f`` where the call is a value (a statement that only
    compiles goes whole: ``_compile_only_line``; so does a decorator: ``_decorator``)."""
    import libcst as cst

    if ctx.facts.compile.calls[original] is not None or (
        len(ctx.ancestors) >= 2 and isinstance(ctx.ancestors[-2], cst.Decorator)
    ):
        return updated
    positional = [a for a in updated.args if a.keyword is None]
    if ctx.resolve(original.func) != apis.TORCH_COMPILE:  # model.compile(...)
        ctx.report(
            TORCH_COMPILE, original, f"`{ctx.code(original)}`: {_NO_TORCH_COMPILE} (nor nn.Module.compile); remove it"
        )
        return updated
    if len(positional) != 1 or positional[0].star:
        ctx.report(TORCH_COMPILE, original, f"`{ctx.code(original)}`: {_NO_TORCH_COMPILE}; remove it")
        return updated
    compiled = positional[0].value
    new = ctx.fix(
        TORCH_COMPILE,
        original,
        f"{_shown(ctx, original)} -> {{new}}: {_NO_TORCH_COMPILE}; the model runs as it is "
        "(torch_xla compiles its lazy graph at the step barrier)",
        lambda: compiled.with_changes(lpar=original.lpar, rpar=original.rpar) if original.lpar else compiled,
    )
    if new is not None:
        ctx.imports.discard(original.func)
    return new if new is not None else updated


@on_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.trainer_compiles)
def _trainer(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """TrainingArguments(torch_compile=True): the Trainer compiles through Accelerate,
    which offers no backend that runs on XLA here (checked: transformers 5.24,
    accelerate 1.15, torch 2.9: "openxla" is not one of Accelerate's DynamoBackend
    names, its "aot_torchxla_trace_once" is no longer registered, and the default
    inductor fails).  Without it the Trainer trains, and torch_xla compiles each step's
    lazy graph anyway: the compile settings go."""
    import libcst as cst

    from codemods.engine.nodes import without_args

    to_remove = [
        i for i, a in enumerate(original.args) if a.keyword is not None and a.keyword.value in _TRAINER_COMPILE
    ]
    flag = next(
        a for i in to_remove if (a := original.args[i]).keyword is not None and a.keyword.value == "torch_compile"
    )
    why = (
        _NO_TORCH_COMPILE
        if ctx.target.compile_backend is None
        else "the Trainer compiles through Accelerate, whose dynamo backends have no XLA one that runs here (openxla "
        "is not among them; the default inductor fails on XLA tensors)"
    )
    literal_true = isinstance(flag.value, cst.Name) and flag.value.value == "True"
    if not literal_true or len(updated.args) != len(original.args):
        ctx.report(TORCH_COMPILE, flag, f"`{ctx.code(flag).rstrip(',')}`: {why}; make sure it is False on XLA")
        return updated
    removed = ", ".join(ctx.code(original.args[i]).rstrip(",").strip() for i in to_remove)
    return ctx.fix_or_keep(
        updated,
        TORCH_COMPILE,
        flag,
        f"removed `{removed}`: {why}; without it the Trainer trains, and torch_xla compiles each step's graph itself",
        lambda: updated.with_changes(args=without_args(list(updated.args), to_remove)),
    )


@on_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.dynamo_optimize)
def _dynamo_optimize(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """``torch._dynamo.optimize(...)``, the API before torch.compile: reported."""
    backend = ctx.facts.compile.dynamo_optimize[original]
    wanted = ctx.target.compile_backend
    if wanted is None:
        ctx.report(TORCH_COMPILE, original, f"`{ctx.code(original)}`: PyTorch 1.13 has no torch._dynamo; remove it")
    elif backend != wanted:
        said = f"backend {backend!r}" if backend else "a backend that is not known here"
        ctx.report(
            TORCH_COMPILE,
            original,
            f"`{ctx.code(original)}` compiles with {said}, which does not compile for XLA: "
            f'use torch.compile(model, backend="{wanted}") (torch._dynamo.optimize is the API before it)',
        )
    return updated


@on_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.decorators)
def _decorator(
    ctx: Context[Facts], original: cst.Decorator, updated: cst.Decorator
) -> cst.Decorator | cst.RemovalSentinel:
    """``@torch.compile`` gets the openxla backend; on the sagemaker target a compiling
    decorator goes."""
    import libcst as cst

    from codemods.engine.nodes import KEYWORD_EQUAL

    backend = ctx.target.compile_backend
    if backend is None:
        if not _removed(ctx, original, f"@{ctx.code(original.decorator)}", "function"):
            return updated
        ctx.imports.discard(updated)
        return cst.RemovalSentinel.REMOVE
    if original not in ctx.facts.compile.bare_decorators:
        return updated
    return ctx.fix_or_keep(
        updated,
        TORCH_COMPILE,
        original,
        f"@{ctx.code(original.decorator)} -> {{new}}: the default inductor backend "
        f"{apis.CUDA_COMPILE_BACKENDS['inductor']}; openxla compiles the graph with XLA",
        lambda: updated.with_changes(
            decorator=cst.Call(
                updated.decorator,
                [cst.Arg(cst.SimpleString(f'"{backend}"'), keyword=cst.Name("backend"), equal=KEYWORD_EQUAL)],
            )
        ),
    )


@on_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.compile_only_lines)
def _compile_only_line(ctx: Context[Facts], original: StatementLineT, updated: StatementLineT) -> StatementLineT:
    """On the sagemaker target a line (or a one-line suite: ``if compile: model =
    torch.compile(model)``) that only compiles goes; its block keeps a ``pass`` if nothing
    else is left."""

    if ctx.target.compile_backend is not None:
        return updated
    dropped = {statement for statement in ctx.facts.compile.calls.values() if statement is not None}
    to_remove = [s for s in original.body if s in dropped]
    if len(to_remove) != len(original.body):
        for statement in to_remove:
            ctx.report(TORCH_COMPILE, statement, f"`{ctx.code(statement)}`: {_NO_TORCH_COMPILE}; remove it")
        return updated
    for statement in to_remove:
        if not _removed(ctx, statement, ctx.code(statement), "model"):
            return updated
    ctx.imports.discard(updated)
    return ctx.line_keeping(updated, [])


@on_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.compiler_imports)
def _compiler_import(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    """An import of torch._dynamo or torch._inductor on the sagemaker target."""
    if ctx.target.compile_backend is None:
        ctx.report(TORCH_COMPILE, original, f"`{ctx.code(original)}`: {_NO_COMPILER}")
    return updated


@reports_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.references)
def _used_as_value(ctx: Context[Facts], original: cst.CSTNode) -> str:
    """torch.compile passed around as a value: where it is called is not known here."""
    backend = ctx.target.compile_backend
    advice = (
        f'pass backend="{backend}" where it is called; the default inductor backend '
        f"{apis.CUDA_COMPILE_BACKENDS['inductor']}"
        if backend
        else f"{_NO_TORCH_COMPILE}; remove it"
    )
    return f"`{ctx.code(original)}` is used as a value: {advice}"


@on_facts(TORCH_COMPILE, nodes=lambda facts: facts.compile.settings)
def _setting_without_compiler(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    """A setting of torch._dynamo or torch._inductor on the sagemaker target (on 2.9 they
    are XLA724's)."""
    if ctx.target.compile_backend is None:
        ctx.report(TORCH_COMPILE, original, f"`{ctx.code(original)}`: {_NO_COMPILER}")
    return updated


def _removed(ctx: Context[Facts], node: cst.CSTNode, shown: str, runs: str) -> bool:
    """Records the removal of ``node`` (the caller removes it); False if not allowed here."""
    return (
        ctx.fix(
            TORCH_COMPILE,
            node,
            f"removed `{shown}`: {_NO_TORCH_COMPILE}; the {runs} runs as it is "
            "(torch_xla compiles its lazy graph at the step barrier)",
            lambda: node,
        )
        is not None
    )


def _shown(ctx: Context[Facts], call: cst.Call) -> str:
    """The call as the finding names it: in full when it is short."""
    code = ctx.code(call)
    return code if len(code) <= 60 and "\n" not in code else ctx.code(call.func) + "(...)"
