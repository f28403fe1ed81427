"""XLA210 autocast-device-type: a value that chooses autocast's device type by CUDA checks
(``device_type = 'cuda' if 'cuda' in device else 'cpu'``) is made to choose XLA; an autocast
whose device type comes from a value not known here is reported (XLA202's hook hands it to
``report_device_variable``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.amp.facts import AutocastCall
    from codemods.engine.rewriter import AssignmentT, Context
    from codemods.facts import Facts


def _trainer_with_autocast_on(device: str) -> str:
    """A trainer that moves its batches to ``self.device`` and takes autocast's device type
    from ``device``'s ``.type``."""
    return f"""
        import torch


        class Trainer:
            def __init__(self, config, model):
                self.device = config["device"]
                self.model = model

            def fit(self, x):
                x = x.to(self.device)
                with torch.autocast(device_type={device}.type, dtype=torch.bfloat16):
                    return self.model(x)
        """


AUTOCAST_DEVICE_TYPE = Rule(
    code="XLA210",
    name="autocast-device-type",
    severity="error",
    summary="A device type derived from the device string for autocast becomes 'xla'",
    fixable=True,
    why="`device_type = 'cuda' if 'cuda' in device else 'cpu'` gives 'cpu' for the XLA device, which switches "
    "autocast off (or onto the CPU) without a word. An autocast whose device type comes from a value the tool "
    "cannot read is reported, except the `.type` of the device the file moves its tensors or models to "
    "(`x.to(self.device)` beside `torch.autocast(device_type=self.device.type)`): that is the device it trains "
    "on, which the port makes XLA's (where it does not, the device rules report the move); nor the "
    "`.device.type` of a tensor the function is handed (an input of a class's `forward` method, keyword-only too, not of a plain function named so; a parameter annotated `torch.Tensor`: "
    "`torch.autocast(enabled=False, device_type=x.device.type)`), which is 'xla' for an XLA tensor.",
    examples=lambda: (
        Invalid(
            "import torch\ndevice_type = 'cuda' if 'cuda' in device else 'cpu'\n"
            "ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)\n",
            "import torch\ndevice_type = 'xla' if 'xla' in device else 'cpu'\n"
            "ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)\n",
            findings=(Expected(2, 15, "`device_type` chooses autocast's device type"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            device_type = 'cuda' if 'cuda' in device else 'cpu'
            print(device_type)
            """,
            note="not-for-autocast",
        ),
        valid(
            """
            import torch


            class LowPrecisionNorm(torch.nn.LayerNorm):
                def forward(self, x):
                    with torch.autocast(enabled=False, device_type=x.device.type):
                        return torch.nn.functional.layer_norm(x, self.normalized_shape)
            """,
            note="the type of the device a forward's input is on",
            target_only=True,
        ),
        valid(
            """
            import torch as th


            def norm(x: th.Tensor, shape):
                with th.autocast(enabled=False, device_type=x.device.type):
                    return th.nn.functional.layer_norm(x, shape)
            """,
            note="the type of the device a tensor parameter is on (alias)",
            target_only=True,
        ),
        valid(
            """
            import torch as th


            def norm(x: th.Tensor, shape):
                with th.autocast(enabled=False, device_type=x.device.type):
                    return th.nn.functional.layer_norm(x, shape)
            """,
            """
            import torch as th
            import torch_xla.amp


            def norm(x: th.Tensor, shape):
                with torch_xla.amp.autocast(enabled=False):
                    return th.nn.functional.layer_norm(x, shape)
            """,
            target="sagemaker",
            note="the type of the device a tensor parameter is on (sagemaker: XLA202 spells it torch_xla's)",
        ),
        valid(
            """
            import torch


            class LowPrecisionNorm(torch.nn.LayerNorm):
                def forward(self, *, x):
                    with torch.autocast(enabled=False, device_type=x.device.type):
                        return torch.nn.functional.layer_norm(x, self.normalized_shape)
            """,
            note="the type of the device a forward's keyword-only input is on",
            target_only=True,
        ),
        valid(
            """
            import torch


            class LowPrecisionNorm(torch.nn.LayerNorm):
                def forward(self, *, x):
                    with torch.autocast(enabled=False, device_type=x.device.type):
                        return torch.nn.functional.layer_norm(x, self.normalized_shape)
            """,
            """
            import torch
            import torch_xla.amp


            class LowPrecisionNorm(torch.nn.LayerNorm):
                def forward(self, *, x):
                    with torch_xla.amp.autocast(enabled=False):
                        return torch.nn.functional.layer_norm(x, self.normalized_shape)
            """,
            target="sagemaker",
            note="the type of the device a forward's keyword-only input is on (sagemaker: XLA202 spells it torch_xla's)",
        ),
        valid(
            _trainer_with_autocast_on("self.device"),
            note="the-type-of-the-device-it-trains-on",
            target_only=True,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch


            def train(model, args, x):
                with torch.autocast(device_type=args.device.type, dtype=torch.bfloat16):
                    return model(x)
            """,
            note="the device of a value not known to be a tensor",
            findings=(Expected(5, 10, "autocast's device type comes from `args.device.type`"),),
        ),
        invalid(
            """
            import torch


            def forward(x, shape):
                with torch.autocast(enabled=False, device_type=x.device.type):
                    return torch.nn.functional.layer_norm(x, shape)
            """,
            note="a plain function named forward is no layer's: its parameter is not known to be a tensor",
            findings=(Expected(5, 10, "autocast's device type comes from `x.device.type`"),),
        ),
        invalid(
            _trainer_with_autocast_on("self.amp_device"),
            note="the-type-of-another-device",
            findings=(Expected(11, 14, "autocast's device type comes from `self.amp_device.type`"),),
        ),
        invalid(
            """
            import torch
            from contextlib import nullcontext

            device = 'cuda' if torch.cuda.is_available() else 'cpu'
            device_type = 'cuda' if 'cuda' in device else 'cpu'
            ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from contextlib import nullcontext

            device = 'xla'
            device_type = 'xla' if 'xla' in device else 'cpu'
            ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
            """,
            findings=(Expected(6, 15, "`device_type` chooses autocast's device type"),),
        ),
        invalid(
            """
            import torch as th

            amp_device = "cuda" if th.cuda.is_available() else "cpu"
            with th.autocast(amp_device, dtype=th.bfloat16):
                out = model(x)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            amp_device = "xla"
            with th.autocast(amp_device, dtype=th.bfloat16):
                out = model(x)
            """,
            alias=True,
            findings=(Expected(4, 14, "`amp_device` chooses autocast's device type"),),
        ),
    ),
)


def report_device_variable(ctx: Context[Facts], original: cst.Call, call: AutocastCall) -> None:
    """Autocast's device type comes from a value: reported unless this rule makes it 'xla'
    (or it names XLA already)."""
    import libcst as cst

    from codemods.engine.nodes import dotted

    device = call.device
    name = dotted(device)
    amp = ctx.facts.amp
    if type(device) is cst.Attribute and device.attr.value == "type" and dotted(device.value) in amp.moved_to:
        return  # the type of the device the file trains on (``x.to(self.device)``): XLA's once ported
    if original in amp.tensor_device_types:
        return  # the type of the device a tensor the function is handed is on: 'xla' on the XLA device
    if name not in amp.device_types.values() and name not in amp.xla_device_types:
        ctx.report(
            AUTOCAST_DEVICE_TYPE,
            original,
            f"autocast's device type comes from `{ctx.code(device)}`: make sure it is "  # type: ignore[arg-type]  # assumes the call names its device (torch.autocast requires device_type): ``torch.autocast(**opts)`` gives no finding, so does not reach here
            f"'{ctx.target.device_string}' on the XLA device, or autocast is off there",
        )


@on_facts(AUTOCAST_DEVICE_TYPE, nodes=lambda facts: facts.amp.choosing_assignments)
def _chosen_device_type(ctx: Context[Facts], original: AssignmentT, updated: AssignmentT) -> AssignmentT:
    """The value assigned to a name that autocast takes its device type from: its CUDA
    checks folded, its 'cuda' strings 'xla'."""
    from codemods.amp.rules.edits import fix_chosen_value, replace_strings
    from codemods.engine.nodes import fold_true

    xla = ctx.target.device_string

    def device_type(chosen: cst.BaseExpression) -> cst.BaseExpression:
        folded = fold_true(chosen, ctx.facts.device.is_available_call)
        return replace_strings(folded if not isinstance(folded, bool) else chosen, "cuda", xla)

    return fix_chosen_value(
        ctx,
        AUTOCAST_DEVICE_TYPE,
        original,
        updated,
        ctx.facts.amp.device_types,
        lambda name, value: (
            f"`{name}` chooses autocast's device type: {ctx.code(value)} -> {{new}} "
            "(with 'cuda' it is off on the XLA device)"
        ),
        device_type,
    )
