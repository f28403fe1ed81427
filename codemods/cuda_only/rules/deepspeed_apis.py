"""What XLA004 knows of DeepSpeed beyond its prefix: the queries of its state that are plain
Python (they run on any host and answer False where DeepSpeed was never set up, as on XLA, where
what would set it up is reported), and its kernels (``deepspeed.ops``) by what each computes,
with the torch code that replaces it; with their cases (both targets, aliases)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# Plain-Python queries of DeepSpeed's state: deepspeed/comm/comm.py ``is_initialized`` answers
# ``cdb is not None and cdb.is_initialized()`` (cdb is set only by ``init_distributed``, reported);
# deepspeed/runtime/activation_checkpointing/checkpointing.py ``is_configured`` returns the flag that
# only ``checkpointing.configure`` sets; the version strings are module attributes.  A script asks
# them to choose its DeepSpeed path, which on XLA it then does not take.
STATE_QUERIES = frozenset(
    {
        "deepspeed.comm.is_initialized",
        "deepspeed.comm.comm.is_initialized",
        "deepspeed.checkpointing.is_configured",
        "deepspeed.runtime.activation_checkpointing.checkpointing.is_configured",
        "deepspeed.__version__",
        "deepspeed.__version_major__",
        "deepspeed.__version_minor__",
        "deepspeed.__version_patch__",
        "deepspeed.version",
        "deepspeed.git_version_info.version",
    }
)

_OPTIMIZER = (
    "is a DeepSpeed CUDA/CPU optimizer kernel (FusedAdam, DeepSpeedCPUAdam, FusedLamb): use torch.optim.AdamW, or "
    "torch_xla.amp.syncfree.AdamW under AMP"
)

# deepspeed.ops by what each kernel computes (the longest prefix wins, as in XLA004's table).
OPS: dict[str, str] = {
    "deepspeed.ops.": (
        "is a DeepSpeed kernel (deepspeed.ops: compiled CUDA/CPU extensions), which has no XLA kernel; XLA "
        "alternative: the computation written in torch operations"
    ),
    "deepspeed.ops.adam.": _OPTIMIZER,
    "deepspeed.ops.lamb.": _OPTIMIZER,
    "deepspeed.ops.lion.": _OPTIMIZER,
    "deepspeed.ops.adagrad.": _OPTIMIZER,
    "deepspeed.ops.deepspeed4science.": (
        "is DeepSpeed4Science's EvoformerAttention, a CUDA attention kernel (CUTLASS), not an optimizer: take the "
        "plain attention path, softmax(q @ k^T / sqrt(d) + sum of the biases) @ v in torch operations, which XLA "
        "fuses"
    ),
    "deepspeed.ops.transformer.": (
        "is DeepSpeed's fused transformer layer (CUDA kernels), not an optimizer: use torch.nn.TransformerEncoderLayer "
        "or the model's own layer in torch operations, which XLA fuses"
    ),
    "deepspeed.ops.sparse_attention.": (
        "is DeepSpeed's block-sparse attention (Triton kernels), not an optimizer: write the attention with "
        "torch.matmul and torch.softmax, the sparsity layout as an additive mask, which XLA compiles"
    ),
}

# openfold's primitives.py and checkpointing.py: DeepSpeed optional, asked whether it is set up.
_QUERIES = """
    import importlib

    import torch
    from packaging import version

    deepspeed_is_installed = importlib.util.find_spec("deepspeed") is not None
    if deepspeed_is_installed:
        import deepspeed


    def forward(x):
        deepspeed_is_initialized = deepspeed_is_installed and deepspeed.comm.comm.is_initialized()
        return x.float() if deepspeed_is_initialized else x


    def get_checkpoint_fn():
        if deepspeed_is_installed and deepspeed.checkpointing.is_configured():
            return None
        return torch.utils.checkpoint.checkpoint


    def new_enough():
        return version.parse(deepspeed.__version__) >= version.parse("0.10")
    """


def queries_valid() -> tuple[Valid, ...]:
    return (
        valid(_QUERIES, note="deepspeed-state-and-version-queries-are-plain-python"),
        valid(_QUERIES, target="sagemaker", note="deepspeed-state-and-version-queries-are-plain-python-sagemaker"),
        valid(
            """
            import deepspeed.comm as ds_dist
            from deepspeed import checkpointing as ds_ckpt


            def ready():
                return ds_dist.is_initialized() or ds_ckpt.is_configured()
            """,
            note="deepspeed-state-queries-aliased",
        ),
    )


def deepspeed_invalid() -> tuple[Invalid, ...]:
    attention = """
        import torch
        from deepspeed.ops.deepspeed4science import DS4Sci_EvoformerAttention
        import deepspeed


        def attend(q, k, v, biases):
            if deepspeed.comm.is_initialized():
                torch.distributed.barrier()
            o = DS4Sci_EvoformerAttention(q, k, v, biases)
            if deepspeed.checkpointing.is_configured():
                o = deepspeed.checkpointing.checkpoint(lambda t: t, o)
            return o
        """
    findings = (
        Expected(
            9,
            9,
            "`DS4Sci_EvoformerAttention` is DeepSpeed4Science's EvoformerAttention, a CUDA attention kernel (CUTLASS), "
            "not an optimizer: take the plain attention path",
        ),
        Expected(11, 13, "`deepspeed.checkpointing.checkpoint` is DeepSpeed activation checkpointing"),
    )
    return (
        invalid(attention, note="deepspeed4science-attention-kernel", findings=findings),
        invalid(attention, target="sagemaker", note="deepspeed4science-attention-kernel-sagemaker", findings=findings),
        invalid(
            """
            import deepspeed.ops as dso

            layer = dso.transformer.DeepSpeedTransformerLayer(config)
            optimizer = dso.adam.FusedAdam(model.parameters())
            """,
            alias=True,
            note="deepspeed-kernels-by-what-they-compute-alias",
            findings=(
                Expected(3, 9, "is DeepSpeed's fused transformer layer (CUDA kernels), not an optimizer"),
                Expected(4, 13, "is a DeepSpeed CUDA/CPU optimizer kernel"),
            ),
        ),
    )
