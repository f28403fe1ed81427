"""XLA403's cases of a map location that spells a device as text (``str(self.device)``,
``f"{device}"``, or its type: ``args.device.type``): once the device is ported that text is "xla:0"
(the type "xla"), onto which torch.load cannot restore storages (it raises), so the location becomes
"cpu" as the device's own name would."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

SHOWN_DEVICE = """
import torch


class Model:
    def __init__(self, gpu_ids):
        self.device = torch.device("cuda:{}".format(gpu_ids[0])) if gpu_ids else torch.device("cpu")
        self.net = torch.nn.Linear(4, 1).to(self.device)

    def load(self, path):
        self.net.load_state_dict(torch.load(path, map_location=str(self.device)))
"""

_DEVICES = {
    "2.9": ("import torch_xla\n", "torch_xla.device()"),
    "sagemaker": ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()"),
}


def _ported(program: str, target: str, location: str) -> str:
    imports, device = _DEVICES[target]
    return substituted(
        program,
        ("import torch\n", f"import torch\n{imports}"),
        ('torch.device("cuda:{}".format(gpu_ids[0]))', device),
        (f"map_location={location}", 'map_location="cpu"'),
    )


# SimCLR's main.py: the load onto the device's type, a device held in the parsed arguments.
DEVICE_TYPE = """
import argparse
import torch

args = argparse.ArgumentParser().parse_args()
args.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 1)
model.load_state_dict(torch.load(args.model_fp, map_location=args.device.type))
model = model.to(args.device)
"""


def _device_type_invalid(target: str) -> Invalid:
    imports, device = _DEVICES[target]
    aliased = target == "sagemaker"
    program = (
        substituted(DEVICE_TYPE, ("import torch\n", "import torch as T\n"), ("torch.", "T."))
        if aliased
        else DEVICE_TYPE
    )
    module = "T" if aliased else "torch"
    return invalid(
        program,
        substituted(
            program,
            (
                f"import {'torch as T' if aliased else 'torch'}\n",
                f"import {'torch as T' if aliased else 'torch'}\n{imports}",
            ),
            (f'{module}.device("cuda:0" if {module}.cuda.is_available() else "cpu")', device),
            ("map_location=args.device.type", 'map_location="cpu"'),
        ),
        target=target,
        alias=aliased,
        note=f"a-map-location-that-is-the-device-type-{target}",
        findings=(
            Expected(
                8,
                58 if aliased else 62,
                'map_location args.device.type -> "cpu": XLA cannot load straight onto its device; '
                "load_state_dict copies the tensors over",
            ),
        ),
    )


def shown_device_invalid() -> tuple[Invalid, ...]:
    aliased = substituted(
        SHOWN_DEVICE,
        ("import torch\n", "import torch as th\nfrom torch import nn\n"),
        ("torch.device(", "th.device("),
        ("torch.nn.Linear", "nn.Linear"),
        ("torch.load(path, map_location=str(self.device))", 'th.load(path, map_location=f"{self.device}")'),
    )
    cases = []
    for target in ("2.9", "sagemaker"):
        imports, device = _DEVICES[target]
        cases.append(
            invalid(
                SHOWN_DEVICE,
                _ported(SHOWN_DEVICE, target, "str(self.device)"),
                target=target,
                note=f"a-map-location-that-is-the-device-as-text-{target}",
                findings=(
                    Expected(
                        11,
                        64,
                        'map_location str(self.device) -> "cpu": XLA cannot load straight onto its device; '
                        "load_state_dict copies the tensors over",
                    ),
                ),
            )
        )
        cases.append(
            invalid(
                aliased,
                substituted(
                    aliased,
                    ("from torch import nn\n", f"from torch import nn\n{imports}"),
                    ('th.device("cuda:{}".format(gpu_ids[0]))', device),
                    ('map_location=f"{self.device}"', 'map_location="cpu"'),
                ),
                target=target,
                alias=True,
                note=f"a-map-location-that-is-the-device-in-an-f-string-alias-{target}",
                findings=(Expected(12, 61, 'map_location f"{self.device}" -> "cpu"'),),
            )
        )
        cases.append(_device_type_invalid(target))
    return tuple(cases)


def shown_device_valid() -> tuple[Valid, ...]:
    # The text of a name that holds no device is left alone.
    return (
        valid(
            """
            import torch

            where = "cpu"
            state = torch.load("m.pt", map_location=str(where))
            """,
            note="text-of-a-name-that-is-no-device",
        ),
        valid(
            """
            import torch

            state = torch.load("m.pt", map_location=tensor.type)
            """,
            note="type-of-a-name-that-is-no-device",
        ),
    )
