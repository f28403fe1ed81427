"""XLA113 library-device-helper: a library's device helper that returns the CPU on an XLA host
becomes the target's device (the device values' ``library_devices``), and a library call
whose device defaults to CUDA (timm's ``create_loader``) is handed the target's device."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import library_apis
from codemods.engine.hooks import on_calls, on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

LIBRARY_DEVICE = Rule(
    code="XLA113",
    name="library-device-helper",
    severity="error",
    summary="A library's device helper that returns the CPU on an XLA host (`torch_geometric.device('auto')`) "
    "becomes the XLA device; a library call whose device defaults to CUDA (timm's `create_loader`) gets it; "
    "one that sets a config's device to the CPU (graphgym's `auto_select_device()`) is reported",
    fixable=True,
    why='Libraries pick the device for their users: `torch_geometric.device("auto")` asks for CUDA, MPS and '
    "XPU and else returns the CPU, so on an XLA host the model trains on the CPU. The known helpers are one "
    "table (`library_apis.DEVICE_HELPERS`), checked against the released code: Accelerate's `Accelerator().device` and "
    "`PartialState().device` and Transformers' `TrainingArguments.device` return the XLA device when torch_xla "
    "is installed (nothing to do); `torch.accelerator.current_accelerator()` is replaced by XLA101; "
    '`torch.get_default_device()` returns the CPU (XLA111 where a model goes there). A helper asked for `"auto"` '
    "becomes the target's device call. Some library calls take a device that defaults to CUDA (table "
    "`library_apis.CUDA_DEFAULT_DEVICES`): timm's `create_loader(..., use_prefetcher=True)`, the default in timm's "
    "training scripts, wraps the loader in a `PrefetchLoader` that copies every batch and its normalisation "
    "constants to `device=torch.device('cuda')` (timm 0.9 and 1.0; it crashes on an XLA host). Such a call "
    "without the device is handed the target's device (`device=torch_xla.device()`), which the PrefetchLoader "
    "then feeds; a `create_loader` with `use_prefetcher=False` copies nothing and is left alone. timm 0.6 "
    "takes no `device=` and calls `.cuda()` itself: there the port raises a TypeError at the call, and the fix "
    "is `use_prefetcher=False` with each batch moved to the XLA device (the finding says so). A file that "
    "imports a name only old timm has (`timm.data.Dataset`, `DatasetTar`: gone since timm 0.4's dataset rework, "
    "long before `device=` came in 0.9) runs on such a release, so there the call is reported with that fix and "
    "left as it is. A call with "
    "`**` keywords, which may hold the device, is an error naming the fix. PyG graphgym's "
    "`auto_select_device()` returns nothing but sets `cfg.accelerator` (`cfg.device` in PyG 2.0) to CUDA when "
    '`torch.cuda.is_available()`, else to "cpu" (table `library_apis.CONFIG_DEVICE_SETTERS`); `create_model()` and '
    "the loops then move to `torch.device(cfg.accelerator)`, so on an XLA host training stays on the CPU: an "
    "error at the call, whose fix is `cfg.accelerator = 'xla'` right after it (torch_xla imported).",
    examples=lambda: (
        invalid(
            """
            import torch
            import torch_geometric

            device = torch_geometric.device("auto")
            model = torch.nn.Linear(4, 2).to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(4, 2).to(device)
            """,
            findings=(Expected(4, 10, 'torch_geometric.device("auto") -> torch_xla.device()'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch_geometric

            device = torch_geometric.device("cpu")
            """,
            note="an-explicit-device",
        ),
        valid(
            """
            from timm.data import create_loader

            loader = create_loader(dataset, input_size=(3, 32, 32), batch_size=4, use_prefetcher=False)
            """,
            note="a-timm-loader-without-the-prefetcher-copies-nothing",
        ),
        valid(
            """
            import torch_xla
            from timm.data import create_loader

            loader = create_loader(dataset, input_size=(3, 32, 32), batch_size=4, device=torch_xla.device())
            """,
            note="a-timm-loader-given-the-xla-device",
        ),
        valid(
            """
            from torch_geometric.graphgym.config import cfg


            def auto_select_device():
                cfg.accelerator = "xla"


            auto_select_device()
            """,
            note="a-device-picker-of-the-project",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from torch_geometric import device as pick

            dev = pick("auto")
            """,
            """
            import torch_xla.core.xla_model as xm

            dev = xm.xla_device()
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(3, 7, 'pick("auto") -> xm.xla_device()'),),
        ),
        invalid(
            """
            from timm.data import create_loader

            loader = create_loader(dataset, input_size=(3, 32, 32), batch_size=4, use_prefetcher=args.prefetcher)
            """,
            """
            from timm.data import create_loader
            import torch_xla

            loader = create_loader(dataset, input_size=(3, 32, 32), batch_size=4, use_prefetcher=args.prefetcher, device=torch_xla.device())
            """,
            findings=(
                Expected(
                    4,
                    10,
                    "added device=torch_xla.device() to `create_loader`: its PrefetchLoader (use_prefetcher=True, "
                    "the default) copies every batch to device=, which defaults to CUDA (timm 0.6 and older take no "
                    "device= and copy to CUDA themselves: there pass use_prefetcher=False and move each batch to "
                    "the XLA device)",
                ),
            ),
            note="timm-prefetcher-loader",
        ),
        invalid(
            """
            from timm.data import Dataset, create_loader

            loader = create_loader(Dataset(root), input_size=(3, 224, 224), batch_size=64, is_training=True)
            """,
            findings=(
                Expected(
                    3,
                    10,
                    "`create_loader`: its PrefetchLoader (use_prefetcher=True, the default) copies every batch to "
                    "device=, which defaults to CUDA in newer releases, but this file imports `timm.data.Dataset`, "
                    "a name only old releases have, and timm 0.6 and older take no device= and copy to CUDA "
                    "themselves: there pass use_prefetcher=False and move each batch to the XLA device",
                ),
            ),
            note="old-timm-takes-no-device",
        ),
        invalid(
            """
            import timm.data.loader as tl
            from timm.data.dataset import DatasetTar as Tar

            loader = tl.create_loader(Tar(root), input_size=(3, 224, 224), batch_size=64)
            prefetched = tl.PrefetchLoader(loader)
            """,
            target="sagemaker",
            alias=True,
            findings=(
                Expected(4, 10, "this file imports `timm.data.dataset.DatasetTar`, a name only old releases have"),
                Expected(5, 14, "this file imports `timm.data.dataset.DatasetTar`, a name only old releases have"),
            ),
            note="old-timm-takes-no-device-sagemaker",
        ),
        invalid(
            """
            import timm.data.loader as tl

            loader = tl.create_loader(
                dataset,
                batch_size=4,
            )
            prefetched = tl.PrefetchLoader(plain_loader)
            """,
            """
            import timm.data.loader as tl
            import torch_xla.core.xla_model as xm

            loader = tl.create_loader(
                dataset,
                batch_size=4,
                device=xm.xla_device(),
            )
            prefetched = tl.PrefetchLoader(plain_loader, device=xm.xla_device())
            """,
            target="sagemaker",
            alias=True,
            note="timm-loaders-through-a-module-alias",
            findings=(
                Expected(4, 10, "added device=xm.xla_device() to `tl.create_loader`"),
                Expected(9, 14, "added device=xm.xla_device() to `tl.PrefetchLoader`: it copies every batch"),
            ),
        ),
        invalid(
            """
            from timm.data import create_loader

            loader = create_loader(dataset, **loader_kwargs)
            """,
            findings=(
                Expected(
                    3,
                    10,
                    "`create_loader`: its PrefetchLoader (use_prefetcher=True, the default) copies every batch to "
                    "device=, which defaults to CUDA, unless the `**` keywords hold it: pass device=<the XLA device>",
                ),
            ),
            note="timm-loader-keywords-from-a-dict",
        ),
        invalid(
            """
            import torch
            from torch_geometric.graphgym.config import cfg
            from torch_geometric.graphgym.utils.device import auto_select_device

            auto_select_device()
            batch = batch.to(torch.device(cfg.accelerator))
            """,
            findings=(
                Expected(
                    5,
                    1,
                    '`auto_select_device()` sets `cfg.accelerator` to "cpu" on an XLA host (CUDA when '
                    "`torch.cuda.is_available()`, else the CPU; `cfg.device` in PyG 2.0), and the model and batches "
                    "then go to `torch.device(cfg.accelerator)`: training stays on the CPU; set "
                    "`cfg.accelerator = 'xla'` after the call",
                ),
            ),
            note="graphgym-picks-the-device-into-its-config",
        ),
        invalid(
            """
            import torch_geometric.graphgym.utils as gym_utils

            gym_utils.auto_select_device()
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(3, 1, '`gym_utils.auto_select_device()` sets `cfg.accelerator` to "cpu"'),),
            note="graphgym-picks-the-device-into-its-config-sagemaker",
        ),
    ),
)


@on_facts(LIBRARY_DEVICE, nodes=lambda facts: facts.device_values.library_devices)
def _library_device(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``torch_geometric.device("auto")`` and the like -> the target's device."""
    new = ctx.fix(LIBRARY_DEVICE, original, f"{ctx.code(original)} -> {{new}}", ctx.device)
    if new is None:
        return updated
    ctx.imports.discard(original.func)
    return new


@on_calls(LIBRARY_DEVICE, names=frozenset(library_apis.CUDA_DEFAULT_DEVICES))
def _cuda_default_device(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.Call:
    """A library call whose device defaults to CUDA: ``device=<the target's device>`` added."""
    from codemods.engine.nodes import call_args, is_false, with_keyword

    library = library_apis.CUDA_DEFAULT_DEVICES[callee]
    positional, keywords = call_args(updated)
    switch = keywords.get(library.switch) if library.switch is not None else None
    if library.keyword in keywords or len(positional) > library.position or (switch and is_false(switch.value)):
        return updated  # it names its device (a CUDA one is the device rewrites'), or copies nothing
    name = ctx.code(original.func)
    older = (
        f"{library.older} take no {library.keyword}= and copy to CUDA themselves: there pass "
        f"{library.switch}=False and move each batch to the XLA device"
        if library.switch is not None
        else f"{library.older} take no {library.keyword}=: there move each batch to the XLA device instead"
    )
    copies = f"`{name}`: {library.copies}"
    table = ctx.facts.imports.table
    old = next((n for n in sorted(library.older_only) if table.local_name_for(n) is not None), None)
    if old is not None:
        ctx.report(
            LIBRARY_DEVICE,
            original,
            f"{copies} in newer releases, but this file imports `{old}`, a name only old releases have, and {older}",
        )
        return updated
    if any(a.star == "**" for a in updated.args):
        ctx.report(
            LIBRARY_DEVICE,
            original,
            f"{copies}, unless the `**` keywords hold it: pass {library.keyword}=<the XLA device> ({older})",
        )
        return updated
    device = ctx.device()
    if device is None:
        return updated
    return ctx.fix_or_keep(
        updated,
        LIBRARY_DEVICE,
        original,
        f"added {library.keyword}={ctx.code(device)} to `{name}`: {library.copies} ({older})",
        lambda: updated.with_changes(args=with_keyword([*updated.args], library.keyword, device)),
    )


@on_calls(LIBRARY_DEVICE, names=frozenset(library_apis.CONFIG_DEVICE_SETTERS))
def _config_device_setter(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.Call:
    """PyG graphgym's ``auto_select_device()``: it sets the config's device to the CPU on an
    XLA host, and what reads it (``create_model()``, ``torch.device(cfg.accelerator)``) trains there."""
    key, value = library_apis.CONFIG_DEVICE_SETTERS[callee]
    ctx.report(
        LIBRARY_DEVICE,
        original,
        f"`{ctx.code(original.func)}()` sets `{key}` to {value}, and the model and batches then go to "
        f"`torch.device({key})`: training stays on the CPU; set `{key} = {ctx.target.device_string!r}` after "
        "the call, with torch_xla imported (it registers that device)",
    )
    return updated
