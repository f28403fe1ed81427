"""XLA403's cases of a checkpoint that holds a whole pickled module or an object holding one:
moved to the XLA device after the load, the optimizer pickled with it and the object reported, a
module that is only exported left on the CPU.  They are XLA403's own (xla403_load_map_location.py
lists them); kept here, that rule module stays under the size limit."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid


def pickled_module_invalid_cases() -> tuple[Invalid, ...]:
    """Loads of pickled modules and objects, on both targets (aliases where the spelling differs)."""
    return (
        invalid(
            """
            import torch

            model = torch.nn.Linear(4, 2).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model, optimizer = torch.load("best.pt", weights_only=False)
            """,
            """
            import torch
            import torch_xla

            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model, optimizer = torch.load("best.pt", weights_only=False, map_location="cpu")
            """,
            note="a pickled module comes back on the CPU",
            findings=(
                Expected(6, 20, "`model` comes back from this load as a pickled module, on the CPU"),
                Expected(6, 62, 'torch.load(...) -> map_location="cpu"'),
            ),
        ),
        invalid(
            """
            import torch as th

            net = th.nn.Linear(4, 2).cuda()
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            with open("best.pt", "rb") as f:
                net = th.load(f)
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            net = th.nn.Linear(4, 2).to(xm.xla_device())
            opt = th.optim.SGD(net.parameters(), lr=0.1)
            with open("best.pt", "rb") as f:
                net = th.load(f, map_location="cpu").to(xm.xla_device())
            """,
            target="sagemaker",
            alias=True,
            note="a pickled module a name takes is moved after the load",
            findings=(
                Expected(
                    7, 11, "`net` comes back from the load as a pickled module, on the CPU (XLA loads only there)"
                ),
                Expected(
                    7,
                    22,
                    'torch.load(...) -> map_location="cpu": a checkpoint the CUDA runs of this script saved holds CUDA '
                    "storages, which load nowhere without CUDA; the pickled module (`net`) is moved to the XLA device "
                    "after the load",
                ),
            ),
        ),
        *(
            invalid(
                """
                import torch
                import torch.nn as nn

                if resume:
                    checkpoint = torch.load(path)
                    model = checkpoint["model"]
                    optimizer = checkpoint["optimizer"]
                else:
                    model = nn.Linear(4, 2)
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                    model = model.cuda()
                """,
                f"""
                import torch
                import torch.nn as nn
                {imported}

                if resume:
                    checkpoint = torch.load(path, map_location="cpu")
                    model = checkpoint["model"].to({device})
                    optimizer = checkpoint["optimizer"]
                else:
                    model = nn.Linear(4, 2)
                    optimizer = torch.optim.SGD(model.to({device}).parameters(), lr=0.1)
                    model = model.to({device})
                """,
                target=target,
                note=f"a-pickled-module-and-optimizer-in-a-checkpoint-dict-{target}",
                findings=(
                    Expected(6, 35, "the pickled module (`model`) is moved to the XLA device after the load"),
                    Expected(
                        7,
                        13,
                        "`model` comes back from the load as a pickled module, on the CPU (XLA loads only there): "
                        f'checkpoint["model"].to({device}) moves it to the XLA device',
                    ),
                    Expected(
                        8,
                        17,
                        "`optimizer` comes back from the load holding the pickled CPU parameters of `model`, which the "
                        "move to the XLA device replaces with new ones: it would step none of them. Build it again over "
                        "`model.parameters()` after the move and load the pickled one's state into it "
                        '(`.load_state_dict(checkpoint["optimizer"].state_dict())`)',
                    ),
                ),
            )
            for target, imported, device in (
                ("2.9", "import torch_xla", "torch_xla.device()"),
                ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.xla_device()"),
            )
        ),
        *(
            invalid(
                f"""
                import torch{alias}


                def evaluate(path, loader):
                    checkpoint = {torch}.load(path)
                    model = checkpoint["model"]
                    model.eval()
                    for x, y in loader:
                        print((model(x.cuda()) - y.cuda()).abs().mean())
                """,
                f"""
                import torch{alias}
                {imported}


                def evaluate(path, loader):
                    checkpoint = {torch}.load(path, map_location="cpu")
                    model = checkpoint["model"].to({device})
                    model.eval()
                    for x, y in loader:
                        print((model(x.to({device})) - y.to({device})).abs().mean())
                """,
                target=target,
                alias=bool(alias),
                note=f"a-pickled-module-a-cuda-script-calls-{target}",
                findings=(
                    Expected(
                        6, 30 + len(torch), "the pickled module (`model`) is moved to the XLA device after the load"
                    ),
                    Expected(7, 13, "`model` comes back from the load as a pickled module, on the CPU"),
                ),
            )
            for target, imported, device, alias, torch in (
                ("2.9", "import torch_xla", "torch_xla.device()", "", "torch"),
                ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.xla_device()", " as th", "th"),
            )
        ),
        *(
            invalid(
                """
                import torch as th


                def load_trainer(path, device):
                    trainer = th.load(path, map_location=device)
                    trainer.device = device
                    trainer.model.eval()
                    return trainer
                """,
                """
                import torch as th


                def load_trainer(path, device):
                    trainer = th.load(path, map_location="cpu")
                    trainer.device = device
                    trainer.model.eval()
                    return trainer
                """,
                target=target,
                alias=True,
                note=f"a-pickled-object-that-holds-a-module-{target}",
                findings=(
                    Expected(
                        5,
                        15,
                        "`trainer` comes back from this load as a pickled object, on the CPU (XLA loads only there), "
                        "and `trainer.model` with it, while the port moves the batches to the XLA device",
                    ),
                    Expected(
                        5,
                        42,
                        'map_location device -> "cpu": XLA cannot load straight onto its device; what it holds stays '
                        "on the CPU",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                """
                import torch


                def load_trainer(path, device):
                    trainer = torch.load(path, map_location=device)
                    trainer.model.to(device)
                    trainer.model.eval()
                    return trainer


                def load_args(path):
                    args = torch.load(path)
                    return args.lr, args.epochs


                def export(path, example):
                    net = torch.load(path)
                    net.eval()
                    torch.onnx.export(net, example, "net.onnx")
                """,
                """
                import torch


                def load_trainer(path, device):
                    trainer = torch.load(path, map_location="cpu")
                    trainer.model.to(device)
                    trainer.model.eval()
                    return trainer


                def load_args(path):
                    args = torch.load(path, map_location="cpu")
                    return args.lr, args.epochs


                def export(path, example):
                    net = torch.load(path, map_location="cpu")
                    net.eval()
                    torch.onnx.export(net, example, "net.onnx")
                """,
                target=target,
                note=f"a-pickled-object-whose-module-is-moved-one-without-a-module-and-a-cpu-export-{target}",
                findings=(
                    Expected(5, 45, 'map_location device -> "cpu"'),
                    Expected(12, 29, 'torch.load(...) -> map_location="cpu"'),
                    Expected(
                        17,
                        28,
                        'torch.load(...) -> map_location="cpu": a checkpoint saved from a CUDA run (a pretrained one '
                        "included) holds CUDA storages, which load nowhere without CUDA; one saved on the CPU loads the "
                        "same; load_state_dict copies a state dict's tensors to the model's device; anything else it "
                        "holds stays on the CPU",
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
    )


# torchbeast's monobeast: a nested ``def checkpoint():`` is called in ``train``, while ``test`` binds
# ``checkpoint`` to a load it reads by string keys: a dict of state dicts, never a module to move.
_DICT_NAMED_LIKE_A_CALLED_FUNCTION = """
import torch{alias}
import torch.nn as nn{imports}


