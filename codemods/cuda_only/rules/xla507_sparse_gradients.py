"""XLA507 sparse-gradients."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
