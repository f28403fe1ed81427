"""``fused=True`` on a torch.optim optimizer is removed (XLA212): the fused kernels take
CUDA and CPU tensors only; so is ``sparse=True`` on an embedding (XLA507): sparse gradients
do not run on XLA, and torch.optim.SparseAdam, which needs them, is reported.  CUDA and NCCL environment variables the script sets are
reported (XLA502): XLA's runtime reads them only on NVIDIA GPUs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.cuda_only.facts import SparseParameter
from codemods.cuda_only.held_conditions import StandsIfCalledWithSparse, passing_true
from codemods.cuda_only.rules.xla212_fused_optimizer import FUSED_OPTIMIZER
from codemods.cuda_only.rules.xla502_cuda_no_effect import CUDA_NO_EFFECT
from codemods.cuda_only.rules.xla507_sparse_gradients import SPARSE_GRADIENTS
from codemods.cuda_only.rules.xla509_cuda_string_argument import CUDA_STRING_ARGUMENT
from codemods.cuda_only.rules.xla510_sparse_tensors import SPARSE_TENSORS
from codemods.cuda_only.rules.xla512_compiled_extension_op import COMPILED_EXTENSION_OP
from codemods.distributed.rules.xla602_xla_ranks import XLA_RANKS
from codemods.engine.nodes import is_true, quoted_like, without_args
from codemods.engine.rewriter import Concern, Context
from codemods.engine.rule import Rule

if TYPE_CHECKING:
    from codemods.facts import Facts

_FUSED_ERROR = "RuntimeError: `fused=True` requires all the params to be floating point Tensors of supported devices"
_SPARSE_BACKEND = "the SparseXLA backend has no sparse kernels"
_SPARSE_ERROR = (
    "the backward raises NotImplementedError: no aten::_sparse_coo_tensor_with_dims_and_tensors for SparseXLA"
)


_EXTENSION_ADVICE = (
    "a model whose forward runs it fails at its first training step on XLA; write the op in torch operations "
    "(XLA compiles those), or keep this layer out of the model trained on XLA"
)


class CudaOnlyRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        part = self.facts.cuda_only
        # By id: every visited Name, Subscript and Call is looked up (CSTNode hashing is Python code).
        self.environment = {id(node): name for node, name in part.environment.items()}
        self.count_uses = {id(node): assignment for node, assignment in part.launcher_count_uses.items()}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        self._environment(original)  # os.environ.setdefault("NCCL_...", ...)
        part = self.facts.cuda_only
        extension = part.extension_ops.get(original)
        if extension is not None:
            self.ctx.report(
                COMPILED_EXTENSION_OP,
                original,
                f"`{self.ctx.code(original.func)}(...)` runs an op of a compiled extension ({extension}), which raises on XLA "
                f"tensors: {_EXTENSION_ADVICE}",
            )
        if original in part.sparse_optimizers:
            self.ctx.report(
                SPARSE_GRADIENTS,
                original,
                f"`{self.ctx.code(original.func)}` needs sparse gradients, which XLA does not make (an Embedding's "
                "sparse backward does not run, an EmbeddingBag's falls back to a dense gradient): it raises "
                '"SparseAdam does not support dense gradients"; use torch.optim.Adam (it updates every row at each '
                "step where SparseAdam updates only the rows looked up, so the results differ)",
            )
        if original in part.sparse_moves:
            held, returned = part.sparse_moves[original]
            self.ctx.report(
                SPARSE_TENSORS,
                original,
                f"`{held}` {'returns' if returned else 'holds'} a sparse tensor, which XLA cannot hold: moving it to "
                f"the device raises NotImplementedError ({_SPARSE_BACKEND}); densify it first (`{held}"
                ".to_dense()`), and use torch.mm on the dense tensor",
            )
        elif original in part.sparse_products:
            self.ctx.report(
                SPARSE_TENSORS,
                original,
                f"`{self.ctx.code(original.func)}` multiplies a sparse tensor: with an operand on the XLA device it raises "
                f"NotImplementedError ({_SPARSE_BACKEND}), even with the sparse one on the CPU; use torch.mm (or @) on a "
                "dense tensor moved to the device",
            )
        fused = part.fused_optimizers.get(original)
        if fused is not None:
            return self._without_keyword(
                FUSED_OPTIMIZER,
                original,
                updated,
                fused,
                f"the fused kernel refuses XLA tensors ({_FUSED_ERROR})",
                "the default implementation computes the same update",
            )
        sparse = part.sparse_embeddings.get(original)
        if sparse is not None and (parameter := part.sparse_parameters.get(original)) is not None:
            self._sparse_parameter(sparse, parameter)
        elif sparse is not None:
            return self._without_keyword(
                SPARSE_GRADIENTS,
                original,
                updated,
                sparse,
                f"sparse gradients do not run on XLA ({_SPARSE_ERROR})",
                "with a dense gradient SGD without momentum or weight decay, and Adagrad, update the same rows the same way",
            )
        return updated

    def _sparse_parameter(self, arg: cst.Arg, parameter: SparseParameter) -> None:
        """``sparse=sparse``, a parameter that defaults to False: an error only where a call
        may pass something else (here, or in another file of the run: held until the run's
        files are seen, StandsIfCalledWithSparse), or where no call is in sight."""
        code = self.ctx.code(arg).rstrip(",").strip()
        head = (
            f"`{code}`: sparse gradients do not run on XLA ({_SPARSE_ERROR}); `{parameter.parameter}` of "
            f"`{parameter.function}` defaults to False"
        )
        if parameter.passed_here:
            self.ctx.report(
                SPARSE_GRADIENTS,
                arg,
                passing_true(head, f"{', '.join(parameter.passed_here)} here"),
            )
        elif self.facts.project.context.imported_in_run():
            self.ctx.report(
                SPARSE_GRADIENTS,
                arg,
                head,  # the condition names the calls that may pass True, if the run has any
                held=StandsIfCalledWithSparse(parameter.function),
            )
        elif not parameter.called_here:
            self.ctx.report(
                SPARSE_GRADIENTS,
                arg,
                f"{head}, and no file of this run calls it (a run on the project folder checks its callers): "
                "make sure its callers pass False on XLA",
            )

    def _without_keyword(
        self, rule: Rule, original: cst.Call, updated: cst.Call, arg: cst.Arg, why: str, without: str
    ) -> cst.BaseExpression:
        """Removes ``keyword=True`` (``arg``) from the call; any other value is reported."""
        code = self.ctx.code(arg).rstrip(",").strip()
        if not is_true(arg.value) or len(updated.args) != len(original.args):
            self.ctx.report(rule, arg, f"`{code}`: {why}; make sure it is False on XLA ({without})")
            return updated
        at = original.args.index(arg)
        return self.ctx.fix_or_keep(
            updated,
            rule,
            arg,
            f"removed `{code}`: {why}; {without}",
            lambda: updated.with_changes(args=without_args(list(updated.args), [at])),
        )

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        handed = self.facts.cuda_only.handed_strings.get(original.value)
        if handed is None:
            return updated
        code = self.ctx.code(original.value)
        device = self.ctx.target.device_string
        if not handed.converted or type(original.value) is not cst.SimpleString:
            self.ctx.report(
                CUDA_STRING_ARGUMENT,
                original.value,
                f"{code} handed to `{handed.callee}`: {handed.said}; on XLA there is no CUDA device, so where it "
                f'is a device there it fails: hand it "{device}" (the XLA device) for those uses',
            )
            return updated
        new = self.ctx.fix(
            CUDA_STRING_ARGUMENT,
            original.value,
            f"{code} -> {{new}}: {handed.said}, which is the XLA device now",
            lambda: quoted_like(original.value, device),
        )
        return updated.with_changes(value=new) if new is not None else updated

    def _environment(self, original: cst.CSTNode) -> None:
        name = self.environment.get(id(original))
        if name is not None:
            target = self.ctx.target
            where = (
                "the SageMaker Training Compiler's GPU containers: there it still applies); on TPU, Trainium or "
                "CPU it has no effect"
                if target.nccl_collectives
                else f"torch_xla {target.torch_xla_version} has no CUDA device of its own: PJRT_DEVICE takes "
                "CPU, TPU or NEURON); it has no effect"
            )
            self.ctx.report(
                CUDA_NO_EFFECT,
                original,
                f"`{self.ctx.code(original)}` sets {name}, a CUDA or NCCL setting: XLA's runtime reads "
                f"it only on NVIDIA GPUs ({where}",
            )

    def leave_UnaryOperation(self, original: cst.UnaryOperation, updated: cst.UnaryOperation) -> cst.BaseExpression:
        test = self.facts.cuda_only.cuda_only_forwards.get(original)
        if test is not None and isinstance(original.expression, cst.Attribute):
            tensor = self.ctx.code(original.expression.value)
            self.ctx.report(
                COMPILED_EXTENSION_OP,
                original,
                f"`forward` raises unless `{tensor}` is a CUDA tensor (`{test}`), which an XLA tensor never is (a "
                f"layer built on a CUDA extension, most often): {_EXTENSION_ADVICE}",
            )
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        assignment = self.count_uses.get(id(original))
        if assignment is not None:
            self.ctx.report(
                XLA_RANKS,
                original,
                f"`{original.value}` here is the CUDA device count (`{self.ctx.code(assignment.value)}`), "
                f"0 on an XLA machine: the workers read the XLA world size ({self.ctx.target.api('world_size').spelled}()), "
                "but the launching process "
                "still sees 0; compute what needs it inside the workers",
            )
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.Subscript:
        self._environment(original)
        return updated
