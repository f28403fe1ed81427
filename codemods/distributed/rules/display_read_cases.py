"""XLA609's cases of environment rank reads that only decide what a process shows
(distributed/display_reads.py): a print or a log under ``if os.environ.get("RANK", "0") == "0":``,
a flag tested only by such an ``if``, a progress bar's ``disable=``; under torch_xla.launch every
process prints, nothing else changes. A read that also decides a save, or a value the function
computes with, is still reported."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid


def display_read_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import os

            import torch


            def print_rank_0(*message):
                if os.environ.get("RANK", "0") == "0":
                    print(*message)


            def log(logger, level, msg, ranks=("0",)):
                should_log = os.environ.get("RANK", "0") in ranks or len(ranks) == 0
                if logger.isEnabledFor(level) and should_log:
                    msg = f"[main] {msg}"
                    logger.log(level, msg)
            """,
            note="a-rank-read-that-only-decides-who-prints",
        ),
        valid(
            """
            import os

            import torch
            from tqdm import tqdm


            def rollouts(batches):
                for batch in tqdm(batches, disable=os.environ.get("LOCAL_RANK", "0") != "0"):
                    yield torch.as_tensor(batch)
            """,
            note="a-rank-read-that-only-hides-a-progress-bar",
        ),
    )


def display_read_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import os

            import torch


            def save(model, step):
                if os.environ.get("RANK", "0") == "0":
                    print("saving", step)
                    torch.save(model.state_dict(), "ckpt.pt")
            """,
            """
            import os

            import torch
            import torch_xla.core.xla_model as xm


            def save(model, step):
                if os.environ.get("RANK", "0") == "0":
                    print("saving", step)
                    xm.save(model.state_dict(), "ckpt.pt")
            """,
            note="a-rank-read-that-also-decides-a-save",
            findings=(Expected(8, 8, "`RANK` read from the environment"),),
        ),
        invalid(
            """
            import os

            import torch


            def report(logger, losses):
                show = os.environ.get("RANK", "0") == "0"
                if show:
                    logger.info("loss %f", sum(losses))
                return losses[int(show)]
            """,
            note="a-rank-flag-that-also-picks-a-value",
            findings=(Expected(7, 12, "`RANK` read from the environment"),),
        ),
    )
