"""XLA605 data-parallel: ``nn.DataParallel`` goes (the distributed facts' ``data_parallel``), with
the statements that only rewrap a name (``dp_statements``) and the ``.module`` accesses of what it
wrapped (``module_accesses``); a wrapper the port keeps is reported, as is a DataParallel subclass
with its own ``scatter`` whose calls all get inputs on the device (``fed_scattering_wraps``; the
other such subclasses are XLA118's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A file that saves through one DataParallel wrapper and loads a state dict through another.
_SAVED_AND_LOADED_THROUGH_WRAPPERS = """\
import torch
import torch.nn as nn


def train(model, path):
    model = nn.DataParallel(model)
    fit(model)
    torch.save(model.state_dict(), path)


def test(model, path):
    model = nn.DataParallel(model)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return evaluate(model.module)
"""

DATA_PARALLEL = Rule(
    code="XLA605",
    name="data-parallel",
    severity="info",
    summary="nn.DataParallel (one process, several GPUs) is removed with its .module accesses; kept and reported where "
    "the tool cannot follow them, or where the wrapped model leaves the file",
    fixable=True,
    why="Without CUDA devices DataParallel only calls the wrapped model; on XLA one process drives one device, "
    "and more devices mean more processes (DDP). The port removes the wrapper and rewrites `model.module` into "
    "`model` where it can see every `.module` use of what it wrapped. Where it cannot, it keeps the wrapper and "
    "reports it: a `.module` on a value it does not know, or a wrapped model that leaves the file (returned by a "
    "function, handed to a callable of another module of the project, or bound at module level in a module other "
    "files of the run import). Code elsewhere may read `.module` on it, often behind a flag handed to another class "
    "(`CheckpointIO(..., data_parallel=True)` saving `module.module.state_dict()`), and a removed wrapper would make "
    "that an AttributeError at the first save. A kept wrapper runs on XLA: torch 2.9's DataParallel finds no "
    "CUDA device, keeps `device_ids == []` and calls the wrapped model directly (no scatter, no replicas), "
    "`.module` still answers and the state dict keeps its `module.` prefix; but the inputs it scattered to the "
    "GPUs on CUDA now reach the model where they are, so a loop that moved only some of a batch by hand (the "
    "targets) must move the rest too: where the loop is handed the wrapped model and its loader, the tool wraps "
    "the loader in a device loader, and where it calls the wrapper with tensors it never moves, XLA116 says so. "
    "Rewriting the flag instead would "
    "change what other code reads, so the tool does not; remove the wrapper by hand with its `.module` uses once "
    "they are all known. A wrapper held on an attribute (`self.model = nn.DataParallel(net)` in a trainer class) is"
    " read where the instance goes: `trainer.model.module` in the driver, `self.model.module` in a subclass of "
    "another file. The rule that never breaks a working script: in a module other files of the run import, the "
    "wrapper stays when any other file of the run reads `.module` at all (a textual scan, so an alias `m = "
    "trainer.model; m.module` counts too; a `getattr(model, 'module', model)` works on either and does not); in a "
    "module that no file of the run imports (a file converted alone), it stays when the file builds neither the "
    "class nor a subclass of it, since the files that do are out of sight. It goes where every read is in sight: "
    "the run's other files read no `.module`, or the file builds the class itself and no file of the run imports it"
    " (the file's own `self.model.module` becomes `self.model`). A file converted alone that builds its class and "
    "is also imported by files left out of the run is beyond what the run can see: convert the project as a whole. "
    "A DataParallel subclass with its own `scatter` whose every call in the file gets inputs "
    "already on the device is said here too (info): its scatter never runs on XLA, and had nothing to move. "
    "Where the file loads a state dict into a wrapped model (`model.load_state_dict(torch.load(path))`), every "
    "wrapper of the file stays: the checkpoints saved through it carry `module.` keys, which the bare model would "
    "refuse (missing and unexpected keys), and the port's own runs keep saving that layout.",
    examples=lambda: (
        invalid(
            """
        import torch
        import torch.nn as nn


        def build(model):
            model = nn.DataParallel(model)
            return model.module
        """,
            """
        import torch


        def build(model):
            return model
        """,
            findings=(
                Expected(5, 5, "removed `model = nn.DataParallel(model)`"),
                Expected(5, 12, "model.module -> model"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            state = model.module.state_dict()
            """,
            note="no-data-parallel",
        ),
        valid(
            """
            import torch

            model.load_state_dict(torch.load("m.pt", map_location="cpu"))
            """,
            note="state-dict-load-without-data-parallel",
        ),
    ),
    invalid=lambda: (
        invalid(
            _SAVED_AND_LOADED_THROUGH_WRAPPERS,
            _SAVED_AND_LOADED_THROUGH_WRAPPERS.replace(
                "import torch.nn as nn\n", "import torch.nn as nn\nimport torch_xla.core.xla_model as xm\n"
            ).replace("torch.save(", "xm.save("),
            note="state-dict-loaded-kept",
            findings=(
                Expected(7, 13, "`nn.DataParallel` kept: this file loads a state dict into the model it wraps"),
                Expected(13, 13, "`nn.DataParallel` kept: this file loads a state dict into the model it wraps"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.nn import DataParallel as DP

            net = DP(Net())
            net.load_state_dict(torch.load("net.pt", map_location="cpu"))
            """,
            None,
            target="sagemaker",
            note="state-dict-loaded-kept-aliased",
            alias=True,
            findings=(Expected(4, 7, "`DP` kept: this file loads a state dict into the model it wraps"),),
        ),
        invalid(
            """
            import torch.nn as nn


            class ScatterDP(nn.DataParallel):
                def scatter(self, inputs, kwargs, device_ids):
                    return [[i] for i in inputs[0]], [{} for _ in inputs[0]]


            model = ScatterDP(net)
            out = model(x.cuda())
            """,
            """
            import torch.nn as nn
            import torch_xla.core.xla_model as xm


            class ScatterDP(nn.DataParallel):
                def scatter(self, inputs, kwargs, device_ids):
                    return [[i] for i in inputs[0]], [{} for _ in inputs[0]]


            model = ScatterDP(net)
            out = model(x.to(xm.xla_device()))
            """,
            target="sagemaker",
            note="scattering-subclass-fed",
            findings=(
                Expected(
                    10,
                    9,
                    "`ScatterDP` (a DataParallel subclass of this file) stays: its own `scatter` never runs on XLA",
                ),
            ),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn


            class Trainer:
                def __init__(self, net):
                    self.model = nn.DataParallel(net)

                def save(self, path):
                    torch.save(self.model.module.state_dict(), path)
            """,
            """
            import torch
            import torch.nn as nn
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, net):
                    self.model = nn.DataParallel(net)

                def save(self, path):
                    xm.save(self.model.module.state_dict(), path)
            """,
            note="attribute-of-unbuilt-class-kept",
            findings=(
                Expected(
                    8,
                    22,
                    "`nn.DataParallel` kept: the model it wraps leaves this file (held on `self.model` of `Trainer`, "
                    "a class no file of the run builds or imports)",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from torch.nn import DataParallel as DP


            class Trainer:
                def __init__(self, net):
                    self.model = DP(net)

                def save(self, path):
                    torch.save(self.model.module.state_dict(), path)


            class SavingTrainer(Trainer):
                pass


            if __name__ == "__main__":
                SavingTrainer(build()).save("m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, net):
                    self.model = net

                def save(self, path):
                    xm.save(self.model.state_dict(), path)


            class SavingTrainer(Trainer):
                pass


            if __name__ == "__main__":
                SavingTrainer(build()).save("m.pt")
            """,
            target="sagemaker",
            note="attribute-of-class-built-here-removed",
            alias=True,
            findings=(Expected(7, 22, "DP(net) -> net"), Expected(10, 17, "self.model.module -> self.model")),
        ),
        invalid(
            """
            import torch.nn as nn


            def build_model():
                gen = nn.DataParallel(nn.Linear(4, 4))
                return {"gen": gen}
            """,
            None,
            note="returned-kept",
            findings=(
                Expected(
                    5, 11, "`nn.DataParallel` kept: the model it wraps leaves this file (returned by `build_model`)"
                ),
            ),
        ),
        invalid(
            """
            from torch.nn import DataParallel as DP
            from checkpoint import CheckpointIO

            net = DP(build()).to("cuda")
            ckpt = CheckpointIO("nets.ckpt", data_parallel=True, net=net)
            """,
            """
            from torch.nn import DataParallel as DP
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from checkpoint import CheckpointIO

            net = DP(build()).to("xla")
            ckpt = CheckpointIO("nets.ckpt", data_parallel=True, net=net)
            """,
            target="sagemaker",
            note="handed-to-project-kept",
            alias=True,
            findings=(
                Expected(
                    5, 7, "`DP` kept: the model it wraps leaves this file (handed to `CheckpointIO` of checkpoint)"
                ),
            ),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn


            def fit(model):
                return model.module.state_dict()


            model = nn.DataParallel(build())
            state = fit(model)
            """,
            """
            import torch


            def fit(model):
                return model.state_dict()


            model = build()
            state = fit(model)
            """,
            target="sagemaker",
            note="handed-within-file-removed",
            findings=(
                Expected(5, 12, "model.module -> model"),
                Expected(8, 9, "nn.DataParallel(build()) -> build()"),
            ),
        ),
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model)
            torch.save(model.module.state_dict(), "m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), "m.pt")
            """,
            note="module-access",
            findings=(
                Expected(4, 1, "removed `model = torch.nn.DataParallel(model)`"),
                Expected(4, 9, "model.module -> model"),
            ),
        ),
        invalid(
            """
            from torch.nn import DataParallel as DP

            net = DP(build()).cuda()
            """,
            """
            import torch_xla

            net = build().to(torch_xla.device())
            """,
            note="from-import",
            alias=True,
            findings=(Expected(3, 7, "DP(build()) -> build()"),),
        ),
    ),
)


@reports_facts(DATA_PARALLEL, nodes=lambda facts: facts.distributed.fed_scattering_wraps)
def _fed_scattering_wrap(ctx: Context[Facts], original: cst.Call) -> str:
    wrapper, module = ctx.facts.distributed.scattering_wraps[original]
    return (
        f"`{wrapper}` (a DataParallel subclass of {module or 'this file'}) stays: its own `scatter` never "
        "runs on XLA (without CUDA devices DataParallel calls the wrapped module directly), and every call "
        "of it here gets inputs already on the device (moved, or batches of an iterable handed the device); "
        "it changes nothing on XLA (one process drives one device: more devices mean more processes)"
    )


def _kept_because(ctx: Context[Facts], original: cst.Call) -> tuple[str, str] | None:
    """Why a DataParallel wrapper stays and how to remove it (or nothing to say), or None where
    it goes."""
    part = ctx.facts.distributed
    if (load := part.state_dict_loads.get(original)) is not None:
        return (
            f"this file loads a state dict into the model it wraps (`{ctx.code(load.func)}(...)`): a "
            "checkpoint saved through the wrapper carries `module.` keys, which the bare model would refuse "
            "(missing and unexpected keys)",
            ". To remove it, strip the `module.` prefix when loading: "
            '`{k.replace("module.", "", 1): v for k, v in state.items()}`',
        )
    if (leaves := part.kept_data_parallel.get(original)) is not None:
        return (
            f"the model it wraps leaves this file ({leaves}), where `.module` uses, or a flag saying it is "
            "wrapped, cannot all be followed (they would fail on the bare model)",
            "",
        )
    return None


@on_facts(DATA_PARALLEL, nodes=lambda facts: facts.distributed.data_parallel)
def _data_parallel(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``nn.DataParallel(model)`` -> ``model``, or the wrapper kept and reported."""
    part = ctx.facts.distributed
    if (kept := _kept_because(ctx, original)) is not None:
        why, removal = kept
        ctx.report(
            DATA_PARALLEL,
            original,
            f"`{ctx.code(original.func)}` kept: {why}; without CUDA devices DataParallel calls the model "
            "directly: it no longer moves the inputs to the device, so each batch its calls get must already be "
            f"on the XLA device{removal}",
        )
        return updated
    if not part.data_parallel[original]:
        ctx.report(
            DATA_PARALLEL,
            original,
            f"`{ctx.code(original.func)}` drives several GPUs from one process: "
            "remove it (and its `.module` accesses) and start one process per device",
        )
        return updated
    if not updated.args:
        return updated
    wrapped = updated.args[0].value
    fixed = ctx.fix(
        DATA_PARALLEL,
        original,
        f"{ctx.code(original)} -> {{new}}: one process drives one XLA device (DataParallel has no XLA meaning)",
        lambda: wrapped,
    )
    if fixed is None:
        return updated
    ctx.forget_fixes_inside(original)
    ctx.imports.discard(original.func)
    return fixed


@on_facts(DATA_PARALLEL, nodes=lambda facts: facts.distributed.dp_statements)
def _rewrap_statement(
    ctx: Context[Facts], original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
) -> cst.SimpleStatementLine:
    """``model = nn.DataParallel(model)``: the statement goes (Context.drop_statement)."""
    import libcst as cst

    fixed = ctx.fix(
        DATA_PARALLEL,
        original,
        f"removed `{ctx.code(original.with_changes(leading_lines=()))}`: one process drives one XLA device "
        "(DataParallel has no XLA meaning)",
        lambda: cst.RemovalSentinel.REMOVE,
    )
    if fixed is not None:
        ctx.forget_removed(original, original)
        ctx.drop_statement(updated)
    return updated


@on_facts(DATA_PARALLEL, nodes=lambda facts: facts.distributed.module_accesses)
def _module_access(ctx: Context[Facts], original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
    """``model.module`` -> ``model``: the model is no longer wrapped."""
    return ctx.fix_or_keep(
        updated,
        DATA_PARALLEL,
        original,
        f"{ctx.code(original)} -> {{new}}: the model is no longer wrapped in DataParallel",
        lambda: updated.value,
    )
