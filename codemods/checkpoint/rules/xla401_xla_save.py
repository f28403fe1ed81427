"""XLA401 xla-save: ``torch.save`` becomes ``xm.save``, which moves device tensors to the CPU
before pickling and writes once per host (on torch_xla 1.13 it also waits for every process:
under a rank check the save stays, and saves its state moved to the CPU)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.checkpoint.rules.deviceless_save_cases import deviceless_invalid, deviceless_valid
from codemods.checkpoint.rules.host_save_cases import (
    argument_save_invalid,
    argument_save_valid,
    host_save_invalid,
    host_save_valid,
)
from codemods.checkpoint.rules.indirect_guard_cases import indirect_guard_invalid
from codemods.checkpoint.rules.private_file_cases import private_file_invalid, private_file_valid
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# torch.save's keywords, and xm.save's names for them (a save with others stays: the analysis
# records why, checkpoint/analysis.py).
XLA_SAVE_KEYWORDS = {"obj": "data", "f": "file_or_path"}


# A save of every process of a process group, through a helper whose arguments are unpacked.
_SAVES_IN_EVERY_PROCESS = """\
import torch
import torch.distributed as dist


def save_everywhere(*args, **kwargs):
    torch.save(*args, **kwargs)


def main(model):
    dist.init_process_group("nccl")
    save_everywhere(model.state_dict(), "m.pt")
"""


def _saves_under_rank_checks(rank_import: str, rank: str) -> str:
    """``torch.save`` under rank checks, one of them in a helper, the rank read as ``rank``
    (which ``rank_import`` imports)."""
    return f"""
        import torch
        {rank_import}


        def is_main_process():
            return {rank} == 0


        def save_on_master(*args, **kwargs):
            if is_main_process():
                torch.save(*args, **kwargs)


        def save_checkpoint(state, path):
            if {rank} == 0:
                torch.save(state, path, pickle_protocol=4)
        """


# A save in a function that returns early (``if CONDITION: return``, the test put in by each case),
# called in every process: the program, and its port for each target.
_EARLY_RETURN = """
import torch
import torch.distributed as dist


def save(state, path, rank):
    if CONDITION:
        return
    torch.save(state, path, pickle_protocol=4)


def main(model, rank):
    dist.init_process_group("nccl")
    save(model.state_dict(), "m.pt", rank)
