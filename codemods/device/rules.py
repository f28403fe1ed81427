"""XLA005, XLA1: the device (and scripts that have none)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, run, valid

NO_DEVICE = Rule(
    code="XLA005",
    name="no-device",
    severity="error",
    summary="A training script that names no device runs on the CPU: it is left unchanged",
    fixable=False,
    why="A script that never moves its model or data (no `.to()`, `.cuda()`, `device=`; pytorch/examples' "
    "time_sequence_prediction, an RL agent class that builds its optimizer over `self.parameters()`) trains on "
    "the CPU: obligation (1) of every training step, the stepped model on the XLA device, is broken, so this is "
    "an error (the converted script would train on the wrong device). Porting only its loop (a barrier, "
    "`xm.optimizer_step`, step closures) would leave it on the CPU with XLA calls that do nothing; where its "
    "tensors should live is a choice the tool cannot make (numpy data, float64 models), so the file is left as "
    "it is and this one finding says so. To resolve it, move the model and its tensors to `torch_xla.device()`; "
    "a second conversion ports the rest.",
    examples=lambda: (
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for x, y in data:\n    model(x).sum().backward()\n    opt.step()\n",
            findings=(Expected(4, 1, "this script trains but picks no device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            def train(model, optimizer, batches):
                for x, y in batches:
                    optimizer.zero_grad()
                    model(x).sum().backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def train(model, optimizer, batches):
                for x, y in batches:
                    optimizer.zero_grad()
                    model(x).sum().backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="a-training-function-handed-its-model",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in data:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
            """,
            note="left-unchanged",
            findings=(Expected(5, 1, "this script trains but picks no device"),),
        ),
        invalid(
            """
            from torch import nn, optim as O

            class Net(nn.Module):
                pass

            net = Net()
            opt = O.LBFGS(net.parameters())
            for step in range(5):
                def closure():
                    opt.zero_grad()
                    loss = net(x).sum()
                    loss.backward()
                    return loss
                opt.step(closure)
            """,
            note="lbfgs",
            alias=True,
            findings=(Expected(8, 1, "this script trains but picks no device"),),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn
            import torch.optim as optim

            def main():
                q, q_target = nn.Linear(3, 1), nn.Linear(3, 1)
                q_optimizer = optim.Adam(q.parameters(), lr=0.001)
                for n_epi in range(100):
                    loss = (q(torch.randn(8, 3)) - q_target(torch.randn(8, 3)).detach()).pow(2).mean()
                    q_optimizer.zero_grad()
                    loss.backward()
                    q_optimizer.step()
            """,
            note="models-built-in-one-tuple-assignment",
            findings=(Expected(8, 5, "this script trains but picks no device"),),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn
            import torch.optim as optim

            class PPO(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                    self.optimizer = optim.Adam(self.parameters(), lr=0.0005)

                def train_net(self, batches):
                    for s in batches:
                        loss = self.fc(s).sum()
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()

            def main():
                model = PPO()
                for n_epi in range(100):
                    model.train_net([torch.randn(8, 4)])
            """,
            note="agent-class-steps-its-own-parameters",
            findings=(Expected(12, 9, "this script trains but picks no device"),),
        ),
        invalid(
            """
            from torch import nn
            from torch.optim import Adam as A

            class Agent(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                    self.opt = A(self.parameters())

                def update(self, batches):
                    for s in batches:
                        self.opt.zero_grad()
                        self.fc(s).sum().backward()
                        self.opt.step()

            agent = Agent()
            for episode in range(10):
                agent.update(data)
            """,
            note="agent-class-aliases-sagemaker",
            target="sagemaker",
            alias=True,
            findings=(Expected(11, 9, "this script trains but picks no device"),),
        ),
    ),
)

CUDA_DEVICE = Rule(
    code="XLA101",
    name="cuda-device",
    severity="error",
    summary="CUDA device (torch.device('cuda'), 'cuda:N' strings) becomes the XLA device",
    fixable=True,
    why="An XLA machine has no CUDA device: the first tensor moved to `torch.device('cuda')` raises. The "
    "target's device call takes its place (a device kept as a string becomes 'xla'). A module-level alias of "
    "torch.device (`Device = torch.device`, `Device: TypeAlias = device`: fairseq2's spelling, also when another "
    'module of the project defines it) is torch.device too: `Device("cuda", index)` becomes the XLA device.',
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda:0")
            model = Net().to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = Net().to(device)
            """,
            findings=(Expected(4, 10, 'torch.device("cuda:0") -> torch_xla.device()'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            device = torch.device("cpu")
            print("cuda")
            backend_type = "cuda"
            """,
            note="cpu-and-non-device-strings",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device() if USE_XLA else torch.device("cuda")
            if args.tpu:
                device = xm.xla_device()
            else:
                device = torch.device("cuda")
            """,
            note="xla-aware-branches",
        ),
        valid(
            """
            import torch

            def describe(rank):
                label = f"cuda:{rank}"
                print("running on", label)
            """,
            note="string-not-used-as-device",
        ),
        valid(
            """
            from typing import TypeAlias

            import torch

            Device: TypeAlias = torch.device
            CPU = Device("cpu")

            def move(t: torch.Tensor, device: Device) -> torch.Tensor:
                return t.to(device)
            """,
            note="alias-of-torch-device-on-the-cpu",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            noise = torch.randn(3, device="cuda:1")
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            noise = torch.randn(3, device="xla")
            """,
            findings=(
                Expected(4, 10, 'torch.device("cuda") -> torch_xla.device()'),
                Expected(5, 31, '"cuda:1" -> "xla" (one XLA device per process'),
            ),
        ),
        invalid(
            """
            import torch

            parser.add_argument('--device', default='cuda')
            local = torch.device(f"cuda:{rank}")
            """,
            """
            import torch
            import torch_xla

            parser.add_argument('--device', default='xla')
            local = torch_xla.device()
            """,
            note="cli-default-and-fstring",
            findings=(
                Expected(4, 41, "'cuda' -> 'xla'"),
                Expected(5, 9, 'torch.device(f"cuda:{rank}") -> torch_xla.device()'),
            ),
        ),
        invalid(
            """
            import torch as th

            dev = th.device('cuda' if th.cuda.is_available() else 'cpu')
            """,
            """
            import torch as th
            import torch_xla

            dev = torch_xla.device()
            """,
            alias=True,
            findings=(Expected(4, 7, "th.device('cuda' if th.cuda.is_available() else 'cpu') -> torch_xla.device()"),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(4, 10, 'torch.device("cuda") -> xm.xla_device()'),),
        ),
        invalid(
            """
            import torch

            def main_worker(rank):
                loc = 'cuda:{:d}'.format(rank)
                target = f"cuda:{rank}"
                model = torch.nn.Linear(4, 2).to(torch.device(loc))
                x = torch.randn(2, 4, device=target)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def main_worker(rank):
                loc = "xla"
                target = "xla"
                model = torch.nn.Linear(4, 2).to(torch.device(loc))
                x = torch.randn(2, 4, device=target)
            """,
            note="runtime-strings-in-any-name",
            findings=(
                Expected(5, 11, "'cuda:{:d}'.format(rank) -> \"xla\""),
                Expected(6, 14, 'f"cuda:{rank}" -> "xla"'),
            ),
        ),
        invalid(
            """
            from typing import TypeAlias

            import torch
            from torch import device

            Device: TypeAlias = device
            CudaDevice = torch.device

            def model_device(index: int) -> Device:
                return Device("cuda", index)

            noise = torch.randn(3, device=CudaDevice(f"cuda:{rank}"))
            """,
            """
            from typing import TypeAlias

            import torch
            from torch import device
            import torch_xla

            Device: TypeAlias = device
            CudaDevice = torch.device

            def model_device(index: int) -> Device:
                return torch_xla.device()

            noise = torch.randn(3, device=torch_xla.device())
            """,
            note="module-level-alias-of-torch-device",
            alias=True,
            findings=(
                Expected(11, 12, 'Device("cuda", index) -> torch_xla.device()'),
                Expected(13, 31, 'CudaDevice(f"cuda:{rank}") -> torch_xla.device()'),
            ),
        ),
        invalid(
            """
            import torch
            from torch import device as Device

            device = Device("cuda")
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            note="imported-as-another-name",
            alias=True,
            findings=(Expected(4, 10, 'Device("cuda") -> torch_xla.device()'),),
        ),
    ),
)

DOT_CUDA = Rule(
    code="XLA102",
    name="dot-cuda",
    severity="error",
    summary="`.cuda()` becomes `.to(<XLA device>)`",
    fixable=True,
    why="`.cuda()` moves a module or a tensor to a CUDA device and raises without one; `.to()` with the XLA "
    "device moves it there, keeping the other arguments.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda()
            inputs = batch.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            inputs = batch.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 10, "batch.cuda(non_blocking=True) -> batch.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            use_gpu = torch.cuda.is_available()
            x = x.to("cpu")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda()
            x = x.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            x = x.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 5, "x.cuda(non_blocking=True) -> x.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla as tx

            model.cuda()
            """,
            """
            import torch
            import torch_xla as tx

            model.to(tx.device())
            """,
            note="existing-torch_xla-alias",
            alias=True,
            findings=(Expected(4, 1, "model.cuda() -> model.to(tx.device())"),),
        ),
    ),
)

