"""XLA510 sparse-tensors: XLA cannot hold a sparse tensor: moving one to the device raises
NotImplementedError (the SparseXLA backend has no sparse kernels), and so does a sparse product
with an operand on the device.  Reported at the move or the product."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A graph cell: its support made sparse with the script's device, multiplied in a helper the forward calls.
_DIFFUSION_CELL = """
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class DiffusionCell(nn.Module):
    def __init__(self, index, values, shape):
        super().__init__()
        self.support = torch.sparse_coo_tensor(index, values, shape, device=device)
        self.weight = nn.Parameter(torch.randn(shape[1], 4))

    def _gconv(self, x):
        return torch.sparse.mm(self.support, x) @ self.weight

    def forward(self, x):
        return torch.tanh(self._gconv(x))
"""
_DIFFUSION_CELL_PORTED = substituted(
    _DIFFUSION_CELL,
    ("from torch import nn\n", "from torch import nn\nimport torch_xla\n"),
    ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
)
# GRAND's load_data: the helper binds the sparse tensor to a name and returns it in a tuple; the
# script unpacks the tuple and moves the adjacency under its CUDA flag.
_RETURNED_IN_A_TUPLE = """
import torch


def to_sparse(indices, values, n):
    return torch.sparse.FloatTensor(indices, values, torch.Size([n, n]))


def load_data(indices, values, n):
    A = to_sparse(indices, values, n)
    features = torch.ones(n, 4)
    return A, features


A, features = load_data(indices, values, n)
if args.cuda:
    features = features.cuda()
    A = A.cuda()
"""
# KGAT's shape: a sparse placeholder held as a Parameter, its data set from the loader, the module
# moved whole; the forward multiplies it with torch.matmul.
_SPARSE_PARAMETER = """
import torch
from torch import nn


class GraphModel(nn.Module):
    def __init__(self, n, adjacency):
        super().__init__()
        self.emb = nn.Embedding(n, 8)
        self.A = nn.Parameter(torch.sparse.FloatTensor(n, n))
        self.A.data = adjacency
        self.A.requires_grad = False

    def forward(self, idx):
        return torch.matmul(self.A, self.emb.weight)[idx].sum()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = GraphModel(n, adjacency)
model.to(device)
"""
# A sparse buffer of a submodule, the outer module moved with .cuda().
_SPARSE_BUFFER = """
import torch as T
from torch import nn, sparse_coo_tensor as coo


class Graph(nn.Module):
    def __init__(self, index, values, n):
        super().__init__()
        self.register_buffer("adj", coo(index, values, (n, n)).coalesce())

    def forward(self, x):
        return T.mm(self.adj, x)


class Net(nn.Module):
    def __init__(self, index, values, n):
        super().__init__()
        self.graph = Graph(index, values, n)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.graph(x))


