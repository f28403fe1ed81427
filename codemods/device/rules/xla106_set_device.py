"""XLA106 set-device: ``torch.cuda.set_device(...)`` goes whole from its line (with XLA104's
CUDA asserts: the line is rebuilt once, whichever of them it holds), and so does an ``if``
around nothing but set-device calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import on_nodes, removes_statements
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

SET_DEVICE = Rule(
    code="XLA106",
    name="set-device",
    severity="error",
    summary="`torch.cuda.set_device()` is removed: one XLA device per process",
    fixable=True,
    why="`torch.cuda.set_device()` raises without CUDA. On XLA the runtime gives each process its one device, "
    "so the call is removed. In a file that imports torch_xla conditionally (its own non-XLA path, which the tool "
    "keeps) a call under a check that is False on an XLA host (`if torch.cuda.is_available():`, a CUDA check of "
    "the device the file picked: `if device.type == 'cuda':`) never runs there and is right where it runs: "
    "nothing to report.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.cuda.set_device(args.local_rank)
            device = torch.device("cuda", args.local_rank)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            findings=(Expected(4, 1, "removed `torch.cuda.set_device(args.local_rank)`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import importlib.util

            import torch

            XLA = importlib.util.find_spec("torch_xla") is not None
            if XLA:
                import torch_xla.core.xla_model as xm


            def pick_device(use_cpu):
                if use_cpu:
                    device = torch.device("cpu")
                elif XLA:
                    device = xm.xla_device()
                else:
                    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
                if device.type == "cuda":
                    torch.cuda.set_device(device)
                return device
            """,
            note="a file with its own XLA path: a set_device under a CUDA check of the device it picked",
        ),
        valid(
            """
            import torch

            try:
                import torch_xla.core.xla_model as xm
            except ImportError:
                xm = None

            if torch.cuda.is_available():
                torch.cuda.set_device(local_rank)
            """,
            note="a file with its own XLA path: a set_device under a CUDA availability check",
        ),
        valid(
            """
            import torch

            xla_runtime.set_device(0)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            try:
                import torch_xla.core.xla_model as xm
            except ImportError:
                xm = None

            if args.cuda:
                torch.cuda.set_device(args.local_rank)
            """,
            note="a file with its own XLA path: a set_device under a flag",
            findings=(Expected(8, 1, "removed `if args.cuda: torch.cuda.set_device(args.local_rank)`"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import set_device

            try:
                import torch_xla.core.xla_model as xm
            except ImportError:
                xm = None

            if args.cuda:
                set_device(args.local_rank)
            """,
            alias=True,
            note="a file with its own XLA path: an imported set_device under a flag",
            findings=(Expected(9, 1, "removed `if args.cuda: set_device(args.local_rank)`"),),
        ),
        invalid(
            """
            import torch

            def setup(rank):
                torch.accelerator.set_device_index(rank)
                return torch.accelerator.current_accelerator()
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def setup(rank):
                return torch.device("xla")
            """,
            note="torch-accelerator",
            findings=(Expected(5, 5, "removed `torch.accelerator.set_device_index(rank)`"),),
        ),
        invalid(
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                torch.cuda.set_device(gpu)
            """,
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                pass
            """,
            note="only-statement",
            findings=(Expected(5, 5, "removed `torch.cuda.set_device(gpu)`"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import set_device

            set_device(args.local_rank)
            train()
            """,
            """
            import torch

            train()
            """,
            alias=True,
            findings=(Expected(3, 1, "removed `set_device(args.local_rank)`"),),
        ),
    ),
)


@removes_statements(SET_DEVICE)
def _set_device(ctx: Context[Facts], statement: cst.BaseSmallStatement) -> str | None:
    from codemods.device.rules.off_xla import kept_off_xla

    if not _is_set_device(ctx, statement) or kept_off_xla(ctx):
        return None
    return f"removed `{ctx.code(statement)}`: one XLA device per process"


@on_nodes(SET_DEVICE, types="If")
def _set_device_guard(ctx: Context[Facts], original: cst.If, updated: cst.If) -> cst.If:
    """``if torch.cuda.is_available(): torch.cuda.set_device(rank)`` goes whole: a guard left
    around a bare ``pass`` says nothing."""
    import libcst as cst

    from codemods.device.rules.off_xla import never_on_xla
    from codemods.engine.nodes import walk

    facts = ctx.facts
    device = facts.device
    if original in facts.training.input_guards or any(
        original in ifs
        for ifs in (
            device.gpu_requirements,
            device.blocked_ifs,
            device.unset_fallbacks,
            device.wrapped_checks,
            device.ifs,
        )
    ):
        return updated  # XLA104's or XLA108's
    body = original.body
    if (
        original.orelse is not None
        or not isinstance(body, cst.IndentedBlock)
        or body.header.comment is not None
        or any(line.comment for line in body.footer)
        or not all(_only_set_device(ctx, statement) for statement in body.body)
        or not all(device.is_available_call(n) for n in walk(original.test) if isinstance(n, cst.Call))
    ):
        return updated
    if facts.imports.xla_optional and never_on_xla(facts, original.test):
        return updated  # its own non-XLA path, where it is right; on an XLA host it never runs
    ctx.forget_removed(original, updated)
    done = ctx.fix(
        SET_DEVICE,
        original,
        f"removed `if {ctx.code(original.test)}: {ctx.code(body.body[0].body[0])}`: one XLA device "  # type: ignore[attr-defined]  # body.body[0] is a SimpleStatementLine (_only_set_device checked every statement above)
        "per process",
        lambda: original,
    )
    if done is not None:
        ctx.drop_statement(updated)
    return updated


def _is_set_device(ctx: Context[Facts], statement: cst.BaseSmallStatement) -> bool:
    import libcst as cst

    return (
        type(statement) is cst.Expr
        and type(statement.value) is cst.Call
        and ctx.resolve(statement.value.func) in apis.SET_DEVICE_CALLS
    )


def _only_set_device(ctx: Context[Facts], statement: cst.BaseStatement) -> bool:
    import libcst as cst

    return (
        isinstance(statement, cst.SimpleStatementLine)
        and not any(line.comment for line in statement.leading_lines)
        and statement.trailing_whitespace.comment is None
        and all(_is_set_device(ctx, small) for small in statement.body)
    )
