"""XLA714 short-last-batch: a DataLoader that feeds a training loop and keeps a short last batch
(no ``drop_last=True``): its shape compiles a second graph.  Reported at the loader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

SHORT_LAST_BATCH = Rule(
    code="XLA714",
    name="short-last-batch",
    severity="warning",
    summary="A training DataLoader without drop_last=True: its short last batch compiles a second graph",
    fixable=False,
    why="When the dataset size is not a multiple of the batch size the last batch has another shape, "
    "and every distinct shape is compiled.  Pass drop_last=True where dropping a few samples per epoch is fine. "
    "Only torch's DataLoader is reported: a loader class of the project's own (`loader.get_iterator()`) may pad "
    "its last batch to full size.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
            "device = torch_xla.device()\nmodel = torch.nn.Linear(4, 1).to(device)\n"
            "loader = DataLoader(TensorDataset(torch.randn(100, 4)), batch_size=16)\nfor (x,) in loader:\n"
            "    model(x.to(device)).sum().backward()\n    torch_xla.sync()\n",
            findings=(Expected(7, 10, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.utils.data import DataLoader

            train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
            val_loader = DataLoader(val_set, batch_size=32)
            for x, y in train_loader:
                loss = model(x.to(device), y.to(device))
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            import torch_xla
            import torch_xla.core.xla_model as xm

            train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
            val_loader = DataLoader(val_set, batch_size=32)
            for x, y in train_loader:
                loss = model(x.to(device), y.to(device))
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
        ),
        valid(
            """
            import torch
            from torch.utils.data import DataLoader


            def fit():
                dl = DataLoader(train_set, batch_size=16, shuffle=True, drop_last=True)
                for x, y in dl:
                    loss = model(x.to(device), y.to(device))
                    loss.backward()
                    optimizer.step()


            def predict():
                dl = DataLoader(dev_set, batch_size=16)
                return [model(x.to(device)) for x, _ in dl]


            for epoch in range(2):
                fit()
                predict()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            import torch_xla
            import torch_xla.core.xla_model as xm


            def fit():
                dl = DataLoader(train_set, batch_size=16, shuffle=True, drop_last=True)
                for x, y in dl:
                    loss = model(x.to(device), y.to(device))
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()


            def predict():
                dl = DataLoader(dev_set, batch_size=16)
                return [model(x.to(device)) for x, _ in dl]


            for epoch in range(2):
                fit()
                predict()
            """,
            note="evaluation loader of the same name in another function",
        ),
        valid(
            """
            import numpy as np
            import torch


            class Batches:
                def __init__(self, xs, ys, batch_size):
                    padding = (batch_size - len(xs) % batch_size) % batch_size
                    self.xs = np.concatenate([xs, np.repeat(xs[-1:], padding, axis=0)])
                    self.ys = np.concatenate([ys, np.repeat(ys[-1:], padding, axis=0)])
                    self.batch_size = batch_size

                def get_iterator(self):
                    for start in range(0, len(self.xs), self.batch_size):
                        yield self.xs[start : start + self.batch_size], self.ys[start : start + self.batch_size]


            loaders = {"train": Batches(xs, ys, 64)}
            for i, (x, y) in enumerate(loaders["train"].get_iterator()):
                loss = model(torch.Tensor(x).to(device), torch.Tensor(y).to(device))
                loss.backward()
                optimizer.step()
            """,
            """
            import numpy as np
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Batches:
                def __init__(self, xs, ys, batch_size):
                    padding = (batch_size - len(xs) % batch_size) % batch_size
                    self.xs = np.concatenate([xs, np.repeat(xs[-1:], padding, axis=0)])
                    self.ys = np.concatenate([ys, np.repeat(ys[-1:], padding, axis=0)])
                    self.batch_size = batch_size

                def get_iterator(self):
                    for start in range(0, len(self.xs), self.batch_size):
                        yield self.xs[start : start + self.batch_size], self.ys[start : start + self.batch_size]


            loaders = {"train": Batches(xs, ys, 64)}
            for i, (x, y) in enumerate(loaders["train"].get_iterator()):
                loss = model(torch.Tensor(x).to(device), torch.Tensor(y).to(device))
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="the project's own loader pads its last batch: no torch DataLoader",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from torch.utils.data import DataLoader


            def fit():
                dl = DataLoader(train_set, batch_size=16, shuffle=True)
                for x, y in dl:
                    loss = model(x.to(device), y.to(device))
                    loss.backward()
                    optimizer.step()


            def predict():
                dl = DataLoader(dev_set, batch_size=16, drop_last=True)
                return [model(x.to(device)) for x, _ in dl]
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            import torch_xla
            import torch_xla.core.xla_model as xm


            def fit():
                dl = DataLoader(train_set, batch_size=16, shuffle=True)
                for x, y in dl:
                    loss = model(x.to(device), y.to(device))
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()


            def predict():
                dl = DataLoader(dev_set, batch_size=16, drop_last=True)
                return [model(x.to(device)) for x, _ in dl]
            """,
            findings=(Expected(8, 10, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
            note="training loader found in its own function",
        ),
        invalid(
            """
            import torch.utils.data as tud
            import torch_xla.distributed.parallel_loader as pl

            loader = tud.DataLoader(dataset, batch_size=16, drop_last=False)
            for step, batch in enumerate(pl.MpDeviceLoader(loader, device)):
                model(batch).sum().backward()
            """,
            alias=True,
            findings=(Expected(4, 10, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
        ),
        invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
            for x, y in train_loader:
                loss = model(x.to(device), y.to(device))
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            import torch_xla
            import torch_xla.core.xla_model as xm

            train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
            for x, y in train_loader:
                loss = model(x.to(device), y.to(device))
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            findings=(Expected(6, 16, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
        ),
        invalid(
            """
            import torch
            from torch.utils.data import DataLoader
            from tqdm import tqdm

            for x, y in tqdm(DataLoader(train_set, batch_size=32, shuffle=True)):
                loss = model(x.to(device), y.to(device))
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            from torch.utils.data import DataLoader
            import torch_xla
            import torch_xla.core.xla_model as xm
            from tqdm import tqdm

            for x, y in tqdm(DataLoader(train_set, batch_size=32, shuffle=True)):
                loss = model(x.to(device), y.to(device))
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            findings=(Expected(7, 18, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
            note="a DataLoader built in the loop's header",
        ),
    ),
)


@reports_facts(SHORT_LAST_BATCH, nodes=lambda facts: facts.recompilation.short_last_batch)
def _short_last_batch(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        "this training DataLoader keeps a short last batch (no drop_last=True): its shape "
        "compiles a second graph; pass drop_last=True if dropping the remainder is fine"
    )
