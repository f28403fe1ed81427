"""XLA203's invalid cases that are not grouped by topic elsewhere, with the topic modules' invalid
cases collected in; kept apart from the rule so that its module holds the rule, its messages and
its hooks (the cases are most of its bulk)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid
from codemods.training.rules.caller_moved_optimizers import caller_moved_optimizer_invalid
from codemods.training.rules.collected_parameters import collected_parameter_invalid
from codemods.training.rules.folded_device_cases import folded_device_invalid
from codemods.training.rules.handed_in_cases import handed_in_model_invalid
from codemods.training.rules.holder_move_cases import holder_move_invalid
from codemods.training.rules.init_moved_optimizers import init_moved_optimizer_invalid
from codemods.training.rules.init_moves import init_move_invalid
from codemods.training.rules.looked_up_classes import looked_up_invalid
from codemods.training.rules.looked_up_round_trips import looked_up_round_trip_invalid
from codemods.training.rules.loop_moved_optimizers import loop_moved_invalid
from codemods.training.rules.method_optimizers import method_optimizer_invalid
from codemods.training.rules.own_optimizers import own_optimizer_invalid
from codemods.training.rules.programs import (
    KEYWORD_MODEL_TO_A_HANDED_DEVICE,
    KEYWORD_MODEL_TO_A_KNOWN_DEVICE,
    KEYWORD_MODEL_TO_A_KNOWN_DEVICE_PORTED,
    KEYWORD_MODEL_TO_CUDA,
    KEYWORD_MODEL_TO_CUDA_PORTED,
    LATER_MOVE_BY_ANOTHER_METHOD,
    LATER_MOVE_BY_ANOTHER_METHOD_PORTED,
    MOVED_BY_A_METHOD,
    MOVED_BY_A_METHOD_ALIASED,
    MOVED_BY_A_METHOD_ALIASED_PORTED,
    MOVED_BY_A_METHOD_PORTED,
    OPTIMIZER_BUILDER_AND_TRAINER,
    OPTIMIZER_BUILDER_AND_TRAINER_PORTED,
    PARAMETERS_TO_OPTIMIZER_BUILDERS,
    PARAMETERS_TO_OPTIMIZER_BUILDERS_PORTED,
)
from codemods.training.rules.returned_optimizer_cases import returned_optimizer_invalid
from codemods.training.rules.round_trip_rebuilds import round_trip_rebuild_invalid
from codemods.training.rules.round_trips import round_trip_invalid
from codemods.training.rules.stale_parameter_list_cases import stale_parameter_list_invalid
from codemods.training.rules.wrapped_models import wrapped_model_invalid


def optimizer_before_move_invalid() -> tuple[Invalid, ...]:
    return (
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
            OPTIMIZER_BUILDER_AND_TRAINER,
            OPTIMIZER_BUILDER_AND_TRAINER_PORTED,
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

            class Learner:
                def __init__(self, agent):
                    self.agent = agent
                    self.mixer = torch.nn.Linear(2, 1)
                    self.params = list(self.mixer.parameters())
                    self.opt = torch.optim.SGD(self.params, lr=0.1)

                def cuda(self):
                    self.mixer.cuda()
            """,
            """
            import torch
            import torch_xla

            class Learner:
                def __init__(self, agent):
                    self.agent = agent
                    self.mixer = torch.nn.Linear(2, 1)
                    self.params = list(self.mixer.parameters())
                    self.opt = torch.optim.SGD(self.params, lr=0.1)

                def cuda(self):
                    self.mixer.to(torch_xla.device())
            """,
            note="a-move-in-the-classs-own-cuda-method-runs-only-when-called-reported",
            findings=(
                Expected(
                    8,
                    28,
                    "the optimizer is built while `self.mixer` is on the CPU, and `self.mixer.cuda()` in "
                    "`Learner.cuda`, a method that runs only where a caller calls it, moves the model later",
                ),
            ),
        ),
        invalid(
            """
            import torch

            def main(use_cuda):
                model = torch.nn.Linear(2, 1)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                if use_cuda:
                    model.cuda()
                if use_cuda:
                    net = torch.nn.Linear(2, 1)
                    opt2 = torch.optim.SGD(net.parameters(), lr=0.1)
                    net.cuda()
                return opt, opt2
            """,
            """
            import torch
            import torch_xla

            def main(use_cuda):
                model = torch.nn.Linear(2, 1)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                if use_cuda:
                    model.to(torch_xla.device())
                if use_cuda:
                    net = torch.nn.Linear(2, 1)
                    opt2 = torch.optim.SGD(net.to(torch_xla.device()).parameters(), lr=0.1)
                    net.to(torch_xla.device())
                return opt, opt2
            """,
            note="a-move-under-a-condition-the-port-keeps-reported-one-under-the-optimizers-own-moved-first",
            findings=(
                Expected(
                    6,
                    27,
                    "the optimizer is built while `model` is on the CPU, and `model.cuda()` in `main` (only `if "
                    "use_cuda`) moves the model later to a device that may be the CPU",
                ),
                Expected(11, 32, "the optimizer is built while `net` is on the CPU and `net.cuda()` in `main` moves"),
            ),
        ),
        invalid(
            """
            import torch

            class Trainer:
                def __init__(self, net):
                    self.net = net
                    self.opt = torch.optim.SGD(list(net.parameters()), lr=0.1)

                def setup(self):
                    self.net.cuda()
            """,
            """
            import torch
            import torch_xla

            class Trainer:
                def __init__(self, net):
                    self.net = net
                    self.opt = torch.optim.SGD(list(net.to(torch_xla.device()).parameters()), lr=0.1)

                def setup(self):
                    self.net.to(torch_xla.device())
            """,
            note="parameters-read-through-the-parameter-moved-through-its-attribute",
            findings=(
                Expected(
                    7,
                    41,
                    "the optimizer is built while `net`, handed in, may be on the CPU and `self.net.cuda()` in "
                    "`Trainer.setup` moves the model later",
                ),
            ),
        ),
        *folded_device_invalid(),
        *collected_parameter_invalid(),
        *handed_in_model_invalid(),
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
            KEYWORD_MODEL_TO_A_HANDED_DEVICE,
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
            KEYWORD_MODEL_TO_A_HANDED_DEVICE,
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
            KEYWORD_MODEL_TO_CUDA,
            KEYWORD_MODEL_TO_CUDA_PORTED,
            note="a-class-moves-a-keyword-argument-to-cuda",
            findings=(
                Expected(
                    13, 34, 'the optimizer is built while `model` is on the CPU and `kwargs.pop("model").cuda()` in'
                ),
            ),
        ),
        invalid(
            KEYWORD_MODEL_TO_A_KNOWN_DEVICE,
            KEYWORD_MODEL_TO_A_KNOWN_DEVICE_PORTED,
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
            MOVED_BY_A_METHOD,
            MOVED_BY_A_METHOD_PORTED,
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
            MOVED_BY_A_METHOD_ALIASED,
            MOVED_BY_A_METHOD_ALIASED_PORTED,
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
            LATER_MOVE_BY_ANOTHER_METHOD,
            LATER_MOVE_BY_ANOTHER_METHOD_PORTED,
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
            PARAMETERS_TO_OPTIMIZER_BUILDERS,
            PARAMETERS_TO_OPTIMIZER_BUILDERS_PORTED,
            target="sagemaker",
            note="parameters-handed-to-an-optimizer-builder-sagemaker",
            findings=(
                Expected(
                    12, 31, "the optimizer is built while `model` is on the CPU and `model.cuda()` in `main` moves"
                ),
                Expected(14, 53, "the optimizer is built while `head` is on the CPU and `head.cuda()` in `main` moves"),
            ),
        ),
        *wrapped_model_invalid(),
        *own_optimizer_invalid(),
        *method_optimizer_invalid(),
        *round_trip_invalid(),
        *looked_up_round_trip_invalid(),
        *round_trip_rebuild_invalid(),
        *init_move_invalid(),
        *holder_move_invalid(),
        *init_moved_optimizer_invalid(),
        *caller_moved_optimizer_invalid(),
        *looked_up_invalid(),
        *returned_optimizer_invalid(),
        *stale_parameter_list_invalid(),
        *loop_moved_invalid(),
    )
