"""XLA201, XLA203, XLA3: optimizer steps, optimizers built before their model moves, step barriers and device loaders."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

OPTIMIZER_STEP = Rule(
    code="XLA201",
    name="optimizer-step",
    severity="error",
    summary="`optimizer.step()` becomes `xm.optimizer_step(optimizer)`",
    fixable=True,
    why="`xm.optimizer_step` all-reduces the gradients across replicas before stepping; with a plain "
    "`optimizer.step()` every process of a multi-process XLA run trains on its own gradients and the replicas "
    "silently drift apart. (Under DistributedDataParallel the step stays plain: DDP already reduces.)",
    examples=lambda: (
        invalid(
            """
            import torch

            for data, target in loader:
                loss = loss_fn(model(data), target)
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for data, target in loader:
                loss = loss_fn(model(data), target)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            findings=(Expected(8, 5, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
            scheduler.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            """,
        ),
        valid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model)
            optimizer.step()
            """,
            note="ddp-reduces-itself",
        ),
        valid(
            """
            import torch
            from torch.optim.swa_utils import SWALR, AveragedModel

            swa_model = AveragedModel(model)
            self.swa_scheduler = SWALR(optimizer, swa_lr=0.05)
            self.swa_scheduler.step()
            """,
            note="swa-scheduler-is-no-optimizer",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            optimizer.step()
            loss = lbfgs_optimizer.step(closure)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            xm.optimizer_step(optimizer)
            loss = xm.optimizer_step(lbfgs_optimizer, optimizer_args={"closure": closure})
            """,
            findings=(
                Expected(5, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),
                Expected(6, 8, "lbfgs_optimizer.step(closure) -> xm.optimizer_step(lbfgs_optimizer,"),
            ),
        ),
        invalid(
            """
            import torch

            def train(model, opt, loader, env):
                for x in loader:
                    model(x).sum().backward()
                    opt.step()
                    env.step(action)
                    warmup.step()
            """,
            """
            import torch
            import torch_xla

            def train(model, opt, loader, env):
                for x in loader:
                    model(x).sum().backward()
                    opt.step()
                    env.step(action)
                    warmup.step()
                    torch_xla.sync()
            """,
            note="unrecognized-step-reported",
            findings=(Expected(7, 9, "`opt.step()` in a training loop"),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            if not torch.cuda.is_available():
                x = x.cuda()
                model = torch.nn.parallel.DistributedDataParallel(model)
            optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            xm.optimizer_step(optimizer)
            """,
            note="ddp-only-in-a-removed-branch",
            findings=(Expected(6, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model)
            optimizer.step()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.optimizer_step(optimizer)
            """,
            note="dataparallel-does-not-reduce",
            findings=(Expected(4, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
        # The model is wrapped in FSDP by another module: the annotation says so, and the
        # step stays plain (FSDP reduce-scatters the gradients itself).
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def train(model: FSDP, optimizer, loader):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.fsdp as xla_fsdp


            def train(model: xla_fsdp.XlaFullyShardedDataParallel, optimizer, loader):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
                    torch_xla.sync()
            """,
            note="fsdp-model-wrapped-elsewhere",
            findings=(
                Expected(
                    9,
                    9,
                    "`optimizer.step()` stays: this file annotates its model as `FSDP`, wrapped elsewhere, and FSDP "
                    "reduce-scatters the gradients itself",
                ),
            ),
        ),
        # With several processes xm.optimizer_step would reduce before the closure computes
        # the gradients: reported.
        invalid(
            """
            import torch
            import torch.distributed as dist


            def main():
                dist.init_process_group("nccl")
                optimizer = torch.optim.LBFGS(model.parameters())
                for x, y in loader:
                    def closure():
                        optimizer.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        return loss
                    optimizer.step(closure)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                dist.init_process_group("xla", init_method="xla://")
                optimizer = torch.optim.LBFGS(model.parameters())
                for x, y in loader:
                    def closure():
                        optimizer.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        torch_xla.sync()
                        return loss
                    optimizer.step(closure)
                    torch_xla.sync()
            """,
            note="closure-with-several-processes",
            findings=(Expected(16, 9, "`optimizer.step(closure)` with several processes"),),
        ),
        invalid(
            """
            import torch.optim as O

            opt = O.Adam(params)
            opt.step()
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm

            opt = O.Adam(params)
            xm.optimizer_step(opt)
            """,
            alias=True,
            findings=(Expected(5, 1, "opt.step() -> xm.optimizer_step(opt)"),),
        ),
    ),
)

