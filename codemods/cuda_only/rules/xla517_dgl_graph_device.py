"""XLA517 dgl-graph-device: DGL knows only CPU and CUDA devices, so a DGL graph moved to the
XLA device (``g.to(torch_xla.device())``, or made there with ``device=``) raises.  Reported at
the move or the construction (dgl_graphs.py follows the graphs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A full-batch graph model's set-up: the graph built, given self-loops, then moved.
_GRAPH_SETUP = """
import dgl
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
g = dgl.graph((src, dst))
g = dgl.add_self_loop(g)
g = g.to(device)
features = features.to(device)
"""
_GRAPH_SETUP_PORTED = substituted(
    _GRAPH_SETUP,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
)
# Graphs loaded, taken from a dataset, and handed to a function that moves its parameter.
_HANDED = """
import torch
from dgl import load_graphs as load
from dgl.data import CoraGraphDataset


def prepare(graph, feats, device):
    graph = graph.to(device)
    feats = feats.to(device)
    return graph, feats


graphs, labels = load("graphs.bin")
prepare(graphs[0], labels["feat"], torch.device("cuda"))
cora = CoraGraphDataset()[0].cuda()
"""

_DGL_DEVICES = (
    "DGL knows only CPU and CUDA devices (its device context has no \"xla\" type: KeyError 'xla'); keep the "
    "graph on the CPU, with the features its message passing reads, or write the message passing with "
    "operations XLA runs (PyTorch Geometric's dense layers, or index_add/scatter on the edge index)"
)

DGL_GRAPH_DEVICE = Rule(
    code="XLA517",
    name="dgl-graph-device",
    severity="error",
    summary="A DGL graph cannot go to the XLA device: DGL knows only CPU and CUDA devices",
    fixable=False,
    why="DGL turns a torch device into a context of its own by the device's type (`utils.to_dgl_context`: "
    "`DGLContext.STR2MASK[device.type]`, whose keys are cpu, gpu, cuda, opencl and a few others; the "
    "PyTorch backend's `to_backend_ctx` returns only `cpu` or `cuda`), so `g.to(torch_xla.device())` raises "
    "KeyError 'xla' (so do `g.to(args.gpu)` and `g.to('cuda:%d' % args.gpu)`, which the port makes XLA's), as does a graph made with `device=` the XLA device (`dgl.graph(..., device=device)`), "
    "and DGL's message-passing kernels (`update_all`, `apply_edges`, `edge_softmax`) take only CPU or CUDA "
    "tensors. The port makes this crash: `torch.device('cuda' if torch.cuda.is_available() else 'cpu')` "
    "chose the CPU on a host without CUDA, where the move worked. A graph is followed from what makes one "
    "(`dgl.graph`, `dgl.heterograph`, `dgl.DGLGraph`, `dgl.batch`, transforms that return a graph such as "
    "`dgl.add_self_loop`), from `dgl.load_graphs` (its first element, the list of graphs) and `dgl.unbatch`, from an item of a "
    "`dgl.data` dataset, through graph methods that return a graph (`g.int()`, `g.add_self_loop()`), names, "
    "`self` attributes and loops, and into a parameter of a function of the file that a call of the file "
    "hands a graph, under any import alias; a move to the CPU is left alone, and so are DGL's tensors "
    "(`dgl.mean_nodes`, `load_graphs`' labels) and its `dgl.nn` modules, which are torch modules. Keep the "
    "graph, and the tensors its message passing reads, on the CPU (move only the dense layers' inputs and "
    "outputs to the device), or rewrite the model with a library whose operations XLA runs (PyTorch "
    "Geometric with dense layers, or `index_add`/`scatter` over an edge index tensor). DGL is not installed "
    "here (it has no XLA build to test): this was read in DGL's source (`python/dgl/utils`, "
    "`python/dgl/backend/pytorch/tensor.py`, `python/dgl/heterograph.py`).",
    examples=lambda: (
        invalid(
            _GRAPH_SETUP,
            _GRAPH_SETUP_PORTED,
            findings=(Expected(8, 5, "`g` holds a DGL graph, which cannot go to the XLA device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import dgl
            import dgl.nn as dglnn
            import torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            graphs, labels = dgl.load_graphs("graphs.bin")
            g = graphs[0].to("cpu")
            conv = dglnn.GraphConv(4, 4).to(device)
            y = labels["y"].to(device)
            readout = dgl.mean_nodes(g, "h").to(device)


            def step(g, x):
                return g.to(device) + x


            step(torch.ones(2), x)
            """,
            """
            import dgl
            import dgl.nn as dglnn
            import torch
            import torch_xla

            device = torch_xla.device()
            graphs, labels = dgl.load_graphs("graphs.bin")
            g = graphs[0].to("cpu")
            conv = dglnn.GraphConv(4, 4).to(device)
            y = labels["y"].to(device)
            readout = dgl.mean_nodes(g, "h").to(device)


            def step(g, x):
                return g.to(device) + x


            step(torch.ones(2), x)
            """,
            note="tensors-modules-and-a-graph-kept-on-the-cpu",
        ),
    ),
    invalid=lambda: (
        invalid(
            _GRAPH_SETUP,
            substituted(
                _GRAPH_SETUP_PORTED,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            note="graph-moved-sagemaker",
            findings=(Expected(8, 5, "`g` holds a DGL graph"),),
        ),
        invalid(
            _HANDED,
            substituted(
                _HANDED,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                ('torch.device("cuda")', "torch_xla.device()"),
                (".cuda()", ".to(torch_xla.device())"),
            ),
            alias=True,
            note="loaded-handed-to-a-function-and-from-a-dataset",
            findings=(
                Expected(8, 13, "`graph` holds a DGL graph"),
                Expected(15, 8, "`CoraGraphDataset()[0]` is a DGL graph"),
            ),
        ),
        invalid(
            """
            import argparse

            import dgl
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--gpu", type=int, default=0)
            args = parser.parse_args()
            x = torch.zeros(3).cuda(args.gpu)
            g = dgl.to_bidirected(dgl.graph((src, dst)))
            for graph in dgl.unbatch(g):
                graph = graph.int().to(args.gpu)
            g = g.to(args.gpu)
            h = g.to("cuda:%d" % args.gpu)
            """,
            """
            import argparse

            import dgl
            import torch
            import torch_xla

            parser = argparse.ArgumentParser()
            parser.add_argument("--gpu", type=int, default=0)
            args = parser.parse_args()
            x = torch.zeros(3).to(torch_xla.device())
            g = dgl.to_bidirected(dgl.graph((src, dst)))
            for graph in dgl.unbatch(g):
                graph = graph.int().to(torch_xla.device())
            g = g.to(torch_xla.device())
            h = g.to("xla")
            """,
            note="moved-to-a-cuda-index-flag-and-unbatched",
            findings=(
                Expected(13, 13, "`graph.int()` is a DGL graph"),
                Expected(14, 5, "`g` holds a DGL graph"),
                Expected(15, 5, "`g` holds a DGL graph"),
            ),
        ),
        invalid(
            """
            import torch
            from dgl import heterograph as hetero

            device = torch.device("cuda")
            g = hetero(relations, device=device)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            from dgl import heterograph as hetero

            device = xm.xla_device()
            g = hetero(relations, device=device)
            """,
            target="sagemaker",
            alias=True,
            note="graph-made-on-the-device-sagemaker",
            findings=(Expected(6, 5, "`hetero(..., device=device)` makes a DGL graph on the XLA device"),),
        ),
    ),
)


@reports_facts(DGL_GRAPH_DEVICE, nodes=lambda facts: facts.cuda_only.dgl_moves)
def _graph_move(ctx: Context[Facts], original: cst.Call) -> str:
    held, named = ctx.facts.cuda_only.dgl_moves[original]
    return f"`{held}` {'holds' if named else 'is'} a DGL graph, which cannot go to the XLA device: {_DGL_DEVICES}"


@reports_facts(DGL_GRAPH_DEVICE, nodes=lambda facts: facts.cuda_only.dgl_creations)
def _graph_made_on(ctx: Context[Facts], original: cst.Call) -> str:
    device = ctx.facts.cuda_only.dgl_creations[original]
    return (
        f"`{ctx.code(original.func)}(..., device={device})` makes a DGL graph on the XLA device (`{device}` "
        f"after the port): {_DGL_DEVICES}"
    )
