"""XLA4: checkpoints."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

XLA_SAVE = Rule(
    code="XLA401",
    name="xla-save",
    severity="error",
    summary="`torch.save` becomes `xm.save` (moves tensors to the CPU first)",
    fixable=True,
    why="`torch.save` of XLA tensors writes a checkpoint that loads only where torch_xla is installed, and in a "
    "multi-process run every process writes the same file at once; `xm.save` moves the tensors to the CPU and "
    "writes from the master process only. A `torch.save` in a Dataset class (a feature cache written by "
    "`__getitem__`) saves host data in every process and DataLoader worker: it stays. In torch_xla 1.13 (the "
    "sagemaker target) `xm.save` ends in a rendezvous of every process, so under a rank check the master alone "
    "would wait forever: there `torch.save` stays and saves `xm._maybe_convert_to_cpu(state)`, the move to the "
    "CPU that `xm.save` makes, without the rendezvous. A `torch.save` that cannot become `xm.save` (unpacked "
    "arguments, keywords xm.save does not take) runs on XLA as it is where one process writes (under a rank check, "
    "as in a `save_on_master` helper, or in a one-process script): torch.save pickles XLA tensors through the CPU "
    "(checked on torch_xla 2.9), and the file loads where torch_xla is installed; it is an error only where every "
    "process of a multi-process run writes the same file.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.save({"model": model.state_dict(), "epoch": epoch}, path)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save({"model": model.state_dict(), "epoch": epoch}, path)
            """,
            findings=(Expected(4, 1, "torch.save -> xm.save"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import numpy as np

            np.save("x.npy", arr)
            state = torch.load("m.pt")
            """,
        ),
        *(
            valid(
                """
                import os
                import torch
                from torch.utils.data import Dataset, IterableDataset


                class Mels(torch.utils.data.Dataset):
                    def __getitem__(self, i):
                        path = self.files[i] + ".spec.pt"
                        if os.path.exists(path):
                            return torch.load(path)
                        spec = compute_spec(self.files[i])
                        torch.save(spec, path)
                        return spec


                class CachedMels(Mels):
                    def cache(self):
                        torch.save(self.items, "items.pt")


                class Stream(IterableDataset):
                    def __iter__(self):
                        for item in self.source:
                            torch.save(item, self.cache_path(item))
                            yield item
                """,
                target=target,
                note=f"dataset-host-data-{target}",
            )
            for target in ("2.9", "sagemaker")
        ),
        valid(
            """
            import torch
            import torch.distributed as dist


            def is_main_process():
                return dist.get_rank() == 0


            def save_on_master(*args, **kwargs):
                if is_main_process():
                    torch.save(*args, **kwargs)


            def save_checkpoint(state, path):
                if dist.get_rank() == 0:
                    torch.save(state, path, pickle_protocol=4)
            """,
            """
            import torch
            import torch_xla.runtime as xr


            def is_main_process():
                return xr.global_ordinal() == 0


            def save_on_master(*args, **kwargs):
                if is_main_process():
                    torch.save(*args, **kwargs)


            def save_checkpoint(state, path):
                if xr.global_ordinal() == 0:
                    torch.save(state, path, pickle_protocol=4)
            """,
            note="unportable-save-under-a-rank-check-runs",
        ),
        valid(
            """
            import torch
            import torch.distributed as dist


            def is_main_process():
                return dist.get_rank() == 0


            def save_on_master(*args, **kwargs):
                if is_main_process():
                    torch.save(*args, **kwargs)


            def save_checkpoint(state, path):
                if dist.get_rank() == 0:
                    torch.save(state, path, pickle_protocol=4)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def is_main_process():
                return xm.get_ordinal() == 0


            def save_on_master(*args, **kwargs):
                if is_main_process():
                    torch.save(*args, **kwargs)


            def save_checkpoint(state, path):
                if xm.get_ordinal() == 0:
                    torch.save(state, path, pickle_protocol=4)
            """,
            target="sagemaker",
            note="unportable-save-under-a-rank-check-runs-sagemaker",
        ),
        valid(
            """
            import torch


            def save_checkpoint(*args, **kwargs):
                torch.save(*args, **kwargs)
            """,
            note="unportable-save-in-one-process-runs",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            def save_checkpoint(state, filename="checkpoint.pth.tar"):
                torch.save(state, filename)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            def save_checkpoint(state, filename="checkpoint.pth.tar"):
                xm.save(state, filename)
            """,
            findings=(Expected(5, 5, "torch.save -> xm.save"),),
        ),
        # torch_xla 1.13's xm.save waits for every process: under a rank check it would hang,
        # so torch.save stays and saves the state moved to the CPU as xm.save moves it.
        invalid(
            """
            import torch
            import torch.distributed as dist


            def main():
                dist.init_process_group("nccl")
                if dist.get_rank() == 0:
                    torch.save(model.state_dict(), "model.pt")
            """,
            """
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                if xm.get_ordinal() == 0:
                    torch.save(xm._maybe_convert_to_cpu(model.state_dict()), "model.pt")
            """,
            target="sagemaker",
            note="rank-guarded-save-on-1.13",
            findings=(Expected(13, 20, "`torch.save` under a rank check stays"),),
        ),
        invalid(
            """
            import torch as th
            import torch.distributed as dist


            def save(net, args):
                if dist.get_rank() == 0:
                    th.save(obj={"net": net.state_dict()}, f=args.out)
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm


            def save(net, args):
                if xm.get_ordinal() == 0:
                    th.save(obj=xm._maybe_convert_to_cpu({"net": net.state_dict()}), f=args.out)
            """,
            target="sagemaker",
            alias=True,
            note="master-guarded-save-on-1.13",
            findings=(Expected(7, 21, "saves its state through `xm._maybe_convert_to_cpu`"),),
        ),
        invalid(
            """
            import torch

            torch.save(obj=state, f="b.pt")
            torch.save(state, "c.pt", pickle_protocol=4)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save(data=state, file_or_path="b.pt")
            torch.save(state, "c.pt", pickle_protocol=4)
            """,
            note="keywords",
            findings=(Expected(4, 1, "torch.save -> xm.save"),),  # one process: the kept save runs
        ),
        invalid(
            """
            import torch
            from torch import save

            save(model.state_dict(), buffer)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), buffer)
            """,
            alias=True,
            findings=(Expected(4, 1, "save -> xm.save"),),
        ),
        invalid(
            """
            import torch
            from torch.utils.data import Dataset


            class Features(Dataset):
                def __getitem__(self, i):
                    torch.save(self.compute(i), self.path(i))


            def train(model):
                torch.save(model.state_dict(), "model.pt")
            """,
            """
            import torch
            from torch.utils.data import Dataset
            import torch_xla.core.xla_model as xm


            class Features(Dataset):
                def __getitem__(self, i):
                    torch.save(self.compute(i), self.path(i))


            def train(model):
                xm.save(model.state_dict(), "model.pt")
            """,
            note="checkpoint-beside-a-dataset",
            findings=(Expected(12, 5, "torch.save -> xm.save"),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist


            def save_everywhere(*args, **kwargs):
                torch.save(*args, **kwargs)


            def main(model):
                dist.init_process_group("nccl")
                save_everywhere(model.state_dict(), "m.pt")
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def save_everywhere(*args, **kwargs):
                torch.save(*args, **kwargs)


            def main(model):
                dist.init_process_group("xla", init_method="xla://")
                save_everywhere(model.state_dict(), "m.pt")
            """,
            note="unportable-save-in-every-process",
            findings=(
                Expected(
                    7,
                    5,
                    "`torch.save` stays (its arguments are unpacked, so it cannot become xm.save) and no rank check",
                ),
            ),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist


            def save_everywhere(*args, **kwargs):
                torch.save(*args, **kwargs)


            def main(model):
                dist.init_process_group("nccl")
                save_everywhere(model.state_dict(), "m.pt")
            """,
            """
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def save_everywhere(*args, **kwargs):
                torch.save(*args, **kwargs)


            def main(model):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                save_everywhere(model.state_dict(), "m.pt")
            """,
            target="sagemaker",
            note="unportable-save-in-every-process-sagemaker",
            findings=(Expected(9, 5, "every process of this multi-process run writes the same file at once"),),
        ),
    ),
)

