"""XLA403's cases of a Dataset's processed cache built from the data its constructor is given
(PyTorch Geometric's ``InMemoryDataset``: ``self.data = data`` in ``__init__``, read by
``process()``), and of a device choice read only as a map location that is the CPU without CUDA
(``device = None if torch.cuda.is_available() else "cpu"``): on XLA the original already loads
onto the CPU.  Kept apart from the rule so that its module holds the rule, its messages and its hooks."""

from __future__ import annotations

import textwrap

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_FROM_INPUT = textwrap.dedent(
    """
    import torch
    from torch_geometric.data import InMemoryDataset


    class Graphs(InMemoryDataset):
        def __init__(self, root, data):
            self.data = data
            super().__init__(root)
            self.data, self.slices = torch.load(self.processed_paths[0])

        def process(self):
            items = [self.data.x[i] for i in range(3)]
            torch.save(self.collate(items), self.processed_paths[0])
    """
)

# IGMC's shape: ``__init__`` computes attributes of its parameters through calls (an indexer class, numpy),
# ``process()`` hands them to a function of the module; another Dataset binds an attribute of the same name.
_FROM_PARAMETERS = textwrap.dedent(
    """
    import numpy as np
    import torch
    from torch_geometric.data import InMemoryDataset


    class Indexer:
        def __init__(self, matrix):
            self.rows = matrix.tocsr()


    def subgraphs(rows, links):
        return [torch.as_tensor(rows[i]) for i in links]


    class Graphs(InMemoryDataset):
        def __init__(self, root, A, links, max_num=None):
            self.Arow = Indexer(A)
            perm = np.random.permutation(len(links))
            self.links = links[perm]
            super().__init__(root)
            self.data, self.slices = torch.load(self.processed_paths[0])

        def process(self):
            data_list = subgraphs(self.Arow, self.links)
            data, slices = self.collate(data_list)
            torch.save((data, slices), self.processed_paths[0])


    class DynamicGraphs(torch.utils.data.Dataset):
        def __init__(self, A):
            self.Arow = Indexer(A)
    """
)

_CPU_CHOICE = textwrap.dedent(
    """
    import torch


    def load(net, path):
        device = None if torch.cuda.is_available() else "cpu"
        net.load_state_dict(torch.load(path, map_location=device))
    """
)


# A call of the Dataset class in the module: what it hands the constructor is the data the cache is built of.
_HANDED = "\n\ndef build(root, graph):\n    return Graphs(root, graph)\n"
_HANDED_PARAMETERS = "\n\ndef build(root, A, pairs):\n    links = pairs\n    return Graphs(root, A, links)\n"


def dataset_input_valid() -> tuple[Valid, ...]:
    return (
        *(
            valid(
                _FROM_INPUT + _HANDED,
                target=target,
                note=f"a dataset the module builds of data it does not move reloads its cache ({target})",
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            valid(
                _FROM_INPUT,
                target=target,
                note=f"a dataset reloads the cache it builds from the data its constructor is given ({target})",
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            valid(
                _FROM_PARAMETERS,
                target=target,
                note=f"a dataset reloads the cache it builds of what its constructor computes of its parameters ({target})",
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            valid(
                _CPU_CHOICE,
                target=target,
                note=f"a map location that is the CPU without CUDA, read through a name ({target})",
            )
            for target in ("2.9", "sagemaker")
        ),
    )


def dataset_input_invalid() -> tuple[Invalid, ...]:
    moved = substituted(_FROM_INPUT, ("self.data.x[i] for", "self.data.x[i].cuda() for"))
    return (
        tuple(
            invalid(
                moved,
                substituted(
                    moved,
                    ("import torch\n", f"import torch\n{imports}"),
                    ("self.data.x[i].cuda()", f"self.data.x[i].to({device})"),
                    ("self.processed_paths[0])\n\n", 'self.processed_paths[0], map_location="cpu")\n\n'),
                ),
                target=target,
                note=f"a dataset's cache of its input moved to CUDA: may hold CUDA storages ({target})",
                findings=(Expected(10, 70, 'torch.load(...) -> map_location="cpu"'),),
            )
            for target, imports, device in _TARGETS
        )
        + tuple(
            invalid(
                moved_parameters,
                substituted(
                    moved_parameters,
                    ("import torch\n", f"import torch\n{imports}"),
                    ("links[perm].cuda()", f"links[perm].to({device})"),
                    ("torch.load(self.processed_paths[0])", 'torch.load(self.processed_paths[0], map_location="cpu")'),
                ),
                target=target,
                note=f"a dataset's cache of what its constructor moves to CUDA: may hold CUDA storages ({target})",
                findings=(Expected(22, 70, 'torch.load(...) -> map_location="cpu"'),),
            )
            for moved_parameters in (substituted(_FROM_PARAMETERS, ("links[perm]", "links[perm].cuda()")),)
            for target, imports, device in _TARGETS
        )
        + tuple(
            # A call of the class in the module hands its constructor a moved value (directly, or a name bound
            # to one): its parameters are no host data, the cache built of them may hold CUDA storages.
            invalid(
                handed,
                substituted(
                    handed,
                    ("import torch\n", f"import torch\n{imports}"),
                    (".cuda()", f".to({device})"),
                    ("torch.load(self.processed_paths[0])", 'torch.load(self.processed_paths[0], map_location="cpu")'),
                ),
                target=target,
                note=f"a dataset the module builds of a moved value: its cache may hold CUDA storages ({target}, {shape})",
                findings=(Expected(line, 70, 'torch.load(...) -> map_location="cpu"'),),
            )
            for shape, handed, line in (
                (
                    "handed at once",
                    substituted(_FROM_INPUT + _HANDED, ("Graphs(root, graph)", "Graphs(root, graph.cuda())")),
                    10,
                ),
                (
                    "through a name",
                    substituted(_FROM_PARAMETERS + _HANDED_PARAMETERS, ("links = pairs", "links = pairs.cuda()")),
                    22,
                ),
            )
            for target, imports, device in _TARGETS
        )
    )


_TARGETS = (
    ("2.9", "import torch_xla\n", "torch_xla.device()"),
    ("sagemaker", "import torch_xla.core.xla_model as xm\n", "xm.xla_device()"),
)
