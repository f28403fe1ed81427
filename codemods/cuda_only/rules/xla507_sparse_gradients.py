"""XLA507 sparse-gradients: sparse gradients do not run on XLA: ``sparse=True`` on an embedding is
removed (with a dense gradient SGD without momentum or weight decay, and Adagrad, update the same
rows the same way), ``sparse=<parameter>`` is reported where a call may pass True (held until the
run's files are seen), and torch.optim.SparseAdam, which needs sparse gradients, is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.cuda_only.facts import SparseParameter
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# Sparse embeddings behind parameters a call may set: one input for the cases of both targets.
SPARSE_PARAMETERS_A_CALL_MAY_SET = """
import argparse

from torch import nn


class Tables(nn.Module):
    def __init__(self, n, dim, sparse=False):
        super().__init__()
        self.table = nn.Embedding(n, dim, sparse=sparse)


def build(n, *, sparse=None):
    return nn.Embedding(n, 8, sparse=sparse)


def library(n, sparse=False):
    return nn.Embedding(n, 8, sparse=sparse)


parser = argparse.ArgumentParser()
parser.add_argument("--sparse", action="store_true")
args = parser.parse_args()
tables = Tables(100, 16, args.sparse)
table = build(100, sparse=True)
"""


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
    "dense gradients` at its first step (in a file that makes no sparse embedding, where its parameters may get "
    "dense gradients on any device, the finding says so rather than blame XLA alone); torch.optim.Adam is the replacement, but it updates every row at each "
    "step (SparseAdam only the rows looked up), so the results differ: it is reported, not replaced. A `sparse=` "
    "value that is not a literal True is reported, except a parameter of the enclosing function that defaults to False (`def create_embedding_matrix(..., sparse=False)`) where every call passes False, None or nothing: the calls of the file are read, and on a run over the project those of its other files (the error then names each call that may pass True, or says that no file of the run calls the function). Checked on torch_xla 2.9 with PJRT_DEVICE=CPU.",
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
        valid(
            """
            from torch import nn


            def create_embedding_matrix(columns, init_std=0.0001, linear=False, sparse=False, device="cpu"):
                return nn.ModuleDict({c: nn.Embedding(10, 1 if linear else 4, sparse=sparse) for c in columns})


            class Base(nn.Module):
                def __init__(self, columns):
                    super().__init__()
                    self.linear = create_embedding_matrix(columns, 0.0001, True, False)
                    self.embedding_dict = create_embedding_matrix(columns, sparse=False)
                    self.plain = create_embedding_matrix(columns)
            """,
            note="a-parameter-every-call-leaves-false",
        ),
    ),
    invalid=lambda: (
        *(
            invalid(
                """
                import torch.optim as optim


                class Optimizer:
                    def __init__(self, params, kind="Adagrad"):
                        if kind == "SparseAdam":
                            self.optimizer = optim.SparseAdam(params, lr=0.01)
                        else:
                            self.optimizer = optim.Adagrad(params, lr=0.01)
                """,
                target=target,
                note=f"sparse-adam-in-a-file-without-sparse-embeddings-{target}",
                findings=(
                    Expected(
                        7,
                        30,
                        "`optim.SparseAdam` steps only sparse gradients, which only an embedding with `sparse=True` "
                        "makes, and this file makes none: where its parameters get dense gradients it raises",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
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
        invalid(
            SPARSE_PARAMETERS_A_CALL_MAY_SET,
            note="a-parameter-a-call-may-set",
            findings=(
                Expected(9, 43, "defaults to False, but `Tables(..., sparse=args.sparse)` here may pass True"),
                Expected(
                    13, 31, "`sparse` of `build` defaults to False, but `build(..., sparse=True)` here may pass True"
                ),
                Expected(17, 31, "`sparse` of `library` defaults to False, and no file of this run calls it"),
            ),
        ),
        invalid(
            SPARSE_PARAMETERS_A_CALL_MAY_SET,
            target="sagemaker",
            note="a-parameter-a-call-may-set-sagemaker",
            findings=(
                Expected(9, 43, "defaults to False, but `Tables(..., sparse=args.sparse)` here may pass True"),
                Expected(
                    13, 31, "`sparse` of `build` defaults to False, but `build(..., sparse=True)` here may pass True"
                ),
                Expected(17, 31, "`sparse` of `library` defaults to False, and no file of this run calls it"),
            ),
        ),
        invalid(
            """
            import torch.nn as N


            class Net(N.Module):
                def __init__(self, n, sparse=False):
                    super().__init__()
                    self.users = N.Embedding.from_pretrained(weights, sparse=sparse)


            net = Net(10, sparse=False)
            other = Net(10, **options)
            """,
            alias=True,
            note="a-parameter-through-aliases-and-keywords",
            findings=(
                Expected(
                    7, 59, "`sparse` of `Net.__init__` defaults to False, but `Net(10, **options)` here may pass True"
                ),
            ),
        ),
    ),
)


_SPARSE_ERROR = (
    "the backward raises NotImplementedError: no aten::_sparse_coo_tensor_with_dims_and_tensors for SparseXLA"
)


@reports_facts(SPARSE_GRADIENTS, nodes=lambda facts: facts.cuda_only.sparse_optimizers)
def _sparse_optimizer(ctx: Context[Facts], original: cst.Call) -> str:
    adam = (
        "use torch.optim.Adam (it updates every row at each step where SparseAdam updates only the rows looked up, "
        "so the results differ)"
    )
    if not ctx.facts.cuda_only.sparse_embeddings:
        # No sparse embedding here: its gradients may be dense on any device (a model of Linear and GRU layers).
        return (
            f"`{ctx.code(original.func)}` steps only sparse gradients, which only an embedding with `sparse=True` "
            'makes, and this file makes none: where its parameters get dense gradients it raises "SparseAdam does '
            'not support dense gradients" at its first step on any device, and on XLA it always does (no sparse '
            f"backward runs there, and the port removes `sparse=True` from embeddings); {adam}"
        )
    return (
        f"`{ctx.code(original.func)}` needs sparse gradients, which XLA does not make (an Embedding's "
        "sparse backward does not run, an EmbeddingBag's falls back to a dense gradient): it raises "
        f'"SparseAdam does not support dense gradients"; {adam}'
    )


@on_facts(SPARSE_GRADIENTS, nodes=lambda facts: facts.cuda_only.sparse_embeddings)
def _sparse_embedding(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    from codemods.cuda_only.rules.true_keywords import without_true_keyword

    part = ctx.facts.cuda_only
    sparse = part.sparse_embeddings[original]
    parameter = part.sparse_parameters.get(original)
    if parameter is None:
        return without_true_keyword(
            ctx,
            SPARSE_GRADIENTS,
            original,
            updated,
            sparse,
            f"sparse gradients do not run on XLA ({_SPARSE_ERROR})",
            "with a dense gradient SGD without momentum or weight decay, and Adagrad, update the same rows the same way",
        )
    _sparse_parameter(ctx, sparse, parameter)
    return updated


def _sparse_parameter(ctx: Context[Facts], arg: cst.Arg, parameter: SparseParameter) -> None:
    """``sparse=sparse``, a parameter that defaults to False: an error only where a call
    may pass something else (here, or in another file of the run: held until the run's
    files are seen, StandsIfCalledWithSparse), or where no call is in sight."""
    from codemods.cuda_only.held_conditions import StandsIfCalledWithSparse, passing_true

    code = ctx.code(arg).rstrip(",").strip()
    head = (
        f"`{code}`: sparse gradients do not run on XLA ({_SPARSE_ERROR}); `{parameter.parameter}` of "
        f"`{parameter.function}` defaults to False"
    )
    if parameter.passed_here:
        ctx.report(SPARSE_GRADIENTS, arg, passing_true(head, f"{', '.join(parameter.passed_here)} here"))
    elif ctx.facts.project.context.imported_in_run():
        # The condition names the calls that may pass True, if the run has any.
        ctx.report(SPARSE_GRADIENTS, arg, head, held=StandsIfCalledWithSparse(parameter.function))
    elif not parameter.called_here:
        ctx.report(
            SPARSE_GRADIENTS,
            arg,
            f"{head}, and no file of this run calls it (a run on the project folder checks its callers): "
            "make sure its callers pass False on XLA",
        )
