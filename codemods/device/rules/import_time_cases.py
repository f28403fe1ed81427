"""XLA101's cases of a device taken at import (module level) in a script that the XLA launcher
starts after it (torch_xla.launch, xmp.spawn, as written or as the port writes them for mp.spawn):
``torch.device("xla")`` there, not the target's device call, which starts the XLA runtime at import
so that the launcher refuses to start ("Runtime is already initialized", torch_xla 2.9).  Inside
a function, and where nothing launches, the device call stays what the port writes."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

_AT_IMPORT = """
import torch
import torch.multiprocessing as mp

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def work(index):
    local = torch.device("cuda")
    model = torch.nn.Linear(4, 2).to(device)
    return model, local


if __name__ == "__main__":
    mp.spawn(work, nprocs=2)
"""


def import_time_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _AT_IMPORT,
            """
            import torch
            import torch_xla

            device = torch.device("xla")


            def work(index):
                local = torch_xla.device()
                model = torch.nn.Linear(4, 2).to(device)
                return model, local


            if __name__ == "__main__":
                torch_xla.launch(work)
""",
            note="a-device-at-import-of-a-launched-script",
            findings=(
                Expected(
                    4, 10, 'torch.device("cuda" if torch.cuda.is_available() else "cpu") -> torch.device("xla") (it'
                ),
                Expected(8, 13, 'torch.device("cuda") -> torch_xla.device()'),
            ),
        ),
        invalid(
            _AT_IMPORT,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_multiprocessing as xmp

            device = torch.device("xla")


            def work(index):
                local = xm.xla_device()
                model = torch.nn.Linear(4, 2).to(device)
                return model, local


            def _mp_fn(index):
                work(index)


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
""",
            target="sagemaker",
            note="a-device-at-import-of-a-launched-script-1.13",
            findings=(
                Expected(
                    5, 10, 'torch.device("cuda" if torch.cuda.is_available() else "cpu") -> torch.device("xla") (it'
                ),
                Expected(9, 13, 'torch.device("cuda") -> xm.xla_device()'),
            ),
        ),
        invalid(
            """
            import torch as th
            import torch.multiprocessing as mp

            device = th.device("cuda" if th.cuda.is_available() else "cpu")


            def work(index):
                local = th.device("cuda")
                model = th.nn.Linear(4, 2).to(device)
                return model, local


            if __name__ == "__main__":
                mp.spawn(work, nprocs=2)
""",
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_multiprocessing as xmp

            device = th.device("xla")


            def work(index):
                local = xm.xla_device()
                model = th.nn.Linear(4, 2).to(device)
                return model, local


            def _mp_fn(index):
                work(index)


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
""",
            target="sagemaker",
            alias=True,
            note="a-device-at-import-of-a-launched-script-alias",
            findings=(
                Expected(
                    5, 10, 'th.device("cuda" if th.cuda.is_available() else "cpu") -> th.device("xla") (it runs at'
                ),
                Expected(9, 13, 'th.device("cuda") -> xm.xla_device()'),
            ),
        ),
    )
