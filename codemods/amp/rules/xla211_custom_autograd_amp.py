"""XLA211 custom-autograd-amp: ``torch.cuda.amp.custom_fwd``/``custom_bwd`` become
``torch.amp.custom_fwd(device_type="xla")`` (2.9) or ``torch_xla.amp.custom_fwd`` (sagemaker:
torch_xla 1.13's, which is CUDA's own, as its autocast is); the XLA spelling of one release
takes the other's (XLA901).  The hooks run on the decorators and calls the amp facts name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.release_names.rules import XLA_RELEASE_NAMES

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

CUSTOM_AUTOGRAD_AMP = Rule(
    code="XLA211",
    name="custom-autograd-amp",
    severity="error",
    summary="`torch.cuda.amp.custom_fwd/custom_bwd` become the XLA ones",
    fixable=True,
    why="The CUDA decorators look at CUDA's autocast state, so under XLA autocast a custom function gets "
    "inputs of the wrong precision.",
    examples=lambda: (
        Invalid(
            "import torch\n@torch.cuda.amp.custom_fwd\ndef forward(ctx, x):\n    return x\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            '@torch.amp.custom_fwd(device_type="xla")\ndef forward(ctx, x):\n    return x\n',
            findings=(Expected(3, 2, 'torch.cuda.amp.custom_fwd -> torch.amp.custom_fwd(device_type="xla")'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            @torch.amp.custom_fwd(device_type="xla")
            def forward(ctx, x):
                return x
            """,
            target_only=True,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            class F(torch.autograd.Function):
                @staticmethod
                @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.cuda.amp.custom_bwd
                def backward(ctx, g):
                    return g
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            class F(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.amp.custom_bwd(device_type="xla")
                def backward(ctx, g):
                    return g
            """,
            findings=(
                Expected(6, 6, 'torch.cuda.amp.custom_fwd -> torch.amp.custom_fwd(device_type="xla",'),
                Expected(11, 6, 'torch.cuda.amp.custom_bwd -> torch.amp.custom_bwd(device_type="xla")'),
            ),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import custom_fwd as cf

            @cf
            def forward(ctx, x):
                return x
            """,
            """
            import torch
            import torch_xla.amp

            @torch_xla.amp.custom_fwd
            def forward(ctx, x):
                return x
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(4, 2, "cf -> torch_xla.amp.custom_fwd"),),
        ),
    ),
)


@on_facts(CUSTOM_AUTOGRAD_AMP, nodes=lambda facts: facts.amp.custom_autograd)
def _custom_autograd(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    """A ``@custom_fwd`` decorator, or a ``custom_fwd(...)`` call, in the target's spelling."""
    import libcst as cst

    from codemods.amp.rules.edits import argument_list
    from codemods.engine.nodes import KEYWORD_EQUAL, quoted_like

    concept, flavor, spelling = ctx.facts.amp.custom_autograd[original]
    target = ctx.target
    by_device_type = target.autocast_takes == "device_type"
    if flavor == "xla" and spelling == ("torch" if by_device_type else "torch_xla"):
        return updated
    decorator = isinstance(original, cst.Decorator)
    func = original.decorator if isinstance(original, cst.Decorator) else original.func  # type: ignore[attr-defined]  # the fact holds bare decorators and calls only
    new_node = updated.decorator if isinstance(updated, cst.Decorator) else updated

    def build() -> cst.BaseExpression | None:
        new_func = ctx.imports.expression(target.api(concept))
        if new_func is None or (by_device_type and not ctx.imports.require_package("torch_xla")):
            return None
        ctx.imports.discard(func)
        device_type = cst.Arg(
            quoted_like(cst.SimpleString('""'), target.device_string),
            keyword=cst.Name("device_type"),
            equal=KEYWORD_EQUAL,
        )
        if isinstance(new_node, cst.Call):
            kept = [a for a in new_node.args if a.keyword is None or a.keyword.value != "device_type"]
            args = [device_type, *kept] if by_device_type else kept
            if not args:
                return new_func
            return new_node.with_changes(func=new_func, args=argument_list(args, new_node))
        return cst.Call(new_func, [device_type]) if by_device_type else new_func

    rule = XLA_RELEASE_NAMES if flavor == "xla" else CUSTOM_AUTOGRAD_AMP
    release = f" (torch_xla {target.torch_xla_version})" if flavor == "xla" else ""
    # Located in the output: the line after an inserted import maps there by diff only roughly.
    new = ctx.fix_or_keep(
        new_node, rule, func, f"{ctx.code(func)} -> {{new}}{release}", build, result=lambda node: node
    )
    return updated.with_changes(decorator=new) if decorator else new