OPTIMIZER_BEFORE_MOVE = Rule(
    code="XLA203",
    name="optimizer-before-move",
    severity="error",
    summary="An optimizer built before its model moves to the XLA device gets the moved parameters",
    fixable=True,
    why="Moving a module to an XLA device replaces its Parameter objects (on CUDA they are kept), so an "
    "optimizer built from `model.parameters()` before the move updates stale CPU copies: the model silently "
    "trains nothing (with a gradient scaler: 'No inf checks were recorded for this optimizer'). The model is "
    "moved first, also when the later move is in another function or in a callable of another project file "
    "that the model is handed to (a trainer class), and when a function builds the optimizer from the model. "
    "This is obligation 2 of a port (the optimizer holds the parameters as they are after the move), followed "
    "through submodules (`model.vision.parameters()`), parameter groups, the model's own methods, parameters "
    "collected into a name first (`params = list(model.parameters())`) and functions of the file or the project "
    "that collect them, for a model built or handed in (a parameter, a key of `**kwargs`, a name bound to one: "
    "`self.model = model`, also moved by another method of the class, after `__init__` built the optimizer); where the later move may go to the CPU, an error at the optimizer names the move "
    "(and says when its module is not converted in this run; XLA213 names what the tool could not follow): "
    "build the optimizer after the move, or move the model first to the XLA device.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=0.1)
            model.to(device)
            """,
            findings=(
                Expected(6, 29, "the optimizer is built while `model` is on the CPU and `model.to(device)` moves"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = torch.nn.Linear(2, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            other = torch.nn.Linear(2, 2)
            other = other.to(device)
            other_optimizer = torch.optim.SGD(other.parameters(), lr=0.1)
            """,
            note="moved-first",
        ),
        valid(
            """
            import torch

            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="never-moved",
        ),
        valid(
            """
            import torch

            class Trainer:
                def __init__(self, model, gpu_id):
                    self.model = model.cuda(gpu_id)

            def main():
                model = torch.nn.Linear(3, 1)
                trainer = Trainer(model, 0)
                optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            class Trainer:
                def __init__(self, model, gpu_id):
                    self.model = model.to(torch_xla.device())

            def main():
                model = torch.nn.Linear(3, 1)
                trainer = Trainer(model, 0)
                optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
            """,
            note="the-trainer-moves-it-first",
        ),
        valid(
            """
            import torch


            class Trainer:
                def __init__(self, model, lr):
                    self.model = model.cuda()
                    self.optimizer = torch.optim.AdamW([*self.model.vision.parameters(), *self.model.head.parameters()], lr=lr)


            def fit(model, lr):
                return torch.optim.SGD([{"params": model.backbone.parameters(), "lr": lr}])


            class SimCLR:
                def __init__(self, **kwargs):
                    self.model = kwargs["model"].cuda()


            def main():
                model = torch.nn.Linear(8, 4)
                simclr = SimCLR(model=model)
                optimizer = torch.optim.Adam(simclr.model.parameters(), 3e-4)
            """,
            """
            import torch
            import torch_xla


            class Trainer:
                def __init__(self, model, lr):
                    self.model = model.to(torch_xla.device())
                    self.optimizer = torch.optim.AdamW([*self.model.vision.parameters(), *self.model.head.parameters()], lr=lr)


            def fit(model, lr):
                return torch.optim.SGD([{"params": model.backbone.parameters(), "lr": lr}])


            class SimCLR:
                def __init__(self, **kwargs):
                    self.model = kwargs["model"].to(torch_xla.device())


            def main():
                model = torch.nn.Linear(8, 4)
                simclr = SimCLR(model=model)
                optimizer = torch.optim.Adam(simclr.model.parameters(), 3e-4)
            """,
            note="handed-in-models-moved-first-or-never-here",
        ),
        valid(
            """
            import torch


            def fit(model, dtype):
                optimizer = torch.optim.SGD([{"params": model.backbone.parameters()}], lr=0.1)
                model.to(torch.bfloat16)
                model.to(memory_format=torch.channels_last)
                model.to(dtype)
                return optimizer
            """,
            note="casts-keep-the-parameters",
        ),
        valid(
            """
            import torch


            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.model.cuda()

                def configure(self):
                    self.optimizer = torch.optim.Adam(self.model.parameters())

                def restart(self):
                    self.optimizer = torch.optim.Adam(self.model.parameters())
                    self.model.to(torch.float16)
            """,
            """
            import torch
            import torch_xla


            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.model.to(torch_xla.device())

                def configure(self):
                    self.optimizer = torch.optim.Adam(self.model.parameters())

                def restart(self):
                    self.optimizer = torch.optim.Adam(self.model.parameters())
                    self.model.to(torch.float16)
            """,
            note="init-moves-first-methods-build-after",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            class Trainer:
                def __init__(self, model, optimizer, gpu_id):
                    self.model = model.to(gpu_id)
                    self.optimizer = optimizer

            def load_train_objs():
                model = torch.nn.Linear(20, 1)
                optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
                return model, optimizer

            device = torch.device("cuda")
            """,
            """
            import torch
            import torch_xla

            class Trainer:
                def __init__(self, model, optimizer, gpu_id):
                    self.model = model.to(gpu_id)
                    self.optimizer = optimizer

            def load_train_objs():
                model = torch.nn.Linear(20, 1)
                optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=1e-3)
                return model, optimizer

            device = torch_xla.device()
            """,
            note="moved-by-a-trainer-class",
            findings=(
                Expected(11, 33, "the optimizer is built while `model` is on the CPU and `model.to(gpu_id)` in"),
            ),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda" if use_cuda else "cpu")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.to(device)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = torch.device("xla" if use_cuda else "cpu")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.to(device)
            """,
            note="cpu-fallback-reported",
            findings=(Expected(6, 29, "the optimizer is built while `model` is on the CPU, and `model.to(device)`"),),
        ),
        invalid(
            """
            from torch import nn, optim

            class Net(nn.Module):
                pass

            net = Net()
            opt = optim.Adam(net.parameters())
            net.cuda()
            """,
            """
            from torch import nn, optim
            import torch_xla

            class Net(nn.Module):
                pass

            net = Net()
            opt = optim.Adam(net.to(torch_xla.device()).parameters())
            net.to(torch_xla.device())
            """,
            alias=True,
            findings=(Expected(8, 18, "the optimizer is built while `net` is on the CPU and `net.cuda()` moves the"),),
        ),
        invalid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, model, optimizer, gpu_id):
                    self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])
                    self.optimizer = optimizer

            def load_train_objs():
                model = torch.nn.Linear(20, 1)
                optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
                return model, optimizer
            """,
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            import torch_xla

            class Trainer:
                def __init__(self, model, optimizer, gpu_id):
                    self.model = DDP(model.to(torch_xla.device()))
                    self.optimizer = optimizer

            def load_train_objs():
                model = torch.nn.Linear(20, 1)
                optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=1e-3)
                return model, optimizer
            """,
            note="moved-to-an-integer-device-by-a-trainer",
            findings=(
                Expected(12, 33, "the optimizer is built while `model` is on the CPU and `model.to(gpu_id)` in"),
            ),
        ),
        invalid(
            """
            import torch

            class Net(torch.nn.Module):
                pass

            class Trainer:
                def __init__(self, model, optimizer, device):
                    self.model = model.to(device)

            def make_optimizer(net, lr):
                return torch.optim.AdamW(net.parameters(), lr=lr)

            def main():
                device = "cuda" if torch.cuda.is_available() else "cpu"
                model = Net()
                optimizer = make_optimizer(model, 0.1)
                Trainer(model, optimizer, device=device)
            """,
            """
            import torch
            import torch_xla

            class Net(torch.nn.Module):
                pass

            class Trainer:
                def __init__(self, model, optimizer, device):
                    self.model = model.to(device)

            def make_optimizer(net, lr):
                return torch.optim.AdamW(net.parameters(), lr=lr)

            def main():
                device = "xla"
                model = Net()
                optimizer = make_optimizer(model.to(torch_xla.device()), 0.1)
                Trainer(model, optimizer, device=device)
            """,
            note="optimizer-builder-and-a-trainer-given-the-device",
            findings=(Expected(17, 17, "`make_optimizer` builds an optimizer while `model` is on the CPU and"),),
        ),
        invalid(
            """
            import torch

            class Trainer:
                def __init__(self, model, optimizer, device):
                    self.model = model.to(device)

            def main(device):
                model = torch.nn.Linear(3, 1)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                Trainer(model, optimizer, device)
            """,
            note="a-trainer-given-an-unknown-device-reported",
            findings=(
                Expected(9, 33, "the optimizer is built while `model` is on the CPU, and `model.to(device)` in"),
            ),
        ),
        invalid(
            """
            import torch
            from torch import nn


            class VisionLanguage(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.vision = nn.Linear(8, 4)
                    self.head = nn.Linear(4, 2)


            model = VisionLanguage()
            optimizer = torch.optim.AdamW([*model.vision.parameters(), *model.head.parameters()], lr=1e-3)
            model.cuda()
            """,
            """
            import torch
            from torch import nn
            import torch_xla


            class VisionLanguage(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.vision = nn.Linear(8, 4)
                    self.head = nn.Linear(4, 2)


            model = VisionLanguage()
            optimizer = torch.optim.AdamW([*model.vision.to(torch_xla.device()).parameters(), *model.head.to(torch_xla.device()).parameters()], lr=1e-3)
            model.to(torch_xla.device())
            """,
            note="submodules-parameters",
            findings=(
                Expected(14, 33, "move it first: model.vision.to(torch_xla.device()).parameters()"),
                Expected(14, 84, "move it first: model.head.to(torch_xla.device()).parameters()"),
            ),
        ),
        invalid(
            """
            import torch
            from torch import nn


            class VisionLanguage(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.vision = nn.Linear(8, 4)
                    self.head = nn.Linear(4, 2)


            model = VisionLanguage()
            optimizer = torch.optim.AdamW([*model.vision.parameters(), *model.head.parameters()], lr=1e-3)
            model.cuda()
            """,
            """
            import torch
            from torch import nn
            import torch_xla.core.xla_model as xm


            class VisionLanguage(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.vision = nn.Linear(8, 4)
                    self.head = nn.Linear(4, 2)


            model = VisionLanguage()
            optimizer = torch.optim.AdamW([*model.vision.to(xm.xla_device()).parameters(), *model.head.to(xm.xla_device()).parameters()], lr=1e-3)
            model.to(xm.xla_device())
            """,
            target="sagemaker",
            note="submodules-parameters-sagemaker",
            findings=(
                Expected(14, 33, "move it first: model.vision.to(xm.xla_device()).parameters()"),
                Expected(14, 81, "move it first: model.head.to(xm.xla_device()).parameters()"),
            ),
        ),
        invalid(
            """
            import torch

            model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Linear(4, 2))
            optimizer = torch.optim.SGD(
                [{"params": model[0].parameters()}, {"params": model[1].parameters(), "lr": 1e-2}], lr=1e-3
            )
            model.to("cuda")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Linear(4, 2))
            optimizer = torch.optim.SGD(
                [{"params": model[0].to(xm.xla_device()).parameters()}, {"params": model[1].to(xm.xla_device()).parameters(), "lr": 1e-2}], lr=1e-3
            )
            model.to("xla")
            """,
            target="sagemaker",
            note="parameter-groups-sagemaker",
            findings=(
                Expected(6, 17, 'the optimizer is built while `model` is on the CPU and `model.to("cuda")` moves'),
                Expected(6, 72, "move it first: model[1].to(xm.xla_device()).parameters()"),
            ),
        ),
        invalid(
            """
            import torch

            model = torch.nn.Linear(8, 2)
            params = list(model.parameters())
            model = model.cuda()
            optimizer = torch.optim.SGD(params, lr=0.1)
            """,
            """
            import torch
            import torch_xla

            model = torch.nn.Linear(8, 2)
            params = list(model.to(torch_xla.device()).parameters())
            model = model.to(torch_xla.device())
            optimizer = torch.optim.SGD(params, lr=0.1)
            """,
            note="parameters-collected-into-a-name-first",
            findings=(Expected(5, 15, "move it first: model.to(torch_xla.device()).parameters()"),),
        ),
        invalid(
            """
            import torch


            def trainable(net):
                return [p for p in net.parameters() if p.requires_grad]


            model = torch.nn.Linear(8, 2)
            optimizer = torch.optim.Adam(trainable(model), lr=1e-3)
            model.cuda()
            """,
            """
            import torch
            import torch_xla


            def trainable(net):
                return [p for p in net.parameters() if p.requires_grad]


            model = torch.nn.Linear(8, 2)
            optimizer = torch.optim.Adam(trainable(model.to(torch_xla.device())), lr=1e-3)
            model.to(torch_xla.device())
            """,
            note="parameters-collected-by-a-helper-function",
            findings=(Expected(10, 30, "`trainable` collects the optimizer's parameters while `model` is on the CPU"),),
        ),
        invalid(
            """
            import timm
            import torch
            from models import *

            if args.net == "res18":
                net = ResNet18(num_classes=10)
            else:
                net = timm.create_model("vit_base_patch16_384", pretrained=True)
            optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
            net.cuda()
            """,
            """
            import timm
            import torch
            import torch_xla
            from models import *

            if args.net == "res18":
                net = ResNet18(num_classes=10)
            else:
                net = timm.create_model("vit_base_patch16_384", pretrained=True)
            optimizer = torch.optim.Adam(net.to(torch_xla.device()).parameters(), lr=args.lr)
            net.to(torch_xla.device())
            """,
            note="a-model-from-a-factory-or-a-star-import",
            findings=(
                Expected(
                    10, 30, "the optimizer is built while `net` is on the CPU and `net.cuda()` moves the model later"
                ),
            ),
        ),
        invalid(
            """
            import torch


            class Trainer:
                def __init__(self, model, lr):
                    self.device = torch.device("cuda")
                    self.model = model
                    self.optimizer = torch.optim.AdamW([*self.model.vision.parameters(), *self.model.head.parameters()], lr=lr)
                    self.model.to(self.device)
            """,
            """
            import torch
            import torch_xla


            class Trainer:
                def __init__(self, model, lr):
                    self.device = torch_xla.device()
                    self.model = model
                    self.optimizer = torch.optim.AdamW([*self.model.vision.to(torch_xla.device()).parameters(), *self.model.head.to(torch_xla.device()).parameters()], lr=lr)
                    self.model.to(self.device)
            """,
            note="a-handed-in-model-moved-later-through-a-name-bound-to-it",
            findings=(
                Expected(
                    9,
                    46,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in",
                ),
                Expected(
                    9,
                    102,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from torch import nn


            def fit(model, lr):
                optimizer = torch.optim.SGD(params=[{"params": model.backbone.parameters(), "lr": 0.1 * lr},
                                                    {"params": model.classifier.parameters(), "lr": lr}], momentum=0.9)
                model = nn.DataParallel(model)
                model.cuda()
                return optimizer
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def fit(model, lr):
                optimizer = torch.optim.SGD(params=[{"params": model.backbone.to(xm.xla_device()).parameters(), "lr": 0.1 * lr},
                                                    {"params": model.classifier.to(xm.xla_device()).parameters(), "lr": lr}], momentum=0.9)
                model.to(xm.xla_device())
                return optimizer
            """,
            target="sagemaker",
            note="parameter-groups-of-a-handed-in-model-sagemaker",
            findings=(
                Expected(
                    6,
                    52,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `model.cuda()` in `fit` moves",
                ),
                Expected(
                    7,
                    52,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `model.cuda()` in `fit` moves",
                ),
            ),
        ),
        invalid(
            """
            import itertools
            from torch import optim as O


            def fit(net):
                opt = O.Adam(filter(lambda p: p.requires_grad, itertools.chain(net.a.parameters(), net.b.parameters())))
                net.cuda()
                return opt
            """,
            """
            import itertools
            from torch import optim as O
            import torch_xla


            def fit(net):
                opt = O.Adam(filter(lambda p: p.requires_grad, itertools.chain(net.a.to(torch_xla.device()).parameters(), net.b.to(torch_xla.device()).parameters())))
                net.to(torch_xla.device())
                return opt
            """,
            alias=True,
            note="chained-and-filtered-parameters-of-a-handed-in-model",
            findings=(
                Expected(
                    7,
                    68,
                    "the optimizer is built while `net`, handed in, may be on the CPU and `net.cuda()` in `fit` moves",
                ),
                Expected(
                    7,
                    111,
                    "the optimizer is built while `net`, handed in, may be on the CPU and `net.cuda()` in `fit` moves",
                ),
            ),
        ),
        invalid(
            """
            import torch


            class SimCLR:
                def __init__(self, *args, **kwargs):
                    self.args = kwargs["args"]
                    self.model = kwargs["model"].to(self.args.device)
                    self.optimizer = kwargs["optimizer"]


            def main(args):
                model = torch.nn.Linear(8, 4)
                optimizer = torch.optim.Adam(model.parameters(), 3e-4)
                return SimCLR(model=model, optimizer=optimizer, args=args)
            """,
            note="a-class-moves-a-keyword-argument-to-a-device-it-is-handed",
            findings=(
                Expected(
                    13,
                    34,
                    'the optimizer is built while `model` is on the CPU, and `kwargs["model"].to(self.args.device)` in',
                ),
            ),
        ),
        invalid(
            """
            import torch


            class SimCLR:
                def __init__(self, *args, **kwargs):
                    self.args = kwargs["args"]
                    self.model = kwargs["model"].to(self.args.device)
                    self.optimizer = kwargs["optimizer"]


            def main(args):
                model = torch.nn.Linear(8, 4)
                optimizer = torch.optim.Adam(model.parameters(), 3e-4)
                return SimCLR(model=model, optimizer=optimizer, args=args)
            """,
            target="sagemaker",
            note="a-class-moves-a-keyword-argument-to-a-device-it-is-handed-sagemaker",
            findings=(
                Expected(
                    13,
                    34,
                    'the optimizer is built while `model` is on the CPU, and `kwargs["model"].to(self.args.device)` in',
                ),
            ),
        ),
        invalid(
            """
            import torch


            class Learner:
                def __init__(self, **kwargs):
                    self.model = kwargs.pop("model").cuda()
                    self.optimizer = kwargs.pop("optimizer")


            def main():
                model = torch.nn.Linear(8, 4)
                optimizer = torch.optim.Adam(model.parameters(), 3e-4)
                return Learner(model=model, optimizer=optimizer)
            """,
            """
            import torch
            import torch_xla


            class Learner:
                def __init__(self, **kwargs):
                    self.model = kwargs.pop("model").to(torch_xla.device())
                    self.optimizer = kwargs.pop("optimizer")


            def main():
                model = torch.nn.Linear(8, 4)
                optimizer = torch.optim.Adam(model.to(torch_xla.device()).parameters(), 3e-4)
                return Learner(model=model, optimizer=optimizer)
            """,
            note="a-class-moves-a-keyword-argument-to-cuda",
            findings=(
                Expected(
                    13, 34, 'the optimizer is built while `model` is on the CPU and `kwargs.pop("model").cuda()` in'
                ),
            ),
        ),
        invalid(
            """
            import torch


            class SimCLR:
                def __init__(self, *args, **kwargs):
                    self.args = kwargs["args"]
                    self.model = kwargs["model"].to(self.args.device)


            def main(args):
                args.device = torch.device("cuda")
                model = torch.nn.Linear(8, 4)
                optimizer = torch.optim.Adam(model.parameters(), 3e-4)
                return SimCLR(model=model, optimizer=optimizer, args=args)
            """,
            """
            import torch
            import torch_xla


            class SimCLR:
                def __init__(self, *args, **kwargs):
                    self.args = kwargs["args"]
                    self.model = kwargs["model"].to(self.args.device)


            def main(args):
                args.device = torch_xla.device()
                model = torch.nn.Linear(8, 4)
                optimizer = torch.optim.Adam(model.to(torch_xla.device()).parameters(), 3e-4)
                return SimCLR(model=model, optimizer=optimizer, args=args)
            """,
            note="a-class-moves-a-keyword-argument-to-a-device-the-caller-knows",
            findings=(
                Expected(
                    14,
                    34,
                    'the optimizer is built while `model` is on the CPU and `kwargs["model"].to(self.args.device)` in',
                ),
            ),
        ),
        invalid(
            """
            import torch


            class Trainer:
                def __init__(self, model, optimizer):
                    self.model = model
                    self.optimizer = optimizer

                def fit(self):
                    self.model.cuda()


            def main():
                model = torch.nn.Linear(4, 2)
                optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
                Trainer(model, optimizer).fit()
            """,
            """
            import torch
            import torch_xla


            class Trainer:
                def __init__(self, model, optimizer):
                    self.model = model
                    self.optimizer = optimizer

                def fit(self):
                    self.model.to(torch_xla.device())


            def main():
                model = torch.nn.Linear(4, 2)
                optimizer = torch.optim.Adam(model.to(torch_xla.device()).parameters(), lr=1e-3)
                Trainer(model, optimizer).fit()
            """,
            note="a-method-moves-what-init-was-handed",
            findings=(
                Expected(
                    16,
                    34,
                    "the optimizer is built while `model` is on the CPU and `self.model.cuda()` in `Trainer.fit`",
                ),
            ),
        ),
        invalid(
            """
            from torch import nn, optim


            class Trainer:
                def __init__(self, net, opt):
                    self.net = net
                    self.opt = opt

                def fit(self):
                    self.net.cuda()


            def main():
                net = nn.Linear(4, 2)
                opt = optim.Adam(net.parameters(), lr=1e-3)
                Trainer(net, opt).fit()
            """,
            """
            from torch import nn, optim
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, net, opt):
                    self.net = net
                    self.opt = opt

                def fit(self):
                    self.net.to(xm.xla_device())


            def main():
                net = nn.Linear(4, 2)
                opt = optim.Adam(net.to(xm.xla_device()).parameters(), lr=1e-3)
                Trainer(net, opt).fit()
            """,
            target="sagemaker",
            alias=True,
            note="a-method-moves-what-init-was-handed-sagemaker",
            findings=(
                Expected(
                    16, 22, "the optimizer is built while `net` is on the CPU and `self.net.cuda()` in `Trainer.fit`"
                ),
            ),
        ),
        invalid(
            """
            import torch


            class Trainer:
                def __init__(self, model, lr):
                    self.device = torch.device("cuda")
                    self.model = model
                    self.optimizer = torch.optim.Adam([*self.model.encoder.parameters(), *self.model.decoder.parameters()], lr=lr)

                def train(self, loader):
                    self.model.to(self.device)
            """,
            """
            import torch
            import torch_xla


            class Trainer:
                def __init__(self, model, lr):
                    self.device = torch_xla.device()
                    self.model = model
                    self.optimizer = torch.optim.Adam([*self.model.encoder.to(torch_xla.device()).parameters(), *self.model.decoder.to(torch_xla.device()).parameters()], lr=lr)

                def train(self, loader):
                    self.model.to(self.device)
            """,
            note="another-method-moves-the-model-init-built-the-optimizer-over",
            findings=(
                Expected(
                    9,
                    45,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in `Trainer.train`",
                ),
                Expected(
                    9,
                    102,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in `Trainer.train`",
                ),
            ),
        ),
        invalid(
            """
            import torch


            class Trainer:
                def __init__(self, model, lr):
                    self.device = torch.device("cuda")
                    self.model = model
                    self.optimizer = torch.optim.Adam([*self.model.encoder.parameters(), *self.model.decoder.parameters()], lr=lr)

                def train(self, loader):
                    self.model.to(self.device)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, model, lr):
                    self.device = xm.xla_device()
                    self.model = model
                    self.optimizer = torch.optim.Adam([*self.model.encoder.to(xm.xla_device()).parameters(), *self.model.decoder.to(xm.xla_device()).parameters()], lr=lr)

                def train(self, loader):
                    self.model.to(self.device)
            """,
            target="sagemaker",
            note="another-method-moves-the-model-init-built-the-optimizer-over-sagemaker",
            findings=(
                Expected(
                    9,
                    45,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in `Trainer.train`",
                ),
                Expected(
                    9,
                    99,
                    "the optimizer is built while `model`, handed in, may be on the CPU and `self.model.to(self.device)` in `Trainer.train`",
                ),
            ),
        ),
        invalid(
            """
            import torch
            import timm.optim


            def get_optimizer(params, lr):
                return torch.optim.SGD(params, lr=lr)


            def main():
                model = torch.nn.Linear(4, 2)
                optimizer = get_optimizer(model.parameters(), 0.1)
                head = torch.nn.Linear(2, 2)
                head_optimizer = timm.optim.create_optimizer_v2(head.named_parameters(), "adamw", lr=1e-3)
                model.cuda()
                head.cuda()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import timm.optim


            def get_optimizer(params, lr):
                return torch.optim.SGD(params, lr=lr)


            def main():
                model = torch.nn.Linear(4, 2)
                optimizer = get_optimizer(model.to(xm.xla_device()).parameters(), 0.1)
                head = torch.nn.Linear(2, 2)
                head_optimizer = timm.optim.create_optimizer_v2(head.to(xm.xla_device()).named_parameters(), "adamw", lr=1e-3)
                model.to(xm.xla_device())
                head.to(xm.xla_device())
            """,
            target="sagemaker",
            note="parameters-handed-to-an-optimizer-builder-sagemaker",
            findings=(
                Expected(
                    12, 31, "the optimizer is built while `model` is on the CPU and `model.cuda()` in `main` moves"
                ),
                Expected(14, 53, "the optimizer is built while `head` is on the CPU and `head.cuda()` in `main` moves"),
            ),
        ),
    ),
)

