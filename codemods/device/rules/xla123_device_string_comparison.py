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

# Checks whose "cuda" branch holds CUDA-only code (or chooses no device): widened, the XLA run would
# enter it and crash; as written it skips it there.
CUDA_ONLY_BRANCHES = """
    import torch


    def stats(device):
        if device == "cuda":
            return torch.cuda.get_device_name(0)
        return "cpu"


    def timer(device):
        if device.startswith("cuda"):
            return torch.cuda.Event(enable_timing=True)
        return None


    def loader_kwargs(device):
        if device == "cuda":
            return {"pin_memory": True, "pin_memory_device": "cuda"}
        return {}


    def compiled(model, device):
        if device == "cuda":
            model = model.half()
        return model


    def main(device="cuda"):
        model = compiled(torch.nn.Linear(2, 2).to(device), device)
        return model, stats(device), timer(device), loader_kwargs(device)
"""

CUDA_ONLY_BRANCHES_PORTED = """
    import torch
    import torch_xla  # noqa: F401  (registers the "xla" device)


    def stats(device):
        if device == "cuda":
            return torch.cuda.get_device_name(0)
        return "cpu"


    def timer(device):
        if device.startswith("cuda"):
            return torch.cuda.Event(enable_timing=True)
        return None


    def loader_kwargs(device):
        if device == "cuda":
            return {"pin_memory": True, "pin_memory_device": "xla"}
        return {}


    def compiled(model, device):
        if device == "cuda":
            model = model.half()
        return model


    def main(device="xla"):
        model = compiled(torch.nn.Linear(2, 2).to(device), device)
        return model, stats(device), timer(device), loader_kwargs(device)
"""

# Files that also compare the name with "xla" in the other shapes.
TOLD_APART = """
    import torch


    def pick(device):
        if device == "cuda":
            return torch.device("cuda")
        if "xla" in device:
            return torch.device("xla")
        return torch.device("cpu")


    def prefixed(device):
        if device.startswith("cuda"):
            return torch.device("cuda")
        if device.startswith("xla"):
            return torch.device("xla")
        return torch.device("cpu")


    def build(device="cuda"):
        return torch.nn.Linear(2, 2).to(pick(device)), prefixed(device)
"""

TOLD_APART_PORTED = """
    import torch
    import torch_xla


    def pick(device):
        if device == "cuda":
            return torch_xla.device()
        if "xla" in device:
            return torch.device("xla")
        return torch.device("cpu")


    def prefixed(device):
        if device.startswith("cuda"):
            return torch_xla.device()
        if device.startswith("xla"):
            return torch.device("xla")
        return torch.device("cpu")


    def build(device="xla"):
        return torch.nn.Linear(2, 2).to(pick(device)), prefixed(device)
"""

TOLD_APART_OTHERWISE = """
    import torch


    def pick(device):
        if device != "xla" and device == "cuda":
            return torch.device("cuda")
        return torch.device("cpu")


    def listed(device):
        if device in ("cpu", "xla"):
            return torch.device("cpu")
        if device == "cuda":
            return torch.device("cuda")
        return None


    def build(device="cuda"):
        return torch.nn.Linear(2, 2).to(pick(device)), listed(device)
"""

TOLD_APART_OTHERWISE_PORTED = """
    import torch
    import torch_xla


    def pick(device):
        if device != "xla" and device == "cuda":
            return torch_xla.device()
        return torch.device("cpu")


    def listed(device):
        if device in ("cpu", "xla"):
            return torch.device("cpu")
        if device == "cuda":
            return torch_xla.device()
        return None


    def build(device="xla"):
        return torch.nn.Linear(2, 2).to(pick(device)), listed(device)
"""

# A file with its own non-XLA path: reported, not fixed.
OPTIONAL_XLA = """
    import torch

    try:
        import torch_xla
    except ImportError:
        torch_xla = None


    def device_config(device):
        if device == "cuda":
            return torch.device("cuda")
        return torch.device("cpu")


    def build(device="cuda"):
        return torch.nn.Linear(2, 2).to(device_config(device))
"""


def _on_sagemaker(ported: str) -> str:
    return ported.replace("import torch_xla\n", "import torch_xla.core.xla_model as xm\n").replace(
        "torch_xla.device()", "xm.xla_device()"
    )


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
    'that file, whose strings become "xla"). Where the comparison is the test of an `if` (or a conditional '
    'expression), the code it runs for "cuda" must choose the device (a "cuda" device string, `torch.device("cuda")`, '
    "`.cuda()`) and hold no CUDA-only API (`torch.cuda.get_device_name`, `torch.cuda.Event`, streams, cuDNN "
    "settings, `pin_memory_device`, any torch.cuda API but `is_available` and `device_count`): widened, the XLA run "
    "would enter that branch and crash, where the comparison as written skips it on XLA, which runs correctly; such a "
    "comparison is left as it is, without a finding. A comparison of a torch.device's `.type` is XLA110's; a file that "
    'also compares the name with "xla" (`== "xla"`, `!= "xla"`, `"xla" in device`, `device.startswith("xla")`, '
    '`device in ("cpu", "xla")`) already tells the two apart, and stays.',
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
        *(
            valid(CUDA_ONLY_BRANCHES, CUDA_ONLY_BRANCHES_PORTED, target=target, note=f"cuda-only-branches-{target}")
            for target in ("2.9", "sagemaker")
        ),
        *(
            valid(before, ported if target == "2.9" else _on_sagemaker(ported), target=target, note=f"{note}-{target}")
            for before, ported, note in (
                (TOLD_APART, TOLD_APART_PORTED, "told-apart-by-membership-and-prefix"),
                (TOLD_APART_OTHERWISE, TOLD_APART_OTHERWISE_PORTED, "told-apart-by-inequality-and-listing"),
            )
            for target in ("2.9", "sagemaker")
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
        *(
            invalid(
                OPTIONAL_XLA,
                target=target,
                note=f"not-fixed-with-its-own-non-xla-path-{target}",
                findings=(
                    Expected(
                        10,
                        8,
                        f'`device == "cuda"`: {MESSAGE}, and `device` may hold it here, so it also accepts "xla" '
                        "(not fixed: this file imports torch_xla conditionally, so it keeps its own non-XLA path)",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
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
