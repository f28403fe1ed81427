"""XLA101 cuda-device: a CUDA device string where a device goes becomes the target's
(``"cuda:1"`` -> ``"xla"``: a string stays a string, so code that compares or prints it keeps
working), and ``torch.device("cuda", ...)`` or ``torch.accelerator.current_accelerator()``
becomes the target's device call (the device facts' ``strings`` and ``calls``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.cuda_query_cases import cuda_query_invalid, cuda_query_valid
from codemods.device.rules.import_time_cases import import_time_cases
from codemods.device.rules.ordinal_cases import ordinal_cases, ordinal_valid_cases
from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    from collections.abc import Callable

    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A device flag whose CUDA default the port makes "xla", tested with `in`, `not in` and `==`.
FLAG_TESTS = """
    import argparse
    import torch

    p = argparse.ArgumentParser()
    p.add_argument("-device", default="cuda")
    args = p.parse_args()
    assert args.device in ["cpu", "cuda", "mps"]
    if args.device not in ("cpu", "cuda"):
        raise ValueError(args.device)
    if args.device == "cpu":
        dev = torch.device("cpu")
    elif args.device == "cuda":
        dev = torch.device("cuda")
    model = Net().to(dev)
"""

# The same flag tested against a name the tool cannot follow.
FLAG_TESTED_AGAINST_A_NAME = """
    import argparse
    import torch

    DEVICES = ["cpu", "cuda"]


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
        opt, _ = parser.parse_known_args()
        assert opt.device in DEVICES
        return Net().to(torch.device(opt.device))
