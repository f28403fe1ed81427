"""XLA821-XLA822: Lightning and Fabric (rewrite.py; names checked against
Lightning 2.6.6)."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

LIGHTNING_XLA = Rule(
    "XLA821", "lightning-xla", "error",
    'Lightning Trainer and Fabric arguments that select CUDA and NCCL take Lightning\'s XLA names: accelerator '
    '"tpu", strategy "xla" (Fabric\'s FSDP: "xla_fsdp"), 16-bit and mixed precision "bf16-true"', True,
    why="Lightning 2.6.6 registers its XLA accelerator as \"tpu\" and its XLA strategies as \"xla\" (and, in "
    "Fabric, \"xla_fsdp\"); with accelerator=\"gpu\" and strategy=\"ddp\" it looks for CUDA and NCCL and stops. "
    "On its XLA accelerator Lightning does the XLA work itself (MpDeviceLoader, DistributedSampler, "
    "xm.optimizer_step, step barriers, one process per device), so in a Lightning or Fabric file the tool adds "
    "none of those; device code of the script's own (.cuda(), torch.cuda.*) is ported as anywhere. Lightning's "
    "XLAPrecision takes 32-true, 16-true or bf16-true and raises on mixed precision (\"16-mixed\", "
    "\"bf16-mixed\"): 16-bit training becomes \"bf16-true\" (XLA_USE_BF16), the precision XLA devices compute "
    "in. The values are changed where they "
    "are written: in the call, in a name bound once, or in an argparse flag's default.",
    examples=(example(
        """
        import lightning as L

        trainer = L.Trainer(accelerator="gpu", devices=8, strategy="ddp", precision="16-mixed")
        """,
        """
        import lightning as L

        trainer = L.Trainer(accelerator="tpu", devices=8, strategy="xla", precision="bf16-true")
        """,
    ),),
)

LIGHTNING_MANUAL = Rule(
    "XLA822", "lightning-manual", "error",
    "Lightning settings with no XLA form (DeepSpeed, DataParallel, the Trainer's FSDP, Transformer Engine) or "
    "that the tool cannot follow", False,
    why="Lightning raises on them with its XLA accelerator, or they keep selecting CUDA: choose the XLA "
    "strategy and precision by hand.",
    examples=(example(
        """
        import lightning as L

        trainer = L.Trainer(accelerator="tpu", strategy="deepspeed_stage_2")
        """,
    ),),
)

RULES = (LIGHTNING_XLA, LIGHTNING_MANUAL)
