"""XLA004, XLA212, XLA5: CUDA-only libraries, fused kernels and CUDA runtime calls."""

from __future__ import annotations

from codemods.engine.rule import Example, Rule, example

THIRD_PARTY_CUDA = Rule(
    "XLA004",
    "third-party-cuda",
    "error",
    "A third-party API that runs only on CUDA (DeepSpeed, Apex, bitsandbytes, flash-attn, xformers, Triton "
    "kernels, timm's CUDA scalers)",
    False,
    why="These libraries call CUDA kernels or CUDA's gradient scaler directly: on an XLA machine they fail, "
    "or silently do nothing. One table (codemods/apis.py: THIRD_PARTY and THIRD_PARTY_MODULES) names each "
    "API or module with its XLA alternative, or none: torch.nn.functional.scaled_dot_product_attention (or "
    "torch_xla's flash_attention kernel on TPU) for flash-attn and xformers attention, torch.optim.AdamW or "
    "torch_xla.amp.syncfree for fused and 8-bit optimizers, torch.autocast for Apex AMP, the xla process group "
    "for DeepSpeed and Apex multi-GPU code, torch operations for Triton kernels. Each use is reported at its "
    "line. Imports of other third-party packages never need converting.",
    examples=(Example("import torch\nfrom apex import amp\nmodel, optimizer = amp.initialize(model, optimizer)\n"),),
)

FUSED_OPTIMIZER = Rule(
    "XLA212", "fused-optimizer", "error", "`fused=True` on a torch.optim optimizer is removed: the fused kernels refuse XLA tensors", True,
    why="torch.optim's fused kernels take CUDA and CPU tensors only: on torch_xla 2.9 the first step raises "
    "`RuntimeError: fused=True requires all the params to be floating point Tensors of supported devices` "
    "(checked for SGD, Adam, AdamW; `foreach=True` and Adam's `capturable=True` run). Without it the optimizer "
    "computes the same update with its default implementation. A `fused=` value that is not a literal True "
    "is reported. (Under AMP the optimizer becomes sync-free and the keyword goes there: XLA206.)",
    examples=(
        example(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
            """,
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
            """,
        ),
    ),
)

CUDA_SYNCHRONIZE = Rule(
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
)

CUDA_NO_EFFECT = Rule(
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
)

CUDA_MEMORY_STATS = Rule(
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
)

CUDA_OOM = Rule(
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
)

CUDA_SEED = Rule(
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
)

CUDA_API = Rule(
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
)

RULES = (THIRD_PARTY_CUDA, FUSED_OPTIMIZER, CUDA_SYNCHRONIZE, CUDA_NO_EFFECT, CUDA_MEMORY_STATS, CUDA_OOM, CUDA_SEED, CUDA_API)
