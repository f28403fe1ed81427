"""XLA403's cases of a Dataset whose processed cache holds the attributes its ``__init__`` binds to the
reload of that cache (DIG's ``SentiGraphDataset``: ``self.data, self.slices, self.supplement =
torch.load(self.processed_paths[0])`` in ``__init__``; ``process()`` binds the same attributes to what it
reads and collates and saves them to the same file): the reload holds what the class saved there, so it
adds no value the class does not build.  Kept apart from the rule so that its module holds the rule."""

from __future__ import annotations

import textwrap

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_RELOADED = textwrap.dedent(
    """
    import numpy as np
    import torch
    from torch_geometric.data import Data, InMemoryDataset


    def read_graphs(folder):
        x = torch.from_numpy(np.load(folder + "/x.npy"))
        return Data(x=x), {"x": torch.arange(0, 3)}, {}


    class Graphs(InMemoryDataset):
        def __init__(self, root, pre_transform=None):
            super().__init__(root, None, pre_transform)
            self.data, self.slices, self.extra = torch.load(self.processed_paths[0])

        def process(self):
            self.data, self.slices, self.extra = read_graphs(self.raw_dir)
            if self.pre_transform is not None:
                items = [self.pre_transform(self.get(i)) for i in range(len(self))]
                self.data, self.slices = self.collate(items)
            torch.save((self.data, self.slices, self.extra), self.processed_paths[0])
    """
)

_TARGETS = (
    ("2.9", "import torch_xla\n", "torch_xla.device()"),
    ("sagemaker", "import torch_xla.core.xla_model as xm\n", "xm.xla_device()"),
)


# A Dataset's cache of ids it builds of host data (no tensor at all), reloaded onto the same attribute.
_IDS = textwrap.dedent(
    """
    import os
    import torch

    class PairDataset(torch.utils.data.Dataset):
        def __init__(self, ids_file):
            if os.path.exists(ids_file):
                self.ids = torch.load(ids_file)
            else:
                self.ids = list(range(64))
                torch.save(self.ids, ids_file)
    """
)


def dataset_reload_valid() -> tuple[Valid, ...]:
    aliased = substituted(_RELOADED, ("import torch\n", "import torch as T\n"), ("torch.", "T."))
    return tuple(
        valid(code, target=target, note=f"a dataset saves again the attributes its reload binds ({shape}, {target})")
        for shape, code in (("as written", _RELOADED), ("torch aliased", aliased), ("a cache of ids", _IDS))
        for target, _, _ in _TARGETS
    )


def dataset_reload_invalid() -> tuple[Invalid, ...]:
    moved = substituted(
        _RELOADED, ("        torch.save((", "        self.data = self.data.cuda()\n        torch.save((")
    )
    other = substituted(
        _RELOADED, ("self.extra = torch.load(self.processed_paths[0])", "self.extra = torch.load(root)")
    )
    return tuple(
        invalid(
            code,
            substituted(
                code,
                *(
                    (("import torch\n", f"import torch\n{imports}"), ("self.data.cuda()", f"self.data.to({device})"))
                    if code is moved
                    else ()
                ),
                (f"torch.load({path})", f'torch.load({path}, map_location="cpu")'),
            ),
            target=target,
            note=f"a dataset's reload that may hold CUDA storages ({shape}, {target})",
            findings=(Expected(line, column, 'torch.load(...) -> map_location="cpu"'),),
        )
        for shape, code, path, line, column in (
            ("its cache is saved moved to CUDA", moved, "self.processed_paths[0]", 15, 82),
            ("it loads another file", other, "root", 14, 63),
        )
        for target, imports, device in _TARGETS
    )
