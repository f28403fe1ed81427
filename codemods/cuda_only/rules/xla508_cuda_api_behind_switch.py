"""XLA508 cuda-api-behind-switch: a CUDA-only API (XLA506's) under an ``if`` on a switch that is
off by default (the CUDA-only facts' ``guarded_cuda``); under a kept CUDA availability check
there is nothing to say (the check itself is reported: XLA105)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.cuda_only.rules.runtime_apis import CUDA_ONLY, handled_elsewhere
from codemods.engine.hooks import on_references
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

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


@on_references(CUDA_API_BEHIND_SWITCH, names=frozenset(CUDA_ONLY))
def _cuda_only_api(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    if original not in ctx.facts.cuda_only.class_tests:
        _report_behind_switch(ctx, original, CUDA_ONLY[qualified].advice)
    return updated


@on_references(CUDA_API_BEHIND_SWITCH, modules=("torch.cuda.",), unhooked=True)
def _other_cuda_api(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    if not handled_elsewhere(qualified):
        _report_behind_switch(ctx, original, "is CUDA-only")
    return updated


def _report_behind_switch(ctx: Context[Facts], original: cst.CSTNode, advice: str) -> None:
    """What happens when the switch is given."""
    from codemods.cuda_only.rules.runtime_references import goes_with_device_call

    switch = ctx.facts.cuda_only.guarded_cuda.get(original)
    if switch is None or goes_with_device_call(ctx, original):
        return
    ctx.report(
        CUDA_API_BEHIND_SWITCH,
        original,
        f"`{ctx.code(original)}` runs only when `{switch}` is switched on (it is off by default): "
        f"it {ctx.target.advice(advice.removeprefix('is CUDA-only and '))}; with the switch on, the script "
        "fails on XLA",
    )
