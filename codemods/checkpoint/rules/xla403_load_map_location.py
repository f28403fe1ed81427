"""XLA403 load-map-location: ``torch.load`` onto a CUDA or XLA device loads on the CPU instead
(``load_state_dict`` copies the tensors over), and so does a load without a map location in a
script that used CUDA; a map location that mentions CUDA in a shape the tool does not rewrite
(a dict) is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import of_types, on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

LOAD_MAP_LOCATION = Rule(
    code="XLA403",
    name="load-map-location",
    severity="error",
    summary="`torch.load(map_location=<CUDA or XLA device>)` loads on the CPU instead",
    fixable=True,
    why="Loading onto a CUDA device raises without CUDA, and XLA cannot restore storages straight onto its "
    "device; loaded on the CPU, `load_state_dict` copies the tensors to wherever the model is.",
    examples=lambda: (
        invalid(
            """
            import torch

            state = torch.load("model.pt", map_location="cuda:0")
            """,
            """
            import torch

            state = torch.load("model.pt", map_location="cpu")
            """,
            findings=(Expected(3, 45, 'map_location "cuda:0" -> "cpu"'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            state = torch.load("m.pt", map_location="cpu")
            other = torch.load("o.pt", map_location=lambda storage, loc: storage)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)
            state = torch.load("m.pt", map_location=device)
            other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
            """,
            """
            import torch

            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location="cpu")
            state = torch.load("m.pt", map_location="cpu")
            other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
            """,
            findings=(
                Expected(4, 51, 'map_location loc -> "cpu"'),
                Expected(5, 41, 'map_location device -> "cpu"'),
                Expected(6, 41, 'map_location `{"cuda:1"'),
            ),
        ),
        invalid(
            """
            import torch as th

            state = th.load("m.pt", map_location=th.device("cuda"))
            """,
            """
            import torch as th

            state = th.load("m.pt", map_location="cpu")
            """,
            alias=True,
            findings=(Expected(3, 38, 'map_location th.device("cuda") -> "cpu"'),),
        ),
    ),
)

# The shapes of map location it reads, by node type: strings, names, conditions, string
# operations and dicts; a call (``torch.device("cuda")``, ``"cuda:{}".format(i)``) is
# rewritten when it names a device, never reported.
_REPORTED = "SimpleString FormattedString Name Attribute IfExp Dict BinaryOperation"
_REWRITTEN = f"{_REPORTED} Call"


@on_facts(LOAD_MAP_LOCATION, nodes=lambda facts: of_types(facts.checkpoint.map_locations, _REWRITTEN))
def _on_the_cpu(ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
    """A map location that names a CUDA or XLA device (the device facts say which names hold one)."""
    import libcst as cst

    from codemods.engine.nodes import quoted_like

    new = ctx.fix(
        LOAD_MAP_LOCATION,
        original,
        f"map_location {ctx.code(original)} -> {{new}}: XLA cannot load straight onto its device; "
        "load_state_dict copies the tensors over"
        + (f" (`{original.value}` may now be unused)" if isinstance(original, cst.Name) else ""),
        lambda: quoted_like(original, "cpu"),
    )
    if new is None:
        return updated
    ctx.forget_removed(original, updated)
    return new


@on_facts(LOAD_MAP_LOCATION, nodes=lambda facts: of_types(facts.checkpoint.unported_map_locations, _REPORTED))
def _report_unported(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    ctx.report(
        LOAD_MAP_LOCATION,
        original,
        f"map_location `{ctx.code(original)}` names CUDA devices: load on the CPU "
        "(map_location='cpu'); load_state_dict copies to the XLA device",
    )
    return updated


@on_facts(LOAD_MAP_LOCATION, nodes=lambda facts: facts.checkpoint.unlocated_loads)
def _load_on_the_cpu(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """A ``torch.load`` without a map location, in a script that used CUDA."""
    import libcst as cst

    from codemods.engine.nodes import with_keyword

    return ctx.fix_or_keep(
        updated,
        LOAD_MAP_LOCATION,
        original,
        'torch.load(...) -> map_location="cpu": a checkpoint the CUDA runs of this script saved holds CUDA '
        "storages, which load nowhere without CUDA; load_state_dict copies the tensors to the device",
        lambda: updated.with_changes(args=with_keyword(list(updated.args), "map_location", cst.SimpleString('"cpu"'))),
        result=lambda call: call.args[-1],
    )
