"""XLA004, XLA212, XLA5: CUDA-only libraries, fused kernels and CUDA runtime calls."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

THIRD_PARTY_CUDA = Rule(
    code="XLA004",
    name="third-party-cuda",
    severity="error",
    summary="A third-party API that runs only on CUDA (DeepSpeed, Apex, bitsandbytes, flash-attn, xformers, Triton "
    "kernels, timm's CUDA scalers, TorchRec's model parallelism, ColossalAI)",
    fixable=False,
    why="These libraries call CUDA kernels or CUDA's gradient scaler directly: on an XLA machine they fail, "
    "or silently do nothing. One table (codemods/cuda_only/source_apis.py: THIRD_PARTY and THIRD_PARTY_MODULES) names each "
    "API or module with its XLA alternative, or none: torch.nn.functional.scaled_dot_product_attention (or "
    "torch_xla's flash_attention kernel on TPU) for flash-attn and xformers attention, torch.optim.AdamW or "
    "torch_xla.amp.syncfree for fused and 8-bit optimizers, torch.autocast for Apex AMP, the xla process group "
    "for DeepSpeed and Apex multi-GPU code, torch operations for Triton kernels, unsharded embedding tables and "
    "DDP or torch_xla's FSDP for TorchRec's DistributedModelParallel and sharding planner, DDP over the xla process "
    "group or torch_xla's FSDP for ColossalAI's Booster. Each use is reported at its "
    "line. Imports of other third-party packages never need converting.",
    examples=lambda: (
        Invalid(
            "import torch\nfrom apex import amp\nmodel, optimizer = amp.initialize(model, optimizer)\n",
            findings=(Expected(3, 20, "`amp.initialize` is NVIDIA Apex mixed precision, which runs only on CUDA"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from colossalai_notes import Booster

            booster = Booster(plugin=plugin)
            """,
            note="not-colossalai",
        ),
        valid(
            """
            import torch
            from timm.scheduler import create_scheduler
            from transformers import get_scheduler

            scheduler, _ = create_scheduler(args, optimizer)
            lr_scheduler = get_scheduler("linear", optimizer, num_warmup_steps=0, num_training_steps=10)
            """,
            note="schedulers-need-nothing",
        ),
        valid(
            """
            import torch
            import torch.nn.functional as F

            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            """,
            note="torch-alternatives",
        ),
    ),
    invalid=lambda: (
        *(
            invalid(
                """
                import colossalai
                from colossalai.booster import Booster
                from colossalai.booster.plugin import GeminiPlugin as Gemini

                colossalai.launch_from_torch()
                booster = Booster(plugin=Gemini())
                model, optimizer, _, loader, _ = booster.boost(model, optimizer, dataloader=loader)
                """,
                target=target,
                alias=True,
                note=f"colossalai-booster-{target}",
                findings=(
                    Expected(5, 1, "`colossalai.launch_from_torch` is ColossalAI, whose accelerators are CUDA, NPU"),
                    Expected(6, 11, "`Booster` is ColossalAI's Booster"),
                    Expected(6, 26, "`Gemini` is ColossalAI's Booster"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch
            from apex import amp

            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            """,
            findings=(Expected(4, 20, "`amp.initialize` is NVIDIA Apex mixed precision, which runs only on CUDA"),),
        ),
        invalid(
            """
            import torch
            import timm.utils as tu

            loss_scaler = tu.NativeScaler()
            """,
            alias=True,
            findings=(Expected(4, 15, "`tu.NativeScaler` builds a CUDA gradient scaler inside timm"),),
        ),
        invalid(
            """
            import deepspeed
            import torch
            import bitsandbytes as bnb
            from apex.optimizers import FusedLAMB
            from deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam

            deepspeed.init_distributed()
            optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-3)
            proj = bnb.nn.Linear4bit(64, 64)
            lamb = FusedLAMB(model.parameters())
            offload = DeepSpeedCPUAdam(model.parameters())
            fused = FusedAdam(model.parameters())
            engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=cfg)
            """,
            note="deepspeed-apex-bitsandbytes",
            findings=(
                Expected(7, 1, "NCCL process group"),
                Expected(8, 13, "8-bit optimizer"),
                Expected(9, 8, "quantized layer"),
                Expected(10, 8, "Apex CUDA kernel"),
                Expected(11, 11, "DeepSpeed CUDA/CPU optimizer kernel"),
                Expected(12, 9, "DeepSpeed CUDA/CPU optimizer kernel"),
                Expected(13, 27, "DeepSpeed, which does not run on XLA"),
            ),
        ),
        invalid(
            """
            import torch
            import triton
            import triton.language as tl
            import xformers.ops as xops
            from flash_attn import flash_attn_func


            @triton.jit
            def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
                offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * 2, mask=offsets < n)


            y = flash_attn_func(q, k, v, causal=True)
            z = xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())
            """,
            note="kernels-and-attention",
            findings=(
                Expected(8, 2, "Triton GPU kernel"),
                Expected(14, 5, "scaled_dot_product_attention"),
                Expected(15, 5, "`xops.memory_efficient_attention` is an xformers CUDA kernel"),
                Expected(15, 56, "`xops.LowerTriangularMask` is an xformers CUDA kernel"),
            ),
        ),
        invalid(
            """
            import torch
            import flash_attn.flash_attn_interface as fai
            from bitsandbytes.optim import Adam8bit as EightBitAdam

            out = fai.flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_len, max_len)
            optimizer = EightBitAdam(model.parameters())
            """,
            note="module-alias",
            alias=True,
            findings=(Expected(5, 7, "FlashAttention"), Expected(6, 13, "8-bit optimizer")),
        ),
        invalid(
            """
            import torch
            from torchrec.distributed.model_parallel import DistributedModelParallel
            from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology

            planner = EmbeddingShardingPlanner(topology=Topology(world_size=8, compute_device="cuda"))
            model = DistributedModelParallel(module=model, device=device, plan=planner.collective_plan(model))
            """,
            note="torchrec-model-parallel",
            findings=(
                Expected(5, 11, "`EmbeddingShardingPlanner` is TorchRec's model parallelism"),
                Expected(5, 45, "`Topology` is TorchRec's model parallelism"),
                Expected(6, 9, "`DistributedModelParallel` is TorchRec's model parallelism"),
            ),
        ),
    ),
)

FUSED_OPTIMIZER = Rule(
    code="XLA212",
    name="fused-optimizer",
    severity="error",
    summary="`fused=True` on a torch.optim optimizer is removed: the fused kernels refuse XLA tensors",
    fixable=True,
    why="torch.optim's fused kernels take CUDA and CPU tensors only: on torch_xla 2.9 the first step raises "
    "`RuntimeError: fused=True requires all the params to be floating point Tensors of supported devices` "
    "(checked for SGD, Adam, AdamW; `foreach=True` and Adam's `capturable=True` run). Without it the optimizer "
    "computes the same update with its default implementation. A `fused=` value that is not a literal True "
    "is reported. (Under AMP the optimizer becomes sync-free and the keyword goes there: XLA206.)",
    examples=lambda: (
        invalid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
            """,
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
            """,
            findings=(Expected(3, 60, "removed `fused=True`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=False, foreach=True)
            opt = FusedOptimizer(model.parameters(), fused=True)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), fused=True)
            sgd = torch.optim.SGD(model.parameters(), lr=0.1, fused=use_fused)
            """,
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95))
            sgd = torch.optim.SGD(model.parameters(), lr=0.1, fused=use_fused)
            """,
            findings=(Expected(3, 79, "removed `fused=True`"), Expected(4, 51, "make sure it is False on XLA")),
        ),
        invalid(
            """
            from torch import optim as O

            optimizer = O.Adam(params, fused=True)
            """,
            """
            from torch import optim as O

            optimizer = O.Adam(params)
            """,
            alias=True,
            findings=(Expected(3, 28, "removed `fused=True`"),),
        ),
    ),
)

SPARSE_GRADIENTS = Rule(
    code="XLA507",
    name="sparse-gradients",
    severity="error",
    summary="Sparse gradients do not run on XLA: `sparse=True` on an embedding is removed, torch.optim.SparseAdam is reported",
    fixable=True,
    why="On torch_xla 2.9 the backward of `nn.Embedding(..., sparse=True)` (and `F.embedding(..., sparse=True)`, "
    "`Embedding.from_pretrained(..., sparse=True)`) raises `NotImplementedError: Could not run "
    "'aten::_sparse_coo_tensor_with_dims_and_tensors' with arguments from the 'SparseXLA' backend` at the first "
    "step. Without `sparse=True` the gradient is dense: plain SGD (no momentum, no weight decay) and Adagrad "
    "update the rows looked up exactly as before and leave the others alone. `nn.EmbeddingBag(..., sparse=True)` "
    "is left as it is: torch_xla falls back to a dense gradient there (with a warning) and trains. "
    "`torch.optim.SparseAdam` accepts only sparse gradients, so on XLA it raises `SparseAdam does not support "
    "dense gradients` at its first step; torch.optim.Adam is the replacement, but it updates every row at each "
    "step (SparseAdam only the rows looked up), so the results differ: it is reported, not replaced. A `sparse=` "
    "value that is not a literal True is reported. Checked on torch_xla 2.9 with PJRT_DEVICE=CPU.",
    examples=lambda: (
        invalid(
            """
            import torch

            embedding = torch.nn.Embedding(50000, 128, sparse=True)
            """,
            """
            import torch

            embedding = torch.nn.Embedding(50000, 128)
            """,
            findings=(Expected(3, 44, "removed `sparse=True`: sparse gradients do not run on XLA"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            bag = torch.nn.EmbeddingBag(50000, 128, mode="sum", sparse=True)
            embedding = torch.nn.Embedding(50000, 128, sparse=False)
            table = Embedding(50000, 128, sparse=True)
            optimizer = torch.optim.Adagrad(bag.parameters(), lr=0.1)
            """,
            note="bag-dense-fallback",
        ),
        valid(
            """
            import torch

            bag = torch.nn.EmbeddingBag(50000, 128, mode="sum", sparse=True)
            """,
            target="sagemaker",
            note="bag-sagemaker",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.nn.functional as F
            from torch import nn as N
            from torch.optim import SparseAdam

            users = N.Embedding(1000, 32, padding_idx=0, sparse=True)
            items = N.Embedding.from_pretrained(weights, sparse=args.sparse)
            vectors = F.embedding(ids, weight, sparse=True)
            optimizer = SparseAdam(list(users.parameters()), lr=0.01)
            """,
            """
            import torch.nn.functional as F
            from torch import nn as N
            from torch.optim import SparseAdam

            users = N.Embedding(1000, 32, padding_idx=0)
            items = N.Embedding.from_pretrained(weights, sparse=args.sparse)
            vectors = F.embedding(ids, weight)
            optimizer = SparseAdam(list(users.parameters()), lr=0.01)
            """,
            alias=True,
            findings=(
                Expected(5, 46, "removed `sparse=True`"),
                Expected(6, 46, "`sparse=args.sparse`: sparse gradients do not run on XLA"),
                Expected(7, 36, "removed `sparse=True`"),
                Expected(8, 13, "`SparseAdam` needs sparse gradients, which XLA does not make"),
            ),
        ),
        invalid(
            """
            import torch

            model = torch.nn.Embedding(50000, 128, sparse=True).cuda()
            optimizer = torch.optim.SparseAdam(model.parameters())
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            model = torch.nn.Embedding(50000, 128).to(xm.xla_device())
            optimizer = torch.optim.SparseAdam(model.parameters())
            """,
            target="sagemaker",
            note="sagemaker-embedding",
            findings=(
                Expected(4, 40, "removed `sparse=True`"),
                Expected(5, 13, "`torch.optim.SparseAdam` needs sparse gradients"),
            ),
        ),
    ),
)

CUDA_SYNCHRONIZE = Rule(
    code="XLA501",
    name="cuda-synchronize",
    severity="error",
    summary="`torch.cuda.synchronize()` becomes `xm.wait_device_ops()`",
    fixable=True,
    why="`torch.cuda.synchronize()` raises without CUDA; `xm.wait_device_ops()` waits for the XLA device's "
    "pending work, which is what timing code around it needs.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(4, 1, "torch.cuda.synchronize() -> xm.wait_device_ops()"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            note="already-xla",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            torch.cuda.synchronize()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            findings=(Expected(4, 1, "torch.cuda.synchronize() -> xm.wait_device_ops()"),),
        ),
        invalid(
            """
            import time
            import torch

            start = time.time()
            out = model(x)
            torch.cuda.synchronize()  # wait for the kernels
            print(f"forward took {time.time() - start:.3f}s")
            """,
            """
            import time
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            start = time.time()
            out = model(x)
            torch_xla.sync()
            xm.wait_device_ops()  # wait for the kernels
            print(f"forward took {time.time() - start:.3f}s")
            """,
            note="timing-needs-the-barrier-first",
            findings=(
                Expected(9, 1, "torch.cuda.synchronize() before reading a clock -> xm.wait_device_ops() (after"),
            ),
        ),
        invalid(
            """
            import torch

            torch.cuda.synchronize(device)
            """,
            note="with-argument-reported",
            findings=(Expected(3, 1, "`torch.cuda.synchronize(device)`"),),
        ),
        invalid(
            """
            import torch as th

            th.cuda.synchronize()
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            alias=True,
            findings=(Expected(4, 1, "th.cuda.synchronize() -> xm.wait_device_ops()"),),
        ),
    ),
)

