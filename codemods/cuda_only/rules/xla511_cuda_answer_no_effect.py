"""XLA511 cuda-answer-no-effect: a CUDA query whose answer on an XLA host changes nothing (the
CUDA-only facts' ``cuda_answers``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.cuda_only.rules.printed_count_cases import printed_count_no_effect_invalid
from codemods.engine.hooks import on_references
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

CUDA_ANSWER_NO_EFFECT = Rule(
    code="XLA511",
    name="cuda-answer-no-effect",
    severity="info",
    summary="A CUDA device count or bfloat16 check whose answer on an XLA host (0, False) changes nothing that runs",
    fixable=False,
    why="Without CUDA, `torch.cuda.device_count()` returns 0 and `torch.cuda.is_bf16_supported()` False; neither "
    "raises. The tool follows the answer to where it is used: through the expressions that compute with it, the "
    "names and attributes it is stored in and the functions of the file it is handed to. Where every use comes "
    "out as it does with one GPU (`n_gpu > 1` is False either way: the script's one-device path runs, which is "
    "what the port runs, one XLA device per process), or the answer is only printed (`print`, `xm.master_print`, a "
    "logger; also as a factor or a term of arithmetic with other values, `batch * torch.cuda.device_count()` in "
    "a log line, though not as a divisor, which raises there), or only decides what is "
    "printed, nothing changes on XLA and this note says so. Where it chooses other code than a GPU would, the "
    "check is reported like a CUDA availability check (XLA105); where it breaks the script (a division by the "
    "count, a batch size of 0, a branch that raises), as an error (XLA506). A use in a function this run never calls "
    "(nothing in the script names it, no other file of the run imports the script, and no framework calls it: a "
    "module-level function or a method of a class with no base) is a note too.",
    examples=lambda: (
        invalid(
            """
            import torch

            num_gpus = torch.cuda.device_count()
            if num_gpus > 1:
                print("several GPUs: start the script with torchrun")
            if torch.cuda.is_bf16_supported():
                print("this GPU supports bfloat16: pass --bf16")
            """,
            findings=(
                Expected(
                    3,
                    12,
                    "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device): `num_gpus > 1` is False there",
                ),
                Expected(
                    6,
                    4,
                    "`torch.cuda.is_bf16_supported()` is False on an XLA host (no CUDA device): "
                    "`torch.cuda.is_bf16_supported()` is False there: it only decides what is printed",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            if torch.cuda.is_available():
                print(torch.cuda.device_count(), "GPUs")
            """,
            note="under a kept availability check: never runs on XLA",
        ),
        valid(
            """
            import torch

            batch_size = 64 // torch.cuda.device_count()
            """,
            note="breaks: an error of XLA506",
        ),
        valid(
            """
            import torch

            run_name = f"run_{torch.cuda.device_count()}"
            workers = [f"{torch.cuda.device_count()}"]
            """,
            note="made text that is not printed: an error of XLA506",
        ),
        valid(
            """
            import torch
            from reporting import ui

            ui.master_print("GPUs:", torch.cuda.device_count())
            """,
            note="a method of the project's own object named like xm.master_print: an error of XLA506",
        ),
    ),
    invalid=lambda: (
        *printed_count_no_effect_invalid(),
        invalid(
            """
            import torch


            def pick(spec):
                count = torch.cuda.device_count()
                spec["cuda_id"] = spec["trial"] % count if torch.cuda.is_available() else None
            """,
            note="a count read only in a conditional expression under a kept availability check",
            findings=(
                Expected(
                    5,
                    13,
                    "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device): `count` is read only in code "
                    "that a test False on XLA skips; nothing changes on XLA",
                ),
            ),
        ),
        invalid(
            """
            import torch as th


            def pick(spec):
                count = th.cuda.device_count()
                spec["cuda_id"] = spec["trial"] % count if th.cuda.is_available() else None
            """,
            target="sagemaker",
            alias=True,
            note="the same through an alias (sagemaker)",
            findings=(Expected(5, 13, "`count` is read only in code that a test False on XLA skips"),),
        ),
        invalid(
            """
            import logging
            import torch

            log = logging.getLogger(__name__)
            print(f"rank {rank}: " f"{torch.cuda.device_count()} GPUs are available")
            log.info("found {} GPUs".format(torch.cuda.device_count()))
            """,
            note="in the text of a print or a log call",
            findings=(
                Expected(5, 27, "`torch.cuda.device_count()` is only printed; nothing changes on XLA"),
                Expected(6, 33, "`torch.cuda.device_count()` is only printed; nothing changes on XLA"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist


            def init(rank):
                if rank == 0:
                    print("GPUs:", torch.cuda.device_count())
                dist.init_process_group("nccl")
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def init(rank):
                xm.master_print("GPUs:", torch.cuda.device_count())
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="a rank-checked print becomes xm.master_print (XLA610), which still only prints: a second run keeps it",
            findings=(Expected(8, 30, "`torch.cuda.device_count()` is only printed; nothing changes on XLA"),),
        ),
        invalid(
            """
            import torch
            from torch_xla.core import xla_model as xla

            xla.master_print("GPUs:", torch.cuda.device_count())
            """,
            target="sagemaker",
            alias=True,
            note="xm.master_print through an alias (sagemaker)",
            findings=(Expected(4, 27, "`torch.cuda.device_count()` is only printed; nothing changes on XLA"),),
        ),
        invalid(
            """
            import torch


            def gpu_ids():
                return list(range(torch.cuda.device_count()))


            if __name__ == "__main__":
                print("training")
            """,
            note="in a function the script never calls",
            findings=(
                Expected(
                    5,
                    23,
                    "nothing in this script names `gpu_ids`, and no other file of the run imports the script, so this "
                    "run never calls it (code outside the run that calls it gets 0)",
                ),
            ),
        ),
        invalid(
            """
            import torch


            def train(num_gpus, rank):
                if num_gpus > 1:
                    raise SystemExit("use the distributed launcher")
                sampler = "distributed" if num_gpus > 1 else None
                return sampler


            def main(args):
                num_gpus = torch.cuda.device_count()
                if num_gpus == 1 and args.rank != 0:
                    raise SystemExit("single-GPU training on rank > 0")
                train(num_gpus, args.rank)
            """,
            note="followed into a function of the file, through an `and`",
            findings=(
                Expected(
                    12,
                    16,
                    "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device): `num_gpus == 1 and args.rank "
                    "!= 0` is False there: it only decides what is printed (or a stop of the script, which a GPU run "
                    "may take: XLA goes on)",
                ),
            ),
        ),
        invalid(
            """
            from torch.cuda import device_count as gpus

            world = max(1, gpus())
            print("devices:", gpus())
            """,
            alias=True,
            findings=(
                Expected(3, 16, "`gpus()` is 0 on an XLA host (no CUDA device): `max(1, gpus())` is 1 there"),
                Expected(4, 19, "`gpus()` is only printed"),
            ),
        ),
        invalid(
            """
            import torch

            num_gpus = torch.cuda.device_count()
            if num_gpus > 1:
                print("several GPUs")
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(3, 12, "`num_gpus > 1` is False there, as with one GPU"),),
        ),
    ),
)


@on_references(CUDA_ANSWER_NO_EFFECT, names="torch.cuda.device_count torch.cuda.is_bf16_supported")
def _no_effect_answer(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    from codemods.cuda_only.rules.runtime_references import goes_with_device_call

    answer = ctx.facts.cuda_only.cuda_answers.get(original)  # type: ignore[call-overload]  # a reference is an expression
    if answer is not None and answer.effect == "none" and not goes_with_device_call(ctx, original):
        ctx.report(
            CUDA_ANSWER_NO_EFFECT,
            original,
            f"{answer.heading(ctx.code(original), qualified)}; nothing changes on XLA",
        )
    return updated