"""
_BACKEND = 'import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)\n'
_EARLY_RETURN_PORTED = {
    "2.9": substituted(
        _EARLY_RETURN,
        ("import torch.distributed as dist\n", "import torch.distributed as dist\n" + _BACKEND),
        ('dist.init_process_group("nccl")', 'dist.init_process_group("xla", init_method="xla://")'),
    ),
    "sagemaker": substituted(
        _EARLY_RETURN,
        (
            "import torch.distributed as dist\n",
            "import torch.distributed as dist\nimport os\nimport torch_xla.core.xla_model as xm\n" + _BACKEND,
        ),
        (
            '    dist.init_process_group("nccl")\n',
            '    os.environ.setdefault("MASTER_ADDR", "localhost")\n'
            '    os.environ.setdefault("MASTER_PORT", "12355")\n'
            '    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())\n',
        ),
    ),
}


XLA_SAVE = Rule(
    code="XLA401",
    name="xla-save",
    severity="error",
    summary="`torch.save` becomes `xm.save` (moves tensors to the CPU first)",
    fixable=True,
    why="`torch.save` of XLA tensors writes a checkpoint that loads only where torch_xla is installed, and in a "
    "multi-process run every process writes the same file at once; `xm.save` moves the tensors to the CPU and "
    "writes from the master process only. A `torch.save` in a Dataset class (a feature cache written by "
    "`__getitem__`; PyTorch Geometric's `Dataset` and `InMemoryDataset` too, whose `process()` saves the collated "
    "CPU graphs) saves host data in every process and DataLoader worker: it stays. In torch_xla 1.13 (the "
    "sagemaker target) `xm.save` ends in a rendezvous of every process, so under a rank check the master alone "
    "would wait forever: there `torch.save` stays and saves `xm._maybe_convert_to_cpu(state)`, the move to the "
    "CPU that `xm.save` makes, without the rendezvous; so in a helper that a file of the run calls under a rank "
    "check (`if rank == 0: utils.save_checkpoint(model, path)`, the helper in utils.py), and in what such a "
    "helper calls in turn (`if is_master: save_trainer(...)`, which calls `tracker.save(...)`, which saves in "
    "`self._save_state_dict(...)`). A `torch.save` that cannot become `xm.save` (unpacked "
    "arguments, keywords xm.save does not take) runs on XLA as it is where one process writes (under a rank check, "
    "as in a `save_on_master` helper, after a return of every other process, `if rank != 0: return`, or in a "
    "one-process script): torch.save pickles XLA tensors through the CPU "
    "(checked on torch_xla 2.9), and the file loads where torch_xla is installed; it is an error only where every "
    "process of a multi-process run writes the same file. A save whose tensors cannot be on a device stays "
    "`torch.save` where one process writes (there is nothing for xm.save to move): a preprocessing script's features "
    "(`feat = feat.detach().cpu()`; `.cpu()`, `.numpy()`, `.tolist()` and `.item()` give host values, and a "
    "DataLoader's batches are collated on the host), the state of a module built on the CPU and never moved in the "
    "function (`model = torch.nn.Embedding(n, d)`, also through a function of the file that builds and returns it, "
    "then `torch.save(model.state_dict(), path)`), and host data; each name is followed to the assignment that "
    "reaches the save, and a parameter, a name a loop or a `try` may rebind, or any other call, may hold device "
    "tensors: that save becomes xm.save. A save stays `torch.save` too in a file that names no device and trains nothing (no "
    "`.cuda()`, `.to(...)`, device, GPU or XLA name or string, no optimizer, `backward` or `step`: a checkpoint "
    'conversion script, `ckpt = torch.load(p)`, `torch.save(rename(ckpt["model"]), out)`, or a preprocessing '
    "script's spectrograms) of what the file binds itself, followed through its names (a parameter only where "
    "every call of the function in the file hands it such a value; never a free name or a model of the file): "
    "nothing there moves a tensor (where one process writes). A save into a file that only its own process reads back stays `torch.save` "
    "in every run: an in-memory buffer (`buf = io.BytesIO()`, then `buf.seek(0)` and `torch.load(buf)`, DeiT's "
    "`_load_checkpoint_for_ema`), a temporary file (`tempfile.TemporaryFile()`, also bound by `with ... as f`) or a "
    'file opened to be written and read (`open(path, "w+b")`): xm.save writes on the master only, so every other '
    "process would read an empty buffer (EOFError; checked with two processes on torch_xla 2.9), and torch.save "
    "pickles XLA tensors through the CPU for the same process to load back (its `torch.load` needs no map location: "
    "XLA403 says nothing). A buffer made from given bytes (`io.BytesIO(data)`) holds what it was given: not such a "
    "file.",
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
        *host_save_valid(),
        *argument_save_valid(),
        *deviceless_valid(),
        *private_file_valid(),
        *(
            valid(
                _EARLY_RETURN.replace("CONDITION", condition),
                after.replace("CONDITION", condition),
                target=target,
                note=f"an-early-return-{what}-{target}",
            )
            # Only the master passes each of these tests.
            for condition, what in (
                ("rank != 0", "in-every-process-but-the-master"),
                ("path is None or rank != 0", "or-the-rank-check"),
                ("dist.is_initialized() and rank != 0", "when-distributed-and-not-the-master"),
            )
            for target, after in _EARLY_RETURN_PORTED.items()
        ),
        valid(
            """
            import torch
            import numpy as np

            np.save("x.npy", arr)
            state = torch.load("m.pt", map_location="cpu")
            """,
        ),
        valid(
            """
            import os
            import torch
            from torch.utils.data import Dataset, IterableDataset


            class Mels(torch.utils.data.Dataset):
                def __getitem__(self, i):
                    path = self.files[i] + ".spec.pt"
                    if os.path.exists(path):
                        return torch.load(path, map_location="cpu")
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
            note="dataset-host-data",
        ),
        *(
            valid(
                """
                import torch
                import torch_geometric.data as pyg


                class Molecules(pyg.InMemoryDataset):
                    def __init__(self, root):
                        super().__init__(root)
                        self.data, self.slices = torch.load(self.processed_paths[0])

                    def process(self):
                        graphs = [pyg.Data(x=torch.zeros(5, 2)) for _ in range(8)]
                        torch.save(self.collate(graphs), self.processed_paths[0])
                """,
                target=target,
                note=f"a-pyg-dataset-saves-its-processed-cache-{target}",
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            valid(
                _saves_under_rank_checks("import torch.distributed as dist", "dist.get_rank()"),
                _saves_under_rank_checks(rank_import, rank),
                target=target,
                note=note,
            )
            for target, rank_import, rank, note in (
                (
                    "2.9",
                    "import torch_xla.runtime as xr",
                    "xr.global_ordinal()",
                    "unportable-save-under-a-rank-check-runs",
                ),
                (
                    "sagemaker",
                    "import torch_xla.core.xla_model as xm",
                    "xm.get_ordinal()",
                    "unportable-save-under-a-rank-check-runs-sagemaker",
                ),
            )
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
        *indirect_guard_invalid(),
        *host_save_invalid(),
        *argument_save_invalid(),
        *deviceless_invalid(),
        *private_file_invalid(),
        *(
            invalid(
                _EARLY_RETURN.replace("CONDITION", condition),
                after.replace("CONDITION", condition),
                target=target,
                note=f"an-early-return-{what}-{target}",
                findings=(Expected(line, 5, "no rank check guards it"),),
            )
            # ``DEBUG and rank != 0``: with DEBUG False every process writes.
            for condition, what in (("path is None", "that-is-no-rank-check"), ("DEBUG and rank != 0", "under-a-flag"))
            for target, line, after in (
                (
                    "2.9",
                    9,
                    _EARLY_RETURN_PORTED["2.9"],
                ),
                (
                    "sagemaker",
                    11,
                    _EARLY_RETURN_PORTED["sagemaker"],
                ),
            )
        ),
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
            _SAVES_IN_EVERY_PROCESS,
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
            _SAVES_IN_EVERY_PROCESS,
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


@on_facts(XLA_SAVE, nodes=lambda facts: facts.checkpoint.saves)
def _to_xla_save(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """Each checkpoint ``torch.save`` (the analysis leaves out a Dataset's): xm.save, or why not."""
    import libcst as cst

    problem = ctx.facts.checkpoint.saves[original]
    distributed = ctx.facts.distributed
    if (original in ctx.facts.checkpoint.host_saves or _deviceless(ctx, original)) and not distributed.multi_process:
        return updated  # no device tensor to move, and one process writes
    if problem is None and ctx.target.save_waits_for_all and original in distributed.guarded_saves:
        return _guarded_save(ctx, original, updated)
    if problem is not None:
        if original in distributed.guarded_saves or not distributed.multi_process:
            # One process writes, and torch.save pickles XLA tensors through the CPU: it
            # runs as it did (the file loads where torch_xla is installed).
            return updated
        ctx.report(
            XLA_SAVE,
            original,
            f"`{ctx.code(original.func)}` stays ({problem}, so it cannot become xm.save) and no rank check "
            "guards it: every process of this multi-process run writes the same file at once; save from the "
            "master only (under a rank check, or with xm.save)",
        )
        return updated

    def build() -> cst.Call | None:
        call = ctx.replace_callee(original, updated, "save")
        if call is None:
            return None
        renamed = [
            a.with_changes(keyword=cst.Name(XLA_SAVE_KEYWORDS[a.keyword.value])) if a.keyword else a for a in call.args
        ]
        return call.with_changes(args=renamed)

    return ctx.fix_or_keep(
        updated,
        XLA_SAVE,
        original,
        f"{ctx.code(original.func)} -> {{new}}: moves device tensors to the CPU before saving",
        build,
        result=lambda call: call.func,
    )


def _deviceless(ctx: Context[Facts], original: cst.Call) -> bool:
    """A save in a file that names no device and trains nothing, of what the file binds itself
    (checkpoint/rules/deviceless.py): a conversion or preprocessing script's host tensors."""
    import libcst as cst

    from codemods.checkpoint.rules.deviceless import bound_here, names_no_device
    from codemods.engine.nodes import arg_value

    saved = arg_value(original, 0, "obj")
    module = ctx.ancestors[0] if ctx.ancestors else None
    if saved is None or not isinstance(module, cst.Module):
        return False
    scope = next((a for a in reversed(ctx.ancestors) if isinstance(a, cst.FunctionDef)), module)
    models = set(ctx.facts.training.models)
    return names_no_device(module) and bound_here(saved, scope, module, models)


def _guarded_save(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """A torch.save under a rank check, where xm.save ends in a rendezvous of every process
    (torch_xla 1.13: the master alone would wait forever): it stays, and saves its state
    moved to the CPU the way xm.save moves it, without the rendezvous."""
    import libcst as cst

    to_cpu = ctx.target.api("to_cpu").spelled
    why = (
        f"xm.save in torch_xla {ctx.target.torch_xla_version} waits for every process, so the master "
        "alone would wait forever"
    )
    index = next(
        (
            i
            for i, a in enumerate(original.args)
            if (a.keyword is None and not a.star and i == 0) or (a.keyword is not None and a.keyword.value == "obj")
        ),
        None,
    )
    if index is None:
        ctx.report(
            XLA_SAVE,
            original,
            f"`{ctx.code(original.func)}` stays under a rank check ({why}): it pickles each XLA tensor "
            f"through the CPU, and the file loads only where torch_xla is installed; save `{to_cpu}(state)`",
        )
        return updated
    state = updated.args[index]
    given = original.args[index].value
    if type(given) is cst.Call and ctx.resolve(given.func) == ctx.target.api("to_cpu").qualified_name:
        return updated  # ported already

    def build() -> cst.Call | None:
        moved = ctx.call("to_cpu", [cst.Arg(state.value)])
        if moved is None:
            return None
        args = list(updated.args)
        args[index] = state.with_changes(value=moved)
        return updated.with_changes(args=args)

    return ctx.fix_or_keep(
        updated,
        XLA_SAVE,
        original,
        f"`{ctx.code(original.func)}` under a rank check stays ({why}) and saves its state through "
        f"`{to_cpu}`: the device tensors go to the CPU first, as xm.save moves them, so the file loads "
        "without torch_xla",
        build,
        result=lambda call: call.args[index].value,
    )
