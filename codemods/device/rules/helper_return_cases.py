"""XLA104's cases for an early ``return`` under a check that counts CUDA devices (a helper's,
before CUDA setup only: kept; a function's, before its work: removed) and for a device choice
read only as a map location (the CPU without CUDA: left), kept apart from the rule so that its
module holds the rule, its messages and its hooks."""

from __future__ import annotations

import textwrap

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# SLM-Lab's helpers: an early return under a check that counts CUDA devices, before CUDA setup only.
USE_GPU = textwrap.dedent(
    """
    import torch


    def use_gpu(gpu):
        if gpu in ("auto", None):
            return torch.cuda.is_available() and torch.cuda.device_count() > 0
        return gpu not in ("false", False)


    def set_cuda_id(spec):
        if not use_gpu(spec["gpu"]):
            return
        job = spec["trial"] or 0
        count = torch.cuda.device_count()
        spec["cuda_id"] = job % count if torch.cuda.is_available() else None
    """
)

_LOAD = textwrap.dedent(
    """
    import torch


    def load(net, path):
        device = None if torch.cuda.is_available() else "cpu"
        net.load_state_dict(torch.load(path, map_location=device))


    def load_named(net, path):
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        net.load_state_dict(torch.load(path, map_location=dev))
    """
)


def helper_return_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(
            USE_GPU,
            note="a helper's early return under a check that counts CUDA devices, before code that only sets CUDA "
            "up: it returns there on XLA too, where there is no CUDA to set up",
        ),
        valid(
            substituted(USE_GPU, ("import torch\n", "import torch as th\n"), ("torch.cuda", "th.cuda")),
            target="sagemaker",
            note="a helper's early return before CUDA setup only, through an alias (sagemaker)",
        ),
        valid(
            _LOAD,
            note="a device choice read only as a map location, the CPU without CUDA: on XLA the original already "
            "loads onto the CPU",
        ),
        valid(
            substituted(_LOAD, ("import torch\n", "import torch as th\n"), ("torch.", "th.")),
            target="sagemaker",
            note="a choice read only as a map location, through an alias (sagemaker)",
        ),
    )


def helper_return_invalid_cases() -> tuple[Invalid, ...]:
    main = substituted(
        USE_GPU,
        (
            '    if not use_gpu(spec["gpu"]):\n        return\n',
            '    if not use_gpu(spec["gpu"]):\n        print("no GPU")\n        return\n    train(spec)\n',
        ),
    )
    load_and_move = substituted(_LOAD, ("map_location=dev))\n", "map_location=dev))\n    net.to(dev)\n"))
    return (
        invalid(
            main,
            substituted(main, ('    if not use_gpu(spec["gpu"]):\n        print("no GPU")\n        return\n', "")),
            note="an early return before other work than CUDA setup: removed, and the message names the function",
            findings=(
                Expected(
                    11,
                    5,
                    'removed `if not use_gpu(spec["gpu"]):` and the return under it: `use_gpu` checks for CUDA '
                    "devices (an accelerator check, False on XLA, and a CUDA device count, 0 there), so "
                    "`set_cuda_id` always returned here, before its work",
                ),
            ),
        ),
        invalid(
            main,
            substituted(main, ('    if not use_gpu(spec["gpu"]):\n        print("no GPU")\n        return\n', "")),
            target="sagemaker",
            note="an early return before other work than CUDA setup (sagemaker)",
            findings=(Expected(11, 5, "`set_cuda_id` always returned here, before its work"),),
        ),
        invalid(
            load_and_move,
            substituted(
                load_and_move,
                ("import torch\n", 'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'),
                ('dev = "cuda" if torch.cuda.is_available() else "cpu"', 'dev = "xla"'),
                ("map_location=dev)", 'map_location="cpu")'),
            ),
            note="a choice read as a map location and as the model's device: ported",
            findings=(Expected(11, 11, "device picked by an accelerator check"),),
        ),
    )