net = Net(index, values, n).cuda()
"""
_ALIASED = (
    ("from torch import nn\n", "from torch import nn\nfrom torch import smm, sparse_coo_tensor as coo\n"),
    ("torch.sparse_coo_tensor(", "coo("),
    ("torch.sparse.mm(self.support, x)", "x.to_sparse() + smm(self.support, x)"),
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
    "the model's tensors are on the device, or in a function a forward calls (`self._gconv(x)`), as is "
    "`x.to_sparse()` there; so is a sparse tensor made on the device (`torch.sparse_coo_tensor(i, v, shape, "
    "device=device)` where `device` is, or becomes after the port, the XLA device). A sparse tensor is followed through `.coalesce()` (and the other methods that keep it sparse), through attributes (`self.Graph = torch.sparse.FloatTensor(...)`, then `self.Graph.coalesce().to(device)`) and through functions of the file or of another project module that return one (`self._convert_sp_mat_to_sp_tensor(adj).coalesce().to(device)`), made in the return or bound to a name in the function first (`adj = to_sparse(...)`, `return adj`), also as an element of a returned tuple the caller unpacks (GRAND's `return A, features`, then `A, features = load_data(...)`, `A = A.cuda()`); a move to the CPU is left alone. A module holding a sparse tensor as a Parameter or a buffer (`self.A = nn.Parameter(torch.sparse.FloatTensor(n, n))`, then `self.A.data = adjacency`; `self.register_buffer('adj', sparse)`), or holding a submodule that does, takes it to the device when it moves (`model.to(device)`, also of a class of another project module): the move is reported, and so is the Parameter or buffer where a move of its class's module is seen; a plain attribute stays on the CPU (module moves skip it). `torch.matmul` / `torch.mm` with an operand a sparse attribute of the class (`torch.matmul(self.A, x)`) in a forward is a sparse product too (it raises likewise). The move is still ported (a kept `.cuda()` raises without CUDA too, and a move to a device variable goes to XLA with the variable): the error says it crashes. The tool does not densify it: later sparse-only calls (`A._indices()`, `torch.sparse.sum`) would break and a dense adjacency costs n^2 memory. Densify the tensor before the move (`adj.to_dense()`) and multiply "
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
            from torch import nn


            class Dense(nn.Module):
                def __init__(self, adjacency):
                    super().__init__()
                    self.A = nn.Parameter(adjacency.to_sparse().to_dense(), requires_grad=False)
                    self.kept = torch.sparse.FloatTensor(4, 4)

                def degree(self):
                    return torch.matmul(self.kept, torch.ones(4, 1))

                def forward(self, x):
                    return torch.matmul(self.A, x)


            class Host(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.A = nn.Parameter(torch.sparse.FloatTensor(n, n), requires_grad=False)


            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = Dense(adjacency).to(device)
            host = Host(4).to("cpu")
            """,
            """
            import torch
            from torch import nn
            import torch_xla


            class Dense(nn.Module):
                def __init__(self, adjacency):
                    super().__init__()
                    self.A = nn.Parameter(adjacency.to_sparse().to_dense(), requires_grad=False)
                    self.kept = torch.sparse.FloatTensor(4, 4)

                def degree(self):
                    return torch.matmul(self.kept, torch.ones(4, 1))

                def forward(self, x):
                    return torch.matmul(self.A, x)


            class Host(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.A = nn.Parameter(torch.sparse.FloatTensor(n, n), requires_grad=False)


            device = torch_xla.device()
            model = Dense(adjacency).to(device)
            host = Host(4).to("cpu")
            """,
            note="a-dense-parameter-a-plain-sparse-attribute-off-the-forward-a-sparse-module-kept-on-the-cpu",
        ),
        valid(
            """
            import torch

            adj = torch.sparse_coo_tensor(indices, values, (n, n)).to_dense()
            degree = torch.sparse.sum(stats, dim=1)
            product = torch.spmm(adj_cpu, features_cpu)
            """,
            note="dense-or-host",
        ),
        valid(
            """
            import torch


            def to_sparse(index, data, shape):
                return torch.sparse_coo_tensor(index, data, shape)


            def dense(index, data, shape):
                return to_sparse(index, data, shape).to_dense()


            device = torch.device("cuda")
            adj = to_sparse(index, data, shape)
            kept = adj.coalesce().to("cpu")
            adj = adj.to_dense()
            adj = adj.to(device)
            values = dense(index, data, shape).to(device)
            """,
            """
            import torch
            import torch_xla


            def to_sparse(index, data, shape):
                return torch.sparse_coo_tensor(index, data, shape)


            def dense(index, data, shape):
                return to_sparse(index, data, shape).to_dense()


            device = torch_xla.device()
            adj = to_sparse(index, data, shape)
            kept = adj.coalesce().to("cpu")
            adj = adj.to_dense()
            adj = adj.to(device)
            values = dense(index, data, shape).to(device)
            """,
            note="moved-to-the-cpu-or-densified-first",
        ),
        valid(
            """
            import torch
            from torch import nn

            host = torch.device("cpu")


            class Cell(nn.Module):
                def __init__(self, index, values, shape):
                    super().__init__()
                    self.support = torch.sparse_coo_tensor(index, values, shape, device=host).to_dense()
                    self.kept = torch.sparse_coo_tensor(index, values, shape, device="cpu")

                def summary(self, x):
                    return torch.sparse.mm(self.kept, x)

                def forward(self, x):
                    return self.support @ x.cpu().to_sparse().to_dense()
            """,
            note="made-on-the-cpu-and-multiplied-outside-the-forward",
        ),
        valid(
            substituted(
                _RETURNED_IN_A_TUPLE,
                ("    return A, features\n", "    A = A.to_dense()\n    return A, features\n"),
                ("A.cuda()", "A.to_dense().cuda()"),
            ),
            substituted(
                _RETURNED_IN_A_TUPLE,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                ("    return A, features\n", "    A = A.to_dense()\n    return A, features\n"),
                ("A.cuda()", "A.to_dense().cuda()"),
                (".cuda()", ".to(torch_xla.device())"),
            ),
            note="a-returned-name-densified-before-the-return",
        ),
        valid(
            substituted(
                _RETURNED_IN_A_TUPLE,
                ("    return A, features\n", "    return features, A\n"),
                ("    features = features.cuda()\n", ""),
            ),
            substituted(
                _RETURNED_IN_A_TUPLE,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                ("    return A, features\n", "    return features, A\n"),
                ("    features = features.cuda()\n", ""),
                (".cuda()", ".to(torch_xla.device())"),
            ),
            note="the-moved-name-unpacks-the-dense-element",
        ),
    ),
    invalid=lambda: (
        invalid(
            _SPARSE_PARAMETER,
            substituted(
                _SPARSE_PARAMETER,
                ("from torch import nn\n", "from torch import nn\nimport torch_xla\n"),
                ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
            ),
            note="a-sparse-parameter-moved-with-its-module",
            findings=(
                Expected(
                    10,
                    18,
                    "`self.A` of `GraphModel` holds a sparse tensor as a Parameter or buffer, and `model.to(device)` "
                    "moves the module to the XLA device: that raises NotImplementedError",
                ),
                Expected(15, 16, "`torch.matmul` multiplies a sparse tensor"),
                Expected(
                    20,
                    1,
                    "`model` (a `GraphModel`) holds a sparse tensor in `self.A`, a Parameter or buffer, which moves "
                    "with the module: moving it to the XLA device raises NotImplementedError",
                ),
            ),
        ),
        invalid(
            _SPARSE_BUFFER,
            substituted(
                _SPARSE_BUFFER,
                ("sparse_coo_tensor as coo\n", "sparse_coo_tensor as coo\nimport torch_xla.core.xla_model as xm\n"),
                (".cuda()", ".to(xm.xla_device())"),
            ),
            target="sagemaker",
            alias=True,
            note="a-sparse-buffer-of-a-submodule-moved-with-the-outer-module-sagemaker",
            findings=(
                Expected(9, 9, "`self.adj` of `Graph` holds a sparse tensor as a Parameter or buffer"),
                Expected(12, 16, "`T.mm` multiplies a sparse tensor"),
                Expected(25, 7, "`Net(index, values, n)` (a `Net`) holds a sparse tensor in `self.graph.adj`"),
            ),
        ),
        invalid(
            """
            import torch


            def load_adj(i, v, n):
                adj = torch.sparse.FloatTensor(i, v, torch.Size([n, n]))
                adj = adj.coalesce()
                return adj


            A = load_adj(i, v, n)
            A = A.cuda()
            """,
            """
            import torch
            import torch_xla


            def load_adj(i, v, n):
                adj = torch.sparse.FloatTensor(i, v, torch.Size([n, n]))
                adj = adj.coalesce()
                return adj


            A = load_adj(i, v, n)
            A = A.to(torch_xla.device())
            """,
            note="a-helper-binds-the-sparse-tensor-to-a-name-and-returns-it",
            findings=(Expected(12, 5, "`A` holds a sparse tensor, which XLA cannot hold"),),
        ),
        invalid(
            _RETURNED_IN_A_TUPLE,
            substituted(
                _RETURNED_IN_A_TUPLE,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                (".cuda()", ".to(torch_xla.device())"),
            ),
            note="a-helper-returns-the-sparse-tensor-in-a-tuple-the-script-unpacks",
            findings=(Expected(18, 9, "`A` holds a sparse tensor, which XLA cannot hold"),),
        ),
        invalid(
            substituted(
                _RETURNED_IN_A_TUPLE,
                ("import torch\n", "import torch as T\nfrom torch import sparse_csr_tensor as csr\n"),
                ("torch.sparse.FloatTensor(indices, values, torch.Size([n, n]))", "csr(indices, values, values)"),
                ("torch.ones", "T.ones"),
                ("    A = to_sparse(indices, values, n)\n", "    A = T.ones(n, n).to_sparse()\n"),
            ),
            substituted(
                _RETURNED_IN_A_TUPLE,
                (
                    "import torch\n",
                    "import torch as T\nfrom torch import sparse_csr_tensor as csr\nimport torch_xla.core.xla_model as xm\n",
                ),
                ("torch.sparse.FloatTensor(indices, values, torch.Size([n, n]))", "csr(indices, values, values)"),
                ("torch.ones", "T.ones"),
                ("    A = to_sparse(indices, values, n)\n", "    A = T.ones(n, n).to_sparse()\n"),
                (".cuda()", ".to(xm.xla_device())"),
            ),
            target="sagemaker",
            alias=True,
            note="a-tuple-element-made-sparse-by-to-sparse-aliases-sagemaker",
            findings=(Expected(19, 9, "`A` holds a sparse tensor, which XLA cannot hold"),),
        ),
        invalid(
            _DIFFUSION_CELL,
            _DIFFUSION_CELL_PORTED,
            note="made-on-the-device-and-multiplied-in-a-helper-of-the-forward",
            findings=(
                Expected(
                    11,
                    24,
                    "`torch.sparse_coo_tensor(..., device=device)` makes a sparse tensor on the XLA device (`device` "
                    "after the port): it raises NotImplementedError",
                ),
                Expected(15, 16, "`torch.sparse.mm` multiplies a sparse tensor"),
            ),
        ),
        invalid(
            substituted(_DIFFUSION_CELL, *_ALIASED),
            substituted(
                _DIFFUSION_CELL_PORTED,
                *_ALIASED,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            alias=True,
            note="made-on-the-device-and-converted-in-a-helper-of-the-forward-sagemaker",
            findings=(
                Expected(12, 24, "`coo(..., device=device)` makes a sparse tensor on the XLA device"),
                Expected(16, 16, "`x.to_sparse()` makes a sparse tensor in a forward (or a function a forward calls)"),
                Expected(16, 32, "`smm` multiplies a sparse tensor"),
            ),
        ),
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
        invalid(
            """
            import torch


            class Loader:
                def __init__(self, device):
                    self.device = device
                    self.graph = None

                def _to_sparse(self, index, data, shape):
                    return torch.sparse.FloatTensor(index, data, torch.Size(shape))

                def graph_of(self, index, data, shape):
                    self.graph = self._to_sparse(index, data, shape)
                    self.graph = self.graph.coalesce().to(self.device)
                    return self.graph

                def folds(self, parts):
                    return [self._to_sparse(*part).coalesce().to(self.device) for part in parts]


            loader = Loader(torch.device("cuda"))
            """,
            """
            import torch
            import torch_xla


            class Loader:
                def __init__(self, device):
                    self.device = device
                    self.graph = None

                def _to_sparse(self, index, data, shape):
                    return torch.sparse.FloatTensor(index, data, torch.Size(shape))

                def graph_of(self, index, data, shape):
                    self.graph = self._to_sparse(index, data, shape)
                    self.graph = self.graph.coalesce().to(self.device)
                    return self.graph

                def folds(self, parts):
                    return [self._to_sparse(*part).coalesce().to(self.device) for part in parts]


            loader = Loader(torch_xla.device())
            """,
            note="returned-by-a-method-then-coalesced-and-moved",
            findings=(
                Expected(15, 22, "`self.graph` holds a sparse tensor, which XLA cannot hold"),
                Expected(19, 17, "`self._to_sparse(*part)` returns a sparse tensor"),
            ),
        ),
        invalid(
            """
            import torch as T
            from torch import sparse_coo_tensor as coo


            def graph(index, data, n):
                return coo(index, data, (n, n))


            g = graph(index, data, n).coalesce().cuda()
            h = T.randn(n, n).to_sparse()
            h = h.double().cuda()
            """,
            """
            import torch as T
            from torch import sparse_coo_tensor as coo
            import torch_xla


            def graph(index, data, n):
                return coo(index, data, (n, n))


            g = graph(index, data, n).coalesce().to(torch_xla.device())
            h = T.randn(n, n).to_sparse()
            h = h.double().to(torch_xla.device())
            """,
            alias=True,
            note="sparse-constructor-through-aliases",
            findings=(
                Expected(10, 5, "`graph(index, data, n)` returns a sparse tensor"),
                Expected(12, 5, "`h` holds a sparse tensor"),
            ),
        ),
    ),
)


