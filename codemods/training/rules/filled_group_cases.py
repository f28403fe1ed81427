"""XLA213's cases for parameter groups filled in a loop over the parameters of a model built by a call the
tool does not know as a module class (faster-rcnn's ``fasterRCNN = vgg16(classes)``, then
``for key, value in dict(fasterRCNN.named_parameters()).items(): params += [{'params': [value], ...}]``),
with the optimizer built before ``fasterRCNN.cuda()``; and the same groups built after the move, or
built again after it, which strand nothing."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_MESSAGE = "the optimizer's parameters come from `params`, filled in a loop over `net.named_parameters()`, while `net`"


def filled_group_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch
            from model.faster_rcnn.vgg16 import vgg16


            def main(classes, use_cuda):
                net = vgg16(classes, pretrained=True)
                params = []
                for key, value in dict(net.named_parameters()).items():
                    if value.requires_grad:
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
                    if value.requires_grad:
                        params += [{"params": [value], "lr": 0.1}]
                optimizer = torch.optim.SGD(params, momentum=0.9)
                if use_cuda:
                    net.to(torch_xla.device())
            """,
            note="groups-over-an-unknown-constructor",
            findings=(Expected(12, 17, _MESSAGE + " is on the CPU, and `net.cuda()` in `main` moves it later"),),
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
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from nets import build_net

            net = build_net()
            params = []
            for name, p in net.named_parameters():
                params.append({"params": [p], "weight_decay": 0.0 if "bias" in name else 1e-4})
            opt = O.SGD(params, lr=0.1)
            net.to("xla")
            """,
            target="sagemaker",
            alias=True,
            note="groups-appended-sagemaker",
            findings=(Expected(9, 7, _MESSAGE + " is on the CPU, and `net.to(\"cuda\")` moves it later"),),
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
