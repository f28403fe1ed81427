"""XLA123 device-string-comparison: a device string compared with "cuda" where the run may hand it
a string the port rewrote to "xla" (the device values' ``widened_checks``, device/widened_checks.py) also
accepts "xla" (rules/widened_comparisons.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# LibRecommender's shape: a helper that turns the device string its classes take into a device.
DEVICE_CONFIG = """
    import torch


    def device_config(device):
        if device == "cuda" and torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("cpu")


    def build(device="cuda"):
        return torch.nn.Linear(2, 2).to(device_config(device))
"""

DEVICE_CONFIG_PORTED = """
    import torch
    import torch_xla


    def device_config(device):
        if device in ("cuda", "xla"):
            return torch_xla.device()
        return torch.device("cpu")


    def build(device="xla"):
        return torch.nn.Linear(2, 2).to(device_config(device))
"""

MESSAGE = 'the port writes "xla" where the project wrote "cuda" (XLA101)'

DEVICE_STRING_COMPARISON = Rule(
    code="XLA123",
    name="device-string-comparison",
    severity="error",
    summary='A device string compared with "cuda" (`device == "cuda"`) also accepts the "xla" the port writes for it',
    fixable=True,
    why='The port writes "xla" where the project wrote the "cuda" device string (XLA101: `def __init__(self, '
    'device="cuda")` becomes `device="xla"`). A helper that compares such a string with "cuda" (`def '
    'device_config(device): if device == "cuda" and torch.cuda.is_available(): return torch.device("cuda")`, '
    'which XLA104 ports to `if device == "cuda": return torch_xla.device()`) would then take its other branch '
    "for every value the port wrote, and the model and its batches would silently stay on the CPU. After the "
    'port "cuda" and "xla" both name the accelerator, so the comparison accepts both: `device == "cuda"` becomes '
    '`device in ("cuda", "xla")` (`!=`: `not in`), a listed "cuda" (`device in ("cuda", "mps")`) gains "xla", '
    'and `device.startswith("cuda")` becomes `device.startswith(("cuda", "xla"))`. A caller that still passes '
    '"cuda" gets what it got. It applies where the run may hand the comparison a rewritten string: the file '
    'rewrites a "cuda" device string, or another file of the run imports it (a whole-project run converts '
    "that file, whose strings become \"xla\"). A comparison of a torch.device's `.type` is XLA110's; a file that "
    'also compares the name with "xla" already tells the two apart, and stays.',
    examples=lambda: (
        invalid(
            DEVICE_CONFIG,
            DEVICE_CONFIG_PORTED,
            findings=(Expected(6, 8, f'`device == "cuda"` -> `device in ("cuda", "xla")`: {MESSAGE}'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def device_config(device="cuda"):
                if device == "xla":
                    return torch.device("xla")
                if device == "cuda":
                    return torch.device("cuda")
                return torch.device("cpu")
            """,
            """
            import torch
            import torch_xla


            def device_config(device="xla"):
                if device == "xla":
                    return torch.device("xla")
                if device == "cuda":
                    return torch_xla.device()
                return torch.device("cpu")
            """,
            note="a-file-that-already-tells-xla-apart",
        ),
        valid(
            """
            def describe(device):
                if device == "cuda":
                    return "accelerated"
                return "plain"
            """,
            target="sagemaker",
            note="no-string-the-port-rewrites-reaches-it",
        ),
        valid(DEVICE_CONFIG_PORTED, note="already-ported"),
    ),
    invalid=lambda: (
        invalid(
            DEVICE_CONFIG,
            DEVICE_CONFIG_PORTED.replace("import torch_xla\n", "import torch_xla.core.xla_model as xm\n").replace(
                "torch_xla.device()", "xm.xla_device()"
            ),
            target="sagemaker",
            note="the-helper-on-sagemaker",
            findings=(Expected(6, 8, f'`device == "cuda"` -> `device in ("cuda", "xla")`: {MESSAGE}'),),
        ),
        invalid(
            """
            import torch as th


            def pin(device):
                return device != 'cuda'


            def loader(data, device='cuda'):
                return th.utils.data.DataLoader(data, pin_memory=not pin(device))
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)


            def pin(device):
                return device not in ('cuda', 'xla')


            def loader(data, device='xla'):
                return th.utils.data.DataLoader(data, pin_memory=not pin(device))
            """,
            alias=True,
            note="a-negated-comparison",
            findings=(Expected(6, 12, "`device != 'cuda'` -> `device not in ('cuda', 'xla')`"),),
        ),
        invalid(
            """
            import torch


            def half_ok(device):
                return device in ("cuda", "mps")


            def prefixed(device):
                return device.startswith("cuda")


            def build(device="cuda"):
                return torch.nn.Linear(2, 2).to(device)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)


            def half_ok(device):
                return device in ("cuda", "mps", "xla")


            def prefixed(device):
                return device.startswith(("cuda", "xla"))


            def build(device="xla"):
                return torch.nn.Linear(2, 2).to(device)
            """,
            target="sagemaker",
            note="membership-and-prefix",
            findings=(
                Expected(6, 12, 'device in ("cuda", "mps", "xla")'),
                Expected(10, 12, 'device.startswith(("cuda", "xla"))'),
            ),
        ),
    ),
)


@on_facts(DEVICE_STRING_COMPARISON, nodes=lambda facts: facts.device_values.widened_checks)
def _widen(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    from codemods.device.rules.widened_comparisons import widened

    name = ctx.facts.device_values.widened_checks[original]
    message = f'`{ctx.code(original)}` -> `{{new}}`: {MESSAGE}, and `{name}` may hold it here, so it also accepts "xla"'
    replacement = ctx.fix(DEVICE_STRING_COMPARISON, original, message, lambda: widened(updated))  # type: ignore[arg-type]  # a check is an expression
    return updated if replacement is None else replacement
