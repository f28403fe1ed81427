"""XLA114 ported-condition: a literal compared with a value every one of whose values the port
rewrote (``if backend == "nccl":`` after "nccl" -> "xla": the device values'
``ported_comparisons``) becomes the new value, and the choices an assertion lists
(``assert device in ["cuda", "cpu"]``: ``asserted_choices``) gain it."""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

from codemods.device.rules.asserted_backend_cases import asserted_backend_invalid, asserted_backend_valid
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A device chosen by comparing a backend chosen between "gloo" and "nccl" with "nccl".
BACKEND_CHOICE = """
    import torch
    import torch.distributed as dist

    def setup(cfg, rank):
        backend = "gloo" if cfg.use_cpu else "nccl"
        if backend == "nccl":
            torch.cuda.set_device(rank)
            device = torch.device("cuda", rank)
        else:
            device = torch.device("cpu")
        dist.init_process_group(backend=backend)
        return device
"""


PORTED_CONDITION = Rule(
    code="XLA114",
    name="ported-condition",
    severity="error",
    summary="A comparison with a value the port rewrote (`backend == 'nccl'` after 'nccl' -> 'xla', `assert device in [...]`) holds as before",
    fixable=True,
    why='The port rewrites values that conditions then test: `backend = "nccl"` becomes `"xla"`, and '
    '`if backend == "nccl": device = torch.device("cuda", rank) else: device = torch.device("cpu")` would '
    "then take the CPU branch. Where every value of the compared name is one the port rewrote, the literal it "
    "is compared with becomes the new value, so the condition asks what it asked before; where the port made a "
    'choice one value (`"gloo" if cfg.use_cpu else "nccl"`, or a backend set in each branch of an `if`), the '
    'literal that named its CUDA side ("nccl") does, and one that named the other side ("gloo") stays. Likewise '
    '`assert device in ["cuda", "mps", "cpu"]` after a device helper that now returns "xla" would stop the '
    'script: "xla" is added to the choices. So it is for an assertion on the process group\'s backend read at '
    'run time (`backend = dist.get_backend(group)`, then `assert backend in ["gloo", "nccl"]`, or `assert '
    'dist.get_backend() == "nccl"`: detectron2\'s comm.py), in any file of the run: the port starts every NCCL '
    'group with the "xla" backend (XLA601; NCCL needs CUDA), so the query returns "xla" and the assertion would '
    'stop the script before its first step; "xla" is added to the choices, or asked for in place of "nccl". '
    "That only lets the assertion pass where the group is XLA's, so it is safe to apply. A condition that "
    'branches on the backend (`if dist.get_backend() == "nccl": group = dist.new_group(backend="gloo")`) stays: '
    "on XLA it takes the branch of a group that is not NCCL's, the world group, which serves the XLA tensors.",
    examples=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist

            def setup(rank):
                backend = "nccl"
                dist.init_process_group(backend)
                if backend == "nccl":
                    return torch.device("cuda", rank)
                return torch.device("cpu")
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(rank):
                backend = "xla"
                dist.init_process_group(backend, init_method="xla://")
                if backend == "xla":
                    return torch_xla.device()
                return torch.device("cpu")
            """,
            findings=(Expected(8, 19, '`backend == "nccl"`: "nccl" -> "xla"'),),
        ),
    ),
    valid=lambda: (
        *asserted_backend_valid(),
        valid(
            """
            import torch.distributed as dist

            backend = args.backend
            if backend == "nccl":
                print("nccl")
            """,
            note="a-value-the-port-does-not-change",
        ),
        valid(
            """
            import torch
            import torch.distributed as dist

            def setup(cfg, rank):
                backend = "gloo" if cfg.use_cpu else "nccl"
                dist.init_process_group(backend=backend)
                if backend == "gloo":
                    return torch.device("cpu")
                return torch.device("cuda", rank)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(cfg, rank):
                backend = "xla"
                dist.init_process_group(backend=backend, init_method="xla://")
                if backend == "gloo":
                    return torch.device("cpu")
                return torch_xla.device()
            """,
            note="the-cpu-backend-of-a-choice-asks-for-the-branch-the-port-did-not-take",
        ),
    ),
    invalid=lambda: (
        *asserted_backend_invalid(),
        invalid(
            BACKEND_CHOICE,
            """
            import torch
            import torch.distributed as dist
            import torch_xla
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(cfg, rank):
                backend = "xla"
                if backend == "xla":
                    device = torch_xla.device()
                else:
                    device = torch.device("cpu")
                dist.init_process_group(backend=backend, init_method="xla://")
                return device
            """,
            note="a-choice-of-backends-compared-with-the-cuda-one",
            findings=(Expected(8, 19, '`backend == "nccl"`: "nccl" -> "xla", the value the port gave it'),),
        ),
        invalid(
            BACKEND_CHOICE,
            """
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(cfg, rank):
                backend = "xla"
                if backend == "xla":
                    device = xm.xla_device()
                else:
                    device = torch.device("cpu")
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group(backend=backend, rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                return device
            """,
            target="sagemaker",
            note="a-choice-of-backends-compared-with-the-cuda-one-sagemaker",
            findings=(Expected(9, 19, '`backend == "nccl"`: "nccl" -> "xla", the value the port gave it'),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist

            def setup(cfg, rank):
                backend = "nccl" if torch.cuda.is_available() and not cfg.cpu else "gloo"
                dist.init_process_group(backend)
                if backend not in ("nccl",):
                    return torch.device("cpu")
                return torch.device("cuda", rank)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(cfg, rank):
                backend = "xla"
                dist.init_process_group(backend, init_method="xla://")
                if backend not in ("xla",):
                    return torch.device("cpu")
                return torch_xla.device()
            """,
            note="the-cuda-backend-listed-in-a-choice-of-backends",
            findings=(Expected(8, 24, '`backend not in ("nccl",)`: "nccl" -> "xla", the value the port gave it'),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist


            def main(cfg, rank):
                if cfg.use_cpu:
                    backend = "gloo"
                else:
                    backend = "nccl"
                dist.init_process_group(backend)
                if backend == "nccl":
                    return torch.device("cuda", rank)
                return torch.device("cpu")
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main(cfg, rank):
                if cfg.use_cpu:
                    backend = "xla"
                else:
                    backend = "xla"
                dist.init_process_group(backend, init_method="xla://")
                if backend == "xla":
                    return torch_xla.device()
                return torch.device("cpu")
            """,
            note="backends-assigned-in-the-branches-of-an-if",
            findings=(Expected(12, 19, '`backend == "nccl"`: "nccl" -> "xla", the value the port gave it'),),
        ),
        invalid(
            """
            import argparse
            import torch
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--backend", default="nccl")


            def main():
                args = parser.parse_args()
                dist.init_process_group(args.backend)
                if args.backend != "nccl":
                    return torch.device("cpu")
                return torch.device("cuda", 0)
            """,
            """
            import argparse
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            parser = argparse.ArgumentParser()
            parser.add_argument("--backend", default="xla")


            def main():
                args = parser.parse_args()
                dist.init_process_group(args.backend, init_method="xla://")
                if args.backend != "xla":
                    return torch.device("cpu")
                return torch_xla.device()
            """,
            note="a-backend-flag-whose-default-the-port-rewrote",
            findings=(Expected(13, 24, '`args.backend != "nccl"`: "nccl" -> "xla", the value the port gave it'),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist

            backend = "nccl"
            dist.init_process_group(backend)
            device = torch.device("cuda") if backend == "nccl" else torch.device("cpu")
            """,
            """
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            backend = "xla"
            os.environ.setdefault("MASTER_ADDR", "localhost")
            os.environ.setdefault("MASTER_PORT", "12355")
            dist.init_process_group(backend, rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            device = xm.xla_device() if backend == "xla" else torch.device("cpu")
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(11, 40, '`backend == "nccl"`: "nccl" -> "xla"'),),
        ),
        invalid(
            """
            import torch

            def pick_device():
                return "cuda" if torch.cuda.is_available() else "cpu"

            device = pick_device()
            assert device in ["cuda", "mps", "cpu"], device
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def pick_device():
                return "xla"

            device = pick_device()
            assert device in ["cuda", "mps", "cpu", "xla"], device
            """,
            note="asserted-device-choices",
            findings=(
                Expected(8, 18, '`device in ["cuda", "mps", "cpu"]` would fail: the device is \'xla\' after the port'),
            ),
        ),
        invalid(
            """
            import torch.distributed as tdist

            backend = "nccl"
            tdist.init_process_group(backend)
            use_gpu = backend != "nccl"
            """,
            """
            import torch.distributed as tdist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            backend = "xla"
            tdist.init_process_group(backend, init_method="xla://")
            use_gpu = backend != "xla"
            """,
            alias=True,
            findings=(Expected(6, 22, '`backend != "nccl"`: "nccl" -> "xla"'),),
        ),
    ),
)


@on_facts(PORTED_CONDITION, nodes=lambda facts: facts.device_values.ported_comparisons)
def _ported_comparison(ctx: Context[Facts], original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
    from codemods.engine.nodes import quoted_like

    comparison, value = ctx.facts.device_values.ported_comparisons[original]
    return ctx.fix_or_keep(
        updated,
        PORTED_CONDITION,
        original,
        f"`{comparison}`: {ctx.code(original)} -> {{new}}, the value the port gave it",
        lambda: quoted_like(original, value),
    )


@on_facts(PORTED_CONDITION, nodes=lambda facts: facts.device_values.asserted_choices)
def _asserted_choices(
    ctx: Context[Facts], original: cst.List | cst.Tuple | cst.Set, updated: cst.List | cst.Tuple | cst.Set
) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import quoted_like

    assertion, value = ctx.facts.device_values.asserted_choices[original]
    template = next(e.value for e in original.elements if isinstance(e.value, cst.SimpleString))

    def with_value() -> cst.List | cst.Tuple | cst.Set:
        elements = [*updated.elements]
        elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(elements=[*elements, cst.Element(quoted_like(template, value))])

    return ctx.fix_or_keep(
        updated,
        PORTED_CONDITION,
        original,
        f"`{ctx.code(assertion.test)}` would fail: the device is {value!r} after the port -> {{new}}",
        with_value,
    )


@on_facts(PORTED_CONDITION, nodes=lambda facts: facts.distributed.asserted_backends)
def _asserted_backend(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import quoted_like

    assertion = ctx.facts.distributed.asserted_backends[original]
    why = f"`{ctx.code(assertion.test)}` would fail: the process group's backend is 'xla' after the port (XLA601) -> {{new}}"
    if type(updated) is cst.SimpleString:
        return ctx.fix_or_keep(updated, PORTED_CONDITION, original, why, lambda: quoted_like(updated, "xla"))
    choices = typing.cast("cst.List | cst.Tuple | cst.Set", updated)
    template = next((e.value for e in choices.elements if isinstance(e.value, cst.SimpleString)), None)

    def with_xla() -> cst.BaseExpression:
        elements = [*choices.elements]
        elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        xla = quoted_like(template, "xla") if template is not None else cst.SimpleString('"xla"')
        return choices.with_changes(elements=[*elements, cst.Element(xla)])

    return ctx.fix_or_keep(updated, PORTED_CONDITION, original, why, with_xla)
