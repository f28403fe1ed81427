"""XLA510 sparse-tensors."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
