"""XLA119 guarded-move: a move to the device that runs only under a CUDA check that stays (the device
facts' ``guarded_moves``, found by device/guarded_moves.py): reported at the check, as an error, in
place of XLA105's warning."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.handed_flag_cases import handed_check_cases
from codemods.device.rules.visible_devices_cases import visible_devices_cases, visible_devices_valid
from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

_NEVER_RUNS = "on XLA that move never runs, and what it moves stays on the CPU"

# A module that swaps its own parts between devices (DALLE2's unets) only where its own parameters are on CUDA.
_PARTS_SWAP = """
from contextlib import contextmanager, nullcontext

import torch
from torch import nn


class Decoder(nn.Module):
    @contextmanager
    def one_unet_in_gpu(self, unet):
        devices = [next(u.parameters()).device for u in self.unets]
        self.unets.to("cpu")
        unet.to(torch.device("cuda"))
        yield
        for u, d in zip(self.unets, devices):
            u.to(d)

    @torch.no_grad()
    def sample(self, img):
        is_cuda = next(self.parameters()).is_cuda
        for unet in self.unets:
            with self.one_unet_in_gpu(unet) if is_cuda else nullcontext():
                img = unet(img)
        return img
"""
# Under the same check of its own parameters, a move of an input.
_INPUT_UNDER_OWN_CHECK = """
import torch
from torch import nn


class Decoder(nn.Module):
    @torch.no_grad()
    def sample(self, img):
        is_cuda = next(self.parameters()).is_cuda
        if is_cuda:
            img = img.cuda()
        return self.unet(img)
"""
# An ``nvidia-smi`` probe handed as the flag of a helper that moves only if it is true.
_FLAG_HELPER = """
import shutil

import torch


def gpu(t, on=False):
    if on:
        return t.cuda()
    return t


