"""XLA608 hogwild."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