_SPARSE_BACKEND = "the SparseXLA backend has no sparse kernels"


@reports_facts(SPARSE_TENSORS, nodes=lambda facts: facts.cuda_only.sparse_moves)
def _sparse_move(ctx: Context[Facts], original: cst.Call) -> str:
    held, returned = ctx.facts.cuda_only.sparse_moves[original]
    return (
        f"`{held}` {'returns' if returned else 'holds'} a sparse tensor, which XLA cannot hold: moving it to "
        f"the device raises NotImplementedError ({_SPARSE_BACKEND}); densify it first (`{held}"
        ".to_dense()`), and use torch.mm on the dense tensor"
    )


@reports_facts(
    SPARSE_TENSORS,
    nodes=lambda facts: [call for call in facts.cuda_only.sparse_products if call not in facts.cuda_only.sparse_moves],
)
def _sparse_product(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original.func)}` multiplies a sparse tensor: with an operand on the XLA device it raises "
        f"NotImplementedError ({_SPARSE_BACKEND}), even with the sparse one on the CPU; use torch.mm (or @) on a "
        "dense tensor moved to the device"
    )


@reports_facts(SPARSE_TENSORS, nodes=lambda facts: facts.cuda_only.sparse_conversions)
def _sparse_conversion(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original)}` makes a sparse tensor in a forward (or a function a forward calls), where the "
        f"model's tensors are on the XLA device: it raises NotImplementedError ({_SPARSE_BACKEND}); keep the "
        "tensor dense and use torch.mm (or @)"
    )