INTEGER_DEVICE = Rule(
    code="XLA103",
    name="integer-device",
    severity="error",
    summary="An integer CUDA device index used as a device becomes the XLA device",
    fixable=True,
    why="A CUDA device index used as a device (`.to(0)`, `torch.zeros(n, device=1)`, or `.to(args.gpu)`, "
    "`torch.zeros(n, device=args.gpu)` where `args.gpu` also feeds `.cuda()` or `set_device`) means cuda:N and "
    "raises on XLA, where each process has one device. The index is "
    "followed through plain assignments (`self.gpu_id = gpu_id`) and into the parameters of this file's "
    "functions it is passed to (`Trainer(model, rank)`). A `.to(x)` whose `x` is named like a GPU number "
    "(`gpu`, `rank`, `local_rank`, `device_id`) but that nothing marks as one is reported: it fails "
    "without CUDA.",
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
            import torch as th

            model = model.cuda(args.gpu)
            batch = batch.to(args.gpu)
            """,
            """
            import torch as th
            import torch_xla

            model = model.to(torch_xla.device())
            batch = batch.to(torch_xla.device())
            """,
            note="index-seen-in-cuda-call",
            alias=True,
            findings=(Expected(5, 18, "`args.gpu` names a CUDA device, an index or a device"),),
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

CUDA_AVAILABLE_DEVICE = Rule(
    code="XLA104",
    name="cuda-available-device",
    severity="error",
    summary="`torch.cuda/accelerator.is_available()` that picks the device: the XLA device is always there",
    fixable=True,
    why="`torch.cuda.is_available()` is False on an XLA machine, so a device picked by it silently falls back "
    "to the CPU and the script trains there. Where the check picks the device it is dropped; a `--no-cuda` "
    "flag still selects the CPU. `assert torch.cuda.is_available()` is removed, and so is an exit under "
    "`if not verify_min_gpu_count(...):` when that function of the file checks for CUDA devices and counts "
    "them (pytorch/examples minGPT-DDP): both are always true on XLA, where the script would end there; the "
    "XLA launcher starts one process per XLA device, so a minimum number of devices is no longer enforced "
    "(the finding says so). `torch.cuda.is_initialized()` (OLMo's `is_available() and is_initialized()`) "
    "is such a check too: it asks whether this process has set CUDA up, which on XLA it never has. An early "
    '`if not torch.cuda.is_available(): return torch.device("cpu")` picks the device as well, and goes. A check '
    "whose code also runs a CUDA-only call (one that raises without CUDA) cannot be dropped: it stays, and "
    "its error says that the path without CUDA runs there, so the model and tensors stay on the CPU. A check "
    "asked through a function or method of the file (`if cuda.is_available():`, where that method returns "
    "`torch.cuda.is_available()` or `torch.cuda.device_count() > 0`: fairseq2's `CudaContext`) is left as "
    "is and is an error: on XLA the wrapper returns False, so the device it picks is the CPU; make the "
    "wrapper return True, or pick `torch_xla.device()` there. Wrappers in other files are not followed. A flag "
    "that picks the device in another module of the project is dropped too: a flag named for CUDA or the GPU "
    "that a function returns on an object (`args.cuda = not args.no_cuda and torch.cuda.is_available(); return "
    "args` in arguments.py, read by main.py), and a flag handed to a callable of a project module whose device "
    "choice reads it (`args.use_gpu = torch.cuda.is_available() and args.use_gpu`, then `Exp(args)`, whose base "
    "class picks `cuda` under `if self.args.use_gpu:`). A file that chooses the device with another module's "
    "flag follows it there (XLA111, XLA112).",
    examples=lambda: (
        invalid(
            """
            import torch

            use_cuda = not args.no_cuda and torch.cuda.is_available()
            device = torch.device("cuda" if use_cuda else "cpu")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            use_cuda = not args.no_cuda
            device = torch.device("xla" if use_cuda else "cpu")
            """,
            findings=(Expected(4, 12, "`use_cuda` picks the device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            def get_args(parser):
                args = parser.parse_args()
                args.benchmark = torch.cuda.is_available() and args.fast
                return args
            """,
            filename="arguments.py",
            note="a-returned-flag-not-named-for-cuda-stays",
        ),
        valid(
            """
            import sys
            import torch

            def has_data(path):
                return os.path.exists(path)

            def count_gpus():
                return torch.cuda.device_count()

            if not has_data("data"):
                sys.exit()
            if not count_gpus():
                print("no GPU")
            """,
            note="exits-that-check-no-cuda-device-or-do-not-exit",
        ),
        valid(
            """
            import torch

            pin = torch.cuda.is_available()
            loader = DataLoader(ds, pin_memory=pin)
            if torch.cuda.is_available():
                torch.cuda.manual_seed_all(0)
            """,
            note="not-a-device-choice",
        ),
        valid(
            """
            import torch

            def setup():
                if not torch.cuda.is_available():
                    return
                torch.cuda.manual_seed_all(0)
            """,
            note="a-return-only-skips-cuda-code",
        ),
        valid(
            """
            import os
            import torch

            def has_checkpoint(path):
                return os.path.exists(path)

            if has_checkpoint("ckpt.pt"):
                device = torch.device("cuda")
            """,
            """
            import os
            import torch
            import torch_xla

            def has_checkpoint(path):
                return os.path.exists(path)

            if has_checkpoint("ckpt.pt"):
                device = torch_xla.device()
            """,
            note="a-wrapper-of-something-else",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist

            def setup():
                if not torch.cuda.is_available():
                    raise SystemExit("this example needs CUDA")
                if torch.cuda.is_available():
                    backend = "nccl"
                else:
                    raise RuntimeError("no GPU")
                dist.init_process_group(backend)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup():
                backend = "xla"
                dist.init_process_group(backend, init_method="xla://")
            """,
            note="a-check-that-stops-the-script-without-cuda",
            findings=(
                Expected(
                    6,
                    8,
                    "`not torch.cuda.is_available()`: the accelerator check holds for the XLA device, "
                    "so the code under it never runs: removed",
                ),
                Expected(
                    7,
                    8,
                    "`torch.cuda.is_available()`: the accelerator check holds for the XLA device, "
                    "so the code under it always runs: check dropped",
                ),
            ),
        ),
        invalid(
            """
            import sys
            import torch

            def verify_min_gpu_count(min_gpus: int = 2) -> bool:
                has_gpu = torch.accelerator.is_available()
                gpu_count = torch.accelerator.device_count()
                return has_gpu and gpu_count >= min_gpus

            def main():
                if not verify_min_gpu_count(min_gpus=2):
                    print("Unable to locate sufficient 2 gpus to run this example. Exiting.")
                    sys.exit()
                train()
            """,
            """
            import torch

            def verify_min_gpu_count(min_gpus: int = 2) -> bool:
                has_gpu = torch.accelerator.is_available()
                gpu_count = torch.accelerator.device_count()
                return has_gpu and gpu_count >= min_gpus

            def main():
                train()
            """,
            note="minimum-gpu-count-exit-removed",
            findings=(Expected(9, 5, "removed `if not verify_min_gpu_count(min_gpus=2):` and the exit under it"),),
        ),
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                # move the model to the GPU
                model.cuda()
            else:
                print("cpu only")
            """,
            """
            import torch
            import torch_xla

            # move the model to the GPU
            model.to(torch_xla.device())
            """,
            note="if-statement",
            findings=(Expected(4, 4, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            cuda = True if torch.cuda.is_available() else False
            Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
            """,
            note="flag-blocked-by-cuda-only-code",
            findings=(
                Expected(
                    3, 8, "`cuda` picks the device but also guards `torch.cuda.FloatTensor`, which fails without CUDA"
                ),
            ),
        ),
        invalid(
            """
            import torch

            for x, y in loader:
                if torch.cuda.is_available():  # move the batch
                    x = x.cuda()
                    # the targets stay on the host
                else:
                    x = x.float()
                    # nothing to move
                print(x)
            """,
            """
            import torch
            import torch_xla

            for x, y in loader:
                # move the batch
                x = x.to(torch_xla.device())
                # the targets stay on the host
                print(x)
            """,
            note="unwrapped-block-keeps-its-comments",
            findings=(Expected(5, 8, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            for x in loader:
                if torch.cuda.is_available():
                    x = x.cuda()
                elif torch.cuda.device_count() == 0:
                    x = x.float()
                # LibCST gives this line to the elif's block
                    # and this one
                print(x)
            """,
            """
            import torch
            import torch_xla

            for x in loader:
                x = x.to(torch_xla.device())
                # LibCST gives this line to the elif's block
                # and this one
                print(x)
            """,
            note="removed-branch-keeps-the-comments-after-it",
            findings=(Expected(5, 8, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            use_accel = not args.no_accel and torch.accelerator.is_available()
            if use_accel:
                device = torch.accelerator.current_accelerator()
            else:
                device = torch.device("cpu")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            use_accel = not args.no_accel
            if use_accel:
                device = torch.device("xla")
            else:
                device = torch.device("cpu")
            """,
            note="torch-accelerator",
            findings=(Expected(4, 13, "`use_accel` picks the device"),),
        ),
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                torch.cuda.synchronize()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            note="guard-of-ported-code",
            findings=(Expected(4, 4, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            def default_device():
                if torch.cuda.is_available() and torch.cuda.is_initialized():
                    return torch.device("cuda")
                else:
                    return torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            def default_device():
                return torch_xla.device()
            """,
            note="cuda-initialized-is-an-accelerator-check",
            findings=(
                Expected(
                    5, 8, "`torch.cuda.is_available() and torch.cuda.is_initialized()`: the accelerator check holds"
                ),
            ),
        ),
        invalid(
            """
            import torch

            def default_device():
                if not torch.cuda.is_available():
                    return torch.device("cpu")
                return torch.device("cuda")
            """,
            """
            import torch
            import torch_xla

            def default_device():
                return torch_xla.device()
            """,
            note="early-return-of-the-cpu",
            findings=(
                Expected(
                    5,
                    8,
                    "`not torch.cuda.is_available()`: the accelerator check holds for the XLA device, so the code under it never runs: removed",
                ),
            ),
        ),
        invalid(
            """
            import torch

            def default_device():
                if torch.cuda.is_available():
                    if torch.cuda.is_initialized():
                        return torch.device(f"cuda:{torch.cuda.current_device()}")
                    return torch.device("cuda")
                return torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            def default_device():
                return torch_xla.device()
                return torch_xla.device()
                return torch.device("cpu")
            """,
            note="nested-checks-and-the-current-index",
            findings=(
                Expected(5, 8, "`torch.cuda.is_available()`: the accelerator check holds"),
                Expected(6, 12, "`torch.cuda.is_initialized()`: the accelerator check holds"),
            ),
        ),
        invalid(
            """
            import torch

            def default_device():
                if torch.cuda.is_available():
                    print(torch.cuda.get_device_name())
                    return torch.device("cuda")
                return torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            def default_device():
                if torch.cuda.is_available():
                    print(torch.cuda.get_device_name())
                    return torch_xla.device()
                return torch.device("cpu")
            """,
            note="device-choice-blocked-by-cuda-only-code",
            findings=(
                Expected(
                    5,
                    8,
                    "`torch.cuda.is_available()` picks the device, and the code it guards also runs "
                    "`torch.cuda.get_device_name`, which fails without CUDA: left as is, so on XLA (no CUDA) the path "
                    "without CUDA runs and the model and tensors stay on the CPU",
                ),
            ),
        ),
        invalid(
            """
            import torch

            class CudaContext:
                def is_available(self) -> bool:
                    return torch.cuda.is_available()

            def default_device(cuda: CudaContext) -> torch.device:
                if cuda.is_available():
                    return torch.device("cuda", index=0)
                return torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            class CudaContext:
                def is_available(self) -> bool:
                    return torch.cuda.is_available()

            def default_device(cuda: CudaContext) -> torch.device:
                if cuda.is_available():
                    return torch_xla.device()
                return torch.device("cpu")
            """,
            note="availability-asked-through-a-method",
            findings=(
                Expected(
                    9,
                    8,
                    "`cuda.is_available()` picks the device, but `CudaContext.is_available` returns "
                    "`torch.cuda.is_available()`, which is False on XLA (no CUDA): the path without CUDA runs and the "
                    "model and tensors stay on the CPU; make `CudaContext.is_available` return True (the XLA device "
                    "is always present), or pick `torch_xla.device()` here",
                ),
            ),
        ),
        invalid(
            """
            import torch

            def cuda_ok():
                return torch.cuda.device_count() > 0

            if cuda_ok():
                device = torch.device("cuda")
            else:
                device = torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            def cuda_ok():
                return torch.cuda.device_count() > 0

            if cuda_ok():
                device = torch_xla.device()
            else:
                device = torch.device("cpu")
            """,
            note="availability-asked-through-a-function",
            findings=(
                Expected(
                    7,
                    4,
                    "`cuda_ok()` picks the device, but `cuda_ok` returns `torch.cuda.device_count() > 0`, which is "
                    "False on XLA (no CUDA): the path without CUDA runs and the model and tensors stay on the CPU; "
                    "make `cuda_ok` return True",
                ),
            ),
        ),
        invalid(
            """
            import torch

            if args.mps:
                device = torch.device("mps")
            elif torch.cuda.is_available():  # GPU
                device = torch.device("cuda")
            else:
                device = torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            if args.mps:
                device = torch.device("mps")
            else:  # GPU
                device = torch_xla.device()
            """,
            note="elif",
            findings=(Expected(6, 6, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            def warm_up():
                if not torch.cuda.is_available():
                    torch.cuda.synchronize()
            """,
            """
            import torch

            def warm_up():
                pass
            """,
            note="branch-that-never-runs-is-removed",
            findings=(Expected(4, 8, "`not torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"  # xla-codemod: ignore[XLA101]
            """,
            note="suppressed-device-keeps-its-check",
            findings=(Expected(3, 10, "the device is picked by an accelerator check, which is False on XLA; not"),),
        ),
        invalid(
            """
            import torch as th

            device = 'cuda' if th.cuda.is_available() else 'cpu'
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = 'xla'
            """,
            alias=True,
            findings=(Expected(4, 10, "device picked by an accelerator check, which is False on XLA"),),
        ),
        invalid(
            """
            import argparse

            import torch

            def get_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--no-cuda", action="store_true", default=False)
                args = parser.parse_args()
                args.cuda = not args.no_cuda and torch.cuda.is_available()
                return args
            """,
            """
            import argparse

            import torch

            def get_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--no-cuda", action="store_true", default=False)
                args = parser.parse_args()
                args.cuda = not args.no_cuda
                return args
            """,
            filename="arguments.py",
            note="a-cuda-flag-returned-for-other-modules",
            findings=(
                Expected(9, 17, "`args.cuda` picks the device in the modules that read it (`get_args()` returns it)"),
            ),
        ),
        invalid(
            """
            import torch as th

            def options(parser):
                opts = parser.parse_args()
                opts.use_gpu = th.cuda.is_available() and not opts.cpu
                return opts
            """,
            """
            import torch as th

            def options(parser):
                opts = parser.parse_args()
                opts.use_gpu = not opts.cpu
                return opts
            """,
            target="sagemaker",
            filename="config.py",
            note="a-gpu-flag-returned-for-other-modules-sagemaker",
            alias=True,
            findings=(
                Expected(5, 20, "`opts.use_gpu` picks the device in the modules that read it (`options()` returns it)"),
            ),
        ),
    ),
)

CUDA_CHECK = Rule(
    code="XLA105",
    name="cuda-check",
    severity="warning",
    summary="A CUDA check that stays (`is_cuda`, `device == 'cuda'`, `torch.cuda.is_available()`) is False on XLA",
    fixable=False,
    why="A CUDA check that does not pick the device is left as it is, and is False on XLA: the code it guards "
    "never runs there. Usually that is right (cuDNN flags, CUDA seeding), but it may also switch off a faster "
    "path (loader workers, mixed precision): check what it guards. Membership tests (`device.type in ('cuda',)`) "
    "count too; a negated check (`device.type != 'cuda'`) is True on XLA, and the finding says so.",
    examples=lambda: (
        invalid(
            """
            import torch

            workers = 4 if torch.cuda.is_available() else 0
            """,
            findings=(Expected(3, 16, "`torch.cuda.is_available()` is False on the XLA device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            if device.type == 'xla':
                pass
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            if x.is_cuda:
                x = x.half()
            if device == 'cuda':
                cudnn.benchmark = True
            """,
            findings=(
                Expected(3, 4, "`x.is_cuda` is False on the XLA device"),
                Expected(
                    5,
                    4,
                    "`device == 'cuda'` is False on XLA only if `device` no longer names CUDA there, "
                    "which this file does not show",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from utils import pick_device

            device = pick_device()
            if device == "cuda":
                torch.backends.cuda.matmul.allow_tf32 = True
            dev = torch.device("cuda")
            if dev.type == "cuda":
                print("on the GPU")
            """,
            """
            import torch
            import torch_xla
            from utils import pick_device

            device = pick_device()
            if device == "cuda":
                pass
            dev = torch_xla.device()
            if dev.type == "cuda":
                print("on the GPU")
            """,
            note="proven-and-unproven",
            findings=(
                Expected(6, 4, '`device == "cuda"` is False on XLA only if `device` no longer names CUDA there'),
                Expected(9, 4, '`dev.type == "cuda"` is False on the XLA device: check that the code it guards'),
            ),
        ),
        invalid(
            """
            import torch

            def step(batch, device_type):
                if device_type != "cuda":
                    return batch
                return batch.half()
            """,
            target="sagemaker",
            note="parameter-sagemaker",
            findings=(
                Expected(4, 8, '`device_type != "cuda"` is True on XLA only if `device_type` no longer names CUDA'),
            ),
        ),
        invalid(
            """
            import torch

            use_amp = torch.cuda.is_available()
            """,
            note="availability-kept",
            findings=(Expected(3, 11, "`torch.cuda.is_available()` is False on the XLA device"),),
        ),
        invalid(
            """
            import torch as th

            on_gpu = 'cuda:0' == str(th.device(args.device))
            """,
            alias=True,
            findings=(Expected(3, 10, "`'cuda:0' == str(th.device(args.device))` is False on the XLA device"),),
        ),
        invalid(
            """
            import torch

            if device.type in ('cuda',):
                torch.backends.cudnn.benchmark = True
            if device.type != "cuda":
                print("no GPU: this will be slow")
            """,
            """
            import torch

            if device.type in ('cuda',):
                pass
            if device.type != "cuda":
                print("no GPU: this will be slow")
            """,
            note="membership-and-negation",
            findings=(
                Expected(3, 4, "`device.type in ('cuda',)` is False on XLA only if `device` no longer names CUDA"),
                Expected(5, 4, "is True on XLA only if `device` no longer names CUDA"),
            ),
        ),
    ),
)

SET_DEVICE = Rule(
    code="XLA106",
    name="set-device",
    severity="error",
    summary="`torch.cuda.set_device()` is removed: one XLA device per process",
    fixable=True,
    why="`torch.cuda.set_device()` raises without CUDA. On XLA the runtime gives each process its one device, "
    "so the call is removed.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.cuda.set_device(args.local_rank)
            device = torch.device("cuda", args.local_rank)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            findings=(Expected(4, 1, "removed `torch.cuda.set_device(args.local_rank)`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            xla_runtime.set_device(0)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            def setup(rank):
                torch.accelerator.set_device_index(rank)
                return torch.accelerator.current_accelerator()
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def setup(rank):
                return torch.device("xla")
            """,
            note="torch-accelerator",
            findings=(Expected(5, 5, "removed `torch.accelerator.set_device_index(rank)`"),),
        ),
        invalid(
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                torch.cuda.set_device(gpu)
            """,
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                pass
            """,
            note="only-statement",
            findings=(Expected(5, 5, "removed `torch.cuda.set_device(gpu)`"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import set_device

            set_device(args.local_rank)
            train()
            """,
            """
            import torch

            train()
            """,
            alias=True,
            findings=(Expected(3, 1, "removed `set_device(args.local_rank)`"),),
        ),
    ),
)

CUDA_TENSOR_TYPE = Rule(
    code="XLA107",
    name="cuda-tensor-type",
    severity="error",
    summary="Legacy `torch.cuda.FloatTensor(...)` constructors create the tensor on the XLA device",
    fixable=True,
    why="Legacy typed constructors such as `torch.cuda.FloatTensor(...)` create CUDA tensors and raise without "
    "CUDA; the tensor is created on the CPU and moved to the XLA device.",
    examples=lambda: (
        invalid(
            """
            import torch

            noise = torch.cuda.FloatTensor(batch_size, 100).normal_()
            """,
            """
            import torch
            import torch_xla

            noise = torch.FloatTensor(batch_size, 100).to(torch_xla.device()).normal_()
            """,
            findings=(Expected(4, 9, "torch.cuda.FloatTensor(batch_size, 100) -> torch.FloatTensor(batch_size,"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            idx = torch.LongTensor(4).zero_()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            idx = torch.cuda.LongTensor(4).zero_()
            """,
            """
            import torch
            import torch_xla

            idx = torch.LongTensor(4).to(torch_xla.device()).zero_()
            """,
            findings=(Expected(4, 7, "torch.cuda.LongTensor(4) -> torch.LongTensor(4).to(torch_xla.device())"),),
        ),
        invalid(
            """
            import torch as th

            w = th.cuda.FloatTensor(2, 2)
            """,
            """
            import torch as th
            import torch_xla

            w = th.FloatTensor(2, 2).to(torch_xla.device())
            """,
            alias=True,
            findings=(Expected(4, 5, "th.cuda.FloatTensor(2, 2) -> th.FloatTensor(2, 2).to(torch_xla.device())"),),
        ),
    ),
)

GUARDED_INPUT_MOVE = Rule(
    code="XLA108",
    name="guarded-input-move",
    severity="error",
    summary="Input moves that run only `if args.gpu is not None:` become unconditional once the model is always on XLA",
    fixable=True,
    why="CUDA scripts that run on one GPU with `--gpu` or on all of them through DataParallel move their "
    "batches only when a GPU index is given: otherwise DataParallel scatters them. The port removes "
    "DataParallel and puts the model on the XLA device on every path, so the batches must always move: left "
    "guarded, the first batch fails with 'Input type (torch.FloatTensor) and weight type (XLAFloatType) "
    "should be the same'. The guard goes when every model move of the file goes to the XLA device and one is "
    "not under such a guard; otherwise it is reported.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model).cuda()
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            model = model.to(torch_xla.device())
            images = images.to(torch_xla.device(), non_blocking=True)
            output = model(images)
            """,
            findings=(Expected(5, 4, "`if args.gpu is not None:` dropped"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = model.cuda(args.gpu)
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
                print("moved")
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            model = model.to(torch_xla.device())
            if args.gpu is not None:
                images = images.to(torch_xla.device(), non_blocking=True)
                print("moved")
            output = model(images)
            """,
            note="the-guard-does-more-than-move",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            if args.gpu is not None:
                model = model.cuda(args.gpu)
            else:
                model = torch.nn.DataParallel(model).cuda()
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            if args.gpu is not None:
                model = model.to(torch_xla.device())
            else:
                model = model.to(torch_xla.device())
            images = images.to(torch_xla.device(), non_blocking=True)
            output = model(images)
            """,
            note="data-parallel-moved-them",
            findings=(Expected(8, 4, "`if args.gpu is not None:` dropped"),),
        ),
        invalid(
            """
            import torch

            model.to(device)
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            model.to(device)
            if args.gpu is not None:
                images = images.to(torch_xla.device(), non_blocking=True)
            output = model(images)
            """,
            note="model-device-may-be-the-cpu-reported",
            findings=(Expected(5, 4, "these moves run only `if args.gpu is not None`; otherwise, on CUDA,"),),
        ),
        invalid(
            """
            import torch.nn as tnn

            net = tnn.DataParallel(net).cuda() if args.gpu is None else net.cuda(args.gpu)
            if args.gpu is not None:
                x = x.cuda(args.gpu)
            loss = tnn.functional.mse_loss(net(x), y)
            """,
            """
            import torch.nn as tnn
            import torch_xla

            net = net.to(torch_xla.device()) if args.gpu is None else net.to(torch_xla.device())
            x = x.to(torch_xla.device())
            loss = tnn.functional.mse_loss(net(x), y)
            """,
            alias=True,
            findings=(Expected(5, 4, "`if args.gpu is not None:` dropped"),),
        ),
    ),
)

DEVICE_GENERATOR = Rule(
    code="XLA109",
    name="device-generator",
    severity="error",
    summary="`torch.Generator(device=<XLA device>)` becomes a CPU generator",
    fixable=True,
    why="torch_xla 2.9 has no device generators: `torch.Generator(device=torch_xla.device())` raises 'XLA device "
    "type not an accelerator', so sampling code that makes one for its device crashes. Sampling ops on XLA "
    "tensors accept a CPU generator (randn, rand, randint, randperm, multinomial, bernoulli, normal_ were "
    "checked), with the CPU generator's sequence of values, so the device argument goes.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = "cuda"
            g = torch.Generator(device=device)
            g.manual_seed(42)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            g = torch.Generator()
            g.manual_seed(42)
            """,
            findings=(Expected(5, 5, "torch.Generator(device=device) -> torch.Generator()"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            g = torch.Generator(device="cpu")
            h = torch.Generator()
            """,
            note="cpu-generators",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
            sample_rng = torch.Generator(device=device)
            sample_rng.manual_seed(42)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            sample_rng = torch.Generator()
            sample_rng.manual_seed(42)
            """,
            note="device-variable",
            findings=(Expected(5, 14, "torch.Generator(device=device) -> torch.Generator()"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            g = torch.Generator(torch_xla.device()).manual_seed(0)
            """,
            """
            import torch

            g = torch.Generator().manual_seed(0)
            """,
            note="already-ported-xla-device",
            findings=(Expected(3, 5, "torch.Generator(torch_xla.device()) -> torch.Generator()"),),
        ),
        invalid(
            """
            import torch as th

            gen = th.Generator(device="cuda:0")
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            gen = th.Generator()
            """,
            alias=True,
            findings=(Expected(4, 7, 'th.Generator(device="cuda:0") -> th.Generator()'),),
        ),
    ),
)

DEVICE_TYPE_CHECK = Rule(
    code="XLA110",
    name="device-type-check",
    severity="error",
    summary="`device.type == 'cuda'` around device code, on the device the script picked, compares with 'xla'",
    fixable=True,
    why="Scripts that pick `device = torch.accelerator.current_accelerator()` (or 'cuda' when it is there) and "
    "the CPU otherwise then ask `if device.type == 'cuda':` before moving the model, wrapping it in "
    "DistributedDataParallel or moving batches. Once the device becomes the XLA device that check is False, "
    "so the model is neither moved nor wrapped and the script trains on the CPU, or not at all under the "
    "launcher (pytorch/examples imagenet). Where the check guards device code (a `.cuda()` move, a CUDA "
    "device) and the compared name is assigned a device that becomes XLA, 'cuda' becomes 'xla': the check "
    'keeps asking "is this the accelerator?", and a `--no-accel` CPU run still skips it. Where the guarded '
    "code also runs something that fails without CUDA it is reported instead. Checks around other code "
    "(cuDNN flags, DataParallel) stay, with XLA105.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
            if device.type == "cuda":
                model.cuda(device)
            """,
            """
            import torch
            import torch_xla

            device = torch.device("xla") if use_accel else torch.device("cpu")
            if device.type == "xla":
                model.to(torch_xla.device())
            """,
            findings=(Expected(5, 4, '-> device.type == "xla"'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch.backends.cudnn as cudnn

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model.to(device)
            if device.type == "cuda":
                cudnn.benchmark = True
            if batch.device.type == "cuda":
                x = x.cuda()
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model.to(device)
            if device.type == "cuda":
                pass
            if batch.device.type == "cuda":
                x = x.to(torch_xla.device())
            """,
            note="no-device-code-or-not-the-picked-device",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            if use_accel:
                device = torch.accelerator.current_accelerator()
            else:
                device = torch.device("cpu")
            if args.distributed:
                if device.type == 'cuda':
                    model.cuda(device)
            elif device.type == "cuda":
                model = torch.nn.DataParallel(model).cuda()
            """,
            """
            import torch
            import torch_xla

            if use_accel:
                device = torch.device("xla")
            else:
                device = torch.device("cpu")
            if args.distributed:
                if device.type == 'xla':
                    model.to(torch_xla.device())
            elif device.type == "xla":
                model = model.to(torch_xla.device())
            """,
            note="imagenet-accelerator-branches",
            findings=(
                Expected(9, 8, "`device.type == 'cuda'` asks whether the device the script picked is the accelerator"),
                Expected(11, 6, '-> device.type == "xla"'),
            ),
        ),
        invalid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
            if device != "cuda":
                x = x.cuda()
            if "cuda" in str(device):
                model.cuda()
            """,
            """
            import torch
            import torch_xla

            device = "xla"
            if device != "xla":
                x = x.to(torch_xla.device())
            if "xla" in str(device):
                model.to(torch_xla.device())
            """,
            note="string-device-negated-and-membership",
            findings=(Expected(5, 4, '-> device != "xla"'), Expected(7, 4, '-> "xla" in str(device)')),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            if device.type == "cuda":
                model.cuda()
                print(torch.cuda.get_device_name())
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            if device.type == "cuda":
                model.to(torch_xla.device())
                print(torch.cuda.get_device_name())
            """,
            note="guards-code-that-fails-without-cuda-reported",
            findings=(Expected(5, 4, "not changed: the code it guards also runs `torch.cuda.get_device_name`"),),
        ),
        invalid(
            """
            import torch as th

            dev = th.accelerator.current_accelerator() if th.accelerator.is_available() else th.device("cpu")
            if dev.type == 'cuda':
                net = net.cuda()
            """,
            """
            import torch as th
            import torch_xla

            dev = th.device("xla")
            if dev.type == 'xla':
                net = net.to(torch_xla.device())
            """,
            alias=True,
            findings=(Expected(5, 4, "`dev.type == 'cuda'` asks whether the device the script"),),
        ),
    ),
)

# -- the obligations of a training step (device/values.py, device/obligations.py) -----------

DEVICE_OFF_XLA = Rule(
    code="XLA111",
    name="device-off-xla",
    severity="error",
    summary="The model the optimizer steps goes to a device that can still be the CPU, CUDA or MPS after the port",
    fixable=False,
    why="Obligation (1) of every training step: the module whose parameters the optimizer steps is on the XLA "
    "device on the path that runs. The tool follows the device the model moves to through assignments, "
    "if/elif/else chains and conditional expressions (read as they are after the port on an XLA host, where "
    "`torch.cuda.is_available()` and the MPS checks are False), the file's functions and methods, `self.` "
    "attributes, argparse defaults, config dicts and known library helpers. Where the chain ends on a value "
    'that is not the XLA device, the finding points at that value (a `return "cpu"`, a kept `"cuda"`, '
    "`torch.get_default_device()`) and says what it is: left so, the script trains on the CPU, or fails to "
    "find CUDA, and nothing else says so. A choice left to the person who runs the script (a `--no-cuda` flag, a "
    "config value) is not reported where one of its branches is the XLA device. To resolve it, make that value the "
    'XLA device (`torch_xla.device()`, or the string "xla"), or make the condition choose it on an XLA host.',
    examples=lambda: (
        invalid(
            """
            import torch

            def pick_device():
                if torch.backends.mps.is_available():
                    return "mps"
                return "cpu"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(
                Expected(6, 12, 'goes to `pick_device()`, which ends on `pick_device()` returns "cpu" (the CPU)'),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            def pick_device():
                return "cuda" if torch.cuda.is_available() else "cpu"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def pick_device():
                return "xla"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-device-function-the-port-makes-xla",
        ),
        valid(
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            model = torch.nn.Linear(4, 2).to(accelerator.device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="accelerate-device-is-xla",
        ),
        valid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-cuda-mps-cpu-chain-folds",
        ),
        valid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-cuda-mps-cpu-chain-folds-sagemaker",
        ),
        valid(
            """
            import torch

            config = {"device": "cuda", "lr": 0.1}
            model = torch.nn.Linear(4, 2).to(config["device"])
            optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            config = {"device": "xla", "lr": 0.1}
            model = torch.nn.Linear(4, 2).to(config["device"])
            optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
            """,
            note="a-config-dict-the-port-makes-xla",
        ),
        valid(
            """
            import torch

            device = "cpu"
            device, rank = setup()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="rebound-to-what-the-tool-does-not-follow",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th

            class Runner:
                def __init__(self):
                    self.device = th.get_default_device()
                    self.net = th.nn.Linear(4, 2).to(self.device)
                    self.opt = th.optim.Adam(self.net.parameters())
            """,
            alias=True,
            findings=(
                Expected(5, 23, "`th.get_default_device()` (the CPU unless the script set another default device"),
            ),
        ),
        invalid(
            """
            import torch

            def pick_device():
                if torch.backends.mps.is_available():
                    return "mps"
                return "cpu"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(6, 12, '`pick_device()` returns "cpu" (the CPU)'),),
        ),
    ),
)

_PROJECT_TRAIN = """
import torch
from helpers import pick_device

def main():
    device = pick_device()
    model = torch.nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

DEVICE_FROM_PROJECT = Rule(
    code="XLA112",
    name="device-from-project",
    severity="error",
    summary="The device comes from another project module that leaves it off XLA (a helper that returns the CPU, a module "
    "still to convert that builds a CUDA device from a flag the port switched on)",
    fixable=False,
    why="Obligation (1) across files: the device comes from a helper in another module of the project "
    "(`device = pick_device()` with `from utils.env import pick_device`), and that module's summary says the "
    "helper returns the CPU (or a CUDA or MPS device) on an XLA host, even after the port. The finding is at "
    "the move in this file and names the helper and its file. To resolve it, make the helper return the XLA "
    "device. Likewise a flag the port switches on (`args.use_gpu = torch.cuda.is_available() and args.use_gpu`) "
    "handed to a class of a module that still needs converting and picks its device with it (`Exp(args)`): "
    "there it builds a CUDA device, which fails on an XLA host; convert that module too. And a call of a callable "
    "of such a module that trains a model (`exp.train(loader)`): its device, model, batches and step stay on "
    "CUDA terms until that module is converted. A run on a single file "
    "that imports a module it cannot read says so with XLA003: running the tool on the project folder follows "
    "the helper. The same error says where a single-file run cannot follow the stepped model's device because "
    "it goes through a module this run does not convert: a device chosen with a flag of another module "
    '(`args = get_args(); torch.device("cuda:0" if args.cuda else "cpu")`), a device that a function of '
    "another module sets on its argument (`parse_gpu(args)`, then `model.to(args.device)`), or a model that "
    "another module builds and nothing in the file moves (`model = load_model(args)`). Each names the function "
    "and the module; to resolve it, run the tool on the project folder, which follows them (and reports there "
    "what still ends off the XLA device).",
    examples=lambda: (
        invalid(
            """
            import torch
            from helpers import pick_device

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            filename="train.py",
        ),
    ),
    valid=lambda: (
        run(
            ("train.py", _PROJECT_TRAIN),
            (
                "helpers.py",
                """
            import torch

            def pick_device():
                return "cuda" if torch.cuda.is_available() else "cpu"
            """,
            ),
        ),
        valid(
            """
            import torch
            from modeling import load_model

            model = load_model(args, 16).cuda()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            """,
            """
            import torch
            import torch_xla
            from modeling import load_model

            model = load_model(args, 16).to(torch_xla.device())
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            """,
            note="a-model-built-by-another-module-moved-here",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from a2c_ppo_acktr.arguments import get_args
            from a2c_ppo_acktr import algo

            args = get_args()
            device = torch.device("cuda:0" if args.cuda else "cpu")
            actor_critic = Policy(envs.observation_space.shape)
            actor_critic.to(device)
            agent = algo.PPO(actor_critic, args.clip_param, lr=args.lr)
            rollouts.to(device)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from a2c_ppo_acktr.arguments import get_args
            from a2c_ppo_acktr import algo

            args = get_args()
            device = torch.device("xla" if args.cuda else "cpu")
            actor_critic = Policy(envs.observation_space.shape)
            actor_critic.to(device)
            agent = algo.PPO(actor_critic, args.clip_param, lr=args.lr)
            rollouts.to(device)
            """,
            note="a-flag-from-another-module-optimizer-elsewhere",
            findings=(
                Expected(
                    7,
                    23,
                    "`device`, where `actor_critic` goes, is chosen with what comes from another module: "
                    "`args.cuda` comes from `get_args()` in a2c_ppo_acktr/arguments.py, which this run does not read",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from arguments import get_args

            args = get_args()
            if args.cuda:
                device = torch.device("cuda")
            else:
                device = torch.device("cpu")
            policy = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            """
            import torch
            import torch_xla
            from arguments import get_args

            args = get_args()
            if args.cuda:
                device = torch_xla.device()
            else:
                device = torch.device("cpu")
            policy = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            note="a-flag-from-another-module-in-an-if-single-file",
            findings=(
                Expected(6, 4, "`args.cuda` comes from `get_args()` in arguments.py, which this run does not read"),
            ),
        ),
        invalid(
            """
            import torch
            from src.gpu import parse_gpu

            parse_gpu(args)
            model = torch.nn.Linear(4, 2)
            model.to(args.device)
            optimizer = torch.optim.AdamW(model.parameters())
            """,
            note="a-device-set-by-another-module-single-file",
            findings=(
                Expected(
                    4,
                    1,
                    "`args.device` may be set by `parse_gpu()` in src/gpu.py, which this run does not "
                    "read; a run on the project folder follows it",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from src.gpu import parse_gpu as pg

            pg(opts)
            net = th.nn.Linear(4, 2).to(opts.device)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-device-set-by-another-module-single-file-sagemaker",
            alias=True,
            findings=(Expected(4, 1, "`opts.device` may be set by `pg()` in src/gpu.py"),),
        ),
        invalid(
            """
            import torch
            from modeling import load_model

            model = load_model(args, 16)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            """,
            note="a-model-built-by-another-module-single-file",
            findings=(
                Expected(
                    4,
                    9,
                    "`model`, whose parameters `torch.optim.AdamW` steps, comes from `load_model()` in "
                    "modeling.py, which this run does not read, and nothing here moves it",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            import modeling as m

            net = m.load_model(args)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-model-built-by-another-module-single-file-sagemaker",
            alias=True,
            findings=(Expected(4, 7, "comes from `m.load_model()` in modeling.py"),),
        ),
        invalid(
            """
            import torch
            from arguments import get_args

            args = get_args()
            device = torch.device("cuda:0" if args.cuda else "cpu")
            policy = torch.nn.Linear(4, 2)
            policy.to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from arguments import get_args

            args = get_args()
            device = torch.device("xla" if args.cuda else "cpu")
            policy = torch.nn.Linear(4, 2)
            policy.to(device)
            optimizer = torch.optim.Adam(policy.parameters())
            """,
            note="a-flag-from-another-module-single-file",
            findings=(
                Expected(
                    6,
                    23,
                    "`args.cuda` comes from `get_args()` in arguments.py, which this run does not read; "
                    "a run on the project folder follows it",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from utils.config import options as opts

            cfg = opts()
            dev = th.device("cuda" if not cfg.no_gpu else "cpu")
            net = th.nn.Linear(4, 2).to(dev)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from utils.config import options as opts

            cfg = opts()
            dev = th.device("xla" if not cfg.no_gpu else "cpu")
            net = th.nn.Linear(4, 2).to(dev)
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-flag-from-another-module-single-file-sagemaker",
            alias=True,
            findings=(
                Expected(6, 17, "`cfg.no_gpu` comes from `opts()` in utils/config.py, which this run does not read"),
            ),
        ),
        run(
            ("train.py", _PROJECT_TRAIN),
            (
                "helpers.py",
                """
            import torch

            def pick_device():
                if torch.backends.mps.is_available():
                    return torch.device("mps")
                return torch.device("cpu")
            """,
            ),
        ),
        run(
            (
                "train.py",
                _PROJECT_TRAIN.replace("import pick_device", "import pick_device as pd").replace(
                    "= pick_device", "= pd"
                ),
            ),
            (
                "helpers.py",
                """
            import torch as th

            def pick_device():
                return th.get_default_device()
            """,
            ),
            alias=True,
        ),
    ),
)

LIBRARY_DEVICE = Rule(
    code="XLA113",
    name="library-device-helper",
    severity="error",
    summary="A library's device helper that returns the CPU on an XLA host (`torch_geometric.device('auto')`) becomes the XLA device",
    fixable=True,
    why='Libraries pick the device for their users: `torch_geometric.device("auto")` asks for CUDA, MPS and '
    "XPU and else returns the CPU, so on an XLA host the model trains on the CPU. The known helpers are one "
    "table (`apis.DEVICE_HELPERS`), checked against the released code: Accelerate's `Accelerator().device` and "
    "`PartialState().device` and Transformers' `TrainingArguments.device` return the XLA device when torch_xla "
    "is installed (nothing to do); `torch.accelerator.current_accelerator()` is replaced by XLA101; "
    '`torch.get_default_device()` returns the CPU (XLA111 where a model goes there). A helper asked for `"auto"` '
    "becomes the target's device call.",
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
    ),
)

PORTED_CONDITION = Rule(
    code="XLA114",
    name="ported-condition",
    severity="error",
    summary="A comparison with a value the port rewrote (`backend == 'nccl'` after 'nccl' -> 'xla', `assert device in [...]`) holds as before",
    fixable=True,
    why='The port rewrites values that conditions then test: `backend = "nccl"` becomes `"xla"`, and '
    '`if backend == "nccl": device = torch.device("cuda", rank) else: device = torch.device("cpu")` would '
    "then take the CPU branch. Where every value of the compared name is one the port rewrote, the literal it "
    "is compared with becomes the new value, so the condition asks what it asked before. Likewise "
    '`assert device in ["cuda", "mps", "cpu"]` after a device helper that now returns "xla" would stop the '
    'script: "xla" is added to the choices.',
    examples=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist

            def setup(rank):
                backend = "nccl"
                dist.init_process_group(backend)
                if backend == "nccl":
                    return torch.device("cuda", rank)
                return torch.device("cpu")
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(rank):
                backend = "xla"
                dist.init_process_group(backend, init_method="xla://")
                if backend == "xla":
                    return torch_xla.device()
                return torch.device("cpu")
            """,
            findings=(Expected(8, 19, '`backend == "nccl"`: "nccl" -> "xla"'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.distributed as dist

            backend = args.backend
            if backend == "nccl":
                print("nccl")
            """,
            note="a-value-the-port-does-not-change",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist

            backend = "nccl"
            dist.init_process_group(backend)
            device = torch.device("cuda") if backend == "nccl" else torch.device("cpu")
            """,
            """
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            backend = "xla"
            os.environ.setdefault("MASTER_ADDR", "localhost")
            os.environ.setdefault("MASTER_PORT", "12355")
            dist.init_process_group(backend, rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            device = xm.xla_device() if backend == "xla" else torch.device("cpu")
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(11, 40, '`backend == "nccl"`: "nccl" -> "xla"'),),
        ),
        invalid(
            """
            import torch

            def pick_device():
                return "cuda" if torch.cuda.is_available() else "cpu"

            device = pick_device()
            assert device in ["cuda", "mps", "cpu"], device
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def pick_device():
                return "xla"

            device = pick_device()
            assert device in ["cuda", "mps", "cpu", "xla"], device
            """,
            note="asserted-device-choices",
            findings=(
                Expected(8, 18, '`device in ["cuda", "mps", "cpu"]` would fail: the device is \'xla\' after the port'),
            ),
        ),
        invalid(
            """
            import torch.distributed as tdist

            backend = "nccl"
            tdist.init_process_group(backend)
            use_gpu = backend != "nccl"
            """,
            """
            import torch.distributed as tdist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            backend = "xla"
            tdist.init_process_group(backend, init_method="xla://")
            use_gpu = backend != "xla"
            """,
            alias=True,
            findings=(Expected(6, 22, '`backend != "nccl"`: "nccl" -> "xla"'),),
        ),
    ),
)

MODEL_MOVE_SKIPPED = Rule(
    code="XLA115",
    name="model-move-skipped",
    severity="error",
    summary="The model the optimizer steps moves only under a condition that is False on an XLA host after the port",
    fixable=False,
    why="Obligation (1), the path that runs: `if use_gpu: model.cuda()` with a flag the port cannot switch on "
    "(set from a CUDA check it keeps, or from an MPS check) leaves the model on the CPU on an XLA host, while "
    "the rest of the script is ported. The finding is at the move and names the condition. To resolve it, "
    "move the model to the XLA device on every path (or make the condition hold on an XLA host).",
    examples=lambda: (
        invalid(
            """
            import torch

            use_gpu = torch.backends.mps.is_available()
            model = torch.nn.Linear(4, 2)
            if use_gpu:
                model.cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            use_gpu = torch.backends.mps.is_available()
            model = torch.nn.Linear(4, 2)
            if use_gpu:
                model.to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(Expected(7, 5, "moves only under `if use_gpu:`, which is False on an XLA host"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = torch.nn.Linear(4, 2)
            if args.cuda:
                model.cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            model = torch.nn.Linear(4, 2)
            if args.cuda:
                model.to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-flag-the-user-sets",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th

            use_gpu = th.backends.mps.is_available()
            model = th.nn.Linear(4, 2)
            if use_gpu:
                model = model.cuda()
            optimizer = th.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            use_gpu = th.backends.mps.is_available()
            model = th.nn.Linear(4, 2)
            if use_gpu:
                model = model.to(xm.xla_device())
            optimizer = th.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(7, 13, "which is False on an XLA host after the port"),),
        ),
    ),
)

BATCH_OFF_XLA = Rule(
    code="XLA116",
    name="batch-off-xla",
    severity="error",
    summary="A loop feeds the model on the XLA device batches that stay on the CPU",
    fixable=False,
    why="Obligation (3): each batch reaches the XLA device before the model's forward, in the training loop and "
    "in every evaluation loop calling the same model. The tool finds the loops that call a model it proved to "
    "be on the XLA device with batches they never move, from a source that yields CPU tensors: a loader whose "
    "batches another loop moves (the training loop does, the evaluation loop forgot: on CUDA the same crash), a "
    'data set cached with `torch.load(..., map_location="cuda")` that the port must load onto the CPU, or '
    '`torch.set_default_tensor_type("torch.cuda.FloatTensor")` kept while `torch.Tensor(...)` relies on it. '
    "The same holds for a model on the XLA device handed to an evaluation function of a project module that still "
    "needs converting (a single-file run): its loops keep their CUDA moves. Left so, the forward fails (torch_xla "
    "2.9: 'Expected XLA tensor. Got: torch.FloatTensor'). To resolve it, move each batch with `.to(device)` before "
    "the forward, or iterate `pl.MpDeviceLoader(loader, device)`; convert the other module too. Batches made "
    "by a callable of a project module that this run does not convert (`x, y = model.parse_batch(batch)`, whose "
    "`utils.to_gpu(x)` moves them to CUDA) are reported at that call in a single-file run: whether they reach "
    "the XLA device is decided there, and a run on the project folder converts it.",
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

            torch.set_default_tensor_type("torch.cuda.FloatTensor")
            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            """,
            note="no-tensor-relies-on-the-default-type",
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
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for xs, y in loader:
                xs = [x.to(device) for x in xs]
                loss = (model(xs) - y.to(device)).pow(2).mean()
                xm.mark_step()
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
            target="sagemaker",
            note="comprehensions-move-the-batch-1.13",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from model import Tacotron2

            model = Tacotron2().cuda()
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            for i, batch in enumerate(train_loader):
                x, y = model.parse_batch(batch)
                loss = (model(x) - y).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            from model import Tacotron2

            model = Tacotron2().to(torch_xla.device())
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            for i, batch in enumerate(train_loader):
                x, y = model.parse_batch(batch)
                loss = (model(x) - y).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="batches-made-by-a-method-of-another-module",
            findings=(
                Expected(
                    9,
                    12,
                    "`x` reaches `model` (on the XLA device) from `model.parse_batch()` in model.py, "
                    "which this run does not read",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from model import Tacotron2 as T

            net = T().cuda()
            opt = th.optim.Adam(net.parameters())
            for batch in loader:
                inputs, targets = net.parse_batch(batch)
                opt.zero_grad()
                th.nn.functional.mse_loss(net(inputs), targets).backward()
                opt.step()
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            from model import Tacotron2 as T

            net = T().to(xm.xla_device())
            opt = th.optim.Adam(net.parameters())
            for batch in loader:
                inputs, targets = net.parse_batch(batch)
                opt.zero_grad()
                th.nn.functional.mse_loss(net(inputs), targets).backward()
                xm.optimizer_step(opt)
                xm.mark_step()
            """,
            target="sagemaker",
            note="batches-made-by-a-method-of-another-module-sagemaker",
            alias=True,
            findings=(
                Expected(8, 23, "`inputs` reaches `net` (on the XLA device) from `net.parse_batch()` in model.py"),
            ),
        ),
        invalid(
            """
            import torch as th

            net = th.nn.Linear(4, 2).cuda()
            opt = th.optim.Adam(net.parameters())
            for n_id, adjs in train_loader:
                adjs = [adj.cuda() for adj in adjs]
                loss = net(adjs).pow(2).mean()
            for n_id, adjs in train_loader:
                print(net(adjs))
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            net = th.nn.Linear(4, 2).to(xm.xla_device())
            opt = th.optim.Adam(net.parameters())
            for n_id, adjs in train_loader:
                adjs = [adj.to(xm.xla_device()) for adj in adjs]
                loss = net(adjs).pow(2).mean()
                xm.mark_step()
            for n_id, adjs in train_loader:
                print(net(adjs))
            """,
            target="sagemaker",
            alias=True,
            note="training-loop-moves-by-comprehension",
            findings=(
                Expected(
                    11, 11, "`adjs` reaches `net` (on the XLA device) on the CPU: `train_loader` yields CPU tensors"
                ),
            ),
        ),
        invalid(
            """
            import torch as th

            net = th.nn.Linear(4, 2).cuda()
            opt = th.optim.Adam(net.parameters())
            for i, (x, y) in enumerate(train_loader):
                x, y = x.cuda(), y.cuda()
                loss = (net(x) - y).pow(2).mean()
            for i, (x, y) in enumerate(train_loader):
                print(net(x))
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            net = th.nn.Linear(4, 2).to(xm.xla_device())
            opt = th.optim.Adam(net.parameters())
            for i, (x, y) in enumerate(train_loader):
                x, y = x.to(xm.xla_device()), y.to(xm.xla_device())
                loss = (net(x) - y).pow(2).mean()
                xm.mark_step()
            for i, (x, y) in enumerate(train_loader):
                print(net(x))
            """,
            target="sagemaker",
            alias=True,
            findings=(
                Expected(11, 11, "`x` reaches `net` (on the XLA device) on the CPU: `train_loader` yields CPU tensors"),
            ),
        ),
        invalid(
            """
            import torch

            torch.set_default_tensor_type("torch.cuda.FloatTensor")
            model = torch.nn.Linear(4, 2).cuda()
            x = torch.Tensor([[1.0, 2.0, 3.0, 4.0]])
            print(model(x))
            """,
            """
            import torch
            import torch_xla

            torch.set_default_tensor_type("torch.cuda.FloatTensor")
            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            x = torch.Tensor([[1.0, 2.0, 3.0, 4.0]])
            print(model(x))
            """,
            note="default-cuda-tensor-type",
            findings=(Expected(4, 1, "stays: without CUDA it fails"),),
        ),
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
            import torch_xla.core.xla_model as xm

            data = torch.load("cache.pt", map_location="cpu")
            model = torch.nn.Linear(4, 2).to(xm.xla_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in data:
                loss = (model(x) - y).pow(2).mean()
            """,
            target="sagemaker",
            note="cached-data-set-sagemaker",
            findings=(Expected(8, 13, "`data` is loaded onto the CPU"),),
        ),
    ),
)

RULES = (
    NO_DEVICE,
    CUDA_DEVICE,
    DOT_CUDA,
    INTEGER_DEVICE,
    CUDA_AVAILABLE_DEVICE,
    CUDA_CHECK,
    SET_DEVICE,
    CUDA_TENSOR_TYPE,
    GUARDED_INPUT_MOVE,
    DEVICE_GENERATOR,
    DEVICE_TYPE_CHECK,
    DEVICE_OFF_XLA,
    DEVICE_FROM_PROJECT,
    LIBRARY_DEVICE,
    PORTED_CONDITION,
    MODEL_MOVE_SKIPPED,
    BATCH_OFF_XLA,
)
