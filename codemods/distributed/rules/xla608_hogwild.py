"""XLA608 hogwild: a model in shared memory that several processes update (the distributed
facts' ``hogwild``: ``model.share_memory()`` with ``mp.Process`` workers) is reported, and nothing
else of the script is ported (codemods/concerns.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

HOGWILD = Rule(
    code="XLA608",
    name="hogwild",
    severity="error",
    summary="Hogwild training (a shared-memory model updated by several processes) cannot run on XLA",
    fixable=False,
    why="Device tensors are not shared between processes: each worker would train its own copy.",
    examples=lambda: (
        invalid(
            """
        import torch.multiprocessing as mp

        model.share_memory()
        workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]
        """,
            findings=(Expected(3, 1, "Hogwild training (a model in shared memory, updated by several processes at"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model.share_memory()
            """,
            note="share-memory-alone",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.multiprocessing as mp

            model.share_memory()
            processes = []
            for rank in range(4):
                p = mp.Process(target=train, args=(model,))
                p.start()
            """,
            note="hogwild",
            findings=(Expected(3, 1, "Hogwild training (a model in shared memory, updated by several processes at"),),
        ),
        invalid(
            """
            import multiprocessing
            import torch

            model.share_memory()
            p = multiprocessing.Process(target=train, args=(model,))
            """,
            note="multiprocessing-process",
            alias=True,
            findings=(Expected(4, 1, "Hogwild training (a model in shared memory, updated by several processes at"),),
        ),
    ),
)


@reports_facts(
    HOGWILD, nodes=lambda facts: [facts.distributed.hogwild] if facts.distributed.hogwild is not None else []
)
def _report(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        "Hogwild training (a model in shared memory, updated by several "
        "processes at once) cannot run on XLA: device tensors are not shared between processes; "
        "train in one process, or with DDP"
    )
