"""XLA005, XLA1: the device (and scripts that have none)."""

from __future__ import annotations

from codemods.engine.rule import Example, Rule, example

NO_DEVICE = Rule(
    "XLA005",
    "no-device",
    "warning",
    "A training script that names no device runs on the CPU: it is left unchanged",
    False,
    why="A script that never moves its model or data (no `.to()`, `.cuda()`, `device=`; pytorch/examples' "
    "time_sequence_prediction) trains on the CPU. Porting only its loop (a barrier, `xm.optimizer_step`, step "
    "closures) would leave it on the CPU with XLA calls that do nothing; where its tensors should live is a "
    "choice the tool cannot make (numpy data, float64 models), so the file is left as it is and this one "
    "finding says so. Once the model and its tensors move to `torch_xla.device()`, a second conversion ports "
    "the rest.",
    examples=(Example(
        "import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for x, y in data:\n    model(x).sum().backward()\n    opt.step()\n"
    ),),
)

CUDA_DEVICE = Rule(
    "XLA101", "cuda-device", "error", "CUDA device (torch.device('cuda'), 'cuda:N' strings) becomes the XLA device", True,
    why="An XLA machine has no CUDA device: the first tensor moved to `torch.device('cuda')` raises. The "
    "target's device call takes its place (a device kept as a string becomes 'xla').",
    examples=(
        example(
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
        ),
    ),
)

DOT_CUDA = Rule(
    "XLA102", "dot-cuda", "error", "`.cuda()` becomes `.to(<XLA device>)`", True,
    why="`.cuda()` moves a module or a tensor to a CUDA device and raises without one; `.to()` with the XLA "
    "device moves it there, keeping the other arguments.",
    examples=(
        example(
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
        ),
    ),
)

INTEGER_DEVICE = Rule(
    "XLA103", "integer-device", "error", "An integer CUDA device index used as a device becomes the XLA device", True,
    why="A CUDA device index used as a device (`.to(args.gpu)`, where `args.gpu` also feeds `.cuda()` or "
    "`set_device`) means cuda:N and raises on XLA, where each process has one device. The index is "
    "followed through plain assignments (`self.gpu_id = gpu_id`) and into the parameters of this file's "
    "functions it is passed to (`Trainer(model, rank)`). A `.to(x)` whose `x` is named like a GPU number "
    "(`gpu`, `rank`, `local_rank`, `device_id`) but that nothing marks as one is reported: it fails "
    "without CUDA.",
    examples=(
        example(
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
        ),
    ),
)

CUDA_AVAILABLE_DEVICE = Rule(
    "XLA104", "cuda-available-device", "error", "`torch.cuda/accelerator.is_available()` that picks the device: the XLA device is always there", True,
    why="`torch.cuda.is_available()` is False on an XLA machine, so a device picked by it silently falls back "
    "to the CPU and the script trains there. Where the check picks the device it is dropped; a `--no-cuda` "
    "flag still selects the CPU. `assert torch.cuda.is_available()` is removed, and so is an exit under "
    "`if not verify_min_gpu_count(...):` when that function of the file checks for CUDA devices and counts "
    "them (pytorch/examples minGPT-DDP): both are always true on XLA, where the script would end there; the "
    "XLA launcher starts one process per XLA device, so a minimum number of devices is no longer enforced "
    "(the finding says so).",
    examples=(
        example(
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
        ),
    ),
)

CUDA_CHECK = Rule(
    "XLA105", "cuda-check", "warning", "A CUDA check that stays (`is_cuda`, `device == 'cuda'`, `torch.cuda.is_available()`) is False on XLA", False,
    why="A CUDA check that does not pick the device is left as it is, and is False on XLA: the code it guards "
    "never runs there. Usually that is right (cuDNN flags, CUDA seeding), but it may also switch off a faster "
    "path (loader workers, mixed precision): check what it guards. Membership tests (`device.type in ('cuda',)`) "
    "count too; a negated check (`device.type != 'cuda'`) is True on XLA, and the finding says so.",
    examples=(
        example(
            """
            import torch

            workers = 4 if torch.cuda.is_available() else 0
            """
        ),
    ),
)

