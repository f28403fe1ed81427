"""XLA515 host-seed: ``torch.manual_seed(s)`` seeds the CPU generator only; in a file that uses
the XLA device the device's generator is seeded right after it (``torch_xla.manual_seed(s)``,
torch_xla 1.13: ``xm.set_rng_state(s)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from codemods.engine.hooks import on_calls, on_nodes
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

NodeT = TypeVar("NodeT", bound="cst.CSTNode")

# A zeroth-order step (MeZO's shape): the same seed replays the same perturbation z, so that
# +eps*z, -2*eps*z, +eps*z cancel.
_REPLAYED = """
import torch

model = torch.nn.Linear(4, 2).cuda()


def perturb(scale, seed):
    torch.manual_seed(seed)
    for p in model.parameters():
        p.data.add_(scale * 1e-3 * torch.normal(0, 1, size=p.shape, device=p.device))
"""
_REPLAYED_PORTED = substituted(
    _REPLAYED,
    ("import torch\n", "import torch\nimport torch_xla\n"),
    (".cuda()", ".to(torch_xla.device())"),
    ("torch.manual_seed(seed)\n", "torch.manual_seed(seed)\n    torch_xla.manual_seed(seed)\n"),
)
_MESSAGE = (
    "added `{new}` after `torch.manual_seed({seed})`: torch.manual_seed leaves the XLA device's generator "
    "alone, so draws made on the device ignore that seed (a replayed draw differs)"
)


_UNFIXED = (
    "`torch.manual_seed({seed})` leaves the XLA device's generator alone, so draws made on the device ignore that "
    "seed (a replayed draw differs): seed the device after it, `{new}`"
)


def _message(seed: str, new: str, *, fixed: bool = True) -> str:
    return (_MESSAGE if fixed else _UNFIXED).format(seed=seed, new=new)


HOST_SEED = Rule(
    code="XLA515",
    name="host-seed",
    severity="error",
    summary="`torch.manual_seed(s)` does not seed the XLA device: its generator is seeded after it",
    fixable=True,
    why="On torch_xla 2.9 (checked with PJRT_DEVICE=CPU) two `torch.randn(3, device=torch_xla.device())` "
    "after the same `torch.manual_seed(1)` differ: torch.manual_seed seeds the CPU generator, and the XLA "
    "device has its own, seeded by `torch_xla.manual_seed(s)` (torch_xla 1.13: `xm.set_rng_state(s)`, which "
    "2.9's calls). Code that re-seeds to replay random draws on the device (a zeroth-order optimizer's "
    "perturbation `+eps*z, -2*eps*z, +eps*z`, regenerated from one seed) silently trains wrong: the draws "
    "differ, nothing cancels. A seed sweep gives the same device randomness (dropout, initialisation made on "
    "the device) whatever seed is set. Both change results without an error, so the rule is an error, fixed: "
    "after a `torch.manual_seed(expr)` statement of a file that uses the XLA device (it imports torch_xla, or "
    "the port moves something there) the device's generator is seeded with the same expression (the "
    "expression is evaluated twice: write a name there if it draws). A file that imports torch_xla only "
    "under a check (its own non-XLA path) is reported, not fixed: seed the device under that check. A "
    "`torch.manual_seed` whose block already seeds the device is left alone, and so is a file that never "
    "uses the XLA device (a seeding helper of another file is not followed). CUDA seeding calls are "
    "XLA505's.",
    examples=lambda: (
        invalid(
            _REPLAYED,
            _REPLAYED_PORTED,
            findings=(Expected(9, 5, _message("seed", "torch_xla.manual_seed(seed)")),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            torch.manual_seed(args.seed)
            x = torch.randn(3)
            """,
            note="no-xla-device",
        ),
        valid(
            """
            import torch
            import torch_xla

            torch.manual_seed(args.seed)
            torch_xla.manual_seed(args.seed)
            device = torch_xla.device()
            """,
            note="device-seeded",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            torch.manual_seed(args.seed)
            xm.set_rng_state(args.seed)
            device = xm.xla_device()
            """,
            target="sagemaker",
            note="device-seeded-sagemaker",
        ),
    ),
    invalid=lambda: (
        invalid(
            _REPLAYED,
            substituted(
                _REPLAYED_PORTED,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
                ("torch_xla.manual_seed(seed)", "xm.set_rng_state(seed)"),
            ),
            target="sagemaker",
            note="replayed-sagemaker",
            findings=(Expected(9, 5, _message("seed", "xm.set_rng_state(seed)")),),
        ),
        invalid(
            """
            import torch as th
            from torch import manual_seed as seed_all
            import torch_xla

            for s in range(3):
                th.manual_seed(s)
                seed_all(s + 1)
            """,
            """
            import torch as th
            from torch import manual_seed as seed_all
            import torch_xla

            for s in range(3):
                th.manual_seed(s)
                torch_xla.manual_seed(s)
                seed_all(s + 1)
                torch_xla.manual_seed(s + 1)
            """,
            alias=True,
            note="aliases-in-a-loop",
            findings=(
                Expected(7, 5, _message("s", "torch_xla.manual_seed(s)")),
                Expected(9, 5, _message("s + 1", "torch_xla.manual_seed(s + 1)")),
            ),
        ),
        # The line before goes (XLA502): its blank line moves onto the seed line, rebuilt; the seed still follows it.
        invalid(
            """
            import torch
            import torch_xla

            torch.backends.cudnn.benchmark = True
            torch.manual_seed(54321)
            x = torch.randn(3)
            """,
            """
            import torch
            import torch_xla

            torch.manual_seed(54321)
            torch_xla.manual_seed(54321)
            x = torch.randn(3)
            """,
            note="after-a-removed-line",
            findings=(Expected(5, 1, _message("54321", "torch_xla.manual_seed(54321)")),),
        ),
        invalid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            torch.backends.cudnn.benchmark = True
            torch.manual_seed(54321)
            x = torch.randn(3)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            torch.manual_seed(54321)
            xm.set_rng_state(54321)
            x = torch.randn(3)
            """,
            target="sagemaker",
            note="after-a-removed-line-sagemaker",
            findings=(Expected(5, 1, _message("54321", "xm.set_rng_state(54321)")),),
        ),
        invalid(
            """
            import torch

            try:
                import torch_xla.core.xla_model as xm
            except ImportError:
                xm = None

            torch.manual_seed(0)
            """,
            target="sagemaker",
            note="optional-xla",
            findings=(
                Expected(
                    8,
                    1,
                    _message("0", "xm.set_rng_state(0)", fixed=False)
                    + " (not fixed: this file imports torch_xla conditionally, so it keeps its own non-XLA path)",
                ),
            ),
        ),
    ),
)

