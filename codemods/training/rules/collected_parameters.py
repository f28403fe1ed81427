"""XLA203's cases of parameters collected before the move: a submodule's, groups of them, into a
name first, by a helper function, and of a model a factory or a star import makes."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid
from codemods.training.rules.programs import VISION_LANGUAGE, VISION_LANGUAGE_PORTED


def collected_parameter_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            VISION_LANGUAGE,
            VISION_LANGUAGE_PORTED,
            note="submodules-parameters",
            findings=(
                Expected(14, 33, "move it first: model.vision.to(torch_xla.device()).parameters()"),
                Expected(14, 84, "move it first: model.head.to(torch_xla.device()).parameters()"),
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
        # A name that collects more after it is bound (``+=``, ``extend``, ``append``): every part moves first.
        invalid(
            """
        import torch

        model = Net()
        params = list(model.encoder.parameters())
        params += list(model.decoder.parameters())
        params.extend(model.head.parameters())
        params.append({"params": model.embed.parameters(), "lr": 1e-4})
        optimizer = torch.optim.Adam(params, lr=1e-3)
        model.cuda()
        """,
            """
        import torch
        import torch_xla

        model = Net()
        params = list(model.encoder.to(torch_xla.device()).parameters())
        params += list(model.decoder.to(torch_xla.device()).parameters())
        params.extend(model.head.to(torch_xla.device()).parameters())
        params.append({"params": model.embed.to(torch_xla.device()).parameters(), "lr": 1e-4})
        optimizer = torch.optim.Adam(params, lr=1e-3)
        model.to(torch_xla.device())
        """,
            note="parameters-collected-in-steps",
            findings=(
                Expected(5, 15, "move it first: model.encoder.to(torch_xla.device()).parameters()"),
                Expected(6, 16, "move it first: model.decoder.to(torch_xla.device()).parameters()"),
                Expected(7, 15, "move it first: model.head.to(torch_xla.device()).parameters()"),
                Expected(8, 26, "move it first: model.embed.to(torch_xla.device()).parameters()"),
            ),
        ),
        invalid(
            """
        import torch as th
        from torch import optim

        net = Net()
        groups = []
        groups.append({"params": net.body.parameters()})
        groups = groups + [{"params": net.tail.parameters(), "lr": 0.1}]
        opt = optim.SGD(groups, lr=0.01)
        net.cuda()
        """,
            """
        import torch as th
        from torch import optim
        import torch_xla.core.xla_model as xm

        net = Net()
        groups = []
        groups.append({"params": net.body.to(xm.xla_device()).parameters()})
        groups = groups + [{"params": net.tail.to(xm.xla_device()).parameters(), "lr": 0.1}]
        opt = optim.SGD(groups, lr=0.01)
        net.to(xm.xla_device())
        """,
            target="sagemaker",
            alias=True,
            note="parameters-collected-in-steps-sagemaker",
            findings=(
                Expected(7, 26, "move it first: net.body.to(xm.xla_device()).parameters()"),
                Expected(8, 31, "move it first: net.tail.to(xm.xla_device()).parameters()"),
            ),
        ),
    )
