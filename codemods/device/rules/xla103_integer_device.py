"""XLA103 integer-device: a CUDA index where a device goes (``.to(gpu)``, ``torch.zeros(n,
device=gpu)``, where ``gpu`` feeds ``.cuda(gpu)``, ``set_device(gpu)`` or ``device_ids=[gpu]``:
the device facts' ``index_moves``) and ``device = 0`` used as a device (``int_devices``) become
the target's device; a move to something only named like an index is reported
(``unsure_index_moves``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.listed_index_cases import listed_index_invalid, listed_index_valid
from codemods.device.rules.own_device_api_cases import own_device_api_index_invalid
from codemods.device.rules.own_device_cases import own_device_invalid, own_device_valid
from codemods.device.rules.string_index_cases import string_index_invalid, string_index_valid
from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

INTEGER_DEVICE = Rule(
    code="XLA103",
    name="integer-device",
    severity="error",
    summary="An integer CUDA device index used as a device becomes the XLA device",
    fixable=True,
    why="A CUDA device index used as a device (`.to(0)`, `torch.zeros(n, device=1)`, or `.to(args.gpu)`, "
    "`torch.zeros(n, device=args.gpu)` where `args.gpu` also feeds `.cuda()` or `set_device`, or a CUDA device "
    'string is built from it: `"cuda:" + str(args.device)`, `f"cuda:{args.gpu}"`) means cuda:N and '
    'raises on XLA, where each process has one device ("Found no NVIDIA driver"). A name a device string is '
    "built from is an index in the function that builds the string (and those nested in it; for `self.gpu`, its "
    "class's methods), and in the functions of the file it hands the namespace holding it to, on down "
    "(`evaluate(args, model, x)`, under the parameter's name; where another call hands that function something "
    "else, its moves stay, reported) only: the same name moved to in a function nothing hands it "
    "(`run2(args)`) may hold another namespace. "
    "A namespace whose attribute "
    "is such an index, handed to a callable of another module of the project (`Net(args)`, whose `__init__` "
    "does `.to(args.device)`), carries it there: converted with the project, that module's move becomes the "
    "XLA device where every caller of the run hands one (a caller in a file that names no torch, which the tool "
    "does not read, may hand anything: the move stays, reported); where the run does not convert that module, "
    "the call is reported with the move's line. An "
    "attribute the file later binds to a device (`args.device = device`) is no index. The index is "
    "followed through plain assignments (`self.gpu_id = gpu_id`) and into the parameters of this file's "
    "functions it is passed to (`Trainer(model, rank)`); a local that a function binds itself only to a string "
    '(`"cpu"`), to `torch.device("cpu")` or to another value\'s `.device` (`device = edge_list.device`) is no index there, whatever other '
    "functions hand `.cuda()` under the same name: its moves stay; and a `.cuda(device)` that XLA102 leaves (a "
    "project function's `utils.cuda`, a class's own `self.cuda`) marks no index. An int handed to a `device` parameter of a function "
    "of the file or of the project that moves tensors to it (`move(batch, self.rank)`, `self.rank` bound from a "
    "`rank: int` parameter) becomes the XLA device at the call. An element of a list of GPU numbers "
    "(`net.to(gpu_ids[0])`) is one where the file hands the list to `device_ids=` or an element to `.cuda()`, or "
    "the function asserts CUDA around the move. A `.to(x)` whose `x` is named like a GPU number "
    "(`gpu`, `rank`, `local_rank`, `device_id`) but that nothing marks as one is reported: it fails "
    "without CUDA. A tensor's own device (`hidden_states.device`, where the file uses `hidden_states` as a "
    "tensor) is never an index, even handed to `set_device` in a model-parallel branch: it is the XLA device "
    "once the model is there, and moves to it stay.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda(args.gpu)
            images = images.to(args.gpu)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            images = images.to(torch_xla.device())
            """,
            findings=(Expected(5, 20, "`args.gpu` names a CUDA device, an index or a device"),),
        ),
    ),
    valid=lambda: (
        *listed_index_valid(),
        *own_device_valid(),
        *string_index_valid(),
        valid(
            """
            import torch

            epochs = 0
            x = x.to(dtype)
            y = y.to(torch.float16)
            """,
        ),
        # nanoGPT hands its device string to set_device: the name is not an index, and the
        # user's --device=cpu override must keep working.
        valid(
            """
            import sys
            import torch

            device = 'cuda'
            for arg in sys.argv[1:]:
                key, value = arg[2:].split('=')
                globals()[key] = value
            if 'cuda' in device:
                torch.cuda.set_device(device)
            x = torch.zeros(2).to(device)
            """,
            """
            import sys
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = 'xla'
            for arg in sys.argv[1:]:
                key, value = arg[2:].split('=')
                globals()[key] = value
            x = torch.zeros(2).to(device)
            """,
            note="string-device-given-to-set-device",
        ),
        valid(
            """
            import torch

            def run(model, source, rank):
                rank = "cpu"
                return model(source.to(rank).to(torch.float16))
            """,
            note="a-string-rank-and-a-dtype",
        ),
    ),
    invalid=lambda: (
        *listed_index_invalid(),
        *own_device_api_index_invalid(),
        *own_device_invalid(),
        *string_index_invalid(),
        invalid(
            """
            import torch

            device = 0
            model.to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model.to(device)
            """,
            findings=(Expected(4, 10, "integer device 0 (cuda:0) -> the XLA device"),),
        ),
        invalid(
            """
            import torch

            batch = batch.to(0)
            mask = torch.ones(4, device=1)
            """,
            """
            import torch
            import torch_xla

            batch = batch.to(torch_xla.device())
            mask = torch.ones(4, device=torch_xla.device())
            """,
            note="integer-literal-device",
            findings=(
                Expected(4, 18, "integer device 0 (cuda:0) -> the XLA device"),
                Expected(5, 29, "integer device 1 (cuda:1) -> the XLA device"),
            ),
        ),
        invalid(
            """
            import torch

            rank = 0
            torch.cuda.set_device(rank)
            model = model.to(rank)
            if rank == 0:
                torch.save(model.state_dict(), "ckpt.pt")
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            rank = 0
            model = model.to(torch_xla.device())
            if rank == 0:
                xm.save(model.state_dict(), "ckpt.pt")
            """,
            note="rank-stays-a-number",
            findings=(Expected(6, 18, "`rank` names a CUDA device, an index or a device"),),
        ),
        invalid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, model, gpu_id):
                    self.gpu_id = gpu_id
                    self.model = DDP(model, device_ids=[gpu_id])

                def run(self, source):
                    return self.model(source.to(self.gpu_id))
            """,
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            import torch_xla

            class Trainer:
                def __init__(self, model, gpu_id):
                    self.gpu_id = gpu_id
                    self.model = DDP(model)

                def run(self, source):
                    return self.model(source.to(torch_xla.device()))
            """,
            note="an-attribute-that-holds-the-index",
            findings=(Expected(11, 37, "`self.gpu_id` names a CUDA device, an index or a device"),),
        ),
        invalid(
            """
            import torch

            def train(model, batch, gpu):
                return model(batch.to(gpu))

            def worker(rank, model, batch):
                torch.cuda.set_device(rank)
                train(model, batch, rank)
            """,
            """
            import torch
            import torch_xla

            def train(model, batch, gpu):
                return model(batch.to(torch_xla.device()))

            def worker(rank, model, batch):
                train(model, batch, rank)
            """,
            note="passed-to-a-parameter",
            findings=(Expected(5, 27, "`gpu` names a CUDA device, an index or a device"),),
        ),
        invalid(
            """
            import torch

            class Trainer:
                def __init__(self, model, gpu_id):
                    self.gpu_id = gpu_id
                    self.model = model

                def run(self, source):
                    return self.model(source.to(self.gpu_id))
            """,
            note="named-like-an-index-reported",
            findings=(
                Expected(9, 27, "`self.gpu_id` looks like a CUDA device number, but nothing here says it is one"),
            ),
        ),
    ),
)