def train(model, path):
    def checkpoint():
        {save}({{"model_state_dict": model.state_dict()}}, path)

    model.{move}
    checkpoint()


def test(path):
    model = nn.Linear(4, 2)
    model.eval()
    checkpoint = {torch}.load(path{location})
    {use}
    return model(torch.ones(1, 4))
"""

_PORTS = {
    "2.9": ("\nimport torch_xla\nimport torch_xla.core.xla_model as xm", "to(torch_xla.device())"),
    "sagemaker": ("\nimport torch_xla.core.xla_model as xm", "to(xm.xla_device())"),
}
_TO_STATE_DICT = 'model.load_state_dict(checkpoint["model_state_dict"])'


def _dict_program(torch: str, location: str, use: str, target: str | None) -> str:
    """The CUDA original (``target`` None), or its port to ``target``."""
    imports, move = _PORTS[target] if target is not None else ("", "cuda()")
    return _DICT_NAMED_LIKE_A_CALLED_FUNCTION.format(
        alias=" as th\nimport torch" if torch == "th" else "",
        imports=imports,
        save="xm.save" if target is not None else f"{torch}.save",
        move=move,
        torch=torch,
        location=location,
        use=use,
    )


def read_as_a_dict_valid() -> tuple[Valid, ...]:
    """A loaded value the code reads as a dict (handed by key to load_state_dict, or read by a string
    key alone) stays as it is, though a function of another scope has its name and is called."""
    return tuple(
        valid(
            _dict_program(torch, ', map_location="cpu"', use, target),
            target=target,
            note=f"{note}-{target}-{torch}",
        )
        for target in ("2.9", "sagemaker")
        for torch in ("torch", "th")
        for use, note in (
            (_TO_STATE_DICT, "a-load-read-by-key-into-load-state-dict"),
            ('print(checkpoint["step"])', "a-load-read-by-a-string-key"),
        )
    )


def read_as_a_dict_invalid() -> tuple[Invalid, ...]:
    """The CUDA original without a map location: it gets one, and no move (``.to`` on a dict raises)."""
    return tuple(
        invalid(
            _dict_program(torch, "", _TO_STATE_DICT, None),
            _dict_program(torch, ', map_location="cpu"', _TO_STATE_DICT, target),
            target=target,
            alias=torch == "th",
            note=f"a-dict-load-named-like-a-called-function-gets-no-move-{target}-{torch}",
            findings=(
                Expected(
                    (18 if target == "2.9" else 17) + (torch == "th"),
                    35 if torch == "torch" else 32,
                    'torch.load(...) -> map_location="cpu": a checkpoint the CUDA runs of this script saved holds '
                    "CUDA storages, which load nowhere without CUDA; load_state_dict copies the tensors to the device",
                ),
            ),
        )
        for target in ("2.9", "sagemaker")
        for torch in ("torch", "th")
    )
