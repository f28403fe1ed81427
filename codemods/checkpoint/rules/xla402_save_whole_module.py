"""XLA402 save-whole-module: saving a whole module (``torch.save(model, path)``) is reported:
its device tensors are pickled as they are, with its class by reference."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

SAVE_WHOLE_MODULE = Rule(
    code="XLA402",
    name="save-whole-module",
    severity="warning",
    summary="Saving a whole module pickles its device tensors: save its state_dict()",
    fixable=False,
    why="Pickling a whole module stores its class by reference and its tensors as they are: the checkpoint "
    "loads only with the same code and torch_xla at hand. A `state_dict()` saved with `xm.save` holds CPU "
    "tensors that load anywhere.",
    examples=lambda: (
        invalid(
            """
            import torch

            class Net(torch.nn.Module):
                pass

            model = Net()
            torch.save(model, "model.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            class Net(torch.nn.Module):
                pass

            model = Net()
            xm.save(model, "model.pt")
            """,
            findings=(Expected(8, 1, "`model` is a whole module"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            model = Net()
            xm.save(model.state_dict(), "weights.pt")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            class Net(torch.nn.Module):
                pass

            model = Net().to(device)
            torch.save(model, "full.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            class Net(torch.nn.Module):
                pass

            model = Net().to(device)
            xm.save(model, "full.pt")
            """,
            findings=(Expected(8, 1, "`model` is a whole module"),),
        ),
        invalid(
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            from torch import nn

            net = nn.Sequential(nn.Linear(2, 2))
            th.save(net, "net.pt")
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            from torch import nn

            net = nn.Sequential(nn.Linear(2, 2))
            xm.save(net, "net.pt")
            """,
            alias=True,
            findings=(Expected(6, 1, "`net` is a whole module"),),
        ),
    ),
)


@reports_facts(SAVE_WHOLE_MODULE, nodes=lambda facts: facts.checkpoint.whole_module_saves)
def _report(ctx: Context[Facts], original: cst.Call) -> str:
    """A save whose object is a name the training facts hold a model in."""
    from codemods.engine.nodes import arg_value

    saved = ctx.code(arg_value(original, 0, "obj"))  # type: ignore[arg-type]  # a whole-module save's obj argument names a model (how it is recorded), so arg_value finds it
    return (
        f"`{saved}` is a whole module: save `{saved}.state_dict()` so the checkpoint holds CPU tensors "
        "and loads without torch_xla"
    )