@reports_facts(SPARSE_TENSORS, nodes=lambda facts: facts.cuda_only.sparse_creations)
def _sparse_creation(ctx: Context[Facts], original: cst.Call) -> str:
    device = ctx.facts.cuda_only.sparse_creations[original]
    return (
        f"`{ctx.code(original.func)}(..., device={device})` makes a sparse tensor on the XLA device (`{device}` "
        f"after the port): it raises NotImplementedError ({_SPARSE_BACKEND}); make it dense "
        f"(`{ctx.code(original.func)}(...).to_dense()` on the CPU, then move it) and use torch.mm (or @)"
    )


@reports_facts(SPARSE_TENSORS, nodes=lambda facts: facts.cuda_only.sparse_module_moves)
def _sparse_module_move(ctx: Context[Facts], original: cst.Call) -> str:
    moved, owner, attribute = ctx.facts.cuda_only.sparse_module_moves[original]
    return (
        f"`{moved}` (a `{owner}`) holds a sparse tensor in `{attribute}`, a Parameter or buffer, which moves with "
        f"the module: moving it to the XLA device raises NotImplementedError ({_SPARSE_BACKEND}); densify it "
        f"before the move (`{attribute}.to_dense()`), or keep it out of the module's parameters and buffers"
    )


@reports_facts(SPARSE_TENSORS, nodes=lambda facts: facts.cuda_only.sparse_held)
def _sparse_held(ctx: Context[Facts], original: cst.Call) -> str:
    owner, attribute, move = ctx.facts.cuda_only.sparse_held[original]
    return (
        f"`{attribute}` of `{owner}` holds a sparse tensor as a Parameter or buffer, and `{move}` moves the module "
        f"to the XLA device: that raises NotImplementedError ({_SPARSE_BACKEND}); make it dense "
        "(`.to_dense()`) and multiply with torch.mm (or @)"
    )
