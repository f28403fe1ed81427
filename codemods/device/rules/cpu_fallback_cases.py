"""XLA104's cases of a CPU fallback (``if not torch.cuda.is_available(): config.device = "cpu"``):
it goes with the value it guards where the file sets that value (ported with it), and stays with
an error where the value comes from another module (device/fallbacks.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid


def cpu_fallback_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch

            def update_config(config):
                if not torch.cuda.is_available():
                    config.device = "cpu"
                return config
            """,
            filename="config.py",
            note="the-cpu-fallback-of-a-config-value-set-elsewhere-stays",
            findings=(
                Expected(
                    4,
                    8,
                    "`not torch.cuda.is_available()` guards the CPU fallback of `config.device`, which this file does "
                    "not otherwise set (its default comes from another module or a config file): left as is, so on "
                    "XLA (no CUDA) the fallback runs and the model and tensors that go to `config.device` stay on the "
                    'CPU (removing the check alone would leave the default it guards, which may be "cuda", to fail on '
                    'an XLA host); make sure `config.device` is "xla" where its default is set, then remove this check',
                ),
            ),
        ),
        invalid(
            """
            import torch as th

            def update_config(cfg):
                if not th.cuda.is_available():
                    cfg.train_device = th.device("cpu")
                return cfg
            """,
            target="sagemaker",
            filename="config.py",
            note="the-cpu-fallback-of-a-config-value-set-elsewhere-stays-sagemaker",
            alias=True,
            findings=(Expected(4, 8, "guards the CPU fallback of `cfg.train_device`, which this file does not"),),
        ),
        invalid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", default="cuda")
            args = parser.parse_args()
            if not torch.cuda.is_available():
                args.device = "cpu"
            """,
            """
            import argparse

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", default="xla")
            args = parser.parse_args()
            """,
            note="the-cpu-fallback-of-a-default-the-file-sets-goes-with-the-ported-default",
            findings=(Expected(8, 4, "`not torch.cuda.is_available()`: the accelerator check holds"),),
        ),
        invalid(
            """
            from types import SimpleNamespace

            import torch

            config = SimpleNamespace(device="cuda")
            config.device = "cuda"
            if not torch.cuda.is_available():
                config.device = "cpu"
            """,
            """
            from types import SimpleNamespace

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            config = SimpleNamespace(device="xla")
            config.device = "xla"
            """,
            note="the-cpu-fallback-of-a-config-value-the-file-sets-goes-with-the-ported-value",
            findings=(Expected(7, 4, "`not torch.cuda.is_available()`: the accelerator check holds"),),
        ),
    )
