"""XLA5: CUDA runtime calls."""

from __future__ import annotations

from codemods.rules.base import Rule, example

RULES = (
    Rule(
        "XLA501", "cuda-synchronize", "error", "`torch.cuda.synchronize()` becomes `xm.wait_device_ops()`", True,
        why="`torch.cuda.synchronize()` raises without CUDA; `xm.wait_device_ops()` waits for the XLA device's "
        "pending work, which is what timing code around it needs.",
        examples=(
            example(
                """
                import torch

                torch.cuda.synchronize()
                elapsed = time.time() - start
                """,
                """
                import torch
                import torch_xla.core.xla_model as xm

                xm.wait_device_ops()
                elapsed = time.time() - start
                """,
            ),
        ),
    ),
    Rule(
        "XLA502", "cuda-no-effect", "info", "CUDA-only setting with no effect on XLA (empty_cache, cudnn flags, pin_memory) is removed", True,
        why="cuDNN flags, pinned memory and the CUDA caching allocator do not exist on an XLA device, so the setting "
        "does nothing there. It is removed where deleting it is safe (a statement that only sets or calls it, a "
        "keyword of a torch API) and reported elsewhere (a dict of loader options, a value computed by a call). "
        "Also reported: CUDA and NCCL environment variables the script sets (`os.environ[\"NCCL_DEBUG\"] = ...`: "
        "XLA reads them only on NVIDIA GPUs) and the profiler's `ProfilerActivity.CUDA`, which records nothing "
        "without CUDA (torch_xla.debug.profiler profiles the XLA device).",
        examples=(
            example(
                """
                import torch
                from torch.utils.data import DataLoader

                torch.backends.cudnn.benchmark = True
                loader = DataLoader(dataset, batch_size=64, pin_memory=True)
                """,
                """
                import torch
                from torch.utils.data import DataLoader

                loader = DataLoader(dataset, batch_size=64)
                """,
            ),
            example(
                """
                import torch

                loader_options = {"num_workers": 4, "pin_memory": True}
                """
            ),
        ),
    ),
    Rule(
        "XLA503", "cuda-memory-stats", "info", "CUDA memory statistics read 0 on XLA: use xm.get_memory_info(device)", False,
        why="CUDA memory counters read 0 on an XLA machine, so what they log means nothing there; "
        "`xm.get_memory_info(device)` reports the XLA device's memory.",
        examples=(
            example(
                """
                import torch

                print(f"memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
                """
            ),
        ),
    ),
    Rule(
        "XLA504", "cuda-oom", "warning", "`torch.cuda.OutOfMemoryError` is never raised on XLA", False,
        why="XLA reports running out of device memory as a RuntimeError (RESOURCE_EXHAUSTED), never as "
        "`torch.cuda.OutOfMemoryError`: the handler never runs, and the script stops where it used to recover.",
        examples=(
            example(
                """
                import torch

                try:
                    loss = train_step(batch)
                except torch.cuda.OutOfMemoryError:
                    skipped += 1
                """
            ),
        ),
    ),
    Rule(
        "XLA505", "cuda-seed", "warning", "CUDA RNG seeding does not seed the XLA device: use xm.set_rng_state(seed)", False,
        why="CUDA seeding calls leave the XLA device's generator alone, so dropout and random initialisation on the "
        "device ignore the seed; `xm.set_rng_state(seed)` seeds it.",
        examples=(
            example(
                """
                import torch

                torch.manual_seed(args.seed)
                torch.cuda.manual_seed_all(args.seed)
                """
            ),
        ),
    ),
    Rule(
        "XLA506", "cuda-api", "error", "CUDA-only API with no XLA equivalent", False,
        why="Most torch.cuda APIs raise without CUDA (device names and properties, streams, events, graphs); the "
        "others return values that mislead the script (a device count of 0). Each needs a person's decision: "
        "remove it, guard it, or use the XLA equivalent.",
        examples=(
            example(
                """
                import torch

                print("training on", torch.cuda.get_device_name(0))
                """
            ),
        ),
    ),
)