TRAINING_LOOP_BARRIER = Rule(
    code="XLA301",
    name="training-loop-barrier",
    severity="error",
    summary="A training loop ends every iteration with the step barrier",
    fixable=True,
    why="XLA records operations lazily and compiles and runs them at a barrier. Without one per iteration the "
    "graph grows with every step until compiling it runs out of memory; the barrier ends every iteration, "
    "also before each `continue`.",
    examples=lambda: (
        invalid(
            """
            import torch

            for step in range(steps):
                x, y = next(batches)
                loss_fn(model(x), y).backward()
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
            """,
            """
            import torch
            import torch_xla

            for step in range(steps):
                x, y = next(batches)
                loss_fn(model(x), y).backward()
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
                torch_xla.sync()
            """,
            findings=(Expected(9, 5, "training loop"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            for x in batches:
                model(x).sum().backward()
                torch_xla.sync()
            for epoch in range(3):
                print(epoch)
            """,
            note="has-barrier-and-no-training",
        ),
        valid(
            """
            import torch


            def train_epoch(fabric, model, optimizer, loader):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    fabric.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="fabric-from-caller",
        ),
    ),
    invalid=lambda: (
        # The barrier under the availability check goes with the branch the device
        # rewrite drops (False on XLA): the loop needs its own.
        invalid(
            """
            import torch
            import torch_xla

            for x, y in loader:
                if not torch.cuda.is_available():
                    device = torch.device("cuda")
                    torch_xla.sync()
                loss_fn(model(x.to(device)), y).backward()
            """,
            """
            import torch
            import torch_xla

            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            note="barrier-in-a-dropped-branch",
            findings=(Expected(6, 5, "training loop: torch_xla.sync() ends every iteration"),),
        ),
        invalid(
            """
            import torch


            class Agent:
                def __init__(self):
                    self.net = torch.nn.Linear(4, 2).cuda()
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.cuda()).sum().backward()
                    self.optimizer.step()


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Agent:
                def __init__(self):
                    self.net = torch.nn.Linear(4, 2).to(torch_xla.device())
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.to(torch_xla.device())).sum().backward()
                    xm.optimizer_step(self.optimizer)


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
                    torch_xla.sync()
            """,
            note="a-step-method-called-through-an-instance",
            findings=(Expected(21, 9, "training loop: torch_xla.sync() ends every iteration"),),
        ),
        invalid(
            """
            import torch


            class Agent:
                def update(self, batch):
                    self.net(batch.cuda()).sum().backward()
                    self.optimizer.step()


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            class Agent:
                def update(self, batch):
                    self.net(batch.to(xm.xla_device())).sum().backward()
                    xm.optimizer_step(self.optimizer)


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
                    xm.mark_step()
            """,
            target="sagemaker",
            note="a-step-method-called-through-an-instance-sagemaker",
            findings=(Expected(15, 9, "training loop: xm.mark_step() ends every iteration"),),
        ),
        invalid(
            """
            import torch
            from util.misc import NativeScaler

            loss_scaler = NativeScaler()
            for x in loader:
                loss = model(x)
                loss_scaler(loss, optimizer)
            """,
            """
            import torch
            import torch_xla
            from util.misc import NativeScaler

            loss_scaler = NativeScaler()
            for x in loader:
                loss = model(x)
                loss_scaler(loss, optimizer)
                torch_xla.sync()
            """,
            note="step-wrapper-is-a-training-step",
            findings=(Expected(9, 5, "training loop"),),
        ),
        invalid(
            """
            import torch

            def backward_and_step(loss, optimizer, scaler):
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()

            class Trainer:
                def _run_batch(self, x):
                    loss = self.model(x)
                    backward_and_step(loss, self.optimizer, self.scaler)

                def train(self):
                    for x in self.loader:
                        self._run_batch(x)
            """,
            """
            import torch
            import torch_xla

            def backward_and_step(loss, optimizer, scaler):
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()

            class Trainer:
                def _run_batch(self, x):
                    loss = self.model(x)
                    backward_and_step(loss, self.optimizer, self.scaler)

                def train(self):
                    for x in self.loader:
                        self._run_batch(x)
                        torch_xla.sync()
            """,
            note="step-through-helpers",
            findings=(Expected(17, 13, "training loop"),),
        ),
        invalid(
            """
            import torch

            for step in range(100):
                x, y = get_batch()
                if x is None:
                    continue
                loss = model(x, y)
                loss.backward()
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-0.1)
            """,
            """
            import torch
            import torch_xla

            for step in range(100):
                x, y = get_batch()
                if x is None:
                    torch_xla.sync()
                    continue
                loss = model(x, y)
                loss.backward()
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-0.1)
                torch_xla.sync()
            """,
            note="manual-update-and-continue",
            findings=(Expected(13, 5, "training loop"),),
        ),
        invalid(
            """
            import torch

            class Trainer:
                def _run_batch(self, x):
                    self.optimizer.zero_grad()
                    self.model(x).sum().backward()
                    self.optimizer.step()

                def run(self):
                    while self.running:
                        self._run_batch(next(self.batches))
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            class Trainer:
                def _run_batch(self, x):
                    self.optimizer.zero_grad()
                    self.model(x).sum().backward()
                    xm.optimizer_step(self.optimizer)

                def run(self):
                    while self.running:
                        self._run_batch(next(self.batches))
                        torch_xla.sync()
            """,
            note="step-method",
            findings=(Expected(14, 13, "training loop"),),
        ),
        invalid(
            """
            import torch as th

            for x in batches:
                th.autograd.backward(model(x).sum())
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            for x in batches:
                th.autograd.backward(model(x).sum())
                xm.mark_step()
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(6, 5, "training loop"),),
        ),
    ),
)

