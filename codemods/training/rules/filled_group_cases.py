"""XLA203's cases for parameter groups filled in a loop over a model's parameters (faster-rcnn's
``for key, value in dict(fasterRCNN.named_parameters()).items(): params += [{'params': [value], ...}]``),
also of a model built by a call the tool does not know as a module class (``fasterRCNN = vgg16(classes)``),
with the optimizer built before ``fasterRCNN.cuda()``, or the groups filled before it and the optimizer
built after (the groups hold the Parameters the move replaced): the model is moved first in the loop's iterable, or,
where the move runs under a condition the port keeps, the optimizer is reported; and the same groups built
after the move, or built again after it for the same optimizer name, which strand nothing."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_MOVED_FIRST = "moves the model later; moving a module to XLA replaces its parameters, so move it first"


def filled_group_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch
            from model.faster_rcnn.vgg16 import vgg16


            def main(classes):
                net = vgg16(classes, pretrained=True)
                params = []
                for key, value in dict(net.named_parameters()).items():
                    if value.requires_grad:
                        params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
                net.cuda()
            """,
            """
            import torch
            import torch_xla
            from model.faster_rcnn.vgg16 import vgg16


            def main(classes):
                net = vgg16(classes, pretrained=True)
                params = []
                for key, value in dict(net.to(torch_xla.device()).named_parameters()).items():
                    if value.requires_grad:
                        params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
                net.to(torch_xla.device())
            """,
            note="groups-over-an-unknown-constructor",
            findings=(Expected(9, 28, "`net` is on the CPU and `net.cuda()` in `main` " + _MOVED_FIRST),),
        ),
        invalid(
            """
            import torch
            from model.faster_rcnn.vgg16 import vgg16


            def main(classes, use_cuda):
                net = vgg16(classes, pretrained=True)
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
                if use_cuda:
                    net.cuda()
            """,
            """
            import torch
            import torch_xla
            from model.faster_rcnn.vgg16 import vgg16


            def main(classes, use_cuda):
                net = vgg16(classes, pretrained=True)
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
                if use_cuda:
                    net.to(torch_xla.device())
            """,
            note="groups-moved-under-a-flag",
            findings=(
                Expected(
                    9, 28, "`net.cuda()` in `main` (only `if use_cuda`) moves the model later to a device that may be"
                ),
            ),
        ),
        invalid(
            """
            import torch.optim as O
            from nets import build_net

            net = build_net()
            params = []
            for name, p in net.named_parameters():
                params.append({"params": [p], "weight_decay": 0.0 if "bias" in name else 1e-4})
            opt = O.SGD(params, lr=0.1)
            net.to("cuda")
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm
            from nets import build_net

            net = build_net()
            params = []
            for name, p in net.to(xm.xla_device()).named_parameters():
                params.append({"params": [p], "weight_decay": 0.0 if "bias" in name else 1e-4})
            opt = O.SGD(params, lr=0.1)
            net.to("xla")
            """,
            target="sagemaker",
            alias=True,
            note="groups-appended-sagemaker",
            findings=(Expected(7, 16, '`net` is on the CPU and `net.to("cuda")` ' + _MOVED_FIRST),),
        ),
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
                for name, p in model.to(xm.xla_device()).named_parameters():
                    if "bias" not in name:
                        decay.append(p)
                optimizer = torch.optim.AdamW(decay, lr=1e-3, weight_decay=0.1)
                model.to(xm.xla_device())
            """,
            target="sagemaker",
            note="filled-in-a-loop-sagemaker",
            findings=(Expected(8, 20, "`model` is on the CPU and `model.cuda()` in `main` " + _MOVED_FIRST),),
        ),
        invalid(
            """
            import torch
            from nets import build_net


            def main():
                net = build_net()
                params = []
                for name, p in net.named_parameters():
                    params.append(p)
                net.cuda()
                optimizer = torch.optim.SGD(params, lr=0.1)
            """,
            """
            import torch
            import torch_xla
            from nets import build_net


            def main():
                net = build_net()
                params = []
                for name, p in net.to(torch_xla.device()).named_parameters():
                    params.append(p)
                net.to(torch_xla.device())
                optimizer = torch.optim.SGD(params, lr=0.1)
            """,
            note="groups-filled-before-the-move-optimizer-after",
            findings=(Expected(9, 20, "`net` is on the CPU and `net.cuda()` in `main` " + _MOVED_FIRST),),
        ),
        invalid(
            """
            import torch.optim as O
            from nets import build_net

            model = build_net()
            groups = []
            for p in model.parameters():
                groups += [{"params": [p]}]
            model.to("cuda")
            opt = O.Adam(groups, lr=1e-3)
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm
            from nets import build_net

            model = build_net()
            groups = []
            for p in model.to(xm.xla_device()).parameters():
                groups += [{"params": [p]}]
            model.to("xla")
            opt = O.Adam(groups, lr=1e-3)
            """,
            target="sagemaker",
            alias=True,
            note="groups-filled-before-the-move-sagemaker",
            findings=(Expected(7, 10, '`model` is on the CPU and `model.to("cuda")` ' + _MOVED_FIRST),),
        ),
    )


def filled_group_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch
            from model.faster_rcnn.vgg16 import vgg16


            def main(classes):
                net = vgg16(classes)
                net.cuda()
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)


            def again(classes):
                net = vgg16(classes)
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
                net.cuda()
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
            """,
            """
            import torch
            import torch_xla
            from model.faster_rcnn.vgg16 import vgg16


            def main(classes):
                net = vgg16(classes)
                net.to(torch_xla.device())
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)


            def again(classes):
                net = vgg16(classes)
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
                net.to(torch_xla.device())
                params = []
                for key, value in dict(net.named_parameters()).items():
                    params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
            """,
            note="groups-after-the-move-or-built-again",
        ),
    )


def filled_by_loop_variable_invalid() -> tuple[Invalid, ...]:
    """XLA213's: a loop over the parameters of another loop's variable (each child of the model) is not
    followed, and stays an optimizer over what the tool cannot trace."""
    return (
        invalid(
            """
            import torch
            from torch import nn


            def main():
                model = nn.Sequential(nn.Linear(4, 2), nn.Linear(2, 2))
                params = []
                for m in model.children():
                    for p in m.parameters():
                        params.append(p)
                optimizer = torch.optim.SGD(params, lr=0.1)
                model.cuda()
            """,
            """
            import torch
            from torch import nn
            import torch_xla


            def main():
                model = nn.Sequential(nn.Linear(4, 2), nn.Linear(2, 2))
                params = []
                for m in model.children():
                    for p in m.parameters():
                        params.append(p)
                optimizer = torch.optim.SGD(params, lr=0.1)
                model.to(torch_xla.device())
            """,
            note="filled-from-a-loop-variable",
            findings=(Expected(12, 17, "the optimizer's parameters come from `params`, which the tool cannot trace"),),
        ),
    )
