"""XLA105 cuda-check: the CUDA checks that stay (an availability check the device rules do not
consume, ``x.is_cuda``, ``device == 'cuda'`` that no rule ports: the device facts'
``kept_availability_checks`` and ``cuda_checks``) are reported as False (or True) on XLA; a hook
reports a CUDA query whose answer on an XLA host chooses another branch than a GPU would
(the CUDA-only facts' ``cuda_answers``: a rule reads another concern's facts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.programs import ENVIRONMENT_FLAG, ENVIRONMENT_FLAG_PORTED
from codemods.device.rules.xla107_cuda_tensor_type import CPU_TYPE_IN_ARITHMETIC
from codemods.engine.hooks import on_facts, on_references
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.device.held_conditions import StandsIfHandedToAFlagMove
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

CUDA_CHECK = Rule(
    code="XLA105",
    name="cuda-check",
    severity="warning",
    summary="A CUDA check that stays (`is_cuda`, `device == 'cuda'`, `torch.cuda.is_available()`) is False on XLA",
    fixable=False,
    why="A CUDA check that does not pick the device is left as it is, and is False on XLA: the code it guards "
    "never runs there. So do `torch.cuda.device_count()` (0 there) and `torch.cuda.is_bf16_supported()` (False) "
    "where their answer chooses other code than a GPU would (`if n_gpu > 0:`; where it changes nothing it is "
    "a note, XLA511; where it breaks the script, an error, XLA506). Usually that is right (cuDNN flags, CUDA seeding), but it may also switch off a faster "
    "path (loader workers, mixed precision): check what it guards. Membership and prefix tests (`device.type in ('cuda',)`, "
    "`device.type.startswith('cuda')`) count too; a negated check (`device.type != 'cuda'`) is True on XLA, and the finding says so.",
    examples=lambda: (
        invalid(
            """
            import torch

            workers = 4 if torch.cuda.is_available() else 0
            """,
            findings=(Expected(3, 16, "`torch.cuda.is_available()` is False on the XLA device"),),
        ),
    ),
    valid=lambda: (
        valid(
            ENVIRONMENT_FLAG,
            ENVIRONMENT_FLAG_PORTED,
            note="an-environment-flag-compared-with-strings-the-port-leaves-as-they-are",
        ),
        valid(
            """
            import os

            os.environ["DEVICE"] = "cpu" if os.cpu_count() == 1 else "cuda"
            if os.environ["DEVICE"] != "cpu":
                print("accelerated")
            """,
            note="an-environment-flag-set-in-the-file-to-strings-the-port-leaves",
        ),
        valid(
            """
            import torch

            if device.type == 'xla':
                pass
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                device_id = torch.cuda.current_device()
                print("using device", device_id, torch.cuda.get_device_name(device_id))
            """,
            note="a-check-around-a-device-index-that-is-only-printed-picks-no-device",
            findings=(Expected(3, 4, "`torch.cuda.is_available()` is False on the XLA device"),),
        ),
        invalid(
            """
            import torch as th

            if th.cuda.is_available():
                gpu_id = th.cuda.current_device()
                print(f"GPU {gpu_id}: {th.cuda.get_device_name(gpu_id)}")
            """,
            target="sagemaker",
            alias=True,
            note="the-same-through-an-alias-sagemaker",
            findings=(Expected(3, 4, "`th.cuda.is_available()` is False on the XLA device"),),
        ),
        invalid(
            CPU_TYPE_IN_ARITHMETIC,
            note="the-cpu-type-a-tensor-check-chooses-on-xla",
            findings=(
                Expected(
                    10,
                    44,
                    "`p.is_cuda` is False on the XLA device: it picks `torch.FloatTensor`, whose CPU tensors meet XLA "
                    "tensors only in arithmetic (torch_xla uploads them there, each time) and host reads",
                ),
            ),
        ),
        invalid(
            """
            import os
            import torch

            device = "cuda"
            x = torch.zeros(2).to(device)
            os.environ["DEVICE"] = device
            if os.environ.get("DEVICE") == "cuda":
                print(x)
            """,
            """
            import os
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            x = torch.zeros(2).to(device)
            os.environ["DEVICE"] = device
            if os.environ.get("DEVICE") == "cuda":
                print(x)
            """,
            note="an-environment-flag-set-from-a-device-the-port-changes",
            findings=(Expected(8, 4, '`os.environ.get("DEVICE") == "cuda"` is False on the XLA device'),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import is_bf16_supported

            workers = 4 * torch.cuda.device_count() if torch.cuda.device_count() > 0 else 0
            if is_bf16_supported():
                args.bf16 = True
            """,
            note="a device count or a bfloat16 check that chooses code (0 and False on an XLA host)",
            alias=True,
            findings=(
                Expected(
                    4,
                    44,
                    "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device): `4 * torch.cuda.device_count() "
                    "if torch.cuda.device_count() > 0 else 0` is `0` there: check that the code it chooses is right on XLA",
                ),
                Expected(
                    5,
                    4,
                    "`is_bf16_supported()` is False on an XLA host (no CUDA device): `is_bf16_supported()` is False "
                    "there: check that the code it chooses is right on XLA",
                ),
            ),
        ),
        invalid(
            """
            import torch

            if torch.cuda.is_bf16_supported():
                compute_dtype = torch.bfloat16
            """,
            target="sagemaker",
            note="a bfloat16 check that chooses code (sagemaker)",
            findings=(Expected(3, 4, "`torch.cuda.is_bf16_supported()` is False on an XLA host"),),
        ),
        invalid(
            """
            import torch

            if x.is_cuda:
                x = x.half()
            if device == 'cuda':
                cudnn.benchmark = True
            """,
            findings=(
                Expected(3, 4, "`x.is_cuda` is False on the XLA device"),
                Expected(
                    5,
                    4,
                    "`device == 'cuda'` is False on XLA only if `device` no longer names CUDA there, "
                    "which this file does not show",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from utils import pick_device

            device = pick_device()
            if device == "cuda":
                torch.backends.cuda.matmul.allow_tf32 = True
            dev = torch.device("cuda")
            if dev.type == "cuda":
                print("on the GPU")
            """,
            """
            import torch
            import torch_xla
            from utils import pick_device

            device = pick_device()
            if device == "cuda":
                pass
            dev = torch_xla.device()
            if dev.type == "cuda":
                print("on the GPU")
            """,
            note="proven-and-unproven",
            findings=(
                Expected(6, 4, '`device == "cuda"` is False on XLA only if `device` no longer names CUDA there'),
                Expected(9, 4, '`dev.type == "cuda"` is False on the XLA device: check that the code it guards'),
            ),
        ),
        invalid(
            """
            import torch

            def step(batch, device_type):
                if device_type != "cuda":
                    return batch
                return batch.half()
            """,
            target="sagemaker",
            note="parameter-sagemaker",
            findings=(
                Expected(4, 8, '`device_type != "cuda"` is True on XLA only if `device_type` no longer names CUDA'),
            ),
        ),
        invalid(
            """
            import torch

            use_amp = torch.cuda.is_available()
            """,
            note="availability-kept",
            findings=(Expected(3, 11, "`torch.cuda.is_available()` is False on the XLA device"),),
        ),
        invalid(
            """
            import torch as th

            on_gpu = 'cuda:0' == str(th.device(args.device))
            """,
            alias=True,
            findings=(Expected(3, 10, "`'cuda:0' == str(th.device(args.device))` is False on the XLA device"),),
        ),
        invalid(
            """
            import torch

            if device.type in ('cuda',):
                torch.backends.cudnn.benchmark = True
            if device.type != "cuda":
                print("no GPU: this will be slow")
            """,
            """
            import torch

            if device.type in ('cuda',):
                pass
            if device.type != "cuda":
                print("no GPU: this will be slow")
            """,
            note="membership-and-negation",
            findings=(
                Expected(3, 4, "`device.type in ('cuda',)` is False on XLA only if `device` no longer names CUDA"),
                Expected(5, 4, "is True on XLA only if `device` no longer names CUDA"),
            ),
        ),
        # A prefix test is a CUDA check as ``==`` is; one that also takes "xla" holds on XLA.
        invalid(
            """
            import torch

            if device.type.startswith("cuda"):
                torch.backends.cudnn.benchmark = True
            if device.type.startswith(("cuda", "xla")):
                print("accelerated")
            """,
            """
            import torch

            if device.type.startswith("cuda"):
                pass
            if device.type.startswith(("cuda", "xla")):
                print("accelerated")
            """,
            note="a-prefix-test",
            findings=(
                Expected(
                    3, 4, '`device.type.startswith("cuda")` is False on XLA only if `device` no longer names CUDA'
                ),
            ),
        ),
    ),
)


@on_references(CUDA_CHECK, names="torch.cuda.device_count torch.cuda.is_bf16_supported")
def _branching_answer(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    answer = ctx.facts.cuda_only.cuda_answers.get(original)  # type: ignore[call-overload]  # a reference is an expression
    if answer is None or answer.effect != "branch":
        return updated
    device = ctx.facts.device
    call = ctx.parent()
    if call in device.count_checks and call not in device.kept_availability_checks:
        return updated  # a count tested for truth is an availability check, and XLA104 drops it
    replacing = ctx.facts.device.replaced_parts.get(original)
    if replacing is not None and ctx.enabled(replacing[1], replacing[0]):
        return updated  # inside a device call that becomes the XLA device: it goes with it
    ctx.report(
        CUDA_CHECK,
        original,
        f"{answer.heading(ctx.code(original), qualified)}: check that the code it chooses is right on XLA",
    )
    return updated


def _kept_checks(facts: Facts) -> dict[cst.CSTNode, None]:
    """The checks that stay: those XLA110 and XLA117 port or report are theirs, and those that
    guard a move are XLA119's errors (those that guard a DDP wrap, XLA609's); a module's check of
    where its own parameters are, guarding a swap of its own parts, is no finding."""
    device = facts.device
    ddp_checks = {check for check, _ in device.guarded_ddp.values()} | device.guarded_groups.keys()
    widened = facts.device_values.widened_checks  # XLA123 makes them accept "xla" too
    ported = (device.type_checks, device.tensor_checks, device.guarded_moves, ddp_checks, device.own_swaps, widened)
    return dict.fromkeys(
        [
            *(
                check
                for check in device.kept_availability_checks
                if check not in device.guarded_moves and check not in ddp_checks and check not in device.count_checks
            ),
            *(check for check in device.cuda_checks if not any(check in checks for checks in ported)),
        ]
    )


@on_facts(CUDA_CHECK, nodes=_kept_checks)
def _kept_check(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    from codemods.device.facts import negated_check

    negated = negated_check(original)
    unproven = ctx.facts.device.unproven_checks.get(original)
    value = "True" if negated else "False"
    claim = (
        f"is {value} on the XLA device: check that"
        if unproven is None
        else f"is {value} on XLA only if `{unproven}` no longer names CUDA there, which this file does not show: "
        f"check what `{unproven}` holds, and that"
    )
    unfollowed = ctx.facts.device.unfollowed_flags.get(original)
    cpu_type = next((c.orelse for c in ctx.facts.device.cpu_type_choices if c.test is original), None)
    if cpu_type is not None:  # ``torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor``
        claim = (
            f"is False on the XLA device: it picks `{ctx.code(cpu_type)}`, whose CPU tensors meet XLA tensors only "
            "in arithmetic (torch_xla uploads them there, each time) and host reads (`.item()`), so it runs; check that"
        )
    ctx.report(
        CUDA_CHECK,
        original,
        f"`{ctx.code(original)}` {claim} the code it guards "
        + ("is meant to run there" if negated else "is not needed there"),
        # handed to a method the file cannot follow: XLA119's error where the run shows that a move hangs on it
        held=None if unfollowed is None else _unless_a_move_hangs_on_it(unfollowed),
    )
    return updated


def _unless_a_move_hangs_on_it(unfollowed: tuple[str, str, str, str]) -> StandsIfHandedToAFlagMove:
    from codemods.device.held_conditions import StandsIfHandedToAFlagMove

    method, keyword, _, tail = unfollowed
    return StandsIfHandedToAFlagMove(method, keyword, tail, error=False)