DEVICE_LOADER = Rule(
    code="XLA302",
    name="device-loader",
    severity="error",
    summary="A loader that feeds the XLA device is wrapped in MpDeviceLoader",
    fixable=True,
    why="Where every batch of a training loop goes to the XLA device, `MpDeviceLoader` moves the batches in "
    "the background and runs the step barrier itself, so transfers overlap compute (the SageMaker guide's "
    "preference); without it, or a barrier, the graph grows without end.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl

            device = torch_xla.device()
            for x, y in pl.MpDeviceLoader(train_loader, device):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            findings=(Expected(6, 13, "train_loader -> pl.MpDeviceLoader(train_loader, device)"),),
        ),
    ),
    valid=lambda: (
        # The loop drops samples on the host: on the device every new batch shape would be a
        # new graph, so the loop keeps the barrier and its own moves.
        valid(
            """
            import torch

            device = torch.device("cuda")
            for inputs, labels in train_loader:
                keep = ~torch.isnan(inputs).any(dim=1)
                inputs, labels = inputs[keep], labels[keep]
                inputs, labels = inputs.to(device), labels.to(device)
                loss = model(inputs, labels)
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            for inputs, labels in train_loader:
                keep = ~torch.isnan(inputs).any(dim=1)
                inputs, labels = inputs[keep], labels[keep]
                inputs, labels = inputs.to(device), labels.to(device)
                loss = model(inputs, labels)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="host-side-filtering",
        ),
        valid(
            """
            import torch

            if args.cpu:
                device = torch.device("cpu")
            else:
                device = torch.device("cuda")
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla

            if args.cpu:
                device = torch.device("cpu")
            else:
                device = torch_xla.device()
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
                torch_xla.sync()
            """,
            note="cpu-path-keeps-barrier",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for i, (x, y) in enumerate(train_loader):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl

            device = torch_xla.device()
            for i, (x, y) in enumerate(pl.MpDeviceLoader(train_loader, device)):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            findings=(Expected(6, 28, "train_loader -> pl.MpDeviceLoader(train_loader, device)"),),
        ),
        invalid(
            """
            import torch as th

            dev = th.device('cuda' if th.cuda.is_available() else 'cpu')
            for (batch,) in self.train_loader:
                batch = batch.to(dev)
                model(batch).sum().backward()
            """,
            """
            import torch as th
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl

            dev = torch_xla.device()
            for (batch,) in pl.MpDeviceLoader(self.train_loader, dev):
                batch = batch.to(dev)
                model(batch).sum().backward()
            """,
            alias=True,
            findings=(Expected(6, 17, "self.train_loader -> pl.MpDeviceLoader(self.train_loader, dev)"),),
        ),
    ),
)

EVAL_LOOP_BARRIER = Rule(
    code="XLA303",
    name="eval-loop-barrier",
    severity="error",
    summary="An evaluation loop over the device ends every iteration with the step barrier",
    fixable=True,
    why="An evaluation loop that keeps its results on the device (`correct += (pred == y).sum()`) builds one "
    "graph over the whole data set, compiled only when the total is read; a barrier per iteration keeps every "
    "graph one batch long. A host read in the loop (`losses.update(loss.item(), n)`) does not change that "
    "when the loop also accumulates device values (`top1.update(acc1, n)`, whose meter keeps "
    "`self.sum += val * n`; `total += correct`; `outputs.append(logits)`): the read materializes only what it "
    "reads, so such a loop gets its barrier too.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            with torch.no_grad():
                for x, y in test_batches:
                    total += (model(x.to(device)).argmax(1) == y.to(device)).sum()
            print(total.item())
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            with torch.no_grad():
                for x, y in test_batches:
                    total += (model(x.to(device)).argmax(1) == y.to(device)).sum()
                    torch_xla.sync()
            print(total.item())
            """,
            findings=(Expected(8, 9, "evaluation loop over the device (no host read per iteration)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            with torch.no_grad():
                for x, y in val_loader:
                    x, y = x.to(device), y.to(device)
                    correct += (model(x).argmax(1) == y).sum().item()
            """,
            note="reads-every-iteration",
        ),
        valid(
            """
            import torch

            with torch.no_grad():
                for images, target in val_loader:
                    images = images.to(device)
                    loss = criterion(model(images), target.to(device))
                    losses.update(loss.item(), images.size(0))
                    seen += images.size(0)
                    outputs.append(loss.item())
            """,
            note="only-host-values-accumulate",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            with torch.no_grad():
                for x, y in val_loader:
                    x, y = x.to(device), y.to(device)
                    correct += (model(x).argmax(1) == y).sum()
            """,
            """
            import torch
            import torch_xla

            with torch.no_grad():
                for x, y in val_loader:
                    x, y = x.to(device), y.to(device)
                    correct += (model(x).argmax(1) == y).sum()
                    torch_xla.sync()
            """,
            findings=(Expected(8, 9, "evaluation loop over the device (no host read per iteration)"),),
        ),
        invalid(
            """
            import torch

            with torch.no_grad():
                for images, target in val_loader:
                    images = images.to(device)
                    output = model(images)
                    losses.update(criterion(output, target.to(device)).item(), images.size(0))
                    top1.update(accuracy(output, target), images.size(0))
            """,
            """
            import torch
            import torch_xla

            with torch.no_grad():
                for images, target in val_loader:
                    images = images.to(device)
                    output = model(images)
                    losses.update(criterion(output, target.to(device)).item(), images.size(0))
                    top1.update(accuracy(output, target), images.size(0))
                    torch_xla.sync()
            """,
            note="a-device-meter-beside-a-host-read",
            findings=(Expected(10, 9, "evaluation loop over the device that accumulates device values into `top1`"),),
        ),
        invalid(
            """
            import torch as th

            for x in val_batches:
                total = total + model(x.cuda()).sum()
            """,
            """
            import torch as th
            import torch_xla

            for x in val_batches:
                total = total + model(x.to(torch_xla.device())).sum()
                torch_xla.sync()
            """,
            alias=True,
            findings=(Expected(6, 5, "evaluation loop over the device (no host read per iteration)"),),
        ),
    ),
)

CLOSURE_BARRIER = Rule(
    code="XLA304",
    name="closure-barrier",
    severity="error",
    summary="An optimizer closure (LBFGS) ends with the step barrier",
    fixable=True,
    why="LBFGS calls its closure several times per step; without a barrier in the closure each call grows one "
    "graph, compiled anew at every inner iteration until the compiler runs out of memory.",
    examples=lambda: (
        invalid(
            """
            import torch

            def closure():
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                return loss

            optimizer.step(closure)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def closure():
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                torch_xla.sync()
                return loss

            xm.optimizer_step(optimizer, optimizer_args={"closure": closure})
            """,
            findings=(Expected(9, 5, "optimizer closure `closure`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            def closure():
                return criterion(model(x), y)

            print(closure())
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            def closure():
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                return loss

            optimizer.step(closure)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def closure():
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                torch_xla.sync()
                return loss

            xm.optimizer_step(optimizer, optimizer_args={"closure": closure})
            """,
            findings=(Expected(9, 5, "optimizer closure `closure`"),),
        ),
        invalid(
            """
            import torch.optim as O

            opt = O.LBFGS(params)

            def fit():
                opt.zero_grad()
                loss = loss_fn()
                loss.backward()
                return loss

            opt.step(closure=fit)
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm

            opt = O.LBFGS(params)

            def fit():
                opt.zero_grad()
                loss = loss_fn()
                loss.backward()
                xm.mark_step()
                return loss

            xm.optimizer_step(opt, optimizer_args={"closure": fit})
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(10, 5, "optimizer closure `fit`"),),
        ),
    ),
)

STEP_BARRIER = Rule(
    code="XLA305",
    name="step-barrier",
    severity="error",
    summary="An optimizer step that no loop runs is followed by the step barrier",
    fixable=True,
    why="In lazy mode nothing runs until a barrier or a host read: a script that trains one step outside any "
    "loop (a demo, a smoke test) would record the parameter update and never execute it.",
    examples=lambda: (
        invalid(
            """
            import torch

            def demo(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()

            demo(model, optimizer, x, y)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def demo(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()

            demo(model, optimizer, x, y)
            """,
            findings=(Expected(9, 5, "optimizer step outside any loop"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def train_step(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()


            for x, y in batches:
                train_step(model, optimizer, x, y)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def train_step(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                xm.optimizer_step(optimizer)


            for x, y in batches:
                train_step(model, optimizer, x, y)
                torch_xla.sync()
            """,
            note="step-function-in-a-loop",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch


            def demo(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
                print(model.weight)


            demo(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def demo(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
                print(model.weight)


            demo(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
            """,
            note="demo-function",
            findings=(Expected(10, 5, "optimizer step outside any loop"),),
        ),
        invalid(
            """
            import torch.multiprocessing as mp
            import torch.optim as O


            def worker(rank):
                opt = O.SGD(model.parameters(), lr=0.1)
                loss_fn(model(x), y).backward()
                opt.step()


            if __name__ == "__main__":
                mp.spawn(worker, nprocs=1)
            """,
            """
            import torch.optim as O
            import torch_xla
            import torch_xla.core.xla_model as xm


            def worker(rank):
                opt = O.SGD(model.parameters(), lr=0.1)
                loss_fn(model(x), y).backward()
                xm.optimizer_step(opt)
                torch_xla.sync()


            if __name__ == "__main__":
                torch_xla.launch(worker)
            """,
            note="handed-to-a-launcher",
            alias=True,
            findings=(Expected(10, 5, "optimizer step outside any loop"),),
        ),
    ),
)

UNTRACED_OPTIMIZER_PARAMETERS = Rule(
    code="XLA213",
    name="untraced-optimizer-parameters",
    severity="error",
    summary="An optimizer built, before a model moves, from parameters the tool cannot trace",
    fixable=False,
    why="Obligation 2 of a port: the optimizer holds the parameters as they are after the move. Moving a module "
    "to XLA replaces its Parameter objects (on CUDA they are kept), so parameters taken from a model before it "
    "moves are stale copies that nothing trains. The tool follows `model.parameters()`, submodules, parameter "
    "groups, names they are collected into and the file's and project's helper functions, and moves the model "
    "first where it can (XLA203). When the optimizer is built, while a model of the same function is still on "
    "the CPU and moves later, from something it cannot follow (a name filled in a loop, a parameter of the "
    "function, a callable of a library or of a module it could not read that is handed the model), it cannot "
    "tell whether those are the model's parameters: build the optimizer after the move, or move the model before "
    "building it.",
    examples=lambda: (
        invalid(
            """
            import torch
            import timm.optim


            def main():
                model = torch.nn.Linear(3, 1)
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                model.cuda()
            """,
            """
            import torch
            import torch_xla
            import timm.optim


            def main():
                model = torch.nn.Linear(3, 1)
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                model.to(torch_xla.device())
            """,
            findings=(
                Expected(
                    8, 17, "the optimizer's parameters come from `timm.optim.create_optimizer_v2`, handed `model`,"
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import timm.optim


            def main(extra):
                model = torch.nn.Linear(8, 2).cuda()
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                head = torch.nn.Linear(2, 2)
                extra_optimizer = torch.optim.SGD(extra, lr=0.1)
                head.cuda()
                params = [p for p in model.parameters() if p.requires_grad]
                model.cuda()
                torch.optim.SGD(params, lr=0.1)
            """,
            """
            import torch
            import torch_xla
            import timm.optim


            def main(extra):
                model = torch.nn.Linear(8, 2).to(torch_xla.device())
                optimizer = timm.optim.create_optimizer_v2(model, "adamw", lr=1e-3)
                head = torch.nn.Linear(2, 2)
                extra_optimizer = torch.optim.SGD(extra, lr=0.1)
                head.to(torch_xla.device())
                params = [p for p in model.parameters() if p.requires_grad]
                model.to(torch_xla.device())
                torch.optim.SGD(params, lr=0.1)
            """,
            note="moved-first-or-handed-in",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch


            def main():
                model = torch.nn.Linear(8, 2)
                decay = []
                for name, p in model.named_parameters():
                    if "bias" not in name:
                        decay.append(p)
                optimizer = torch.optim.AdamW(decay, lr=1e-3, weight_decay=0.1)
                model.cuda()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def main():
                model = torch.nn.Linear(8, 2)
                decay = []
                for name, p in model.named_parameters():
                    if "bias" not in name:
                        decay.append(p)
                optimizer = torch.optim.AdamW(decay, lr=1e-3, weight_decay=0.1)
                model.to(xm.xla_device())
            """,
            target="sagemaker",
            note="filled-in-a-loop-sagemaker",
            findings=(Expected(11, 17, "the optimizer's parameters come from `decay`, which the tool cannot trace"),),
        ),
        invalid(
            """
            import torch.optim as O
            from torch import nn

            model = nn.Linear(8, 2)
            optimizer = O.SGD([model.weight, model.bias], lr=0.1)
            model.cuda()
            """,
            """
            import torch.optim as O
            from torch import nn
            import torch_xla

            model = nn.Linear(8, 2)
            optimizer = O.SGD([model.weight, model.bias], lr=0.1)
            model.to(torch_xla.device())
            """,
            alias=True,
            findings=(
                Expected(6, 13, "a tensor of `model`, while `model` is on the CPU, and `model.cuda()` moves it later"),
            ),
        ),
    ),
)

UNDRIVEN_STEP = Rule(
    code="XLA306",
    name="undriven-step",
    severity="error",
    summary="An optimizer step in a function that no loop of the converted files drives",
    fixable=False,
    why="Obligation 4 of a port: one step barrier per optimizer step, in the loop that drives it. A step in a "
    "function (an agent's `update()`, a trainer's `train_step()`) gets its barrier in the loop that calls the "
    "function, followed across the functions and methods of the file and into the project's other modules. "
    "When no loop of the file calls it and no other file of the run imports the file, that loop is somewhere the "
    "tool did not see: it is still CUDA code, nothing cuts the lazy graph, and it grows with every step until "
    "compiling it runs out of memory. Convert the project folder (the barrier then goes at the end of the "
    "driving loop's iteration), or end each call with the step barrier.",
    examples=lambda: (
        invalid(
            """
            import torch

            class Agent:
                def __init__(self, net):
                    self.net = net.cuda()
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.cuda()).mean().backward()
                    self.optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            class Agent:
                def __init__(self, net):
                    self.net = net.to(torch_xla.device())
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.to(torch_xla.device())).mean().backward()
                    xm.optimizer_step(self.optimizer)
            """,
            findings=(
                Expected(13, 9, "`self.optimizer.step()` in `Agent.update` has no step barrier: no loop of this file"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            class Agent:
                def __init__(self):
                    self.net = torch.nn.Linear(4, 2).cuda()
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.cuda()).sum().backward()
                    self.optimizer.step()


            def run(agent, episodes):
                for episode in range(episodes):
                    agent.update(torch.randn(8, 4))


            def main():
                agent = Agent()
                run(agent, 10)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Agent:
                def __init__(self):
                    self.net = torch.nn.Linear(4, 2).to(torch_xla.device())
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.to(torch_xla.device())).sum().backward()
                    xm.optimizer_step(self.optimizer)


            def run(agent, episodes):
                for episode in range(episodes):
                    agent.update(torch.randn(8, 4))
                    torch_xla.sync()


            def main():
                agent = Agent()
                run(agent, 10)
            """,
            note="driven-by-a-loop-in-another-function",
        ),
        valid(
            """
            import torch
            import torch_xla.distributed.parallel_loader as pl


            class Trainer:
                def __init__(self, model, optimizer, loader, device):
                    self.model, self.optimizer = model, optimizer
                    self.loader = pl.MpDeviceLoader(loader, device)

                def train_step(self, x, y):
                    self.optimizer.zero_grad()
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    self.optimizer.step()

                def fit(self):
                    for x, y in self.loader:
                        self.train_step(x, y)
            """,
            """
            import torch
            import torch_xla.distributed.parallel_loader as pl
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, model, optimizer, loader, device):
                    self.model, self.optimizer = model, optimizer
                    self.loader = pl.MpDeviceLoader(loader, device)

                def train_step(self, x, y):
                    self.optimizer.zero_grad()
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    xm.optimizer_step(self.optimizer)

                def fit(self):
                    for x, y in self.loader:
                        self.train_step(x, y)
            """,
            note="driven-by-a-loop-over-a-device-loader",
        ),
        valid(
            """
            import lightning as L
            import torch


            class Model(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.automatic_optimization = False
                    self.net = torch.nn.Linear(4, 1)

                def training_step(self, batch, batch_idx):
                    opt = self.optimizers()
                    opt.zero_grad()
                    self.manual_backward(self.net(batch).sum())
                    opt.step()
            """,
            note="lightning-drives-the-steps",
        ),
        valid(
            """
            from accelerate import Accelerator

            accelerator = Accelerator()


            def train_step(model, optimizer, batch):
                accelerator.backward(model(batch).sum())
                optimizer.step()
                optimizer.zero_grad()
            """,
            note="accelerate-drives-the-steps",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm


            def train_step(model, optimizer, scaler, batch):
                scaler.scale(model(batch).sum()).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="already-xla-code-whose-driver-is-elsewhere",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from torch import optim as O


            def train_step(model, batch):
                opt = O.SGD(model.parameters(), lr=0.1)
                model(batch.cuda()).sum().backward()
                opt.step()
            """,
            """
            from torch import optim as O
            import torch_xla
            import torch_xla.core.xla_model as xm


            def train_step(model, batch):
                opt = O.SGD(model.parameters(), lr=0.1)
                model(batch.to(torch_xla.device())).sum().backward()
                xm.optimizer_step(opt)
            """,
            alias=True,
            findings=(Expected(9, 5, "`opt.step()` in `train_step` has no step barrier"),),
        ),
        invalid(
            """
            import torch


            class Learner:
                def __init__(self, net):
                    self.net = net.cuda()
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def update(self, batch):
                    self.net(batch.cuda()).sum().backward()
                    self.optimizer.step()

                def learn(self, batch):
                    self.update(batch)
                    return self.net
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Learner:
                def __init__(self, net):
                    self.net = net.to(torch_xla.device())
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def update(self, batch):
                    self.net(batch.to(torch_xla.device())).sum().backward()
                    xm.optimizer_step(self.optimizer)

                def learn(self, batch):
                    self.update(batch)
                    return self.net
            """,
            note="the-outermost-step-function-is-named",
            findings=(
                Expected(
                    16,
                    9,
                    "`self.update(batch)` in `Learner.learn` has no step barrier: no loop of this file calls `Learner.learn`",
                ),
            ),
        ),
        invalid(
            """
            import torch


            def train_step(model, optimizer, batch):
                optimizer.zero_grad()
                model(batch.cuda()).sum().backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def train_step(model, optimizer, batch):
                optimizer.zero_grad()
                model(batch.to(xm.xla_device())).sum().backward()
                xm.optimizer_step(optimizer)
            """,
            target="sagemaker",
            note="sagemaker-names-its-barrier",
            findings=(Expected(8, 5, "or call xm.mark_step() after each call of `train_step`"),),
        ),
    ),
)

RULES = (
    OPTIMIZER_STEP,
    OPTIMIZER_BEFORE_MOVE,
    TRAINING_LOOP_BARRIER,
    DEVICE_LOADER,
    EVAL_LOOP_BARRIER,
    CLOSURE_BARRIER,
    STEP_BARRIER,
    UNDRIVEN_STEP,
    UNTRACED_OPTIMIZER_PARAMETERS,
)
