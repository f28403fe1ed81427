"""XLA617 iterable-dataset-shards: a training DataLoader over an iterable-style data set (or one
whose class comes from a module the run does not read), which the distributed facts name
(``iterable_loaders``), gets no DistributedSampler: it is reported, with how to shard the data
set by process."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

ITERABLE_DATASET_SHARDS = Rule(
    code="XLA617",
    name="iterable-dataset-shards",
    severity="warning",
    summary="A training DataLoader over an iterable-style data set gets no DistributedSampler: the data set must shard "
    "itself by process",
    fixable=False,
    why="A DataLoader over an IterableDataset refuses a sampler (`ValueError: DataLoader with IterableDataset: "
    "expected unspecified sampler option`; DistributedSampler itself raises `TypeError: object has no len()` "
    "first), so the tool adds none where the data set is iterable-style: a class of the file that derives from "
    "IterableDataset or only defines `__iter__`, `datasets.load_dataset(..., streaming=True)`, webdataset's "
    "pipelines, torchdata's iterable datapipes, a class of another module of the project that derives from "
    "IterableDataset. A data set whose class comes from a module of the project that the run cannot read (a "
    "run on one file) may be either kind: it gets no sampler either, and the finding says so. Without sharding, "
    "every process reads the whole stream: the "
    "replicas' gradients are averaged, so the model trains as one process would, without crashing or changing "
    "its results, but the processes buy no speed-up. That is a warning, not an error. The data set must hand "
    "each process its own share, using the XLA rank and world size: Hugging Face's "
    "`datasets.distributed.split_dataset_by_node`, webdataset's `split_by_node`, torchdata's "
    "`sharding_filter()`, or `itertools.islice` over the stream in your own `__iter__`.",
    examples=lambda: (
        invalid(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            def main():
                dist.init_process_group("nccl")
                loader = DataLoader(Stream(), batch_size=8)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            def main():
                dist.init_process_group("xla", init_method="xla://")
                loader = DataLoader(Stream(), batch_size=8)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            findings=(Expected(14, 14, "over an iterable-style data set (`Stream(...)`): it takes no sampler"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset


            class Records(Dataset):
                def __iter__(self):
                    yield from range(100)

                def __getitem__(self, index):
                    return read_record(index)

                def __len__(self):
                    return 100


            def main():
                dist.init_process_group("nccl")
                dataset = Records()
                loader = DataLoader(dataset, batch_size=8, drop_last=True)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            class Records(Dataset):
                def __iter__(self):
                    yield from range(100)

                def __getitem__(self, index):
                    return read_record(index)

                def __len__(self):
                    return 100


            def main():
                dist.init_process_group("xla", init_method="xla://")
                dataset = Records()
                loader = DataLoader(dataset, batch_size=8, drop_last=True, sampler=torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False))
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="map-style-data-set",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist
            import webdataset as wds
            from datasets import load_dataset as load
            from torch.utils.data import DataLoader


            def main():
                dist.init_process_group("nccl")
                stream = load("c4", "en", split="train", streaming=True).shuffle(seed=0)
                text = DataLoader(stream, batch_size=8, drop_last=True)
                shards = wds.WebDataset("data-{000..009}.tar").decode("torchrgb")
                images = DataLoader(shards, batch_size=8, drop_last=True)
                for x in text:
                    optimizer.step()
                for x in images:
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            import webdataset as wds
            from datasets import load_dataset as load
            from torch.utils.data import DataLoader
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                stream = load("c4", "en", split="train", streaming=True).shuffle(seed=0)
                text = DataLoader(stream, batch_size=8, drop_last=True)
                shards = wds.WebDataset("data-{000..009}.tar").decode("torchrgb")
                images = DataLoader(shards, batch_size=8, drop_last=True)
                for x in text:
                    xm.optimizer_step(optimizer)
                    xm.mark_step()
                for x in images:
                    xm.optimizer_step(optimizer)
                    xm.mark_step()
            """,
            target="sagemaker",
            alias=True,
            note="streaming-and-webdataset-sagemaker",
            findings=(
                Expected(16, 12, "(`datasets.load_dataset(..., streaming=True)`): it takes no sampler"),
                Expected(18, 14, "(`webdataset.WebDataset(...)`): it takes no sampler"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            class Shuffled(Stream):
                pass


            def main():
                dist.init_process_group("nccl")
                dataset = Shuffled()
                loader = DataLoader(dataset, batch_size=8, drop_last=True)
                for x, y in loader:
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            class Shuffled(Stream):
                pass


            def main():
                dist.init_process_group("xla", init_method="xla://")
                dataset = Shuffled()
                loader = DataLoader(dataset, batch_size=8, drop_last=True)
                for x, y in loader:
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="subclass-of-a-file-iterable",
            findings=(Expected(20, 14, "(`Shuffled(...)`): it takes no sampler"),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist
            from data.streams import TokenStream


            def main():
                dist.init_process_group("nccl")
                dataset = TokenStream(files)
                loader = torch.utils.data.DataLoader(dataset, batch_size=8, drop_last=True)
                for x in loader:
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            from data.streams import TokenStream


            def main():
                dist.init_process_group("xla", init_method="xla://")
                dataset = TokenStream(files)
                loader = torch.utils.data.DataLoader(dataset, batch_size=8, drop_last=True)
                for x in loader:
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="class-of-an-unread-module",
            findings=(
                Expected(11, 14, "over `TokenStream(...)`, a class of `data.streams`, which this run does not read"),
            ),
        ),
    ),
)


@reports_facts(ITERABLE_DATASET_SHARDS, nodes=lambda facts: facts.distributed.iterable_loaders)
def _report(ctx: Context[Facts], original: cst.Call) -> str:
    data = ctx.facts.distributed.iterable_loaders[original]
    rank, world = (ctx.target.api(concept).qualified_name for concept in ("global_ordinal", "world_size"))
    shard = (
        f"with rank {rank}() of {world}(): `split_dataset_by_node(dataset, rank, world_size)` (Hugging Face "
        "datasets), `wds.split_by_node` (webdataset), `.sharding_filter()` (torchdata), or "
        "`itertools.islice(stream, rank, None, world_size)` in your own `__iter__`"
    )
    if data.unread_module is not None:
        message = (
            f"training DataLoader over {data.made_by}, a class of `{data.unread_module}`, which this run does not "
            "read: the tool cannot tell whether it is iterable-style (which refuses a sampler), so no "
            "DistributedSampler was added and every process reads all the data. Convert the project to let it "
            f"tell; if it is map-style, pass `sampler=DistributedSampler(dataset, num_replicas={world}(), "
            f"rank={rank}())`; if it is iterable-style, shard it by process {shard}"
        )
    else:
        message = (
            f"training DataLoader over an iterable-style data set ({data.made_by}): it takes no sampler, so no "
            "DistributedSampler was added and every process reads the whole stream. Shard it in the data set by "
            f"process, {shard}"
        )
    return message