"""

CUDA_DEVICE = Rule(
    code="XLA101",
    name="cuda-device",
    severity="error",
    summary="CUDA device (torch.device('cuda'), 'cuda:N' strings) becomes the XLA device",
    fixable=True,
    why="An XLA machine has no CUDA device: the first tensor moved to `torch.device('cuda')` raises. The "
    "target's device call takes its place (a device kept as a string becomes 'xla'). A \"cuda\" handed to a "
    "library with devices of its own naming and none for XLA (CTranslate2: `ctranslate2.Generator(path, "
    'device="cuda")`) stays, reported: "xla" would fail there too; hand it "cpu". '
    "A module-level alias of "
    "torch.device (`Device = torch.device`, `Device: TypeAlias = device`: fairseq2's spelling, also when another "
    'module of the project defines it) is torch.device too: `Device("cuda", index)` becomes the XLA device. '
    'The default and the choices of a device flag are device strings (`add_argument("--device", default="cuda", '
    'choices=["cpu", "cuda"])`, its attribute named as argparse names it: `dest=`, else the long option after a '
    'short one, `"-d", "--device"`): "cuda" becomes "xla" in both, so the run can name the XLA device, and so do the '
    'CUDA strings the flag is tested against (`assert args.device in ["cpu", "cuda"]`, `args.device == "cuda"`), '
    "which the new default would fail or take another branch of; a membership test against values the tool cannot "
    "follow (`args.device in DEVICES`) is an error to resolve by hand; a module "
    'without torch that sets a device to a CUDA string (`args.device = "cuda"` in a function that receives the '
    'parsed arguments, `config.device = "cuda"` in a config module) or lists "cuda" among a flag\'s choices is '
    "converted too when the tool runs on the project folder. An integer alone is a CUDA ordinal: "
    "`torch.device(0)` is cuda:0 (also with torch_xla imported), and so is `torch.device(device_id)` of a name "
    "that holds a GPU number (a CUDA index of the file, or one named like it: `device_id`, `local_rank`, `gpu`, "
    "that nothing makes a string): the XLA device takes its place (one device per process, so the ordinal means "
    'nothing there). The default of a device key\'s lookup is a device string too (`config.get("device", '
    '"cuda:0")`, `getattr(args, "device", "cuda")`) and the default of a dataclass field named as a device '
    '(`device: str = field(default="cuda:0")`, the parsed arguments\' default under HfArgumentParser, which a '
    "script may assign to a library's device: `mylib.device = args.device`), as is a name stored under a config's device key "
    '(`config["device"] = "cuda:" + str(rank)`); where a project config file may still set the key to CUDA, '
    "XLA112 says so at the read. A CUDA device handed to a CUDA-only API that never runs on XLA (after `if not "
    'torch.cuda.is_available(): return`: `torch.cuda.get_device_properties(torch.device("cuda"))`) stays, with no '
    "finding: the API asks about a CUDA device (the XLA device would make it raise) and an XLA host never reaches it. "
    'A device taken at import (module level, a class body) in a run that the XLA launcher starts is `torch.device("xla")`: '
    "taking the XLA device there starts the XLA runtime in the launching process, and the launcher then refuses to "
    'start (torch_xla 2.9: "Runtime is already initialized"); the device object starts nothing, and a tensor moved '
    "to it lands on the process's XLA device.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda:0")
            model = Net().to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = Net().to(device)
            """,
            findings=(Expected(4, 10, 'torch.device("cuda:0") -> torch_xla.device()'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import argparse
            import torch

            p = argparse.ArgumentParser()
            p.add_argument("--device", default="cpu")
            args = p.parse_args()
            assert args.device in ["cpu", "mps"]
            cfg = load()
            assert cfg.device in DEVICES
            """,
            note="tests-of-a-flag-the-port-leaves",
        ),
        valid(
            """
            import torch

            device = torch.device("cpu")
            print("cuda")
            backend_type = "cuda"
            """,
            note="cpu-and-non-device-strings",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device() if USE_XLA else torch.device("cuda")
            if args.tpu:
                device = xm.xla_device()
            else:
                device = torch.device("cuda")
            """,
            note="xla-aware-branches",
        ),
        valid(
            """
            import torch

            def describe(rank):
                label = f"cuda:{rank}"
                print("running on", label)
            """,
            note="string-not-used-as-device",
        ),
        valid(
            """
            from typing import TypeAlias

            import torch

            Device: TypeAlias = torch.device
            CPU = Device("cpu")

            def move(t: torch.Tensor, device: Device) -> torch.Tensor:
                return t.to(device)
            """,
            note="alias-of-torch-device-on-the-cpu",
        ),
        *ordinal_valid_cases(),
        *cuda_query_valid(),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import ctranslate2

            generator = ctranslate2.Generator("lm", device="cuda", compute_type="float16")
            noise = torch.zeros(3, device="cuda")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            import ctranslate2

            generator = ctranslate2.Generator("lm", device="cuda", compute_type="float16")
            noise = torch.zeros(3, device="xla")
            """,
            alias=True,
            note="a-cuda-string-for-ctranslate2-stays-reported",
            findings=(
                Expected(5, 48, '"cuda" stays: `ctranslate2.Generator` takes a device of its own library'),
                Expected(6, 31, '"cuda" -> "xla"'),
            ),
        ),
        invalid(
            """
            import ctranslate2 as ct2
            import torch

            translator = ct2.Translator("model", device="cuda:0")
            """,
            target="sagemaker",
            note="a-cuda-string-for-ctranslate2-stays-reported-sagemaker",
            findings=(Expected(4, 45, '"cuda:0" stays: `ctranslate2.Translator` takes a device'),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            noise = torch.randn(3, device="cuda:1")
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            noise = torch.randn(3, device="xla")
            """,
            findings=(
                Expected(4, 10, 'torch.device("cuda") -> torch_xla.device()'),
                Expected(5, 31, '"cuda:1" -> "xla" (one XLA device per process'),
            ),
        ),
        invalid(
            """
            import torch

            parser.add_argument('--device', default='cuda')
            local = torch.device(f"cuda:{rank}")
            """,
            """
            import torch
            import torch_xla

            parser.add_argument('--device', default='xla')
            local = torch_xla.device()
            """,
            note="cli-default-and-fstring",
            findings=(
                Expected(4, 41, "'cuda' -> 'xla'"),
                Expected(5, 9, 'torch.device(f"cuda:{rank}") -> torch_xla.device()'),
            ),
        ),
        invalid(
            """
            import torch

            parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            parser.add_argument("--device", default="xla", choices=["cpu", "xla"])
            """,
            note="cli-choices",
            findings=(Expected(4, 41, '"cuda" -> "xla"'), Expected(4, 64, '"cuda" -> "xla"')),
        ),
        invalid(
            """
            import torch as th

            parser.add_argument("--device", default="cuda:0", choices=("cpu", "cuda:0"))
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            parser.add_argument("--device", default="xla", choices=("cpu", "xla"))
            """,
            target="sagemaker",
            alias=True,
            note="cli-choices-sagemaker",
            findings=(Expected(4, 41, '"cuda:0" -> "xla"'), Expected(4, 64, '"cuda:0" -> "xla"')),
        ),
        invalid(
            """
            import torch

            p.add_argument("-d", "--device", type=str, default="cuda:0")
            p.add_argument("-g", dest="train_device", default="cuda")
            p.add_argument("-c", "--cuda-data", default="cuda")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            p.add_argument("-d", "--device", type=str, default="xla")
            p.add_argument("-g", dest="train_device", default="xla")
            p.add_argument("-c", "--cuda-data", default="cuda")
            """,
            note="cli-default-after-a-short-option",
            findings=(Expected(4, 52, '"cuda:0" -> "xla"'), Expected(5, 51, '"cuda" -> "xla"')),
        ),
        invalid(
            """
            import torch as th

            p.add_argument("-d", "--device", type=str, default="cuda:0")
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            p.add_argument("-d", "--device", type=str, default="xla")
            """,
            target="sagemaker",
            alias=True,
            note="cli-default-after-a-short-option-sagemaker",
            findings=(Expected(4, 52, '"cuda:0" -> "xla"'),),
        ),
        invalid(
            """
            import torch as th

            dev = th.device('cuda' if th.cuda.is_available() else 'cpu')
            """,
            """
            import torch as th
            import torch_xla

            dev = torch_xla.device()
            """,
            alias=True,
            findings=(Expected(4, 7, "th.device('cuda' if th.cuda.is_available() else 'cpu') -> torch_xla.device()"),),
        ),
        invalid(
            """
            import torch

            def main_worker(rank):
                loc = 'cuda:{:d}'.format(rank)
                target = f"cuda:{rank}"
                model = torch.nn.Linear(4, 2).to(torch.device(loc))
                x = torch.randn(2, 4, device=target)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def main_worker(rank):
                loc = "xla"
                target = "xla"
                model = torch.nn.Linear(4, 2).to(torch.device(loc))
                x = torch.randn(2, 4, device=target)
            """,
            note="runtime-strings-in-any-name",
            findings=(
                Expected(5, 11, "'cuda:{:d}'.format(rank) -> \"xla\""),
                Expected(6, 14, 'f"cuda:{rank}" -> "xla"'),
            ),
        ),
        invalid(
            """
            from typing import TypeAlias

            import torch
            from torch import device

            Device: TypeAlias = device
            CudaDevice = torch.device

            def model_device(index: int) -> Device:
                return Device("cuda", index)

            noise = torch.randn(3, device=CudaDevice(f"cuda:{rank}"))
            """,
            """
            from typing import TypeAlias

            import torch
            from torch import device
            import torch_xla

            Device: TypeAlias = device
            CudaDevice = torch.device

            def model_device(index: int) -> Device:
                return torch_xla.device()

            noise = torch.randn(3, device=torch_xla.device())
            """,
            note="module-level-alias-of-torch-device",
            alias=True,
            findings=(
                Expected(11, 12, 'Device("cuda", index) -> torch_xla.device()'),
                Expected(13, 31, 'CudaDevice(f"cuda:{rank}") -> torch_xla.device()'),
            ),
        ),
        invalid(
            """
            import torch
            from torch import device as Device

            device = Device("cuda")
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            note="imported-as-another-name",
            alias=True,
            findings=(Expected(4, 10, 'Device("cuda") -> torch_xla.device()'),),
        ),
        invalid(
            FLAG_TESTS,
            substituted(
                FLAG_TESTS,
                ("    import torch\n", "    import torch\n    import torch_xla\n"),
                ('torch.device("cuda")', "torch_xla.device()"),
                ('"cuda"', '"xla"'),
            ),
            note="membership-tests-of-a-ported-flag",
            findings=(
                Expected(6, 35, '"cuda" -> "xla"'),
                Expected(8, 31, '"cuda" -> "xla" (a test of the device flag, whose default the port makes "xla" too)'),
                Expected(9, 31, '"cuda" -> "xla" (a test of the device flag'),
                Expected(13, 21, '"cuda" -> "xla" (a test of the device flag'),
                Expected(14, 11, 'torch.device("cuda") -> torch_xla.device()'),
            ),
        ),
        invalid(
            FLAG_TESTED_AGAINST_A_NAME,
            substituted(
                FLAG_TESTED_AGAINST_A_NAME,
                (
                    "    import torch\n",
                    '    import torch\n    import torch_xla  # noqa: F401  (registers the "xla" device)\n',
                ),
                ('choices=["cpu", "cuda"], default="cuda"', 'choices=["cpu", "xla"], default="xla"'),
            ),
            note="membership-test-of-a-ported-flag-against-a-name",
            findings=(
                Expected(10, 53, '"cuda" -> "xla"'),
                Expected(10, 69, '"cuda" -> "xla"'),
                Expected(
                    12,
                    12,
                    "`opt.device in DEVICES` tests the device flag, whose CUDA default the port makes 'xla', against "
                    "values the tool cannot follow",
                ),
            ),
        ),
        *ordinal_cases(),
        *import_time_cases(),
        *cuda_query_invalid(),
    ),
)


@on_facts(CUDA_DEVICE, nodes=lambda facts: facts.device.strings)
def _device_string(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    from codemods.engine.nodes import quoted_like, string_value

    if _handed_to_cuda_off_xla(ctx, original):
        return updated
    xla = ctx.target.device_string
    note = "" if string_value(original) == "cuda" else " (one XLA device per process: the index is dropped)"
    if original in ctx.facts.device.flag_test_strings:
        note += f" (a test of the device flag, whose default the port makes {quoted_like(original, xla).value} too)"
    rule, where = _rule_for(ctx, original)
    new = ctx.fix(
        rule,
        original,
        f"{ctx.code(original)} -> {{new}}{note}{where}",
        lambda: quoted_like(original, xla) if ctx.imports.require_package("torch_xla") else None,
    )
    if new is None:
        return updated
    if type(original).__name__ != "SimpleString":
        ctx.imports.discard(original)
    return new


@on_facts(CUDA_DEVICE, nodes=lambda facts: facts.device.calls)
def _device_call(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    if _handed_to_cuda_off_xla(ctx, original):
        return updated
    build = ctx.device
    func = original.func
    if (
        ctx.resolve(func) == "torch.accelerator.current_accelerator"
        and isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Attribute)
    ):
        # The accelerator is a device without an index (code adds its own: f"{acc}:{rank}").
        torch_name = func.value.value

        def build() -> cst.Call | None:
            if not ctx.imports.require_package("torch_xla"):
                return None
            return cst.Call(
                func=cst.Attribute(value=torch_name, attr=cst.Name("device")),
                args=[cst.Arg(cst.SimpleString('"xla"'))],
            )

    launch = _launched_after_import(ctx)
    if launch:
        build = _plain_device(ctx)
    rule, where = _rule_for(ctx, original)
    if launch:
        where += (
            f" (it runs at import, and {launch} starts the XLA launcher after it: taking the XLA device "
            "there would start the XLA runtime first, and the launcher refuses to start then; a device "
            "object names the process's XLA device without starting anything)"
        )
    if ctx.resolve(func) == "torch.device" and len(original.args) == 1 and not _names_a_kind(original):
        where = " (an integer alone is cuda:N; one XLA device per process: the ordinal is dropped)" + where
    new = ctx.fix(rule, original, f"{ctx.code(original)} -> {{new}}{where}", build)
    if new is None:
        return updated
    ctx.forget_fixes_inside(original)
    ctx.imports.discard(original)
    return new


@reports_facts(CUDA_DEVICE, nodes=lambda facts: facts.device.foreign_device_strings)
def _foreign_device_string(ctx: Context[Facts], original: cst.BaseExpression) -> str:
    callee = ctx.facts.device.foreign_device_strings[original]
    return (
        f"{ctx.code(original)} stays: `{callee}` takes a device of its own library's naming, which has no XLA "
        f'device, and on a host without CUDA it fails; hand it "cpu" there (or run it where CUDA is)'
    )


@reports_facts(CUDA_DEVICE, nodes=lambda facts: facts.device.unfollowed_flag_tests)
def _unfollowed_flag_test(ctx: Context[Facts], original: cst.Comparison) -> str:
    return (
        f"`{ctx.code(original)}` tests the device flag, whose CUDA default the port makes "
        f"'{ctx.target.device_string}', against values the tool cannot follow: if '{ctx.target.device_string}' is not among "
        "them, the new default fails the test (or takes another branch); add it there"
    )


def _rule_for(ctx: Context[Facts], original: cst.CSTNode) -> tuple[Rule, str]:
    """XLA101, or XLA120 in a function that no code of the project calls (and what it says of it)."""
    from codemods.device.rules.xla120_uncalled_device import UNCALLED_DEVICE

    function = ctx.facts.device.uncalled.get(original)
    if function is None or ctx.facts.imports.xla_optional:  # (there it is not fixed: XLA101's error says so)
        return CUDA_DEVICE, ""
    return UNCALLED_DEVICE, f" (in `{function}`, which no code of the project calls: it never runs)"


def _launched_after_import(ctx: Context[Facts]) -> str:
    """The device is taken at import (module level, or a class body) in a run whose processes
    the XLA launcher starts: in this file (``this script``) or in another file of the run (it
    may import this one first, as flair's script imports the package whose ``__init__`` takes
    the device, then starts its workers): what starts the launcher; "" otherwise."""
    import libcst as cst

    if any(isinstance(node, (cst.FunctionDef, cst.Lambda)) for node in ctx.ancestors):
        return ""
    distributed = ctx.facts.distributed
    if distributed.multi_process and distributed.style in ("spawn", "main", "launched"):
        return "this script"
    other = ctx.facts.project.context.launched_in_run()
    return f"`{other}`" if other else ""


def _plain_device(ctx: Context[Facts]) -> Callable[[], cst.Call | None]:
    """``torch.device("xla")``: the process's XLA device, the runtime not started (torch_xla 2.9:
    a tensor moved there lands on the process's device, xla:0)."""
    import libcst as cst

    from codemods.targets import Api

    def build() -> cst.Call | None:
        if not ctx.imports.require_package("torch_xla"):
            return None
        return ctx.imports.call(Api("torch", "device"), [cst.Arg(cst.SimpleString(f'"{ctx.target.device_string}"'))])

    return build


def _names_a_kind(call: cst.Call) -> bool:
    """``torch.device("cuda")``, ``torch.device(f"cuda:{rank}")``: a string, not an ordinal."""
    from codemods.engine.nodes import is_cuda_device_string, string_value

    value = call.args[0].value
    return string_value(value) is not None or is_cuda_device_string(value) or type(value).__name__ == "IfExp"


def _handed_to_cuda_off_xla(ctx: Context[Facts], original: cst.CSTNode) -> bool:
    """The device is an argument of a CUDA-only API that never runs on XLA (audiolm-pytorch's
    ``if not torch.cuda.is_available() or not flash: return`` then
    ``torch.cuda.get_device_properties(torch.device("cuda"))``; the CUDA-only analysis's
    ``guarded_cuda``): the API asks about a CUDA device, where the XLA device would make it raise,
    and on XLA it is never reached, so the device stays (no finding)."""
    import libcst as cst

    guarded = ctx.facts.cuda_only.guarded_cuda
    ancestors = ctx.ancestors
    for index, node in enumerate(ancestors[:-1]):
        if isinstance(node, cst.Call) and node.func in guarded and ancestors[index + 1] is not node.func:
            return True
    return False