SET_DEVICE = Rule(
    "XLA106", "set-device", "error", "`torch.cuda.set_device()` is removed: one XLA device per process", True,
    why="`torch.cuda.set_device()` raises without CUDA. On XLA the runtime gives each process its one device, "
    "so the call is removed.",
    examples=(
        example(
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
        ),
    ),
)

CUDA_TENSOR_TYPE = Rule(
    "XLA107", "cuda-tensor-type", "error", "Legacy `torch.cuda.FloatTensor(...)` constructors create the tensor on the XLA device", True,
    why="Legacy typed constructors such as `torch.cuda.FloatTensor(...)` create CUDA tensors and raise without "
    "CUDA; the tensor is created on the CPU and moved to the XLA device.",
    examples=(
        example(
            """
            import torch

            noise = torch.cuda.FloatTensor(batch_size, 100).normal_()
            """,
            """
            import torch
            import torch_xla

            noise = torch.FloatTensor(batch_size, 100).to(torch_xla.device()).normal_()
            """,
        ),
    ),
)

GUARDED_INPUT_MOVE = Rule(
    "XLA108", "guarded-input-move", "error",
    "Input moves that run only `if args.gpu is not None:` become unconditional once the model is always on XLA", True,
    why="CUDA scripts that run on one GPU with `--gpu` or on all of them through DataParallel move their "
    "batches only when a GPU index is given: otherwise DataParallel scatters them. The port removes "
    "DataParallel and puts the model on the XLA device on every path, so the batches must always move: left "
    "guarded, the first batch fails with 'Input type (torch.FloatTensor) and weight type (XLAFloatType) "
    "should be the same'. The guard goes when every model move of the file goes to the XLA device and one is "
    "not under such a guard; otherwise it is reported.",
    examples=(
        example(
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
        ),
    ),
)

DEVICE_GENERATOR = Rule(
    "XLA109", "device-generator", "error", "`torch.Generator(device=<XLA device>)` becomes a CPU generator", True,
    why="torch_xla 2.9 has no device generators: `torch.Generator(device=torch_xla.device())` raises 'XLA device "
    "type not an accelerator', so sampling code that makes one for its device crashes. Sampling ops on XLA "
    "tensors accept a CPU generator (randn, rand, randint, randperm, multinomial, bernoulli, normal_ were "
    "checked), with the CPU generator's sequence of values, so the device argument goes.",
    examples=(
        example(
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
        ),
    ),
)

DEVICE_TYPE_CHECK = Rule(
    "XLA110", "device-type-check", "error",
    "`device.type == 'cuda'` around device code, on the device the script picked, compares with 'xla'", True,
    why="Scripts that pick `device = torch.accelerator.current_accelerator()` (or 'cuda' when it is there) and "
    "the CPU otherwise then ask `if device.type == 'cuda':` before moving the model, wrapping it in "
    "DistributedDataParallel or moving batches. Once the device becomes the XLA device that check is False, "
    "so the model is neither moved nor wrapped and the script trains on the CPU, or not at all under the "
    "launcher (pytorch/examples imagenet). Where the check guards device code (a `.cuda()` move, a CUDA "
    "device) and the compared name is assigned a device that becomes XLA, 'cuda' becomes 'xla': the check "
    "keeps asking \"is this the accelerator?\", and a `--no-accel` CPU run still skips it. Where the guarded "
    "code also runs something that fails without CUDA it is reported instead. Checks around other code "
    "(cuDNN flags, DataParallel) stay, with XLA105.",
    examples=(
        example(
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
        ),
    ),
)

RULES = (
    NO_DEVICE, CUDA_DEVICE, DOT_CUDA, INTEGER_DEVICE, CUDA_AVAILABLE_DEVICE, CUDA_CHECK, SET_DEVICE, CUDA_TENSOR_TYPE,
    GUARDED_INPUT_MOVE, DEVICE_GENERATOR, DEVICE_TYPE_CHECK,
)
