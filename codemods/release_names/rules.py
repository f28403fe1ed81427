"""XLA9: torch_xla names that moved between releases: code written for another torch_xla
release gets the target's spelling (XLA901), e.g. ``xm.xrt_world_size()`` ->
``xr.world_size()`` for 2.9, and back for the sagemaker target; a name from a module the
target lacks is reported (XLA902).  Each rule is followed by its hook (engine/hooks.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codemods.engine.hooks import on_calls, on_references
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.targets import TARGETS, VERSIONED_CONCEPTS, Api, spellings

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context

XLA_RELEASE_NAMES = Rule(
    code="XLA901",
    name="xla-release-names",
    severity="error",
    summary="torch_xla names of another release become the target's names",
    fixable=True,
    why="torch_xla renamed and removed names between releases (`xm.xrt_world_size` and `xm.get_ordinal` are "
    "gone since 2.7), so code written for one release crashes on another: names move to the target's, "
    "in both directions. A project's own XLA path (code under an XLA test, such as a vendored trainer's "
    "`if is_torch_tpu_available():` branch) is checked too: a name the target lacks is ported, or reported where "
    "the file imports torch_xla conditionally (no import can be added there: write the target's name by hand); "
    "the names the target has are left as they are.",
    examples=lambda: (
        invalid(
            """
            import torch_xla.core.xla_model as xm

            world_size = xm.xrt_world_size()
            rank = xm.get_ordinal()
            """,
            """
            import torch_xla.runtime as xr

            world_size = xr.world_size()
            rank = xr.global_ordinal()
            """,
            findings=(
                Expected(3, 14, "xm.xrt_world_size() -> xr.world_size() (torch_xla 2.9)"),
                Expected(4, 8, "xm.get_ordinal() -> xr.global_ordinal() (torch_xla 2.9)"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            torch_xla.sync()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            xm.mark_step()
            """,
            target="sagemaker",
            findings=(
                Expected(4, 10, "torch_xla.device() -> xm.xla_device() (torch_xla 1.13)"),
                Expected(5, 1, "torch_xla.sync() -> xm.mark_step() (torch_xla 1.13)"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch_xla
            import torch_xla.core.xla_model as xm
            import torch_xla.runtime as xr

            device = torch_xla.device()
            rank = xr.global_ordinal()
            xm.master_print(rank)
            """,
            note="target-names",
        ),
        valid(
            """
            import torch
            import torch_xla.amp

            with torch_xla.amp.autocast(use_amp):
                out = model(x)
            with torch_xla.amp.autocast(enabled=args.amp, dtype=torch.float16):
                out = model(x)
            """,
            target="sagemaker",
            note="1.13-autocast-stays-on-1.13",
        ),
        # A project's own XLA path in names the target has: left as it is.
        valid(
            """
            import torch
            from transformers.utils import is_torch_tpu_available

            if is_torch_tpu_available():
                import torch_xla.core.xla_model as xm


            def device():
                if is_torch_tpu_available():
                    xm.mark_step()
                    if xm.is_master_ordinal():
                        xm.master_print(xm.get_local_ordinal())
                    return xm.xla_device()
                return torch.device("cpu")
            """,
            note="own-xla-path-target-names",
        ),
        valid(
            """
            import torch
            from transformers.utils import is_torch_tpu_available

            if is_torch_tpu_available():
                import torch_xla.core.xla_model as xm


            def world():
                if is_torch_tpu_available():
                    return xm.xrt_world_size(), xm.get_ordinal()
                return 1, 0
            """,
            target="sagemaker",
            note="own-xla-path-1.13-names-on-1.13",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.amp

            with torch_xla.amp.autocast(xm.xla_device()):
                out = model(x)
            scaler = torch_xla.amp.GradScaler()
            """,
            """
            import torch
            import torch_xla.amp

            with torch.autocast("xla"):
                out = model(x)
            scaler = torch.amp.GradScaler("xla")
            """,
            note="amp-upgraded-to-2.9",
            findings=(
                Expected(4, 6, 'torch_xla.amp.autocast -> torch.autocast("xla") (torch_xla 2.9)'),
                Expected(4, 29, "xm.xla_device() -> torch_xla.device() (torch_xla 2.9)"),
                Expected(6, 10, 'torch_xla.amp.GradScaler -> torch.amp.GradScaler("xla") (torch_xla 2.9)'),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla

            with torch.autocast("xla", dtype=torch.bfloat16):
                out = model(x)
            scaler = torch.amp.GradScaler("xla", init_scale=1024)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.amp

            with torch_xla.amp.autocast(dtype=torch.bfloat16):
                out = model(x)
            scaler = torch_xla.amp.GradScaler(init_scale=1024)
            """,
            target="sagemaker",
            note="amp-downgraded-to-1.13",
            findings=(
                Expected(
                    5,
                    6,
                    "torch.autocast -> torch_xla.amp.autocast(dtype=torch.bfloat16) (torch_xla 1.13) (bfloat16 "
                    "there needs an Ampere GPU, such as ml.p4d's; elsewhere use float16 with the scaler)",
                ),
                Expected(7, 10, "torch.amp.GradScaler -> torch_xla.amp.GradScaler(init_scale=1024) (torch_xla 1.13)"),
            ),
        ),
        # torch_xla 1.13's scaler option: torch.amp.GradScaler raises on it.
        invalid(
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler(use_zero_grad=True, enabled=use_amp)
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch.amp.GradScaler("xla", enabled=use_amp)
            """,
            note="use-zero-grad-dropped",
            findings=(
                Expected(
                    4,
                    10,
                    'torch_xla.amp.GradScaler -> torch.amp.GradScaler("xla", enabled=use_amp) (torch_xla 2.9) '
                    "(without use_zero_grad=True: torch_xla 1.13's option, which torch.amp.GradScaler does not take)",
                ),
            ),
        ),
        # torch_xla 2.9's torch_xla.amp has no custom_fwd/custom_bwd; torch 2.9's take the device type.
        invalid(
            """
            import torch
            import torch_xla.amp


            class Scale(torch.autograd.Function):
                @staticmethod
                @torch_xla.amp.custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch_xla.amp.custom_bwd
                def backward(ctx, grad):
                    return grad
            """,
            """
            import torch
            import torch_xla.amp


            class Scale(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.amp.custom_bwd(device_type="xla")
                def backward(ctx, grad):
                    return grad
            """,
            note="custom-autograd-upgraded",
            findings=(
                Expected(
                    7,
                    6,
                    'torch_xla.amp.custom_fwd -> torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32) (torch_xla 2.9)',
                ),
                Expected(12, 6, 'torch_xla.amp.custom_bwd -> torch.amp.custom_bwd(device_type="xla") (torch_xla 2.9)'),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla


            class Scale(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="xla")
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.amp.custom_bwd(device_type="xla")
                def backward(ctx, grad):
                    return grad
            """,
            """
            import torch
            import torch_xla
            import torch_xla.amp


            class Scale(torch.autograd.Function):
                @staticmethod
                @torch_xla.amp.custom_fwd
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch_xla.amp.custom_bwd
                def backward(ctx, grad):
                    return grad
            """,
            target="sagemaker",
            note="custom-autograd-downgraded",
            findings=(
                Expected(8, 6, "torch.amp.custom_fwd -> torch_xla.amp.custom_fwd (torch_xla 1.13)"),
                Expected(13, 6, "torch.amp.custom_bwd -> torch_xla.amp.custom_bwd (torch_xla 1.13)"),
            ),
        ),
        # torch_xla 1.13's autocast is torch.cuda.amp.autocast(enabled, dtype, cache_enabled):
        # a positional flag is `enabled`, kept as such, and its float16 default becomes bfloat16.
        invalid(
            """
            import torch
            import torch_xla.amp

            with torch_xla.amp.autocast(use_amp):
                out = model(x)
            """,
            """
            import torch
            import torch_xla.amp

            with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp):
                out = model(x)
            """,
            note="1.13-autocast-positional-enabled",
            findings=(
                Expected(
                    4,
                    6,
                    'torch_xla.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp) '
                    "(torch_xla 2.9) (float16, torch.cuda.amp.autocast's default, becomes bfloat16 on XLA)",
                ),
            ),
        ),
        # The device-first autocast of torch_xla 2.1 on, moved to 1.13: no device argument there.
        invalid(
            """
            import torch
            import torch_xla.amp
            import torch_xla.core.xla_model as xm

            with torch_xla.amp.autocast(xm.xla_device(), dtype=torch.bfloat16):
                out = model(x)
            """,
            """
            import torch
            import torch_xla.amp

            with torch_xla.amp.autocast(dtype=torch.bfloat16):
                out = model(x)
            """,
            target="sagemaker",
            note="device-first-autocast-to-1.13",
            findings=(
                Expected(
                    4,
                    6,
                    "torch_xla.amp.autocast(xm.xla_device(), dtype=torch.bfloat16) -> "
                    "torch_xla.amp.autocast(dtype=torch.bfloat16) (torch_xla 1.13)",
                ),
            ),
        ),
        invalid(
            """
            import torch_xla
            import torch_xla.core.xla_model as xm

            world_size = xm.xrt_world_size()
            xm.master_print(world_size)
            """,
            """
            import torch_xla
            import torch_xla.core.xla_model as xm
            import torch_xla.runtime as xr

            world_size = xr.world_size()
            xm.master_print(world_size)
            """,
            findings=(Expected(5, 14, "xm.xrt_world_size() -> xr.world_size() (torch_xla 2.9)"),),
        ),
        invalid(
            """
            import torch_xla.core.xla_model as xm

            second = xm.xla_device(n=1)
            """,
            note="arguments-reported",
            findings=(Expected(3, 10, "`xm.xla_device(n=1)` is not torch_xla 2.9 API; its arguments need a by-hand"),),
        ),
        invalid(
            """
            import torch_xla
            from torch_xla.core import xla_model as xmm

            xmm.mark_step()
            """,
            """
            import torch_xla

            torch_xla.sync()
            """,
            alias=True,
            findings=(Expected(3, 1, "xmm.mark_step() -> torch_xla.sync() (torch_xla 2.9)"),),
        ),
        # A vendored trainer's own XLA path, written for torch_xla 1.x: the names 2.9 removed
        # raise AttributeError there; the file imports torch_xla conditionally, so no import is added.
        invalid(
            """
            import torch
            from transformers.utils import is_torch_tpu_available

            if is_torch_tpu_available():
                import torch_xla.amp
                import torch_xla.core.xla_model as xm


            def world():
                if is_torch_tpu_available():
                    scaler = torch_xla.amp.GradScaler()
                    return xm.xrt_world_size(), xm.get_ordinal(), xm.xla_device()
                return 1, 0, torch.device("cpu")
            """,
            note="own-xla-path-removed-names",
            findings=(
                Expected(
                    11,
                    18,
                    "`torch_xla.amp.GradScaler` does not exist in torch_xla 2.9: this XLA path was written for "
                    "another release",
                ),
                Expected(
                    12,
                    16,
                    "`xm.xrt_world_size()` does not exist in torch_xla 2.9: this XLA path was written for another "
                    "release; call xr.world_size(), with `import torch_xla.runtime as xr` beside it",
                ),
                Expected(12, 37, "`xm.get_ordinal()` does not exist in torch_xla 2.9"),
            ),
        ),
        invalid(
            """
            import torch

            try:
                from torch_xla.core import xla_model as xmm
            except ImportError:
                xmm = None


            def rank():
                if xmm is not None:
                    return xmm.get_ordinal()
                return 0
            """,
            alias=True,
            note="own-xla-path-removed-names-alias",
            findings=(Expected(11, 16, "`xmm.get_ordinal()` does not exist in torch_xla 2.9"),),
        ),
        # The mirror case: a 2.x XLA path on the sagemaker target (torch_xla 1.13).
        invalid(
            """
            import torch
            from transformers.utils import is_torch_tpu_available

            if is_torch_tpu_available():
                import torch_xla
                import torch_xla.runtime as xr


            def step():
                if is_torch_tpu_available():
                    torch_xla.sync()
                    return xr.world_size()
                return 1
            """,
            target="sagemaker",
            note="own-xla-path-2.x-names-on-1.13",
            findings=(
                Expected(11, 9, "`torch_xla.sync()` does not exist in torch_xla 1.13: this XLA path was written"),
                Expected(12, 16, "`xr.world_size()` does not exist in torch_xla 1.13"),
            ),
        ),
        # Under an XLA test in a file that imports torch_xla unconditionally: ported.
        invalid(
            """
            import torch
            import torch_xla.core.xla_model as xm
            from transformers.utils import is_torch_tpu_available


            def world():
                if is_torch_tpu_available():
                    return xm.xrt_world_size()
                return 1
            """,
            """
            import torch
            import torch_xla.runtime as xr
            from transformers.utils import is_torch_tpu_available


            def world():
                if is_torch_tpu_available():
                    return xr.world_size()
                return 1
            """,
            note="own-xla-path-ported",
            findings=(Expected(8, 16, "xm.xrt_world_size() -> xr.world_size() (torch_xla 2.9)"),),
        ),
    ),
)

# Every release's name of each concept that moved (``xm.xrt_world_size``, ``torch_xla.runtime.world_size``).
_CONCEPT_OF = {spelling: concept for concept in VERSIONED_CONCEPTS for spelling in spellings(concept)}


@on_calls(XLA_RELEASE_NAMES, names=frozenset(_CONCEPT_OF))
def _to_target_name(ctx: Context[Any], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    concept = _CONCEPT_OF[callee]
    version = ctx.target.torch_xla_version
    if callee == ctx.target.api(concept).qualified_name:
        return updated
    if (ctx.xla_guard_depth or ctx.facts.imports.xla_optional) and not ctx.target.lacks(callee):
        return updated  # the project's own XLA path, in a name the target has (xm.xla_device() on 2.9)
    if ctx.facts.imports.xla_optional:  # (no import can be added: the file imports torch_xla conditionally)
        api = ctx.target.api(concept)
        ctx.report(
            XLA_RELEASE_NAMES,
            original,
            f"`{ctx.code(original)}` does not exist in torch_xla {version}: this XLA path was written for "
            f"another release; call {api.spelled}(){_imported_as(api)} (not fixed: the file imports torch_xla "
            "conditionally)",
        )
        return updated
    if original.args:
        ctx.report(
            XLA_RELEASE_NAMES,
            original,
            f"`{ctx.code(original)}` is not torch_xla {version} API; its arguments need a by-hand port to "
            f"{ctx.target.api(concept).qualified_name}",
        )
        return updated
    return ctx.fix_or_keep(
        updated,
        XLA_RELEASE_NAMES,
        original,
        f"{ctx.code(original)} -> {{new}} (torch_xla {version})",
        lambda: ctx.replace_callee(original, updated, concept),
    )


def _imported_as(api: Api) -> str:
    return f", with `import {api.module} as {api.alias}` beside it" if api.alias else ""


# The other names a release lacks: outside an XLA test their concerns port them (XLA202,
# XLA205, XLA211, XLA603); in the project's own XLA path they are reported here.
_REMOVED = frozenset(name for target in TARGETS.values() for name in target.removed) - frozenset(_CONCEPT_OF)


@on_references(XLA_RELEASE_NAMES, names=_REMOVED)
def _removed_in_own_path(ctx: Context[Any], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    if ctx.xla_guard_depth and ctx.target.lacks(qualified):
        ctx.report(
            XLA_RELEASE_NAMES,
            original,
            f"`{ctx.code(original)}` does not exist in torch_xla {ctx.target.torch_xla_version}: this XLA path was "
            "written for another release; write it with the target's names",
        )
    return updated


MISSING_IN_TARGET = Rule(
    code="XLA902",
    name="missing-in-target",
    severity="error",
    summary="A torch_xla name from a module the target release lacks, with no exact equivalent there (sagemaker: torch_xla.runtime)",
    fixable=False,
    why="torch_xla 1.13 has no `torch_xla.runtime` module (it came in 2.0), so `import torch_xla.runtime as xr` "
    "fails there. Its rank and size reads become the 1.13 names (XLA901); the others have no exact equivalent "
    "and are left to a person: `xr.local_process_count()` is the devices of one host, while 1.13's "
    "`xm.xrt_world_size()` counts every process of the job (hosts x devices).",
    instead="the torch_xla 1.13 form of the value (for processes per host: `xm.xrt_world_size()` divided by the "
    "number of hosts)",
    examples=lambda: (
        invalid(
            """
            import torch_xla.runtime as xr

            per_host = xr.local_process_count()
            """,
            target="sagemaker",
            findings=(Expected(3, 12, "`xr.local_process_count()` does not exist in torch_xla 1.13"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch_xla.runtime as xr

            per_host = xr.local_process_count()
            """,
            note="2.9-has-it",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from torch_xla import runtime

            if runtime.is_spmd():
                pass
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(3, 4, "`runtime.is_spmd()` does not exist in torch_xla 1.13"),),
        ),
    ),
)


@on_calls(
    MISSING_IN_TARGET,
    modules=tuple(sorted({module + "." for target in TARGETS.values() for module in target.missing_modules})),
)
def _missing_in_target(ctx: Context[Any], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    """A name the target lacks; the moved names are XLA901's."""
    if callee in _CONCEPT_OF or not any(callee.startswith(module + ".") for module in ctx.target.missing_modules):
        return updated
    ctx.report(
        MISSING_IN_TARGET,
        original,
        f"`{ctx.code(original)}` does not exist in torch_xla {ctx.target.torch_xla_version} (its whole module came "
        "later) and has no exact equivalent: write the value that release's way"
        + (" (xm.xrt_world_size() counts the processes of every host)" if callee.endswith("_process_count") else ""),
    )
    return updated


RULES = (XLA_RELEASE_NAMES, MISSING_IN_TARGET)
