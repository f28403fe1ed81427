"""XLA101's cases of a device that is a CUDA ordinal or a lookup's CUDA default: ``torch.device(0)``
and ``torch.device(device_id)`` (an int alone is cuda:N), ``config.get("device", "cuda:0")``,
``getattr(args, "device", "cuda")``, ``config["device"] = name`` (the name's CUDA string) and the
default of a dataclass field named as a device (``device: str = field(default="cuda:0")``, parsed by
HfArgumentParser and assigned to a library's device)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid


def ordinal_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch

            def build(rank="cpu"):
                rank = "cpu"
                return torch.zeros(2, device=torch.device(rank))

            n_layers = 3
            settings = {"model": "cuda"}
            device = settings.get("device", "cpu")
            kind = settings.get("model", "cuda")
            """,
            note="a-string-rank-a-cpu-default-and-a-key-that-is-no-device",
        ),
        valid(
            """
            from dataclasses import dataclass, field

            @dataclass
            class Arguments:
                device: str = field(default="cpu")
                backend: str = field(default="cuda")
                model: str = field(default_factory=lambda: "cuda")
            """,
            note="a-cpu-field-default-and-a-field-that-is-no-device",
        ),
    )


def ordinal_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch

            def batches(data, device_id):
                device = torch.device(device_id) if device_id >= 0 else torch.device("cpu")
                for example in data:
                    yield torch.tensor(example, device=device)

            model = Net().to(torch.device(0))
            """,
            """
            import torch
            import torch_xla

            def batches(data, device_id):
                device = torch_xla.device() if device_id >= 0 else torch.device("cpu")
                for example in data:
                    yield torch.tensor(example, device=device)

            model = Net().to(torch_xla.device())
            """,
            note="an-ordinal-in-torch-device",
            findings=(
                Expected(5, 14, "torch.device(device_id) -> torch_xla.device() (an integer alone is cuda:N"),
                Expected(9, 18, "torch.device(0) -> torch_xla.device() (an integer alone is cuda:N"),
            ),
        ),
        invalid(
            """
            import torch as th

            local_rank = int(os.environ["LOCAL_RANK"])
            model = Net().to(th.device(local_rank))
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            local_rank = int(os.environ["LOCAL_RANK"])
            model = Net().to(xm.xla_device())
            """,
            target="sagemaker",
            alias=True,
            note="an-ordinal-in-torch-device-sagemaker",
            findings=(Expected(5, 18, "th.device(local_rank) -> xm.xla_device() (an integer alone is cuda:N"),),
        ),
        invalid(
            """
            import torch

            class Agent:
                def __init__(self, config, args):
                    if config.get("multi_gpu", False):
                        self.device_name = "cuda:" + str(args.local_rank)
                        config["device"] = self.device_name
                    self.device = config.get("device", "cuda:0")
                    self.model = Net().to(self.device)
                    self.value_device = getattr(args, "value_device", "cuda")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            class Agent:
                def __init__(self, config, args):
                    if config.get("multi_gpu", False):
                        self.device_name = "xla"
                        config["device"] = self.device_name
                    self.device = config.get("device", "xla")
                    self.model = Net().to(self.device)
                    self.value_device = getattr(args, "value_device", "xla")
            """,
            note="a-lookups-cuda-default",
            findings=(
                Expected(7, 32, '"cuda:" + str(args.local_rank) -> "xla"'),
                Expected(9, 44, '"cuda:0" -> "xla"'),
                Expected(11, 59, '"cuda" -> "xla"'),
            ),
        ),
        invalid(
            """
            import torch

            def setup(cfg):
                device = cfg.get("device", f"cuda:{cfg.rank}")
                return Net().to(device)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def setup(cfg):
                device = cfg.get("device", "xla")
                return Net().to(device)
            """,
            target="sagemaker",
            note="a-lookups-cuda-default-sagemaker",
            findings=(Expected(5, 32, 'f"cuda:{cfg.rank}" -> "xla"'),),
        ),
        invalid(
            """
            from dataclasses import dataclass, field

            import torch
            from transformers import HfArgumentParser

            import mylib

            @dataclass
            class TrainingArguments:
                lr: float = 1e-3
                device: str = field(default="cuda:0", metadata={"help": "the device"})

            def main():
                (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
                mylib.device = args.device
                model = torch.nn.Linear(4, 2).to(mylib.device)
            """,
            """
            from dataclasses import dataclass, field

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from transformers import HfArgumentParser

            import mylib

            @dataclass
            class TrainingArguments:
                lr: float = 1e-3
                device: str = field(default="xla", metadata={"help": "the device"})

            def main():
                (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
                mylib.device = args.device
                model = torch.nn.Linear(4, 2).to(mylib.device)
            """,
            note="a-dataclass-fields-cuda-default",
            findings=(Expected(12, 33, '"cuda:0" -> "xla"'),),
        ),
        invalid(
            """
            import dataclasses

            import torch

            @dataclasses.dataclass
            class Options:
                train_device: str = dataclasses.field(default="cuda")
            """,
            """
            import dataclasses

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            @dataclasses.dataclass
            class Options:
                train_device: str = dataclasses.field(default="xla")
            """,
            target="sagemaker",
            alias=True,
            note="a-dataclass-fields-cuda-default-sagemaker",
            findings=(Expected(8, 51, '"cuda" -> "xla"'),),
        ),
    )
