"""XLA202 autocast: CUDA autocast becomes XLA autocast in the target's spelling.

For the 2.9 target autocast runs on the XLA device type in bfloat16 (the precision XLA
devices support; float16 requests become bfloat16: XLA204).  The sagemaker target writes the
AWS guide's ``torch_xla.amp.autocast()``, which in torch_xla 1.13 is torch.cuda.amp.autocast
(enabled, dtype, cache_enabled: no device), and keeps the script's precision, as on the
GPUs of the SageMaker Training Compiler.  An autocast already in XLA's spelling of the other
release takes this one's (XLA901).  The hooks run on the calls and references the amp facts
name (amp/analysis.py); an autocast whose device type comes from a value is XLA210's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.amp.rules.xla204_float16_autocast import fix_dtype
from codemods.amp.rules.xla210_autocast_device_type import report_device_variable
from codemods.amp.rules.xla214_disabled_autocast import DISABLED_AUTOCAST, NOTE, disabled
from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.release_names.rules import XLA_RELEASE_NAMES
from codemods.targets import Api

if TYPE_CHECKING:
    import libcst as cst

    from codemods.amp.facts import AutocastCall
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

AUTOCAST = Rule(
    code="XLA202",
    name="autocast",
    severity="error",
    summary="CUDA autocast becomes XLA autocast (`torch.autocast('xla', dtype=torch.bfloat16)`; sagemaker: `torch_xla.amp.autocast()`, torch_xla 1.13's CUDA autocast)",
    fixable=True,
    why="CUDA autocast does nothing to XLA tensors: the model silently trains in float32, or, with a gradient "
    "scaler, with a scaler that was never meant for that precision.",
    examples=lambda: (
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast():\n    loss = model(x)\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            'with torch.autocast("xla", dtype=torch.bfloat16):\n    loss = model(x)\n',
            findings=(Expected(3, 6, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16)'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            with torch.no_grad():
                out = model(x)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(x)
            with torch.autocast("xla", dtype=torch.bfloat16):
                out = model(x)
            """,
            note="cpu-and-xla-autocast-stay",
            target_only=True,
        ),
        valid(
            """
            import torch

            ac = torch.autocast
            with ac("cpu", dtype=torch.bfloat16):
                out = model(x)
            """,
            note="cpu-autocast-through-a-name",
        ),
        valid(
            """
            import torch

            def entered(ctx):
                return isinstance(ctx, torch.autocast)
            """,
            note="type-check-is-no-use",
        ),
        valid(
            """
            import torch

            with torch.autocast("cpu", **kwargs):
                out = model(x)
            """,
            note="unpacked-cpu-autocast-stays",
        ),
    ),
    invalid=lambda: (
        # Stability-AI/generative-models' checkpointing: the backward pass re-enters the
        # forward's autocast with the keywords it recorded, unpacked.
        invalid(
            """
            import torch

            kwargs = {"enabled": True, "dtype": torch.get_autocast_gpu_dtype()}
            with torch.enable_grad(), torch.cuda.amp.autocast(**kwargs):
                out = model(x)
            with torch.autocast("cuda", **kwargs):
                out = model(x)
            """,
            """
            import torch

            kwargs = {"enabled": True, "dtype": torch.get_autocast_gpu_dtype()}
            with torch.enable_grad(), torch.cuda.amp.autocast(**kwargs):
                out = model(x)
            with torch.autocast("cuda", **kwargs):
                out = model(x)
            """,
            note="unpacked-arguments",
            findings=(
                Expected(
                    4,
                    27,
                    "`torch.cuda.amp.autocast` gets unpacked arguments, so it is not rewritten: as CUDA "
                    "autocast it is off on XLA and the code under it runs in float32",
                ),
                Expected(6, 6, "`torch.autocast` gets unpacked arguments, so it is not rewritten"),
            ),
        ),
        invalid(
            """
            import torch

            with torch.cuda.amp.autocast():
                out = model(x)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with torch.autocast("xla", dtype=torch.bfloat16):
                out = model(x)
            """,
            note="cuda-amp-default-float16",
            findings=(Expected(4, 6, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16)'),),
        ),
        invalid(
            """
            import torch

            with torch.cuda.amp.autocast(use_amp):
                out = model(x)
            with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                out = model(x)
            with torch.amp.autocast(device_type='cuda', enabled=args.amp):
                out = model(x)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp):
                out = model(x)
            with torch.autocast("xla", dtype=torch.bfloat16, cache_enabled=False):
                out = model(x)
            with torch.autocast('xla', dtype=torch.bfloat16, enabled=args.amp):
                out = model(x)
            """,
            note="positional-enabled-and-keywords",
            findings=(
                Expected(4, 6, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16,'),
                Expected(6, 6, 'torch.autocast -> torch.autocast("xla", dtype=torch.bfloat16, cache_enabled=False)'),
                Expected(8, 6, "torch.amp.autocast -> torch.autocast('xla', dtype=torch.bfloat16,"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import autocast

            @autocast()
            def forward(x):
                return model(x)

            with autocast(), torch.no_grad():
                out = model(x)
            ctx = nullcontext() if args.cpu else autocast(enabled=True)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            @torch.autocast("xla", dtype=torch.bfloat16)
            def forward(x):
                return model(x)

            with torch.autocast("xla", dtype=torch.bfloat16), torch.no_grad():
                out = model(x)
            ctx = nullcontext() if args.cpu else torch.autocast("xla", dtype=torch.bfloat16, enabled=True)
            """,
            note="decorator-with-items-conditional",
            findings=(
                Expected(4, 2, 'autocast -> torch.autocast("xla", dtype=torch.bfloat16) (float16,'),
                Expected(8, 6, 'autocast -> torch.autocast("xla", dtype=torch.bfloat16) (float16,'),
                Expected(10, 38, 'autocast -> torch.autocast("xla", dtype=torch.bfloat16, enabled=True) (float16,'),
            ),
        ),
        invalid(
            """
            import torch

            with torch.cuda.amp.autocast(dtype=torch.float16):
                out = model(x)
            """,
            """
            import torch
            import torch_xla.amp

            with torch_xla.amp.autocast(dtype=torch.float16):
                out = model(x)
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
            findings=(Expected(4, 6, "torch.cuda.amp.autocast -> torch_xla.amp.autocast(dtype=torch.float16)"),),
        ),
        invalid(
            """
            import torch as th
            from torch.cuda.amp import autocast as ac

            with ac(enabled=True):
                out = model(x)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with th.autocast("xla", dtype=th.bfloat16, enabled=True):
                out = model(x)
            """,
            alias=True,
            findings=(Expected(4, 6, 'ac -> th.autocast("xla", dtype=th.bfloat16, enabled=True) (float16,'),),
        ),
        invalid(
            """
            from contextlib import nullcontext

            import torch

            amp_ctx = torch.cuda.amp.autocast(dtype=torch.float16) if use_amp else nullcontext()
            with amp_ctx:
                out = model(x)
            """,
            """
            from contextlib import nullcontext

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            amp_ctx = torch.autocast("xla", dtype=torch.bfloat16) if use_amp else nullcontext()
            with amp_ctx:
                out = model(x)
            """,
            note="autocast-called-into-a-name",
            findings=(Expected(6, 11, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16)'),),
        ),
        invalid(
            """
            from contextlib import nullcontext

            import torch


            class Trainer:
                def __init__(self, use_amp):
                    self.autocast = torch.autocast if use_amp else nullcontext

                def step(self, x):
                    with self.autocast("cuda", dtype=torch.float16):
                        return self.model(x)
            """,
            """
            from contextlib import nullcontext

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)


            class Trainer:
                def __init__(self, use_amp):
                    self.autocast = torch.autocast if use_amp else nullcontext

                def step(self, x):
                    with self.autocast("xla", dtype=torch.bfloat16):
                        return self.model(x)
            """,
            note="autocast-bound-to-a-name",
            findings=(
                Expected(
                    12,
                    14,
                    '`self.autocast` is torch.autocast: self.autocast("cuda", dtype=torch.float16) -> '
                    'self.autocast("xla", dtype=torch.bfloat16)',
                ),
            ),
        ),
        invalid(
            """
            import torch as th

            ac = th.amp.autocast
            with ac(device_type="cuda"):
                out = model(x)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            ac = th.amp.autocast
            with ac(device_type="xla"):
                out = model(x)
            """,
            alias=True,
            note="autocast-bound-to-a-name-alias",
            findings=(Expected(5, 6, '`ac` is torch.autocast: ac(device_type="cuda") -> ac(device_type="xla")'),),
        ),
        invalid(
            """
            import torch

            ac = torch.autocast
            with ac("cuda", dtype=torch.float16):
                out = model(x)
            """,
            target="sagemaker",
            note="autocast-bound-to-a-name-sagemaker",
            findings=(
                Expected(
                    4,
                    6,
                    "`ac` is torch.autocast, called here: the torch of torch_xla 1.13 takes no 'xla' "
                    "autocast device type",
                ),
            ),
        ),
        invalid(
            """
            from contextlib import nullcontext
            import functools

            import torch


            def step(model, x, use_amp):
                autocast = torch.cuda.amp.autocast if use_amp else nullcontext
                with autocast():
                    out = model(x)
                half = functools.partial(torch.autocast, "cuda")
                with half():
                    return model(out)
            """,
            note="autocast-handed-on-uncalled",
            findings=(
                Expected(8, 16, "`torch.cuda.amp.autocast` is handed on uncalled: it has no device argument to change"),
                Expected(11, 30, "`torch.autocast` is handed on uncalled: its device type is given where it is called"),
            ),
        ),
        invalid(
            """
            from functools import partial

            import torch
            from torch.cuda.amp import autocast


            def attend(q, k):
                context = partial(autocast, enabled=False) if torch.is_autocast_enabled() else None
                return context, q @ k
            """,
            note="autocast-handed-on-to-turn-it-off",
            findings=(
                Expected(
                    8,
                    23,
                    "`autocast` is handed on uncalled, to turn autocast off: it has no device argument to change, so "
                    "where it is called it stays CUDA autocast (off on XLA); call "
                    'torch.autocast("xla", dtype=torch.bfloat16, enabled=False) where it is used',
                ),
            ),
        ),
        invalid(
            """
            import functools

            import torch.cuda.amp as cuda_amp

            off = functools.partial(cuda_amp.autocast, enabled=False)
            """,
            target="sagemaker",
            alias=True,
            note="autocast-handed-on-to-turn-it-off-sagemaker",
            findings=(Expected(5, 25, "is handed on uncalled, to turn autocast off"),),
        ),
    ),
)


@on_facts(AUTOCAST, nodes=lambda facts: facts.amp.autocasts)
def _autocast(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """An autocast call in the target's spelling, on the XLA device type and in its precision."""
    import libcst as cst

    from codemods.amp.rules.edits import EMPTY_STRING, argument_list, as_keyword, updated_args
    from codemods.engine.nodes import quoted_like, string_value

    call = ctx.facts.amp.autocasts[original]
    target = ctx.target
    by_device_type = target.autocast_takes == "device_type"
    wanted = "torch" if by_device_type else "torch_xla_1_13"
    if call.flavor == "xla" and call.spelling == wanted:
        return updated
    new_args = updated_args(original, updated)
    device = call.device
    device_variable = call.flavor == "cuda" and call.spelling == "torch" and string_value(device) is None
    dtype_note = ""
    if call.through is not None and call.flavor == "cuda":
        return _through_name(ctx, original, updated, call, new_args)
    if device_variable and by_device_type:
        report_device_variable(ctx, original, call)
        return fix_dtype(ctx, updated, call, new_args)

    skip = "device" if call.spelling == "torch_xla" else "device_type"
    rest = [as_keyword(new_args[id(arg)], name) for name, arg in call.arguments if name != skip]
    if by_device_type and (call.flavor == "cuda" or call.spelling == "torch_xla_1_13"):
        # torch_xla 1.13's autocast is CUDA autocast: float16 by default, like the CUDA ones.
        rest, dtype_note = _bfloat16(ctx, call, rest)
    elif not by_device_type and call.flavor == "xla" and ctx.resolve(call.argument("dtype")) in _BFLOAT16:
        # torch 1.13's CUDA autocast raises "Current CUDA Device does not support bfloat16" before Ampere.
        dtype_note = " (bfloat16 there needs an Ampere GPU, such as ml.p4d's; elsewhere use float16 with the scaler)"
    rule = XLA_RELEASE_NAMES if call.flavor == "xla" else AUTOCAST
    if call.flavor == "cuda" and disabled(call):
        # Off: float32 under it as on XLA without autocast (XLA214, info).
        rule, dtype_note = DISABLED_AUTOCAST, NOTE
    release = f" (torch_xla {target.torch_xla_version})" if call.flavor == "xla" else ""

    def build() -> cst.Call | None:
        func = ctx.imports.expression(target.api("autocast"))
        first = None
        if by_device_type:
            xla = quoted_like(
                device if device is not None and string_value(device) else EMPTY_STRING, target.device_string
            )
            first = cst.Arg(xla) if ctx.imports.require_package("torch_xla") else None
        if func is None or (by_device_type and first is None):
            return None
        ctx.imports.discard(original.func)
        if device is not None:
            ctx.imports.discard(device)
        return updated.with_changes(func=func, args=argument_list([first, *rest] if first else rest, updated))

    # torch_xla.amp.autocast(device, ...) -> torch_xla.amp.autocast(...): the whole call says what changed.
    before = ctx.code(original if call.spelling == "torch_xla" and not by_device_type else original.func)
    return ctx.fix_or_keep(updated, rule, original, f"{before} -> {{new}}{release}{dtype_note}", build)


def _through_name(
    ctx: Context[Facts], original: cst.Call, updated: cst.Call, call: AutocastCall, new_args: dict[int, cst.Arg]
) -> cst.Call:
    """torch.autocast called through a name (``ac = torch.autocast``, or one branch of
    a choice): the name stays, so only its arguments can change; 2.9: a literal
    "cuda" becomes "xla" (and float16 bfloat16), torch_xla 1.13 has no "xla" device type."""
    from codemods.amp.rules.edits import FLOAT16
    from codemods.engine.nodes import quoted_like, string_value

    target = ctx.target
    device = call.device
    name = call.through
    if target.autocast_takes != "device_type":
        ctx.report(
            AUTOCAST,
            original,
            f"`{name}` is torch.autocast, called here: the torch of torch_xla {target.torch_xla_version} "
            f"takes no 'xla' autocast device type, so it stays CUDA autocast (off on XLA); call "
            f"{target.xla_autocast} here instead",
        )
        return updated
    if string_value(device) is None:
        report_device_variable(ctx, original, call)
        return fix_dtype(ctx, updated, call, new_args)
    dtype = call.argument("dtype")
    float16 = dtype is not None and ctx.resolve(dtype) in FLOAT16
    precision = target.autocast_dtype

    def build() -> cst.Call | None:
        if not ctx.imports.require_package("torch_xla"):
            return None
        bfloat16 = ctx.imports.expression(Api("torch", precision)) if float16 else None  # type: ignore[arg-type]  # autocast_dtype is None only for a target whose autocast takes no device type; this path runs only when it takes one
        if float16 and bfloat16 is None:
            return None
        args = []
        for key, arg in call.arguments:
            new = new_args[id(arg)]
            if key == "device_type":
                new = new.with_changes(value=quoted_like(arg.value, target.device_string))
            elif key == "dtype" and bfloat16 is not None:
                ctx.imports.discard(arg.value)
                new = new.with_changes(value=bfloat16)
            args.append(new)
        return updated.with_changes(args=args)

    note = f" (float16 becomes {precision}: XLA autocast runs in {precision})" if float16 else ""
    return ctx.fix_or_keep(
        updated, AUTOCAST, original, f"`{name}` is torch.autocast: {ctx.code(original)} -> {{new}}{note}", build
    )


def _bfloat16(ctx: Context[Facts], call: AutocastCall, rest: list[cst.Arg]) -> tuple[list[cst.Arg], str]:
    """The keywords with the precision XLA autocast needs (float16 -> bfloat16)."""
    import libcst as cst

    from codemods.amp.rules.edits import FLOAT16
    from codemods.engine.nodes import KEYWORD_EQUAL

    precision = ctx.target.autocast_dtype
    dtype = call.argument("dtype")
    qualified = ctx.resolve(dtype) if dtype is not None else None
    if dtype is not None and qualified not in FLOAT16:
        return rest, ""
    value = ctx.imports.expression(Api("torch", precision))  # type: ignore[arg-type]  # autocast_dtype is None only for a target whose autocast takes no device type; _bfloat16 runs only when it takes one
    if value is None:
        return rest, ""
    if dtype is None:
        default = (
            " (float16, torch.cuda.amp.autocast's default,"
            if call.spelling in ("cuda_amp", "torch_xla_1_13")
            else " (float16, CUDA's default,"
        )
        note = f"{default} becomes {precision} on XLA)"
        return [cst.Arg(value, keyword=cst.Name("dtype"), equal=KEYWORD_EQUAL), *rest], note
    ctx.imports.discard(dtype)
    note = f" (float16 becomes {precision}: XLA autocast runs in {precision})"
    return [a.with_changes(value=value) if a.keyword and a.keyword.value == "dtype" else a for a in rest], note


@reports_facts(AUTOCAST, nodes=lambda facts: facts.amp.unpacked_autocasts)
def _unpacked(ctx: Context[Facts], original: cst.Call) -> str:
    """CUDA autocast with unpacked arguments: not rebuilt here."""
    return (
        f"`{ctx.code(original.func)}` gets unpacked arguments, so it is not rewritten: as CUDA autocast it "
        f"is off on XLA and the code under it runs in float32; call {ctx.target.xla_autocast} here (the "
        "unpacked keywords may hold CUDA's float16: XLA autocast takes bfloat16)"
    )


@reports_facts(AUTOCAST, nodes=lambda facts: facts.amp.autocast_references)
def _handed_on(ctx: Context[Facts], original: cst.CSTNode) -> str:
    """CUDA autocast handed on uncalled: where it is called, it stays CUDA autocast."""
    if ctx.facts.amp.autocast_references[original] in apis.CUDA_AUTOCAST:  # type: ignore[index]  # the fact's keys are the expressions this hook runs on
        why = "it has no device argument to change, so where it is called it stays CUDA autocast (off on XLA)"
    else:
        why = "its device type is given where it is called, out of sight, and with 'cuda' autocast is off on XLA"
    if _handed_disabled(ctx.ancestors):
        autocast = ctx.target.xla_autocast
        off = autocast[:-1] + ("enabled=False)" if autocast.endswith("()") else ", enabled=False)")
        return f"`{ctx.code(original)}` is handed on uncalled, to turn autocast off: {why}; call {off} where it is used"
    return f"`{ctx.code(original)}` is handed on uncalled: {why}; call {ctx.target.xla_autocast} where it is used"


def _handed_disabled(ancestors: list[cst.CSTNode]) -> bool:
    """The reference is an argument of a call that also hands ``enabled=False``
    (``partial(autocast, enabled=False)``): it turns autocast off where it is called."""
    import libcst as cst

    if len(ancestors) < 3 or type(ancestors[-2]) is not cst.Arg or type(ancestors[-3]) is not cst.Call:
        return False
    call = ancestors[-3]
    return any(
        a.keyword is not None
        and a.keyword.value == "enabled"
        and type(a.value) is cst.Name
        and a.value.value == "False"
        for a in call.args
    )


_BFLOAT16 = frozenset({"torch.bfloat16"})
