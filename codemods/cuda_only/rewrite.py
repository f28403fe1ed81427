"""``fused=True`` on a torch.optim optimizer is removed (XLA212): the fused kernels take
CUDA and CPU tensors only.  CUDA and NCCL environment variables the script sets are
reported (XLA502): XLA's runtime reads them only on NVIDIA GPUs."""

from __future__ import annotations

import libcst as cst

from codemods.cuda_only.rules import CUDA_NO_EFFECT, FUSED_OPTIMIZER
from codemods.distributed.rules import XLA_RANKS
from codemods.engine.nodes import without_args
from codemods.engine.rewriter import Concern, Context

_FUSED_ERROR = "RuntimeError: `fused=True` requires all the params to be floating point Tensors of supported devices"


class CudaOnlyRewrite(Concern):
    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        part = self.facts.cuda_only
        # By id: every hot Name, Subscript and Call is looked up (CSTNode hashing is Python code).
        self.environment = {id(node): name for node, name in part.environment.items()}
        self.count_uses = {id(node): assignment for node, assignment in part.launcher_count_uses.items()}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        self._environment(original)  # os.environ.setdefault("NCCL_...", ...)
        fused = self.facts.cuda_only.fused_optimizers.get(original)
        if fused is None:
            return updated
        code = self.ctx.code(fused).rstrip(",").strip()
        literal_true = isinstance(fused.value, cst.Name) and fused.value.value == "True"
        if not literal_true or len(updated.args) != len(original.args):
            self.ctx.report(
                FUSED_OPTIMIZER, fused,
                f"`{code}`: a fused optimizer kernel refuses XLA tensors ({_FUSED_ERROR}); make sure "
                "it is False on XLA (the default implementation computes the same update)",
            )
            return updated
        at = original.args.index(fused)
        new = self.ctx.fix(
            FUSED_OPTIMIZER, fused,
            f"removed `{code}`: the fused kernel refuses XLA tensors ({_FUSED_ERROR}); the default "
            "implementation computes the same update",
            lambda: updated.with_changes(args=without_args(list(updated.args), [at])),
        )
        return new if new is not None else updated

    def _environment(self, original: cst.CSTNode) -> None:
        name = self.environment.get(id(original))
        if name is not None:
            target = self.ctx.target
            where = ("the SageMaker Training Compiler's GPU containers: there it still applies); on TPU, Trainium or "
                     "CPU it has no effect" if target.nccl_collectives
                     else f"torch_xla {target.torch_xla_version} has no CUDA device of its own: PJRT_DEVICE takes "
                     "CPU, TPU or NEURON); it has no effect")
            self.ctx.report(
                CUDA_NO_EFFECT, original,
                f"`{self.ctx.code(original)}` sets {name}, a CUDA or NCCL setting: XLA's runtime reads "
                f"it only on NVIDIA GPUs ({where}",
            )

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        assignment = self.count_uses.get(id(original))
        if assignment is not None:
            self.ctx.report(
                XLA_RANKS, original,
                f"`{original.value}` here is the CUDA device count (`{self.ctx.code(assignment.value)}`), "
                f"0 on an XLA machine: the workers read the XLA world size ({self.ctx.target.api('world_size').spelled}()), "
                "but the launching process "
                "still sees 0; compute what needs it inside the workers",
            )
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.Subscript:
        self._environment(original)
        return updated
