"""XLA722 inductor-options: torch.compile's inductor-only ``mode=`` and ``options=`` are removed
on the 2.9 target (the openxla backend receives them and ignores them: aot_autograd logs
"ignoring extra kwargs", checked on torch_xla 2.9), or reported where removing them is not safe.
XLA721's hook, which rewrites the call once, asks ``dropped_options`` which go."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

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
            target_only=True,
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


def dropped_options(ctx: Context[Facts], call: cst.Call) -> list[int]:
    """The indices of ``call``'s arguments that go: an inductor-only ``mode=`` or
    ``options=``, each with a finding saying what it did (one that is not safe to remove
    is reported and kept)."""
    return [at for at, arg in enumerate(call.args) if _dropped(ctx, arg)]


def _dropped(ctx: Context[Facts], arg: cst.Arg) -> bool:
    from codemods.engine.nodes import string_value

    keyword = arg.keyword.value if arg.keyword is not None else None
    if keyword not in ("mode", "options"):
        return False
    code = ctx.code(arg).rstrip(",").strip()
    if keyword == "mode":
        mode = string_value(arg.value)
        if mode == "default":
            return False
        did = apis.INDUCTOR_MODES.get(mode or "", "chose how inductor compiles")
    else:
        did = apis.INDUCTOR_OPTIONS
    unsafe = _unsafe_to_drop(arg.value) if keyword == "options" else _active(arg.value)
    if unsafe:
        ctx.report(INDUCTOR_OPTIONS, arg, f"`{code}` {did} and is ignored by openxla; not removed: {unsafe}")
        return False
    done = ctx.fix(
        INDUCTOR_OPTIONS, arg, f"removed `{code}`: it {did} on CUDA; the openxla backend ignores it", lambda: arg
    )
    return done is not None


def _active(value: cst.CSTNode) -> str | None:
    """Why computing ``value`` may do more than give it (None: it may not): it holds an
    expression that may run code of its own."""
    import libcst as cst

    from codemods.engine.nodes import walk

    active = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda, cst.BaseComp)
    return "computing it may do more" if any(isinstance(n, active) for n in walk(value)) else None


def _unsafe_to_drop(value: cst.BaseExpression) -> str | None:
    """Why ``options=value`` may hold more than inductor's settings (None: it does not)."""
    import libcst as cst

    from codemods.engine.nodes import string_value

    if not isinstance(value, cst.Dict):
        return 'its keys are not known here; torch.compile reads "guard_filter_fn" from it for dynamo itself'
    keys = [string_value(e.key) if isinstance(e, cst.DictElement) else None for e in value.elements]
    if None in keys:
        return "its keys are not all known here"
    if any(key in apis.DYNAMO_OPTION_KEYS for key in keys):
        return '"guard_filter_fn" is read by dynamo, not inductor; keep only it'
    return _active(value)
