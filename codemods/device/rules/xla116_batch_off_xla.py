"""XLA116 batch-off-xla.  The device obligations report the batches that loops leave off the
device (device/obligations.py); this module's hook reports the inputs of a model whose wrapper
moved them to the GPU, which the port removes (DataParallel) or stops from moving anything (DDP
without device_ids): the distributed facts' ``scattered_inputs``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.broken_proofs import broken_proof, reports_broken_proofs
from codemods.device.rules.helper_move_cases import helper_move_invalid, helper_move_valid
from codemods.device.rules.host_index_cases import host_index_invalid, host_index_valid
from codemods.device.rules.launch_index_cases import launch_index_invalid, launch_index_valid
from codemods.device.rules.library_batch_cases import library_batch_invalid, library_batch_valid
from codemods.device.rules.loop_batch_cases import loop_batch_invalid
from codemods.device.rules.prefetched_loader_cases import prefetched_loader_invalid, prefetched_loader_valid
from codemods.device.rules.rebound_input_cases import rebound_input_invalid, rebound_input_valid
from codemods.device.rules.scattered_input_cases import scattered_input_invalid, scattered_input_valid
from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

BATCH_OFF_XLA = Rule(
    code="XLA116",
    name="batch-off-xla",
    severity="error",
    summary="A loop feeds the model on the XLA device batches that stay on the CPU, or indexes a CPU tensor with a batch on the device",
    fixable=False,
    why="Obligation (3): each batch reaches the XLA device before the model's forward, in the training loop and "
    "in every evaluation loop calling the same model. The tool finds the loops that call a model it proved to "
    "be on the XLA device with batches they never move, from a source that yields CPU tensors: a loader whose "
    "batches another loop moves (the training loop does, the evaluation loop forgot: on CUDA the same crash; not "
    "timm's `create_loader(...)` with its prefetcher on, nor its `PrefetchLoader`, which copy each batch to their "
    "`device=`, the XLA device once ported (XLA113), so a loop over one moves nothing and is right), a "
    'data set cached with `torch.load(..., map_location="cuda")` that the port must load onto the CPU, or '
    '`torch.set_default_tensor_type("torch.cuda.FloatTensor")` kept while `torch.Tensor(...)` relies on it. '
    "So is a loop whose batches come from a package the tool does not follow (`loader = somelib.make_loader(cfg)`, "
    "`for x, y in somelib.iterate(data)`, also through `enumerate(...)` or `tqdm(...)`; not torch's DataLoader, nor "
    "the packages whose behaviour the tool knows, nor a module of the project): on CUDA it may have yielded tensors "
    "on the GPU (or the original would not have run), on an XLA host nothing says they reach the XLA device, so the "
    "tool does not take the forward as proven; a call handed a device (`device=device`, or the XLA device by "
    "position) may move its batches there and is not reported, nor is a batch handed with a device to a helper in "
    "the loop (`x = send_to_device(x, device)`); a helper of the project that moves what it is handed to the device "
    "it is handed (`to_device` returning `item.to(device)`) moves the batch, also inside a comprehension "
    "(`targets = [{k: to_device(v, device) for k, v in t.items()} for t in targets]`), as `v.to(device)` would. "
    "The same holds for a model on the XLA device handed to an evaluation function of a project module that still "
    "needs converting (a single-file run): its loops keep their CUDA moves; and for a DataLoader handed with that "
    "model to a function there whose loop feeds the model batches it never moves (`out = model(input)`, which the "
    "model's DataParallel scattered on CUDA): the tool changes nothing in that module, nor wraps the loader, so the "
    "call is reported, naming the batches; so does a step function there that "
    "takes its batch itself, moves it and feeds it to the model handed in (`model.train_step(model, optimizer, "
    "train_iterator, args)`, whose `pos = pos.cuda()` stays). Left so, the forward fails (torch_xla "
    "2.9: 'Expected XLA tensor. Got: torch.FloatTensor'). To resolve it, move each batch with `.to(device)` before "
    "the forward, or iterate `pl.MpDeviceLoader(loader, device)`; convert the other module too. Batches made "
    "by a callable of a project module that this run does not convert (`x, y = model.parse_batch(batch)`, whose "
    "`utils.to_gpu(x)` moves them to CUDA) are reported at that call in a single-file run: whether they reach "
    "the XLA device is decided there, and a run on the project folder converts it. A model on the XLA device and "
    "a DataLoader handed to a function of this file or of a converted module whose loop feeds the loader's "
    "batches to that model unmoved get the loader wrapped in `MpDeviceLoader` where they are handed (XLA302); "
    "where that function also uses the loader otherwise than by iterating it and taking its `len` "
    "(`data_loader.sampler.set_epoch(epoch)`; a device loader has no `sampler` or `dataset`), or the loader is "
    "built in the call, the call is reported here instead, naming the function and the batches: move each "
    "batch with `.to(device)` before the forward in that function, or iterate "
    "`pl.MpDeviceLoader(data_loader, device)` in its loop. So is a loader whose batches that function also reads "
    "on the host where a tensor on the XLA device is refused (`meta['center'].numpy()`, `np.array(meta['score'])`, "
    "on a part of the batch it does not move): a device loader moves every tensor of each batch, those parts too, "
    'and the read would fail ("can\'t convert xla:0 device type tensor to numpy"), so the tool does not wrap it '
    "(a tool-made crash) and asks for the model's inputs to be moved in that function (`x = x.to(device)`), "
    "which leaves the parts read on the host on the CPU; a read after `.cpu()` stands the wrap. A model the port unwraps gets the same check at each "
    "call: `nn.DataParallel` scattered every tensor of its inputs to the GPUs, however deep in lists, tuples and "
    "dicts, and `DistributedDataParallel(..., device_ids=[...])` moved them to its GPU, so scripts hand such a model "
    "tensors they never move (`model([img.cuda(), annot])`); once the port removes DataParallel (XLA605), or "
    "DDP's device_ids (XLA604), nothing moves them. A CPU tensor made by a torch factory (also bound to a name "
    "first), and a batch of a loop over a loader the port does not wrap in a device loader (`annot`, "
    "`data['annot']`, also a part of a batch the loop hands to a function or method of the file: `for batch in "
    "loader: self.step(batch)`), are reported at the call, also when the call's own assignment binds the name again "
    "(`out, h = self.net(x, h)` hands the model the `h` of before: a hidden state made on the host); a move in the call or bound before it, a tensor made on "
    "a device, a batch handed before the call to a function of the file or of the project that moves its "
    "tensors in place (`for k, v in batch.items(): batch[k] = v.cuda()`, ported with it), a batch whose values a "
    "loop over its keys reassigns moved (`for key in batch.keys(): batch[key] = to_device(batch[key], device)`, "
    "through a helper that returns its argument moved), and values that are not known tensors (numbers, strings, what the tool cannot place) are not. They "
    "are not moved by the tool: the call alone does not say which of a batch's values are tensors (a batch may "
    "carry file names), so the finding says to move each one that is. The process index a launcher hands the "
    "worker (`def main_worker(gpu, ...)`, also as `config.gpu = gpu`), handed as the device of a callable, of "
    "this file or another, that moves tensors to it (`Trainer(..., device=config.gpu)`, whose loop does "
    '`batch["x"].to(self.device)`: ZoeDepth), or as `device=` to a class looked up at run time, is reported '
    "there: under `torch_xla.launch` it is an int, and an integer device is cuda:N, so the move raises. Hand "
    "the XLA device and keep the index for ranks (XLA103 ports an index this file shows is a CUDA device). "
    "The other way round, a batch on the XLA device that indexes a tensor left on the CPU raises too (torch_xla "
    "2.9: RuntimeError, indices should be either on cpu or on the same device as the indexed tensor; CUDA "
    "accepts a CPU tensor indexed with CUDA indices): a lookup table a module holds as a plain attribute "
    "(`self.table = table` in `__init__`, neither a Parameter nor a buffer, so moving the module leaves it on "
    "the CPU) indexed in a method with an index the module's own layer takes (`self.emb(idx)`) and the result "
    "moved (`self.table[idx].to(device)`: the code knows the table is on the host), in a class whose instance "
    "the file moves; and a tensor a function makes on the CPU (`mask = torch.zeros(n, m)`) indexed there with "
    "a name it moved to the XLA device (`users = users.to(device)`, `mask[users]`). Register the table as a "
    "buffer, move it once, or index with `idx.cpu()`. A table handed in from elsewhere to a function "
    "(`def test(model, mask)`) is not followed.",
    examples=lambda: (
        invalid(
            """
            import torch

            data = torch.load("cache.pt", map_location="cuda")
            model = torch.nn.Linear(4, 2).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in data:
                loss = (model(x) - y).pow(2).mean()
            """,
            """
            import torch
            import torch_xla

            data = torch.load("cache.pt", map_location="cpu")
            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in data:
                loss = (model(x) - y).pow(2).mean()
            """,
            findings=(
                Expected(8, 13, "`x` reaches `model` (on the XLA device) on the CPU: `data` is loaded onto the CPU"),
            ),
        ),
    ),
    valid=lambda: (
        *launch_index_valid(),
        # The names unpacked from a batch moved whole carry it on the device.
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            model = torch.nn.Linear(4, 2).to(device)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for batch in loader:
                batch = tuple(t.to(device) for t in batch)
                x, y = batch
                model(x).sum().backward()
                xm.optimizer_step(opt)
                torch_xla.sync()
            """,
            note="names-unpacked-from-a-moved-batch",
            target_only=True,
        ),
        valid(
            """
            import torch.nn as nn
            from data import OrderedIterator

            model = nn.DataParallel(net)
            for x, y in OrderedIterator(tokens, 8, device=device):
                out = model(x, y.cuda())
            """,
            """
            import torch_xla
            from data import OrderedIterator

            model = net
            for x, y in OrderedIterator(tokens, 8, device=device):
                out = model(x, y.to(torch_xla.device()))
                torch_xla.sync()
            """,
            note="removed-wrapper-batches-of-an-iterable-handed-the-device",
        ),
        valid(
            """
            import torch
            from augmentations import augment

            model = torch.nn.Linear(4, 2).to("xla")
            optimizer = torch.optim.Adam(model.parameters())
            for batch in loader:
                batch = batch.to("xla")
                x = augment(batch)
                model(x).sum().backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            from augmentations import augment

            model = torch.nn.Linear(4, 2).to("xla")
            optimizer = torch.optim.Adam(model.parameters())
            for batch in loader:
                batch = batch.to("xla")
                x = augment(batch)
                model(x).sum().backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="a-moved-batch-through-another-module-stays-on-the-device",
        ),
        valid(
            """
            import torch

            model = torch.nn.Linear(4, 2).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                loss = (model(x) - y).pow(2).mean()
            with torch.no_grad():
                for x, y in val_loader:
                    x = x.cuda()
                    print(model(x))
            """,
            """
            import torch
            import torch_xla

            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                x, y = x.to(torch_xla.device()), y.to(torch_xla.device())
                loss = (model(x) - y).pow(2).mean()
                torch_xla.sync()
            with torch.no_grad():
                for x, y in val_loader:
                    x = x.to(torch_xla.device())
                    print(model(x))
            """,
            note="every-loop-moves-its-batches",
        ),
        valid(
            """
            import torch

            torch.set_default_tensor_type("torch.cuda.FloatTensor")
            model = torch.nn.Linear(4, 2).cuda()
            """,
            """
            import torch
            import torch_xla

            torch.set_default_device(torch_xla.device())
            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            """,
            note="no-tensor-relies-on-the-default-type",
            target_only=True,  # sagemaker's torch has no default device: XLA107 reports it there
        ),
        valid(
            """
            import torch

            device = torch.device("cuda")
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for xs, y in loader:
                xs = [x.to(device) for x in xs]
                loss = (model(xs) - y.to(device)).pow(2).mean()
            with torch.no_grad():
                for xs, y in loader:
                    xs = tuple(x.to(device) for x in xs)
                    print(model(xs))
                for xs, y in loader:
                    xs = {k: v.to(device) for k, v in xs.items()}
                    print(model(xs))
                for xs, y in loader:
                    xs = list(map(lambda t: t.to(device), xs))
                    print(model(xs))
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for xs, y in loader:
                xs = [x.to(device) for x in xs]
                loss = (model(xs) - y.to(device)).pow(2).mean()
                torch_xla.sync()
            with torch.no_grad():
                for xs, y in loader:
                    xs = tuple(x.to(device) for x in xs)
                    print(model(xs))
                for xs, y in loader:
                    xs = {k: v.to(device) for k, v in xs.items()}
                    print(model(xs))
                for xs, y in loader:
                    xs = list(map(lambda t: t.to(device), xs))
                    print(model(xs))
            """,
            note="comprehensions-move-the-batch",
        ),
        *scattered_input_valid(),
        *rebound_input_valid(),
        *prefetched_loader_valid(),
        *library_batch_valid(),
        *helper_move_valid(),
        *host_index_valid(),
    ),
    invalid=lambda: (
        *launch_index_invalid(),
        *loop_batch_invalid(),
        *scattered_input_invalid(),
        *rebound_input_invalid(),
        *prefetched_loader_invalid(),
        *library_batch_invalid(),
        *helper_move_invalid(),
        *host_index_invalid(),
    ),
)

# Where a proof of the obligations broke with this rule (device/obligations.py), as the module is left.
reports_broken_proofs(BATCH_OFF_XLA)


@reports_facts(BATCH_OFF_XLA, nodes=lambda facts: facts.distributed.scattered_inputs)
def _scattered_inputs(ctx: Context[Facts], original: cst.Call) -> str:
    why, inputs = ctx.facts.distributed.scattered_inputs[original]
    listed = ", ".join(f"`{name}`" for name in inputs)
    return (
        f"{listed} {'reaches' if len(inputs) == 1 else 'reach'} `{ctx.code(original.func)}` on the CPU: "
        f"{why}; move {'it' if len(inputs) == 1 else 'each'} to the device first if it is a tensor "
        f"(`{inputs[0]}.to(device)`), or iterate `pl.MpDeviceLoader(loader, device)`"
    )


# What the device obligations (device/obligations.py) say where a proof breaks with this rule.


def cuda_default_tensor_type(call: str, constructor: str) -> str:
    """A CUDA default tensor type that stays, which a legacy constructor relies on."""
    return (
        f'`{call}` stays: without CUDA it fails ("Found no NVIDIA driver") at the first '
        f"`{constructor}(...)`, which relies on it to make its tensors on the device; "
        "make them on the XLA device (`torch.tensor(..., device=device)`) and set only the dtype "
        "(`torch.set_default_dtype(torch.float32)`)"
    )


def launch_index_as_device(value: str, worker: str, index: str, callee: str, move: str) -> str:
    """The process index a launcher hands the worker, handed to a callable (``callee``, as the
    finding names it: with its module's path) that moves tensors to the device it is given."""
    return (
        f"`{value}` is `{index}`, the process index the launcher hands `{worker}` (an int), and {callee} "
        f"moves tensors to the device it is handed (`{move}`): an integer device is cuda:N, so on an "
        "XLA host the move raises; hand it the XLA device (torch_xla.device()), and keep the index for ranks"
    )


def launch_index_as_unfollowed_device(value: str, worker: str, index: str, callee: str, keyword: str) -> str:
    """The process index a launcher hands the worker, handed as ``keyword=`` to what a project
    callable returns (a class looked up at run time), which the tool cannot follow."""
    return (
        f"`{value}` is `{index}`, the process index the launcher hands `{worker}` (an int), handed as `{keyword}=` "
        f"to `{callee}`: where that moves tensors to it, an integer device is cuda:N, so on an XLA host the move "
        "raises; hand it the XLA device (torch_xla.device()), and keep the index for ranks"
    )


def batch_from_unconverted(name: str, model: str, func: str, where: str) -> str:
    """A batch made by ``func`` of a module the run does not convert."""
    return broken_proof(
        _reaches(name, model, f"from `{func}()` in {where}"),
        "whether the batch reaches the XLA device is decided there",
        "a run on the project folder follows it",
        which=False,
    )


def model_handed_to_unconverted(model: str, callee: str, path: str) -> str:
    """A model on the XLA device handed to a function, still to convert, that feeds it batches."""
    return (
        f"`{model}` (on the XLA device) goes to `{callee}` in {path}, which feeds it batches "
        "and still needs converting: there they stay on CUDA terms; convert that module too (run "
        "the tool on the project folder)"
    )


def scattered_batch_on_cpu(batch: str, model: str, scatter: str) -> str:
    """A batch that only the model's DataParallel or DDP wrapper moved on CUDA."""
    return broken_proof(f"`{batch}` reaches `{model}` on the CPU", scatter, _move_first(batch), which=False)


def feeds_unmoved(loader: str, batches: tuple[str, ...], model: str, scatter: str | None = None) -> str:
    """What a callable handed a loader and a model does with them (also the device loader's fix, XLA302);
    ``scatter``: what the model's DataParallel or DDP wrapper did with them on CUDA."""
    listed = ", ".join(f"`{n}`" for n in batches)
    if scatter is not None:
        return f"feeds the batches of its `{loader}` ({listed}) to `{model}` without moving them: {scatter}"
    return f"feeds the batches of its `{loader}` ({listed}) to `{model}` (on the XLA device) without moving them"


def loader_not_wrapped(loader: str, callee: str, where: str, feeds: str, loader_param: str, *, built: bool) -> str:
    """A loader handed to a callable that feeds its batches unmoved, which the tool cannot wrap."""
    why = (
        "the loader is built in the call"
        if built
        else f"it uses `{loader_param}` otherwise than by iterating it (a device loader has no `sampler` or `dataset`)"
    )
    return (
        f"`{loader}` goes to `{callee}` ({where}), which {feeds}; {why}, so the tool "
        "cannot wrap it: move each batch to the device there before the forward "
        "(`x = x.to(device)`), or iterate `pl.MpDeviceLoader(data_loader, device)` in its loop"
    )


def loader_to_unconverted(loader: str, callee: str, where: str, feeds: str) -> str:
    """A loader handed to a callable of a module the run does not convert that feeds its batches unmoved."""
    return (
        f"`{loader}` goes to `{callee}` ({where}), which {feeds}: the forward fails there; move each batch "
        "to the device before the forward in that function (`x = x.to(device)`), or convert that module too "
        "(a run on the project folder wraps the loader where it can)"
    )


def loader_read_on_host(loader: str, callee: str, where: str, feeds: str, reads: tuple[str, ...]) -> str:
    """A loader handed to a callable that feeds its batches unmoved and reads other parts of them on
    the host: a device loader would move those too, and the reads would fail."""
    listed = ", ".join(f"`{read}`" for read in reads)
    return (
        f"`{loader}` goes to `{callee}` ({where}), which {feeds}; it also reads parts of each batch on the host "
        f"({listed}), which a device loader would move to the XLA device too (\"can't convert xla:0 device type "
        "tensor to numpy\"), so the tool does not wrap it: move the model's inputs to the device there before the "
        "forward (`x = x.to(device)`)"
    )


def batches_moved_only_if(test: str, why: str) -> str:
    """The batches move only under a test of a CUDA device count that may be False on XLA (count_guards.py)."""
    return f"the batches move to the device only `if {test}`: {why}; move them whenever the model is on the XLA device"


def batch_on_cpu(batch: str, model: str, reason: str) -> str:
    """A loop feeds ``model`` (on the XLA device) a batch it does not move, from a CPU source."""
    return broken_proof(_reaches(batch, model, "on the CPU"), reason, _move_first(batch), which=False)


def _reaches(batch: str, model: str, how: str) -> str:
    return f"`{batch}` reaches `{model}` (on the XLA device) {how}"


def _move_first(batch: str) -> str:
    return (
        f"move it to the device first (`{batch} = {batch}.to(device)`), or iterate `pl.MpDeviceLoader(loader, device)`"
    )


def loaded_onto_cpu(data: str, location: str) -> str:
    """Why a batch is on the CPU: its data set is loaded onto the CPU (XLA cannot load onto its device)."""
    return f'`{data}` is loaded onto the CPU (`{location}` becomes "cpu": XLA cannot load onto its device)'


def moved_by_training_loop(source: str) -> str:
    """Why a batch is on the CPU: the loop that trains on its source moves the batches."""
    return f"`{source}` yields CPU tensors (the loop that trains on it moves them)"


def batch_from_library(batch: str, model: str, source: str, package: str) -> str:
    """A loop feeds ``model`` (on the XLA device) a batch it does not move, from ``source``, a call
    of ``package``, which the tool does not follow (device/library_batches.py)."""
    return broken_proof(
        _reaches(batch, model, "unmoved"),
        f"the batches come from `{source}` of `{package}`, which the tool does not follow (on CUDA it may yield "
        "tensors on the GPU, on an XLA host they are not on the XLA device)",
        f"move each batch to the device first (`{batch} = {batch}.to(torch_xla.device())`), or, after checking "
        f"that `{package}` yields CPU tensors, iterate `pl.MpDeviceLoader(loader, device)`",
        which=False,
    )


@reports_facts(BATCH_OFF_XLA, nodes=lambda facts: facts.device.host_indexings)
def _host_indexing(ctx: Context[Facts], original: cst.Subscript) -> str:
    table, index, source = ctx.facts.device.host_indexings[original]
    return (
        f"`{ctx.code(original)}` indexes `{table}`, a tensor on the CPU ({source}), with `{index}`, a tensor on "
        "the XLA device: torch_xla raises RuntimeError (indices should be either on cpu or on the same device as "
        f"the indexed tensor), where CUDA accepts it; {_put_on_the_device(table)}, or index with `{index}.cpu()`"
    )


def _put_on_the_device(table: str) -> str:
    if table.startswith("self.") and table.count(".") == 1 and "[" not in table:
        attribute = table.removeprefix("self.")
        return (
            f'register it as a buffer (`self.register_buffer("{attribute}", ...)`), which moves with the module, '
            "or move it to the device once"
        )
    if table.startswith("self."):
        return "move it to the device once (in `__init__`, or where the module moves)"
    return f"move it to the device once (`{table} = {table}.to(device)`)"
