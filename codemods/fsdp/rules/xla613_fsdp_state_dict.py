"""XLA613 fsdp-state-dict: FSDP state-dict types and torch.distributed.checkpoint work on
torch's FSDP modules only: torch_xla's model.state_dict() is the process's shard, so each is
reported with how to save the shards and consolidate them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A trainer whose FSDP subclass overrides the base class's save.
_TRAINERS = """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


class Trainer:
    def __init__(self, policy):
        self.policy = policy

    def save(self, path):
        torch.save(self.policy.state_dict(), path)


class FSDPTrainer(Trainer):
    def __init__(self, policy):
        super().__init__(policy)
        self.policy = FSDP(policy)

    def save(self, path):
        torch.save(self.policy.state_dict(), path)
"""


def _ported(program: str) -> str:
    """The trainers as the port leaves them."""
    return substituted(
        program,
        (
            "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n",
            "import torch_xla.core.xla_model as xm\nimport torch_xla.distributed.fsdp as xla_fsdp\n",
        ),
        ("torch.save(", "xm.save("),
        ("FSDP(policy)", "xla_fsdp.XlaFullyShardedDataParallel(policy)"),
    )


FSDP_STATE_DICT = Rule(
    code="XLA613",
    name="fsdp-state-dict",
    severity="error",
    summary="FSDP state-dict types and torch.distributed.checkpoint work on torch's FSDP only: save each process's shard "
    "with its shard metadata, and consolidate",
    fixable=False,
    why="torch_xla's FSDP has no state-dict types: model.state_dict() is always this process's shard (flattened "
    "names, a slice of each parameter), so a checkpoint that rank 0 saved as the full model would silently hold "
    "one shard. torch_xla saves every process's shard with model.get_shard_metadata() and joins them with "
    "torch_xla.distributed.fsdp.consolidate_sharded_model_checkpoints. `self.model.state_dict()` in a method is "
    "an FSDP model's only where a class that runs the method (its own, a subclass of the file that does not "
    "override it, or a base of either) binds `self.model` to FSDP: a base trainer's `save` that the FSDP "
    "subclass overrides keeps a plain model.",
    examples=lambda: (
        invalid(
            """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType


        def save(model):
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
                torch.save(model.state_dict(), "model.pt")
        """,
            """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
        import torch_xla.core.xla_model as xm


        def save(model):
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
                xm.save(model.state_dict(), "model.pt")
        """,
            findings=(Expected(7, 10, "`FSDP.state_dict_type` works on torch's FSDP modules only"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def save(model, ema, path):
                model = FSDP(model)
                torch.save(ema.state_dict(), path)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.fsdp as xla_fsdp


            def save(model, ema, path):
                model = xla_fsdp.XlaFullyShardedDataParallel(model)
                xm.save(ema.state_dict(), path)
            """,
            note="other-model",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, FullStateDictConfig, StateDictType


            def save(model):
                config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
                with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
                    state = model.state_dict()
                return state
            """,
            note="state-dict-type",
            findings=(
                Expected(6, 14, "`FullStateDictConfig` works on torch's FSDP modules only"),
                Expected(7, 10, "`FSDP.state_dict_type` works on torch's FSDP modules only"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            class Trainer:
                def __init__(self, model):
                    self.model = FSDP(model)

                def save(self, path):
                    torch.save(self.model.state_dict(), path)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.fsdp as xla_fsdp


            class Trainer:
                def __init__(self, model):
                    self.model = xla_fsdp.XlaFullyShardedDataParallel(model)

                def save(self, path):
                    xm.save(self.model.state_dict(), path)
            """,
            note="sharded-state-dict",
            findings=(
                Expected(11, 17, "`self.model.state_dict()` of an FSDP model is this process's shard on torch_xla"),
            ),
        ),
        # A base class's method runs on the FSDP subclass only where the subclass does not override it
        # (the DPO trainers: BasicTrainer.save keeps a plain model, FSDPTrainer.save its own).
        invalid(
            _TRAINERS,
            _ported(_TRAINERS),
            note="overridden-method",
            findings=(
                Expected(20, 17, "`self.policy.state_dict()` of an FSDP model is this process's shard on torch_xla"),
            ),
        ),
        invalid(
            _TRAINERS.rsplit("\n\n    def save", 1)[0] + "\n",
            _ported(_TRAINERS.rsplit("\n\n    def save", 1)[0] + "\n"),
            note="inherited-method",
            findings=(
                Expected(11, 17, "`self.policy.state_dict()` of an FSDP model is this process's shard on torch_xla"),
            ),
        ),
        invalid(  # (torch_xla 1.13: the FSDP wrapper is ported by hand, XLA611)
            _TRAINERS,
            substituted(
                _TRAINERS,
                ("torch.save(", "xm.save("),
                ("as FSDP\n", "as FSDP\nimport torch_xla.core.xla_model as xm\n"),
            ),
            target="sagemaker",
            note="overridden-method-sagemaker",
            findings=(
                Expected(20, 17, "`self.policy.state_dict()` of an FSDP model is this process's shard on torch_xla"),
            ),
        ),
        invalid(
            """
            import torch.distributed.checkpoint as dcp
            from torch.distributed.checkpoint.state_dict import get_state_dict as state_of


            def save(model, optimizer):
                model_state, optimizer_state = state_of(model, optimizer)
                dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id="ckpt")
            """,
            note="distributed-checkpoint",
            alias=True,
            findings=(
                Expected(6, 36, "`torch.distributed.checkpoint.state_dict.get_state_dict` saves and loads"),
                Expected(
                    7, 5, "`torch.distributed.checkpoint.save` saves and loads torch's sharded (FSDP, DTensor) state"
                ),
            ),
        ),
    ),
)


@reports_facts(FSDP_STATE_DICT, nodes=lambda facts: facts.fsdp.state_dicts)
def _report(ctx: Context[Facts], original: cst.CSTNode) -> str:
    """State-dict and checkpoint code that works on torch's FSDP modules only (a call, or a
    reference to a state-dict type or a checkpoint function)."""
    rank = ctx.target.api("global_ordinal")
    shown = f"{rank.alias or rank.module}.{rank.attr}()"
    return _message(ctx.facts.fsdp.state_dicts[original], shown)


def _message(what: str, rank: str) -> str:
    if what.startswith(apis.DISTRIBUTED_CHECKPOINT):
        start = (
            f"`{what}` saves and loads torch's sharded (FSDP, DTensor) state: on torch_xla model.state_dict() is "
            "this process's shard."
        )
    elif what.endswith("()"):
        start = f"`{what}` of an FSDP model is this process's shard on torch_xla (torch's gathers the full state)."
    else:
        start = f"`{what}` works on torch's FSDP modules only: on torch_xla model.state_dict() is this process's shard."
    return (
        f"{start} Save {{'model': model.state_dict(), 'shard_metadata': model.get_shard_metadata()}} per process "
        f"(xm.save(..., f'rank{{{rank}}}.pth', master_only=False)) and join the shards with "
        "torch_xla.distributed.fsdp.consolidate_sharded_model_checkpoints"
    )