_SEEDS = frozenset({"torch.manual_seed"})
_DEVICE_SEEDS = frozenset({"torch_xla.manual_seed", "torch_xla.core.xla_model.set_rng_state"})


def _seed_call(ctx: Context[Facts], line: cst.CSTNode, names: frozenset[str]) -> cst.Call | None:
    """The call of one of ``names`` that is the whole statement ``line``, or None."""
    import libcst as cst

    if type(line) is not cst.SimpleStatementLine or len(line.body) != 1:
        return None
    statement = line.body[0]
    if type(statement) is not cst.Expr or type(statement.value) is not cst.Call:
        return None
    return statement.value if ctx.resolve(statement.value.func) in names else None


def _uses_xla_device(ctx: Context[Facts]) -> bool:
    """The file imports torch_xla, or the port moves something to the XLA device."""
    device = ctx.facts.device
    table = ctx.facts.imports.table
    return (
        table.imports_module("torch_xla")
        or ctx.facts.imports.xla_optional
        or bool(device.calls or device.strings or device.dot_cuda or device.index_moves)
        or any(added.startswith("torch_xla") for added in ctx.imports.added)
    )


@on_calls(HOST_SEED, names=_SEEDS)
def _seen(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.Call:
    """Only makes the traversal enter the lines that seed (the line hook fixes them)."""
    return updated


def _seed_lines(ctx: Context[Facts], module: cst.Module) -> list[tuple[cst.SimpleStatementLine, cst.Call]]:
    """The ``torch.manual_seed(expr)`` statement lines of the file whose block does not seed the device."""
    import libcst as cst

    found: list[tuple[cst.SimpleStatementLine, cst.Call]] = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        body = getattr(node, "body", None)
        if isinstance(body, (list, tuple)):
            seeds = [(line, call) for line in body if (call := _seed_call(ctx, line, _SEEDS)) is not None]
            if seeds and not any(_seed_call(ctx, line, _DEVICE_SEEDS) for line in body):
                found.extend(
                    (cst.ensure_type(line, cst.SimpleStatementLine), call)
                    for line, call in seeds
                    if len(call.args) == 1 and call.args[0].keyword is None
                )
        stack.extend(reversed(node.children))
    return found


@on_nodes(HOST_SEED, types="SimpleStatementLine")
def _track(
    ctx: Context[Facts], original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
) -> cst.SimpleStatementLine:
    """Where each seeding line ends up: the module hook adds the device's seed after it once the
    whole file is rewritten (only then is it known whether the file uses the XLA device)."""
    if _seed_call(ctx, original, _SEEDS) is not None:
        ctx.track([original])
    return updated


@on_nodes(HOST_SEED, types="Module")
def _seed_device(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
    import libcst as cst

    from codemods.engine.rewriter import OPTIONAL_XLA

    if "manual_seed" not in ctx.facts.imports.taken_names or not _uses_xla_device(ctx):
        return updated
    added: dict[int, cst.SimpleStatementLine] = {}
    for line, call in _seed_lines(ctx, original):
        now = ctx.result_of(line)
        if type(now) is not cst.SimpleStatementLine:
            continue
        seed = call.args[0].value
        device_seed = f"{ctx.target.api('seed_device').spelled}({ctx.code(seed)})"
        if ctx.facts.imports.xla_optional:
            # Its own non-XLA path stays: said as advice (ctx.fix would say "added").
            ctx.report(HOST_SEED, call, f"{_message(ctx.code(seed), device_seed, fixed=False)} ({OPTIONAL_XLA})")
            continue

        def build(seed: cst.BaseExpression = seed) -> cst.SimpleStatementLine | None:
            device_seed = ctx.call("seed_device", [cst.Arg(seed)])
            return None if device_seed is None else cst.SimpleStatementLine(body=[cst.Expr(device_seed)])

        new = ctx.fix(
            HOST_SEED,
            call,
            _message(ctx.code(seed), device_seed),
            build,
            result=lambda line: line.body[0],
        )
        if new is not None:
            added[id(now)] = new
    if not added:
        return updated

    return _with_lines_after(updated, added)


def _with_lines_after(node: NodeT, added: dict[int, cst.SimpleStatementLine]) -> NodeT:
    """``node`` with each line ``added`` names (by id) followed by its new line; only the nodes on
    the way to one are rebuilt (the others keep their identity: the imports hook finds its anchor)."""
    import libcst as cst

    from codemods.engine.nodes import field_shapes

    changes: dict[str, object] = {}
    for name, _ in field_shapes(type(node)):
        value = getattr(node, name)
        if isinstance(value, (list, tuple)):
            items: list[object] = []
            for item in value:
                new = _with_lines_after(item, added) if isinstance(item, cst.CSTNode) else item
                items.append(new)
                if id(item) in added:
                    items.append(added[id(item)])
            if len(items) != len(value) or any(a is not b for a, b in zip(items, value)):
                changes[name] = items
        elif isinstance(value, cst.CSTNode):
            new_value = _with_lines_after(value, added)
            if new_value is not value:
                changes[name] = new_value
    return node.with_changes(**changes) if changes else node
