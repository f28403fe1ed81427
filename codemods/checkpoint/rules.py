"""XLA4: checkpoints."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

XLA_SAVE = Rule(
    "XLA401", "xla-save", "error", "`torch.save` becomes `xm.save` (moves tensors to the CPU first)", True,
    why="`torch.save` of XLA tensors writes a checkpoint that loads only where torch_xla is installed, and in a "
    "multi-process run every process writes the same file at once; `xm.save` moves the tensors to the CPU and "
    "writes from the master process only. A `torch.save` in a data set's `__getitem__` or `__iter__` (a cache "
    "of features computed on the host, in a DataLoader worker) stays: each process must write its own files, "
    "and xm.save would write only the master's.",
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


                class Spectrograms(torch.utils.data.Dataset):
                    def __getitem__(self, index):
                        path = self.files[index] + ".spec.pt"
                        if os.path.exists(path):
                            return torch.load(path)
                        spec = compute_spectrogram(self.files[index])
                        torch.save(spec, path)
                        return spec
                """,
                target=target,
                note=f"data-set-cache-{target}",
            )
            for target in ("2.9", "sagemaker")
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
        # so the save is reported instead.
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
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                dist.init_process_group("xla", init_method="xla://")
                if xm.get_ordinal() == 0:
                    torch.save(model.state_dict(), "model.pt")
            """,
            target="sagemaker",
            note="rank-guarded-save-on-1.13",
            findings=(Expected(10, 9, "`torch.save` stays"),),
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
            findings=(Expected(4, 1, "torch.save -> xm.save"), Expected(5, 1, "`torch.save` stays")),
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
    ),
)

SAVE_WHOLE_MODULE = Rule(
    "XLA402", "save-whole-module", "warning", "Saving a whole module pickles its device tensors: save its state_dict()", False,
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
    "XLA403", "load-map-location", "error", "`torch.load(map_location=<CUDA or XLA device>)` loads on the CPU instead", True,
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

RULES = (XLA_SAVE, SAVE_WHOLE_MODULE, LOAD_MAP_LOCATION)