SAVE_WHOLE_MODULE = Rule(
    code="XLA402",
    name="save-whole-module",
    severity="warning",
    summary="Saving a whole module pickles its device tensors: save its state_dict()",
    fixable=False,
    why="Pickling a whole module stores its class by reference and its tensors as they are: the checkpoint "
    "loads only with the same code and torch_xla at hand. A `state_dict()` saved with `xm.save` holds CPU "
    "tensors that load anywhere.",
    examples=lambda: (
        invalid(
            """
            import torch

            class Net(torch.nn.Module):
                pass

            model = Net()
            torch.save(model, "model.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            class Net(torch.nn.Module):
                pass

            model = Net()
            xm.save(model, "model.pt")
            """,
            findings=(Expected(8, 1, "`model` is a whole module"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            model = Net()
            xm.save(model.state_dict(), "weights.pt")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            class Net(torch.nn.Module):
                pass

            model = Net().to(device)
            torch.save(model, "full.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            class Net(torch.nn.Module):
                pass

            model = Net().to(device)
            xm.save(model, "full.pt")
            """,
            findings=(Expected(8, 1, "`model` is a whole module"),),
        ),
        invalid(
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            from torch import nn

            net = nn.Sequential(nn.Linear(2, 2))
            th.save(net, "net.pt")
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            from torch import nn

            net = nn.Sequential(nn.Linear(2, 2))
            xm.save(net, "net.pt")
            """,
            alias=True,
            findings=(Expected(6, 1, "`net` is a whole module"),),
        ),
    ),
)

LOAD_MAP_LOCATION = Rule(
    code="XLA403",
    name="load-map-location",
    severity="error",
    summary="`torch.load(map_location=<CUDA or XLA device>)` loads on the CPU instead",
    fixable=True,
    why="Loading onto a CUDA device raises without CUDA, and XLA cannot restore storages straight onto its "
    "device; loaded on the CPU, `load_state_dict` copies the tensors to wherever the model is.",
    examples=lambda: (
        invalid(
            """
            import torch

            state = torch.load("model.pt", map_location="cuda:0")
            """,
            """
            import torch

            state = torch.load("model.pt", map_location="cpu")
            """,
            findings=(Expected(3, 45, 'map_location "cuda:0" -> "cpu"'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            state = torch.load("m.pt", map_location="cpu")
            other = torch.load("o.pt", map_location=lambda storage, loc: storage)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)
            state = torch.load("m.pt", map_location=device)
            other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
            """,
            """
            import torch

            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location="cpu")
            state = torch.load("m.pt", map_location="cpu")
            other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
            """,
            findings=(
                Expected(4, 51, 'map_location loc -> "cpu"'),
                Expected(5, 41, 'map_location device -> "cpu"'),
                Expected(6, 41, 'map_location `{"cuda:1"'),
            ),
        ),
        invalid(
            """
            import torch as th

            state = th.load("m.pt", map_location=th.device("cuda"))
            """,
            """
            import torch as th

            state = th.load("m.pt", map_location="cpu")
            """,
            alias=True,
            findings=(Expected(3, 38, 'map_location th.device("cuda") -> "cpu"'),),
        ),
    ),
)

GUARDED_XLA_SAVE = Rule(
    code="XLA404",
    name="guarded-xla-save",
    severity="error",
    summary="An `xm.save` only the master process reaches hangs on torch_xla 1.13 (sagemaker target)",
    fixable=False,
    why="torch_xla 1.13's `xm.save` ends with a rendezvous of every process "
    "(`rendezvous('torch_xla.core.xla_model.save')`), so under a rank check (`if xm.is_master_ordinal():`, "
    "`if rank == 0:`, `if accelerator.is_main_process:`) the master waits for processes that never come. Call "
    "it in every process: it writes from the master only. torch_xla 2.9's `xm.save` has no rendezvous (it "
    "writes on each host's master, checked in its source), so the same code runs there and is not reported.",
    instead="`xm.save(obj, path)` in every process, outside the rank check (it writes from the master only)",
    examples=lambda: (
        invalid(
            """
            import torch_xla.core.xla_model as xm

            if xm.is_master_ordinal():
                xm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            findings=(Expected(4, 5, "`xm.save` under a rank check: in torch_xla 1.13 it waits for every process"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch_xla.core.xla_model as xm

            if xm.is_master_ordinal():
                xm.save(model.state_dict(), "model.pt")
            """,
            note="2.9-save-has-no-rendezvous",
        ),
        valid(
            """
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            note="every-process-saves",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch_xla.core.xla_model as xm


            def checkpoint(rank):
                if rank == 0:
                    xm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            note="rank-zero",
            findings=(Expected(6, 9, "`xm.save` under a rank check"),),
        ),
        invalid(
            """
            import torch_xla.core.xla_model as xmm


            def checkpoint(accelerator):
                if accelerator.is_main_process:
                    xmm.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            note="main-process",
            alias=True,
            findings=(Expected(6, 9, "`xmm.save` under a rank check"),),
        ),
    ),
)

RULES = (XLA_SAVE, SAVE_WHOLE_MODULE, LOAD_MAP_LOCATION, GUARDED_XLA_SAVE)