CUDA_NO_EFFECT = Rule(
    code="XLA502",
    name="cuda-no-effect",
    severity="info",
    summary="CUDA-only setting with no effect on XLA (empty_cache, cudnn flags, pin_memory) is removed",
    fixable=True,
    why="cuDNN flags, pinned memory and the CUDA caching allocator do not exist on an XLA device, so the setting "
    "does nothing there. It is removed where deleting it is safe (a statement that only sets or calls it, a "
    "keyword of a torch API) and reported elsewhere (a dict of loader options, a value computed by a call). A "
    "tensor's `.pin_memory()`, which raises without CUDA, becomes the tensor itself. "
    'Also reported: CUDA and NCCL environment variables the script sets (`os.environ["NCCL_DEBUG"] = ...`: '
    "XLA reads them only on NVIDIA GPUs) and the profiler's `ProfilerActivity.CUDA`, which records nothing "
    "without CUDA (torch_xla.debug.profiler profiles the XLA device). The attention-kernel switches "
    "(`torch.backends.cuda.enable_flash_sdp`, `enable_mem_efficient_sdp`, `enable_math_sdp`, "
    "`enable_cudnn_sdp`, the `sdp_kernel(...)` context manager, and `torch.nn.attention.sdpa_kernel(...)`, "
    "which picks the backends by `SDPBackend`) are such settings too: in torch 2.9 they set flags of the "
    "process, without CUDA, and torch_xla's scaled_dot_product_attention ignores them (checked: the same "
    'result with every kernel switched off, where the CPU would raise "No viable backend"; under '
    "`sdpa_kernel(SDPBackend.FLASH_ATTENTION)` or `EFFICIENT_ATTENTION`, attention on the XLA device gives "
    "the result it gives outside the context manager, and runs with a boolean mask (which CUDA's flash "
    'kernel refuses: "Flash Attention does not support non-null attn_mask"), dropout and the backward '
    "pass); removed like the cuDNN flags, and a `with sdp_kernel(...)` or `with sdpa_kernel(...)` is reported.",
    examples=lambda: (
        invalid(
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
            findings=(
                Expected(4, 1, "removed `torch.backends.cudnn.benchmark = True`"),
                Expected(4, 45, "removed `pin_memory=True`"),
            ),
        ),
        invalid(
            """
            import torch

            loader_options = {"num_workers": 4, "pin_memory": True}
            """,
            findings=(Expected(3, 37, "`pin_memory=True` has no effect on an XLA device; remove it"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            loader = DataLoader(ds, pin_memory=False)
            """,
        ),
        valid(
            """
            import os
            import torch

            os.environ["PJRT_DEVICE"] = "TPU"
            level = os.environ.get("NCCL_DEBUG", "WARN")
            """,
            note="xla-environment",
        ),
        valid(
            """
            import torch
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                step()
            """,
            note="profiler-cpu-only",
        ),
        valid(
            """
            import torch
            import torch.nn.functional as F
            from torch.nn.attention import SDPBackend

            from mylib.attention import sdpa_kernel

            backend = SDPBackend.FLASH_ATTENTION
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q, k, v)
            """,
            note="sdpa-kernel-of-another-library",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            torch.backends.cuda.enable_flash_sdp(True)
            torch.backends.cuda.enable_math_sdp(False)
            with torch.backends.cuda.sdp_kernel(enable_math=False):
                out = attend(q, k, v)
            """,
            """
            import torch

            with torch.backends.cuda.sdp_kernel(enable_math=False):
                out = attend(q, k, v)
            """,
            note="attention-kernel-switches",
            findings=(
                Expected(3, 1, "removed `torch.backends.cuda.enable_flash_sdp(True)`: no effect on an XLA device"),
                Expected(3, 1, "removed `torch.backends.cuda.enable_math_sdp(False)`"),
                Expected(
                    3, 6, "`torch.backends.cuda.sdp_kernel` picks among CUDA's kernels for scaled_dot_product_attention"
                ),
            ),
        ),
        invalid(
            """
            import torch
            from torch.backends import cuda as backends_cuda
            from torch.backends.cuda import enable_mem_efficient_sdp

            backends_cuda.enable_flash_sdp(True)
            enable_mem_efficient_sdp(False)
            model = build()
            """,
            """
            import torch

            model = build()
            """,
            note="attention-kernel-switches-imported",
            alias=True,
            findings=(
                Expected(3, 1, "removed `backends_cuda.enable_flash_sdp(True)`: no effect on an XLA device"),
                Expected(3, 1, "removed `enable_mem_efficient_sdp(False)`: no effect on an XLA device"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.nn.functional as F
            from torch.nn.attention import sdpa_kernel, SDPBackend

            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                out = F.scaled_dot_product_attention(q, k, v)
            with torch.nn.attention.sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
                out = F.scaled_dot_product_attention(q, k, v)
            """,
            note="sdpa-kernel-context-manager",
            alias=True,
            findings=(
                Expected(5, 6, "`sdpa_kernel` picks the backends of scaled_dot_product_attention"),
                Expected(7, 6, "`torch.nn.attention.sdpa_kernel` picks the backends of scaled_dot_product_attention"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            torch.backends.cudnn.benchmark = True
            loader = DataLoader(ds, batch_size=8, pin_memory=True)
            if args.clear:
                torch.cuda.empty_cache()
            """,
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=8)
            if args.clear:
                pass
            """,
            note="removed",
            findings=(
                Expected(4, 1, "removed `torch.backends.cudnn.benchmark = True`"),
                Expected(4, 39, "removed `pin_memory=True`"),
                Expected(6, 5, "removed `torch.cuda.empty_cache()`"),
            ),
        ),
        *(
            invalid(
                """
                import torch

                for epoch in range(epochs):
                    train(epoch)

                    torch.cuda.empty_cache()
                for epoch in range(epochs):
                    evaluate(epoch)
                    # free the cache
                    torch.cuda.empty_cache()
                """,
                """
                import torch

                for epoch in range(epochs):
                    train(epoch)
                for epoch in range(epochs):
                    evaluate(epoch)
                    # free the cache
                """,
                target=target,
                note=f"removed-last-of-a-block-{target}",
                findings=(
                    Expected(5, 5, "removed `torch.cuda.empty_cache()`"),
                    Expected(7, 5, "removed `torch.cuda.empty_cache()`"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch

            kwargs = {'num_workers': 1, 'pin_memory': True}
            loader = make_loader(ds, pin_memory=True)
            torch.backends.cudnn.benchmark = choose_benchmark()
            if torch.backends.cudnn.benchmark:
                print("benchmark mode")
            """,
            note="reported-where-removal-is-not-safe",
            findings=(
                Expected(3, 29, "`pin_memory=True` has no effect on an XLA device; remove it"),
                Expected(4, 26, "`pin_memory=True` has no effect on an XLA device; remove it"),
                Expected(5, 1, "`torch.backends.cudnn.benchmark` has no effect on an XLA device; remove it"),
                Expected(6, 4, "`torch.backends.cudnn.benchmark` has no effect on an XLA device; remove it"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.backends.cudnn as cudnn
            from torch.cuda import empty_cache
            from torch.utils import data

            cudnn.benchmark = True; empty_cache()
            loader = data.DataLoader(
                ds,
                shuffle=True,
                pin_memory=True,
            )
            """,
            """
            import torch
            from torch.utils import data

            loader = data.DataLoader(
                ds,
                shuffle=True,
            )
            """,
            alias=True,
            findings=(
                Expected(4, 1, "removed `cudnn.benchmark = True`"),
                Expected(4, 25, "removed `empty_cache()`"),
                Expected(7, 5, "removed `pin_memory=True`"),
            ),
        ),
        invalid(
            """
            import os
            import torch

            os.environ["NCCL_DEBUG"] = "INFO"
            os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
            """,
            note="nccl-environment",
            findings=(Expected(4, 1, "sets NCCL_DEBUG"), Expected(5, 1, "sets TORCH_NCCL_ASYNC_ERROR_HANDLING")),
        ),
        invalid(
            """
            import torch
            from os import environ

            environ["NCCL_IB_DISABLE"] = "1"
            """,
            note="environ-alias",
            alias=True,
            findings=(Expected(4, 1, "sets NCCL_IB_DISABLE"),),
        ),
        invalid(
            """
            import torch
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                step()
            """,
            note="profiler-cuda-activity",
            findings=(Expected(4, 48, "torch_xla.debug.profiler"),),
        ),
    ),
)

CUDA_MEMORY_STATS = Rule(
    code="XLA503",
    name="cuda-memory-stats",
    severity="info",
    summary="CUDA memory statistics read 0 on XLA: use xm.get_memory_info(device)",
    fixable=False,
    why="CUDA memory counters read 0 on an XLA machine, so what they log means nothing there; "
    "`xm.get_memory_info(device)` reports the XLA device's memory.",
    examples=lambda: (
        invalid(
            """
            import torch

            print(f"memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
            """,
            findings=(Expected(3, 18, "`torch.cuda.max_memory_allocated` reads 0 on an XLA device; use"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            print(xm.get_memory_info(device))
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            print(torch.cuda.memory_allocated() / 2**20)
            """,
            findings=(Expected(3, 7, "`torch.cuda.memory_allocated` reads 0 on an XLA device; use"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import max_memory_allocated as peak

            print(peak())
            """,
            alias=True,
            findings=(
                Expected(4, 7, "`peak` reads 0 on an XLA device; use xm.get_memory_info(device) for XLA memory"),
            ),
        ),
    ),
)

CUDA_OOM = Rule(
    code="XLA504",
    name="cuda-oom",
    severity="warning",
    summary="`torch.cuda.OutOfMemoryError` is never raised on XLA",
    fixable=False,
    why="XLA reports running out of device memory as a RuntimeError (RESOURCE_EXHAUSTED), never as "
    "`torch.cuda.OutOfMemoryError`: the handler never runs, and the script stops where it used to recover.",
    examples=lambda: (
        invalid(
            """
            import torch

            try:
                loss = train_step(batch)
            except torch.cuda.OutOfMemoryError:
                skipped += 1
            """,
            findings=(Expected(5, 8, "`torch.cuda.OutOfMemoryError` is never raised on XLA"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            try:
                step()
            except RuntimeError:
                shrink_batch()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            try:
                step()
            except torch.cuda.OutOfMemoryError:
                shrink_batch()
            """,
            findings=(Expected(5, 8, "`torch.cuda.OutOfMemoryError` is never raised on XLA"),),
        ),
        invalid(
            """
            import torch as th

            try:
                step()
            except th.cuda.OutOfMemoryError:
                pass
            """,
            alias=True,
            findings=(Expected(5, 8, "`th.cuda.OutOfMemoryError` is never raised on XLA"),),
        ),
    ),
)

CUDA_SEED = Rule(
    code="XLA505",
    name="cuda-seed",
    severity="warning",
    summary="CUDA RNG seeding does not seed the XLA device: use xm.set_rng_state(seed)",
    fixable=False,
    why="CUDA seeding calls leave the XLA device's generator alone, so dropout and random initialisation on the "
    "device ignore the seed; `xm.set_rng_state(seed)` seeds it.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.manual_seed(args.seed)
            torch.cuda.manual_seed_all(args.seed)
            """,
            findings=(Expected(4, 1, "`torch.cuda.manual_seed_all` seeds only CUDA generators; seed the XLA device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            torch.manual_seed(args.seed)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            torch.cuda.manual_seed_all(args.seed)
            """,
            findings=(Expected(3, 1, "`torch.cuda.manual_seed_all` seeds only CUDA generators; seed the XLA device"),),
        ),
        invalid(
            """
            import torch.cuda as tc

            tc.manual_seed(1)
            """,
            alias=True,
            findings=(Expected(3, 1, "`tc.manual_seed` seeds only CUDA generators; seed the XLA device with"),),
        ),
    ),
)

CUDA_API = Rule(
    code="XLA506",
    name="cuda-api",
    severity="error",
    summary="CUDA-only API with no XLA equivalent",
    fixable=False,
    why="Most torch.cuda APIs raise without CUDA (device names and properties, streams, events, graphs); the "
    "others return values that mislead the script (a device count of 0). torch.nn.SyncBatchNorm is reported "
    "too: it takes CUDA and XPU tensors only, and raises on XLA ones once a process group is started. Each needs a person's decision: "
    "remove it, guard it, or use the XLA equivalent.",
    examples=lambda: (
        invalid(
            """
            import torch

            print("training on", torch.cuda.get_device_name(0))
            """,
            findings=(
                Expected(
                    3, 22, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA; remove it or guard it"
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            print(torch.__version__)
            """,
        ),
        valid(
            """
            import torch

            if torch.cuda.is_available():
                start = torch.cuda.Event(enable_timing=True)
            """,
            note="under-cuda-check",
        ),
        valid(
            """
            import torch

            if torch.cuda.is_available() and args.verbose:
                print(torch.cuda.get_device_name(0))
            """,
            target="sagemaker",
            note="under-cuda-check-sagemaker",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            print(torch.cuda.get_device_name(0))
            """,
            findings=(
                Expected(
                    3, 7, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA; remove it or guard it"
                ),
            ),
        ),
        invalid(
            """
            import torch

            state = torch.cuda.get_rng_state()
            """,
            note="any-other-torch-cuda-api",
            findings=(Expected(3, 9, "`torch.cuda.get_rng_state` is CUDA-only; remove it or guard it"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import device_count

            ngpus = device_count()
            """,
            alias=True,
            findings=(
                Expected(4, 9, "`device_count` is CUDA-only and has no XLA equivalent here; remove it or guard it"),
            ),
        ),
        invalid(
            """
            import torch

            start = torch.cuda.Event(enable_timing=True)
            """,
            note="event-timing",
            findings=(Expected(3, 9, "xm.wait_device_ops() and time.perf_counter()"),),
        ),
    ),
)

CUDA_API_BEHIND_SWITCH = Rule(
    code="XLA508",
    name="cuda-api-behind-switch",
    severity="warning",
    summary="CUDA-only API that runs only when a command-line switch, off by default, is given",
    fixable=False,
    why="A CUDA runtime call in the body of `if args.profile:` (a `store_true` switch, or one whose default is "
    "False) does not run when the converted script is started as it is by default, so it is no error there; with "
    "the switch given it raises on XLA (CUDA events, device properties) or reads a CUDA value of no meaning. It is "
    "reported as a warning so that the switch is ported or documented. Under a CUDA availability check that "
    "stays (`if torch.cuda.is_available():`, False on XLA) such a call never runs on XLA: nothing is said of it "
    "beside the check's own finding (XLA105). Any other guard leaves the call an error (XLA506).",
    examples=lambda: (
        invalid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--profile", action="store_true")
            args = parser.parse_args()

            for step in range(10):
                if args.profile:
                    start = torch.cuda.Event(enable_timing=True)
                    start.record()
                train_step()
            """,
            findings=(
                Expected(
                    11,
                    17,
                    "`torch.cuda.Event` runs only when `args.profile` is switched on (it is off by "
                    "default): it times CUDA streams and raises without CUDA",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def train(model, loader, optimizer):
                for x in loader:
                    if torch.cuda.is_available():
                        start = torch.cuda.Event(enable_timing=True)
                        start.record()
                        print(torch.cuda.get_device_name(0))
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def train(model, loader, optimizer):
                for x in loader:
                    if torch.cuda.is_available():
                        start = torch.cuda.Event(enable_timing=True)
                        start.record()
                        print(torch.cuda.get_device_name(0))
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="under-cuda-check",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import argparse

            from torch.cuda import Event


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--time-steps", dest="timing", default=False)
                parser.add_argument("--log", action="store_true", default=True)
                opts = parser.parse_args()
                if opts.timing and opts.log:
                    start = Event(enable_timing=True)
                if opts.log:
                    end = Event(enable_timing=True)
            """,
            alias=True,
            findings=(Expected(12, 17, "`Event` runs only when `opts.timing` is switched on"),),
        ),
        invalid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--profile", action="store_true")
            args = parser.parse_args()

            if args.profile:
                print(torch.cuda.get_device_properties(0))
            """,
            target="sagemaker",
            note="switch-sagemaker",
            findings=(
                Expected(10, 11, "`torch.cuda.get_device_properties` runs only when `args.profile` is switched on"),
            ),
        ),
    ),
)

CUDA_STRING_ARGUMENT = Rule(
    code="XLA509",
    name="cuda-string-argument",
    severity="error",
    summary='A "cuda" string handed to a class or function of the project: followed into it, made "xla" where it '
    "is only a device there, else reported",
    fixable=True,
    why='The device rewrites turn "cuda" into the XLA device where a device goes (`.to()`, `device=`, a device '
    'variable). A "cuda" handed to the project\'s own code (`make_buffer(8, "cuda")`, '
    '`MemoryMonitor("cuda")`) goes wherever that code sends it: into `torch.zeros(..., device=device)` it '
    "fails on XLA. A callable of the file is followed: where its parameter (or the `self` attribute it is stored "
    'in) is used only as a device (`device=`, `.to()`, `torch.device()`), the string becomes "xla"; where it is '
    "used as a device and otherwise too (a CUDA memory statistic that needs the CUDA name), it is reported; where "
    "it is never a device (statistics only, a log line), nothing is said here (those uses have their own "
    "findings). A callable of another module is not followed: reported.",
    examples=lambda: (
        invalid(
            """
            import torch


            def make_buffer(size, device):
                return torch.zeros(size, device=device)


            buffer = make_buffer(8, "cuda")
            """,
            """
            import torch


            def make_buffer(size, device):
                return torch.zeros(size, device=device)


            buffer = make_buffer(8, "xla")
            """,
            findings=(Expected(8, 25, '"cuda" -> "xla": `make_buffer` uses its `device` only as a device'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            class MemoryMonitor:
                def __init__(self, device):
                    self.device = device

                def peak(self):
                    return torch.cuda.max_memory_allocated(self.device)


            monitor = MemoryMonitor("cuda")
            print(format_name("cuda"))
            """,
            note="never-a-device",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from utils.monitor import MemoryMonitor as Monitor


            class Cache:
                def __init__(self, size, device="cpu"):
                    self.device = device
                    self.table = torch.zeros(size).to(self.device)

                def stats(self):
                    return torch.cuda.memory_allocated(self.device)


            cache = Cache(16, "cuda")
            monitor = Monitor("cuda")
            """,
            alias=True,
            findings=(
                Expected(14, 19, "`Cache` uses its `device` as a device and otherwise too"),
                Expected(15, 19, "`Monitor` comes from `utils.monitor`, which this file does not follow"),
            ),
        ),
        invalid(
            """
            import torch


            class Probe:
                def __init__(self, device):
                    self.device = torch.device(device)


            probe = Probe("cuda:0")
            """,
            """
            import torch


            class Probe:
                def __init__(self, device):
                    self.device = torch.device(device)


            probe = Probe("xla")
            """,
            target="sagemaker",
            note="class-sagemaker",
            findings=(Expected(9, 15, '-> "xla": `Probe` uses its `device` only as a device'),),
        ),
    ),
)

SPARSE_TENSORS = Rule(
    code="XLA510",
    name="sparse-tensors",
    severity="error",
    summary="Sparse tensors do not run on XLA: moving one to the device, or a sparse product in a model's forward",
    fixable=False,
    why="torch_xla 2.9 has no sparse kernels (checked with PJRT_DEVICE=CPU): `adj.to(device)` on a sparse COO "
    "tensor raises `NotImplementedError: Could not run 'aten::_sparse_coo_tensor_with_dims_and_tensors' with "
    "arguments from the 'SparseXLA' backend`, and `torch.spmm` / `torch.sparse.mm` with an operand on the XLA "
    "device raise likewise, even when the sparse tensor stays on the CPU. Graph models (GCN's normalised "
    "adjacency) hit both: the move of a name assigned a sparse tensor (`torch.sparse_coo_tensor`, "
    "`torch.sparse.FloatTensor`, `.to_sparse()`) is reported, and so is a sparse product in a `forward`, where "
    "the model's tensors are on the device. Densify the tensor before the move (`adj.to_dense()`) and multiply "
    "with `torch.mm` or `@`: XLA runs dense products well (a dense adjacency costs n^2 memory).",
    examples=lambda: (
        invalid(
            """
            import torch

            adj = torch.sparse_coo_tensor(indices, values, (n, n))
            adj = adj.cuda()
            """,
            """
            import torch
            import torch_xla

            adj = torch.sparse_coo_tensor(indices, values, (n, n))
            adj = adj.to(torch_xla.device())
            """,
            findings=(Expected(5, 7, "`adj` holds a sparse tensor, which XLA cannot hold"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            adj = torch.sparse_coo_tensor(indices, values, (n, n)).to_dense()
            degree = torch.sparse.sum(stats, dim=1)
            product = torch.spmm(adj_cpu, features_cpu)
            """,
            note="dense-or-host",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from torch import nn


            class GraphConvolution(nn.Module):
                def forward(self, x, adj):
                    support = x @ self.weight
                    return torch.sparse.mm(adj, support)


            adj = features.to_sparse()
            adj = adj.to(device)
            """,
            target="sagemaker",
            alias=True,
            note="gcn-sagemaker",
            findings=(
                Expected(8, 16, "`torch.sparse.mm` multiplies a sparse tensor"),
                Expected(12, 7, "`adj` holds a sparse tensor"),
            ),
        ),
    ),
)

RULES = (
    THIRD_PARTY_CUDA,
    FUSED_OPTIMIZER,
    CUDA_SYNCHRONIZE,
    SPARSE_GRADIENTS,
    CUDA_NO_EFFECT,
    CUDA_MEMORY_STATS,
    CUDA_OOM,
    CUDA_SEED,
    CUDA_API,
    CUDA_API_BEHIND_SWITCH,
    CUDA_STRING_ARGUMENT,
    SPARSE_TENSORS,
)