@on_facts(INTEGER_DEVICE, nodes=lambda facts: facts.device.index_moves)
def _index_move(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    index = ctx.facts.device.index_moves[original]
    code = ctx.code(index)
    if type(index).__name__ == "Integer":
        message = f"integer device {code} (cuda:{code}) -> the XLA device"
    elif (why := ctx.facts.device.index_why.get(original)) is not None:
        message = f"{code} -> {ctx.target.api('device').spelled}(): {why}"
    else:
        message = (
            f"`{code}` names a CUDA device, an index or a device (this file gives it to `.cuda()`, "
            "`set_device()` or `device_ids=`): use the XLA device"
        )
    device = ctx.fix(INTEGER_DEVICE, index, message, ctx.device)
    if device is None:
        return updated
    ctx.imports.discard(index)
    position = next(i for i, arg in enumerate(original.args) if arg.value is index)
    args = list(updated.args)
    args[position] = args[position].with_changes(value=device)
    return updated.with_changes(args=args)


@reports_facts(INTEGER_DEVICE, nodes=lambda facts: facts.device.unsure_index_moves)
def _unsure_index_move(ctx: Context[Facts], original: cst.Call) -> str:
    from codemods.engine.nodes import arg_value

    device = ctx.code(arg_value(original, 0, "device"))  # type: ignore[arg-type]  # an unsure index move has its device argument (the analysis records it only then)
    return (
        f"`{device}` looks like a CUDA device number, but nothing here says it is one (no `.cuda({device})`, "
        f"`set_device({device})` or `device_ids=[{device}]`): on XLA move to the XLA device instead, or the "
        "move fails without CUDA"
    )


@reports_facts(INTEGER_DEVICE, nodes=lambda facts: facts.device.pending_index_moves)
def _pending_index_move(ctx: Context[Facts], original: cst.CSTNode) -> str:
    return ctx.facts.device.pending_index_moves[original]


@on_facts(INTEGER_DEVICE, nodes=lambda facts: facts.device.int_devices)
def _integer_device(ctx: Context[Facts], original: cst.Integer, updated: cst.Integer) -> cst.BaseExpression:
    """``device = 0`` (or ``device: int = 0``) -> ``device = <the target's device>``; the value
    of a tuple assignment stays."""
    parent = ctx.parent()
    if type(parent).__name__ not in ("Assign", "AnnAssign") or parent.value is not original:  # type: ignore[union-attr]  # an Assign or an AnnAssign (checked by name: a rule module loads no LibCST)
        return updated
    return ctx.fix_or_keep(
        updated,
        INTEGER_DEVICE,
        original,
        f"integer device {ctx.code(original)} (cuda:{ctx.code(original)}) -> the XLA device",
        ctx.device,
    )