CUDA = shutil.which("nvidia-smi") is not None
net = gpu(torch.nn.Linear(4, 1), CUDA)
opt = torch.optim.Adam(net.parameters())
for step in range(10):
    loss = net(gpu(torch.randn(8, 4), CUDA)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
_CUDA_MOVE = (".cuda()", ".to(torch_xla.device())")


def _ported(
    program: str, *more: tuple[str, str], after: str = "from torch import nn\n", imports: str = "import torch_xla\n"
) -> str:
    """``program`` as the port leaves it: ``imports`` after the line ``after``, and what ``more`` changes
    (its moves to the XLA device)."""
    return substituted(program, (after, after + imports), *more)


GUARDED_MOVE = Rule(
    code="XLA119",
    name="guarded-move",
    severity="error",
    summary="A move to the device runs only under a CUDA check that stays, False on an XLA host after the port",
    fixable=False,
    why="Obligations (1) and (3), the path that runs: the port makes `.cuda()` and `.to(device)` move to the XLA "
    "device, but a move that runs only where a CUDA check holds proves nothing if the check stays and is False on an "
    "XLA host: the model or the batch it moves stays on the CPU (the forward then fails, or trains on the CPU), "
    "and a warning on the check (XLA105) would not say that a move hangs on it. The check may be in the `if` "
    'around the move (`if device.type == "cuda": x = x.cuda()`, where the file does not show that `device` is '
    "the XLA device), held by a name, or returned by a property or a function of the file (`if self.cuda_enabled:`, "
    'where the property returns `self.device.type == "cuda"`), or handed as a flag to a function that moves only '
    "if that parameter is true (`prepare_sample(samples, cuda_enabled=self.cuda_enabled)`, where `prepare_sample` "
    "moves `if cuda_enabled:`; that function may be in another module of the project, which a run on the project "
    "folder reads). Where the check is handed as a keyword to a method the file cannot follow (MiniGPT-4's "
    "`self.task.train_epoch(..., cuda_enabled=self.cuda_enabled)`, its task built by a registry), a run on the "
    "project folder reports it if a function of that name in the run's files moves only if that parameter is true "
    "(`BaseTask.train_epoch`, handing it on to `prepare_sample`), naming it; else it stays XLA105's warning. "
    "A move is `.cuda()`, `.to(device)`, or a call of a function that moves (in the file, or in "
    "another module of the project). The finding is at the check and names the move. A `torch.cuda.is_available()` "
    "check written around the move, or around a call of a function that moves (also one of another module of the "
    "project), picks the device and is dropped instead (XLA104); a device type check whose device the file shows "
    "to be the XLA device is ported (XLA110), a tensor's own check (`x.is_cuda`) too (XLA117). A check whose code "
    "moves nothing (cuDNN flags, CUDA seeding, pinned memory), or whose other branch moves as well "
    "(`x.pin_memory().to(device)` under it, `x.to(device)` in its `else`), stays XLA105's warning. To resolve it, "
    "make the check hold on an XLA host (compare the device type with 'xla' as well, drop an availability check) "
    "or move on every path; once `device` is the XLA device, a comparison with 'xla' holds there. Where the file "
    "does not show what the compared device holds (a parameter, `torch.device(cfg.run.device)` read from a config "
    "that may name CUDA), the message says the check is False there only if it is the XLA device, and shows the "
    "assignment: it claims no more than the file proves. A module's check of where its own parameters are "
    "(`is_cuda = next(self.parameters()).is_cuda`) that alone runs a swap of its own parts between devices (DALLE2's "
    "`self.one_unet_in_gpu(unet)`, which parks the other unets on the CPU) is no finding, nor XLA105's: on XLA the "
    "swap is skipped and the parts stay where the module is, on the XLA device; forcing it would only move them "
    "back and forth. Under the same check a move of anything else (an input, `img.cuda()`) is reported. A flag "
    "read from `CUDA_VISIBLE_DEVICES` (`os.environ.get`, `os.getenv`, `os.environ[...]`, through the names it is "
    'assigned to: ProDiff\'s `self.all_gpu_ids = [int(x) for x in os.environ.get("CUDA_VISIBLE_DEVICES", "")'
    '.split(",") if x]`, `self.on_gpu = self.num_gpus > 0`) that guards a move is an error at the guard too: the port '
    "leaves the environment alone, and on an XLA host (a TPU VM) the variable is normally unset, so the flag is False "
    "and the move never runs; decide with the XLA device (`torch_xla.device()`, the runtime's device count) instead. A "
    "read that only feeds a log line or a count that guards no move chooses nothing and is no finding. In a file that "
    "no file of the run imports (a run on one module), a move under an attribute of a parameter (`def "
    "initiate(hyp_params, ...)`: `if hyp_params.use_cuda: model = model.cuda()`, Multimodal-Transformer's "
    "src/train.py) that the file neither sets nor declares as a switch (`--use_cuda`) is an error at the guard where "
    "another file of the project (or a script beside a package folder without a root marker that imports it) sets "
    "that attribute on a namespace and calls `torch.cuda.is_available()` (main.py's `hyp_params.use_cuda = "
    "use_cuda`): that check stays there, False on an XLA host, so the flag is False; the finding names that file and "
    "says that converting the project follows the flag there (its check is dropped, XLA104). A run on the project "
    "makes no such finding.",
    instead='Make the check hold on an XLA host: `device.type in ("cuda", "xla")` for a device type compared '
    "with 'cuda', no check for `torch.cuda.is_available()`; or move on every path.",
    examples=lambda: (
        invalid(
            """
            import torch

            def step(model, x, device):
                if device.type == "cuda":
                    x = x.cuda()
                return model(x)
            """,
            """
            import torch
            import torch_xla

            def step(model, x, device):
                if device.type == "cuda":
                    x = x.to(torch_xla.device())
                return model(x)
            """,
            findings=(Expected(5, 8, f"and `x.cuda()` moves to the device only under it: {_NEVER_RUNS}"),),
        ),
    ),
    valid=lambda: (
        *visible_devices_valid(),
        valid(
            """
            import torch


            def prepare_sample(samples, cuda_enabled=True):
                if cuda_enabled:
                    samples = samples.cuda()
                return samples


            def setup(device, dataset):
                if device.type == "cuda":
                    torch.cuda.manual_seed_all(0)
                loader = torch.utils.data.DataLoader(dataset, pin_memory=torch.cuda.is_available())
                if device.type != "cuda":
                    print("slow")
                return [prepare_sample(x) for x in loader]
            """,
            """
            import torch
            import torch_xla


            def prepare_sample(samples, cuda_enabled=True):
                if cuda_enabled:
                    samples = samples.to(torch_xla.device())
                return samples


            def setup(device, dataset):
                if device.type == "cuda":
                    torch.cuda.manual_seed_all(0)
                loader = torch.utils.data.DataLoader(dataset, pin_memory=torch.cuda.is_available())
                if device.type != "cuda":
                    print("slow")
                return [prepare_sample(x) for x in loader]
            """,
            note="checks-that-guard-no-move-and-a-flag-left-at-its-default",
        ),
        valid(
            """
            import torch

            device = torch.device("cuda")


            def get_batch(x, device_type):
                if device_type == "cuda":
                    x = x.pin_memory().to(device, non_blocking=True)
                else:
                    x = x.to(device)
                return x


            def step(model, x):
                if device.type == "cuda":
                    x = x.cuda()
                return model(x)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()


            def get_batch(x, device_type):
                if device_type == "cuda":
                    x = x.to(device, non_blocking=True)
                else:
                    x = x.to(device)
                return x


            def step(model, x):
                if device.type == "xla":
                    x = x.to(torch_xla.device())
                return model(x)
            """,
            note="moved-either-way-or-a-check-ported",
        ),
        valid(
            _PARTS_SWAP,
            _ported(_PARTS_SWAP, ('torch.device("cuda")', "torch_xla.device()")),
            note="a-modules-swap-of-its-own-parts-under-its-own-parameters-is-cuda",
        ),
    ),
    invalid=lambda: (
        *handed_check_cases(),
        *visible_devices_cases(),
        invalid(
            _FLAG_HELPER,
            _ported(
                _FLAG_HELPER,
                _CUDA_MOVE,
                ("    opt.step()\n", "    xm.optimizer_step(opt)\n    torch_xla.sync()\n"),
                after="import torch\n",
                imports="import torch_xla\nimport torch_xla.core.xla_model as xm\n",
            ),
            note="nvidia-smi-probe-handed-to-a-flag-helper",
            findings=(
                Expected(
                    14, 8, '`shutil.which("nvidia-smi")` is False on an XLA host after the port, and it is handed'
                ),
            ),
        ),
        invalid(
            """
            import torch


            def step(model, batch, device):
                x = batch.cuda(non_blocking=True) if device.type == "cuda" else batch
                if device.type != "cuda":
                    x = x.float()
                return model(x)
            """,
            """
            import torch
            import torch_xla


            def step(model, batch, device):
                x = batch.to(torch_xla.device(), non_blocking=True) if device.type == "cuda" else batch
                if device.type != "cuda":
                    x = x.float()
                return model(x)
            """,
            note="a-conditional-expression-moves-under-the-check",
            findings=(
                Expected(
                    6,
                    60,
                    f"and `batch.cuda(non_blocking=True)` moves to the device only under it: {_NEVER_RUNS}",
                ),
            ),
        ),
        invalid(
            """
            import torch


            class Runner:
                def __init__(self, model, device):
                    self.device = device
                    self.model = model.to(device)

                @property
                def cuda_enabled(self):
                    return self.device.type == "cuda"

                def step(self, x):
                    if self.cuda_enabled:
                        x = x.cuda()
                    return self.model(x)
            """,
            """
            import torch
            import torch_xla


            class Runner:
                def __init__(self, model, device):
                    self.device = device
                    self.model = model.to(device)

                @property
                def cuda_enabled(self):
                    return self.device.type == "cuda"

                def step(self, x):
                    if self.cuda_enabled:
                        x = x.to(torch_xla.device())
                    return self.model(x)
            """,
            note="a-property-returns-the-check",
            findings=(
                Expected(
                    12,
                    16,
                    '`self.device.type == "cuda"` is False on an XLA host only if `self.device` is the XLA device '
                    "there (this file does not show what it holds: `self.device = device`), and "
                    f"`x.cuda()` moves to the device only under it (`self.cuda_enabled`): {_NEVER_RUNS}",
                ),
            ),
        ),
        invalid(
            """
            import torch as th


            class Runner:
                def __init__(self, model, cfg):
                    self.device = th.device(cfg.run.device)
                    self.model = model.to(self.device)

                @property
                def cuda_enabled(self):
                    return self.device.type == "cuda"

                def step(self, x):
                    if self.cuda_enabled:
                        x = x.cuda()
                    return self.model(x)
            """,
            """
            import torch as th
            import torch_xla


            class Runner:
                def __init__(self, model, cfg):
                    self.device = th.device(cfg.run.device)
                    self.model = model.to(self.device)

                @property
                def cuda_enabled(self):
                    return self.device.type == "cuda"

                def step(self, x):
                    if self.cuda_enabled:
                        x = x.to(torch_xla.device())
                    return self.model(x)
            """,
            note="a-config-value-the-file-cannot-tell-is-not-called-the-xla-device",
            findings=(
                Expected(
                    12,
                    16,
                    '`self.device.type == "cuda"` is False on an XLA host only if `self.device` is the XLA device '
                    "there (this file does not show what it holds: `self.device = th.device(cfg.run.device)`), and "
                    f"`x.cuda()` moves to the device only under it (`self.cuda_enabled`): {_NEVER_RUNS}",
                ),
            ),
        ),
        invalid(
            """
            import torch


            def move_to_cuda(sample):
                def _move(tensor):
                    return tensor.cuda()

                return {k: _move(v) for k, v in sample.items()}


            def prepare_sample(samples, cuda_enabled=True):
                if cuda_enabled:
                    samples = move_to_cuda(samples)
                return samples


            def train(model, loader, use_cuda):
                for samples in loader:
                    samples = prepare_sample(samples, cuda_enabled=use_cuda)
                    model(samples)


            def main(model, loader):
                train(model, loader, torch.cuda.is_available())
            """,
            """
            import torch
            import torch_xla


            def move_to_cuda(sample):
                def _move(tensor):
                    return tensor.to(torch_xla.device())

                return {k: _move(v) for k, v in sample.items()}


            def prepare_sample(samples, cuda_enabled=True):
                if cuda_enabled:
                    samples = move_to_cuda(samples)
                return samples


            def train(model, loader, use_cuda):
                for samples in loader:
                    samples = prepare_sample(samples, cuda_enabled=use_cuda)
                    model(samples)


            def main(model, loader):
                train(model, loader, torch.cuda.is_available())
            """,
            note="a-flag-handed-on-to-a-helper-that-moves-under-it",
            findings=(
                Expected(
                    25,
                    26,
                    "`torch.cuda.is_available()` is False on an XLA host after the port, and it is handed to `train` "
                    "as `use_cuda` (`train(model, loader, torch.cuda.is_available())`), which moves to the device "
                    f"only if `use_cuda` is true: {_NEVER_RUNS}",
                ),
            ),
        ),
        invalid(
            """
            from torch import cuda


            def prepare_sample(samples, cuda_enabled=True):
                if cuda_enabled:
                    samples = samples.cuda()
                return samples


            def train(model, loader):
                use_cuda = cuda.is_available()
                for samples in loader:
                    model(prepare_sample(samples, use_cuda))
            """,
            """
            from torch import cuda
            import torch_xla


            def prepare_sample(samples, cuda_enabled=True):
                if cuda_enabled:
                    samples = samples.to(torch_xla.device())
                return samples


            def train(model, loader):
                use_cuda = cuda.is_available()
                for samples in loader:
                    model(prepare_sample(samples, use_cuda))
            """,
            note="a-name-holds-the-check-from-import",
            alias=True,
            findings=(
                Expected(
                    12,
                    16,
                    "`cuda.is_available()` is False on an XLA host after the port, and it is handed to "
                    "`prepare_sample` as `cuda_enabled`",
                ),
            ),
        ),
        invalid(
            _INPUT_UNDER_OWN_CHECK,
            _ported(_INPUT_UNDER_OWN_CHECK, _CUDA_MOVE),
            note="an-input-moved-under-the-modules-own-parameters-is-cuda",
            findings=(Expected(9, 19, "`next(self.parameters()).is_cuda` is False on an XLA host after the port"),),
        ),
    ),
)


@reports_facts(GUARDED_MOVE, nodes=lambda facts: facts.device.guarded_moves)
def _report(ctx: Context[Facts], original: cst.CSTNode) -> str:
    return ctx.target.advice(ctx.facts.device.guarded_moves[original])


@on_facts(GUARDED_MOVE, nodes=lambda facts: facts.device.unfollowed_flags)
def _held(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    """A check handed as a keyword to a method the file cannot follow: the error stands if a
    function of that name in the run's files moves only if that parameter is true."""
    from codemods.device.held_conditions import StandsIfHandedToAFlagMove

    method, keyword, message, tail = ctx.facts.device.unfollowed_flags[original]
    ctx.report(GUARDED_MOVE, original, message, held=StandsIfHandedToAFlagMove(method, keyword, tail, error=True))
    return updated
