"""XLA508 cuda-api-behind-switch."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_API_BEHIND_SWITCH = Rule(
    code="XLA508",
    name="cuda-api-behind-switch",
    severity="warning",
    summary="CUDA-only API that runs only when a command-line switch, off by default, is given",
    fixable=False,
    why="A CUDA runtime call in the body of `if args.profile:` (a `store_true` switch, or one whose default is "
    "False) does not run when the converted script is started as it is by default, so it is no error there; with "
    "the switch given it raises on XLA (CUDA events, device properties) or reads a CUDA value of no meaning. It is "
    "reported as a warning so that the switch is ported or documented. Under a CUDA availability check that "
    "stays (`if torch.cuda.is_available():`, False on XLA) such a call never runs on XLA: nothing is said of it "
    "beside the check's own finding (XLA105). Any other guard leaves the call an error (XLA506).",
    examples=lambda: (
        invalid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--profile", action="store_true")
            args = parser.parse_args()

            for step in range(10):
                if args.profile:
                    start = torch.cuda.Event(enable_timing=True)
                    start.record()
                train_step()
            """,
            findings=(
                Expected(
                    11,
                    17,
                    "`torch.cuda.Event` runs only when `args.profile` is switched on (it is off by "
                    "default): it times CUDA streams and raises without CUDA",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def train(model, loader, optimizer):
                for x in loader:
                    if torch.cuda.is_available():
                        start = torch.cuda.Event(enable_timing=True)
                        start.record()
                        print(torch.cuda.get_device_name(0))
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def train(model, loader, optimizer):
                for x in loader:
                    if torch.cuda.is_available():
                        start = torch.cuda.Event(enable_timing=True)
                        start.record()
                        print(torch.cuda.get_device_name(0))
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="under-cuda-check",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import argparse

            from torch.cuda import Event


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--time-steps", dest="timing", default=False)
                parser.add_argument("--log", action="store_true", default=True)
                opts = parser.parse_args()
                if opts.timing and opts.log:
                    start = Event(enable_timing=True)
                if opts.log:
                    end = Event(enable_timing=True)
            """,
            alias=True,
            findings=(Expected(12, 17, "`Event` runs only when `opts.timing` is switched on"),),
        ),
        invalid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--profile", action="store_true")
            args = parser.parse_args()

            if args.profile:
                print(torch.cuda.get_device_properties(0))
            """,
            target="sagemaker",
            note="switch-sagemaker",
            findings=(
                Expected(10, 11, "`torch.cuda.get_device_properties` runs only when `args.profile` is switched on"),
            ),
        ),
    ),
)
